#!/usr/bin/env python
"""The first Adagrad steps of ``configs/snli_siamese.cfg`` (Lin et al.'s SNLI
setting: a 4,000-unit ReLU layer over the hops' interaction, Adagrad lr
0.01) with two initial accumulator values: 0 (torch's default, the config's
value before the NULL-token change) and 0.1 (TensorFlow's default, the Harvard NLP DA
replication's and ``configs/glove.cfg``'s).

With an accumulator of 0, Adagrad's first step is lr * g / |g| = +-lr for
every weight that has a gradient, the size of the 4,000-unit layer's whole
initial spread. Recorded at each of the first ``--steps`` steps, on the same
pipeline (same seed, same init, same batches of 32 from the NLI pool of
``benchmarks/paper_curves.py``): the logits' scale on 64 held-out probe
pairs (their standard deviation and mean absolute value), the share of the
4,000 hidden ReLUs that are dead (zero on every probe pair), and the
training loss of the batch.

    python benchmarks/adagrad_start.py               # 12 steps
    python benchmarks/adagrad_start.py --rerender    # the tables again
    python benchmarks/adagrad_start.py --steps 3 --quick

Writes ``benchmarks/results/adagrad_start.{json,md}``. The dev curves of the
two settings are ``paper_curves.py`` runs (``snli_siamese@...``).
"""

import argparse
import json
from typing import Any, Dict, List, Optional, Sequence

import numpy
import paper_curves
from bench import datafiles, machine, tables

CONFIG = machine.REPO / "configs" / "snli_siamese.cfg"
NAME = "adagrad_start"
BATCH = 32
PROBE = 64


def build(train_rows, accumulator: float):
    """The config's pipeline (seed 0) initialized on the first 200 training
    rows, and its optimizer with ``accumulator``."""
    import spacy
    from spacy.training.initialize import load_vectors_into_model
    from thinc.api import Config, fix_random_seed

    import spacy_attn  # noqa: F401

    config = Config().from_disk(CONFIG)
    config["training"]["optimizer"]["initial_accumulator_value"] = accumulator
    fix_random_seed(0)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    load_vectors_into_model(nlp, str(datafiles.spacy_vectors()))
    sample = datafiles.pair_examples(nlp, train_rows[:200])
    nlp.get_pipe("attn_pair_classifier").initialize(lambda: sample, nlp=nlp)
    resolved = spacy.util.registry.resolve({"o": config["training"]["optimizer"]})
    return nlp, resolved["o"]


def probe_stats(nlp, docs) -> Dict[str, float]:
    """Logit scale and dead hidden units on the probe pairs."""
    model = nlp.get_pipe("attn_pair_classifier").model
    hidden = model.ops.to_numpy(
        model.get_ref("self_attention").predict(model.get_ref("segments").predict(docs))
    )
    out = model.get_ref("output_layer")
    W = model.ops.to_numpy(out.get_param("W"))
    b = model.ops.to_numpy(out.get_param("b"))
    logits = hidden @ W.T + b
    return {
        "logit_std": float(logits.std()),
        "logit_mean_abs": float(numpy.abs(logits).mean()),
        "dead": float((hidden.max(axis=0) <= 0).mean()),
        "hidden_mean": float(hidden.mean()),
    }


def run(rows, accumulator: float, steps: int) -> List[Dict[str, Any]]:
    from spacy_attn import make_pairs

    nlp, optimizer = build(rows["train"], accumulator)
    probe = list(
        make_pairs(nlp, ((r["premise"], r["hypothesis"]) for r in rows["dev"][:PROBE]))
    )
    points = [{"step": 0, "loss": None, **probe_stats(nlp, probe)}]
    for step in range(1, steps + 1):
        batch = rows["train"][(step - 1) * BATCH : step * BATCH]
        losses: Dict[str, float] = {}
        nlp.update(datafiles.pair_examples(nlp, batch), sgd=optimizer, losses=losses)
        points.append(
            {
                "step": step,
                "loss": losses["attn_pair_classifier"],
                **probe_stats(nlp, probe),
            }
        )
        machine.log(f"accumulator {accumulator:g}, step {step}: {points[-1]}")
    return points


def render(meta: Dict[str, Any], r: Dict[str, Any]) -> str:
    out = tables.header("The first Adagrad steps of configs/snli_siamese.cfg", meta)
    out += (
        "Same pipeline, seed, init and batches of 32 (NLI pool of "
        "`benchmarks/paper_curves.py`) for each initial accumulator; probe: "
        f"{PROBE} held-out pairs. 'dead': share of the {r['hidden']:,} hidden "
        "ReLUs that are zero on every probe pair. 'loss': the component's "
        "loss on that step's batch (cross-entropy averaged over the batch, "
        "plus the attention penalty), before that step's update.\n\n"
    )
    rows = []
    for acc, points in r["runs"].items():
        for p in points:
            rows.append(
                [
                    acc,
                    str(p["step"]),
                    f"{p['logit_std']:.3g}",
                    f"{p['logit_mean_abs']:.3g}",
                    f"{100 * p['dead']:.1f}%",
                    "-" if p["loss"] is None else f"{p['loss']:.3f}",
                ]
            )
    out += tables.md_table(
        [
            "initial accumulator",
            "step",
            "logit std",
            "mean |logit|",
            "dead ReLUs",
            "loss",
        ],
        rows,
    )
    return out


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--accumulators", default="0,0.1")
    p.add_argument("--quick", action="store_true", help="results into benchmarks/runs")
    p.add_argument("--rerender", action="store_true", help="only rewrite the .md")
    args = p.parse_args(argv)
    if args.rerender:
        saved = json.loads((machine.RESULTS / f"{NAME}.json").read_text())
        text = render(
            {k: v for k, v in saved.items() if k != "results"}, saved["results"]
        )
        (machine.RESULTS / f"{NAME}.md").write_text(text)
        return
    import torch

    torch.set_num_threads(1)
    meta = machine.metadata()
    data = paper_curves.nli_data(1000)
    rows = {
        split: datafiles.read_jsonl_gz(data["paths"][split])
        for split in ("train", "dev")
    }
    runs = {
        acc: run(rows, float(acc), args.steps) for acc in args.accumulators.split(",")
    }
    from thinc.api import Config

    config = Config().from_disk(CONFIG, interpolate=False)
    hidden = config["components"]["attn_pair_classifier"]["model"]["hidden_width"]
    tables.report(
        NAME, render, meta, {"runs": runs, "hidden": hidden}, quick=args.quick
    )


if __name__ == "__main__":
    main()
