"""Which architecture transfers best: the answer-selection start pretrained
with each variant of the pair model for the same steps on the same SQuAD-built
rows, then used zero-shot and fine-tuned on 500 questions of the held-out
SQuADShifts set of ``benchmarks/transfer.py``.

    python benchmarks/transfer_arch.py --train corpus/answers_pretrain/train.spacy
        --dev corpus/answers_pretrain/dev.spacy --vectors training/vectors
        [--variants v4,v3,v4_intra,v4_tok2vec] [--pretrain-steps 6000]
        [--size 500] [--max-steps 1500] [--threads 1]
    python benchmarks/transfer_arch.py --report-only

The variants, all from ``configs/answers_glove.cfg`` (the ``answers``
workflow's start): ``v4`` as it is (Decomposable Attention v4: NULL token and
exact-match signal, fixed GloVe); ``v3`` (the paper's model with the NULL
token, no exact match); ``v4_intra`` (with the paper's intra-sentence
attention); ``v4_tok2vec`` (trained hash embeddings and a CNN instead of
GloVe: the quickstart's tok2vec backbone). Each is pretrained for
``--pretrain-steps`` steps of 32 rows (model-best on the pretraining dev
set's MAP), then scored by ``spacy attn evaluate`` on the held-out test
questions zero-shot and after ``init-config --init-from`` fine-tuning on
``--size`` training questions (``transfer.py``'s data and settings).
"""

import argparse
import copy
from pathlib import Path
from typing import Any, Dict, List, Optional

import transfer
from bench import lexical, machine, spacy_runs, tables

BASE = "configs/answers_glove.cfg"
VARIANTS = ("v4", "v3", "v4_intra", "v4_tok2vec")


def variant_config(name: str, out: Path) -> Path:
    """``BASE`` with the component's model changed for the variant."""
    from spacy.util import load_config

    from spacy_attn.quickstart import backbone_block

    config = load_config(machine.REPO / BASE)
    model = copy.deepcopy(dict(config["components"]["attn_pair_classifier"]["model"]))
    if name == "v3":
        model["@architectures"] = "spacy-attn.DecomposableAttention.v3"
        model.pop("exact_match", None)
        model.pop("match_attr", None)
    elif name == "v4_intra":
        model["intra_attention"] = True
    elif name == "v4_tok2vec":
        model["tok2vec"] = backbone_block("tok2vec", "pair", False)
    elif name != "v4":
        raise SystemExit(f"unknown variant {name!r}: choose from {VARIANTS}")
    config["components"]["attn_pair_classifier"]["model"] = model
    out.mkdir(parents=True, exist_ok=True)
    path = out / "pretrain.cfg"
    config.to_disk(path)
    return path


