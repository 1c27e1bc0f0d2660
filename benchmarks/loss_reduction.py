#!/usr/bin/env python
"""How much of ``configs/yelp_selfattn.cfg``'s first SGD steps does the
gradient clip decide, with spaCy's summed textcat loss and with a batch mean?

spaCy's ``textcat`` sums its loss gradient over the batch (and the
self-attention penalty is summed to match), so at the paper's batch of 32 a
gradient is 32 times a batch-mean one. Thinc clips each parameter's gradient
to norm ``grad_clip`` (0.5 here) after adding the L2 term. A batch-mean loss
with lr 0.06, clip 0.5, L2 1e-4 makes exactly the updates of the summed loss
with lr 0.06/32, clip 0.5*32, L2 1e-4*32 (how ``paper_curves.py`` ran the
"mean" comparison). Recorded on the pipeline's first ``--batches`` batches
of 32 Rotten Tomatoes training sentences (no update between them): each
parameter's gradient norm under the summed loss (with L2), and the share of
parameters, and of weights, whose gradient the clip shortens under each
reduction (norm > 0.5 summed; summed norm > 16 for the mean).

    python benchmarks/loss_reduction.py

Writes ``benchmarks/results/loss_reduction.{json,md}``.
"""

import argparse
from typing import Any, Dict, List, Optional, Sequence

import numpy
import paper_curves
from bench import datafiles, machine, tables

CONFIG = machine.REPO / "configs" / "yelp_selfattn.cfg"
NAME = "loss_reduction"


class Recorder:
    """A Thinc optimizer stand-in: records each parameter's gradient norm
    (with the config's L2 added, as Thinc does before clipping) and leaves
    the weights alone."""

    def __init__(self, L2: float) -> None:
        self.L2 = L2
        self.norms: Dict[Any, float] = {}
        self.sizes: Dict[Any, int] = {}

    def __call__(self, key, weights, gradient, *, lr_scale: float = 1.0):
        g = numpy.asarray(gradient) + self.L2 * numpy.asarray(weights)
        self.norms[key] = float(numpy.sqrt((g.astype("float64") ** 2).sum()))
        self.sizes[key] = int(g.size)
        return weights, gradient * 0

    def step_schedules(self) -> None:
        pass


def measure(n_batches: int) -> List[Dict[str, Any]]:
    import spacy
    from spacy.training import Example
    from spacy.training.initialize import load_vectors_into_model
    from thinc.api import Config, fix_random_seed

    import spacy_attn  # noqa: F401

    data = paper_curves.rt_data()
    rows = datafiles.read_jsonl_gz(data["paths"]["train"])
    config = Config().from_disk(CONFIG)
    config["components"]["textcat"]["model"]["encoder"]["tok2vec"]["key_attr"] = "LOWER"
    fix_random_seed(0)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    load_vectors_into_model(nlp, str(datafiles.spacy_vectors()))
    labels = data["labels"]

    def example(r):
        doc = nlp.make_doc(r["text"])
        return Example.from_dict(
            doc, {"cats": {k: float(k == r["label"]) for k in labels}}
        )

    textcat = nlp.get_pipe("textcat")
    sample = [example(r) for r in rows[:200]]
    textcat.initialize(lambda: sample, nlp=nlp, labels=labels)
    L2 = float(config["training"]["optimizer"]["L2"])
    clip = float(config["training"]["optimizer"]["grad_clip"])
    batch = int(config["training"]["batcher"]["size"])
    out = []
    for i in range(n_batches):
        examples = [example(r) for r in rows[i * batch : (i + 1) * batch]]
        rec = Recorder(L2)
        nlp.update(examples, sgd=rec, drop=float(config["training"]["dropout"]))
        norms = numpy.array([rec.norms[k] for k in rec.norms])
        sizes = numpy.array([rec.sizes[k] for k in rec.norms])
        clipped = {"sum": norms > clip, "mean": norms > clip * batch}
        out.append(
            {
                "batch": i + 1,
                "params": len(norms),
                "median_norm": float(numpy.median(norms)),
                "max_norm": float(norms.max()),
                **{f"clipped_{r}": float(c.mean()) for r, c in clipped.items()},
                **{
                    f"clipped_{r}_weights": float(sizes[c].sum() / sizes.sum())
                    for r, c in clipped.items()
                },
            }
        )
        machine.log(str(out[-1]))
    return out


def render(meta: Dict[str, Any], r: Dict[str, Any]) -> str:
    out = tables.header(
        "Gradient clipping under a summed and a mean textcat loss", meta
    )
    out += (
        f"`configs/yelp_selfattn.cfg` (batch {r['batch']}, SGD, clip "
        f"{r['clip']:g} per parameter, L2 {r['L2']:g}) on Rotten Tomatoes "
        "training sentences, seed 0, before any update. 'norm': a parameter's "
        "gradient norm under spaCy's summed loss, L2 included. 'clipped': the "
        "share of parameter tensors (and of weights) whose gradient the clip "
        f"shortens: norm > {r['clip']:g} with the summed loss, > "
        f"{r['clip'] * r['batch']:g} (the same step) with a batch mean.\n\n"
    )
    rows = [
        [
            str(p["batch"]),
            str(p["params"]),
            f"{p['median_norm']:.3g}",
            f"{p['max_norm']:.3g}",
            f"{100 * p['clipped_sum']:.0f}% ({100 * p['clipped_sum_weights']:.1f}%)",
            f"{100 * p['clipped_mean']:.0f}% ({100 * p['clipped_mean_weights']:.1f}%)",
        ]
        for p in r["points"]
    ]
    out += tables.md_table(
        [
            "batch",
            "parameter tensors",
            "median norm",
            "largest norm",
            "clipped, summed loss (weights)",
            "clipped, mean loss (weights)",
        ],
        rows,
    )
    return out


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", type=int, default=3)
    args = p.parse_args(argv)
    import torch
    from thinc.api import Config

    torch.set_num_threads(1)
    meta = machine.metadata()
    config = Config().from_disk(CONFIG, interpolate=False)
    results = {
        "points": measure(args.batches),
        "batch": config["training"]["batcher"]["size"],
        "clip": config["training"]["optimizer"]["grad_clip"],
        "L2": config["training"]["optimizer"]["L2"],
    }
    tables.report(NAME, render, meta, results)


if __name__ == "__main__":
    main()