def pretrain(name: str, out: Path, args: argparse.Namespace) -> Dict[str, Any]:
    cfg = variant_config(name, out)
    overrides = {
        "paths.train": Path(args.train).resolve(),
        "paths.dev": Path(args.dev).resolve(),
        "training.max_steps": args.pretrain_steps,
        "training.eval_frequency": args.pretrain_eval,
    }
    if name != "v4_tok2vec":
        overrides["paths.vectors"] = Path(args.vectors).resolve()
    run = spacy_runs.spacy_train(
        cfg, out / "start", overrides=overrides, threads=args.threads, resume=True
    )
    if run["returncode"]:
        raise SystemExit(f"pretraining failed: {spacy_runs.log_tail(run['log'])}")
    curve = spacy_runs.parse_train_log(run["log"])
    best = max((score for _, score in curve["dev_curve"]), default=None)
    return {
        "command": run["command"],
        "seconds": run["seconds"],
        "dev_map": best,
        "resumed": bool(run.get("resumed")),
    }


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = machine.RUNS / args.name
    files = transfer.split_articles(runs / "src")
    data = transfer.build_set(files, args.size, runs / f"data_{args.size}")
    rows: List[Dict[str, Any]] = []
    for name in args.variants:
        machine.log(f"{name}: pretraining")
        out = runs / name
        done = pretrain(name, out, args)
        start = out / "start" / "model-best"
        zero = transfer.evaluate(start, data / "test.csv", args.threads)
        machine.log(f"{name}: fine-tuning on {args.size} questions")
        tuned = transfer.train(
            data, out / "tuned", start, scratch=False, args=args, resume=True
        )
        rows.append(
            {
                "variant": name,
                "pretrain": done,
                "zero_shot": {k: zero.get(k) for k in transfer.METRICS},
                "tuned": {k: tuned["scores"].get(k) for k in transfer.METRICS},
                "tune_seconds": tuned["seconds"],
                "tune_resumed": bool(tuned.get("resumed")),
            }
        )
        if len(rows) == 1:
            baselines = zero["baselines"]
    return {
        "rows": rows,
        "baselines": {k: baselines[k].get("pair_map") for k in baselines},
        "size": args.size,
        "pretrain_steps": args.pretrain_steps,
    }


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    head = [
        "variant", "pretrain min", "pretraining dev MAP", "zero-shot MAP",
        f"fine-tuned on {results['size']} MAP", "fine-tuned P@1", "fine-tune min",
    ]  # fmt: skip
    body = [
        [
            r["variant"],
            tables.minutes(r["pretrain"]["seconds"]),
            tables.fmt(r["pretrain"]["dev_map"], 3),
            tables.fmt(r["zero_shot"]["pair_map"], 3),
            tables.fmt(r["tuned"]["pair_map"], 3),
            tables.fmt(r["tuned"]["pair_p_at_1"], 3),
            tables.minutes(r["tune_seconds"]),
        ]
        for r in results["rows"]
    ]
    for name, value in results["baselines"].items():
        body.append([f"{name} (trivial)", "", "", tables.fmt(value, 3), "", "", ""])
    resumed = [r["variant"] for r in results["rows"] if r["pretrain"].get("resumed")]
    title = "Transfer: which architecture makes the best start"
    text = tables.header(title, meta, measured=not resumed)
    text += tables.doc_body(__doc__)
    text += f"Pretraining: {results['pretrain_steps']:,} steps each.\n\n"
    if resumed:
        text += (
            f"{', '.join(resumed)}: trained by an earlier run of this command "
            "that was stopped later (its models kept under `benchmarks/runs/`; "
            "minutes as that run took them, beside other jobs), scored again by "
            "this one; the other variants were trained by this run. Minutes "
            "depend on what ran beside them and compare only roughly.\n\n"
        )
    text += tables.md_table(head, body) + "\n" + lexical.note(meta)
    text += "\nPretraining commands:\n\n"
    text += "".join(f"- `{r['pretrain']['command']}`\n" for r in results["rows"])
    return text


def overlap_failure(results: Dict[str, Any]) -> Optional[str]:
    name, base = lexical.strongest(results["baselines"])
    behind = [
        r["variant"] for r in results["rows"] if not r["tuned"]["pair_map"] > base
    ]
    if behind:
        return f"Fine-tuned from {behind}: MAP not above {name}'s {base:.3f}."
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    transfer.common_args(p, "transfer_arch")
    p.add_argument("--train", default="corpus/answers_pretrain/train.spacy")
    p.add_argument("--dev", default="corpus/answers_pretrain/dev.spacy")
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--pretrain-steps", type=int, default=6000)
    p.add_argument("--pretrain-eval", type=int, default=2000)
    p.add_argument("--size", type=int, default=500)
    args = p.parse_args()
    args.variants = [v for v in args.variants.split(",") if v]
    args.start = (
        args.start or "-"
    )  # run_benchmark asks for one; each variant makes its own
    transfer.run_benchmark(p, args, measure, render, overlap_failure)


if __name__ == "__main__":
    main()
