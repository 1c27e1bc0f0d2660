"""The "no answer" DCN's learning curve beside the SQuAD v1.1 CPU twin at the
same steps: is its span quality (HasAns) within a few points of the model
that always answers, trained on the same budget? And does its "no answer"
score tell SQuAD 2.0's unanswerable questions apart?

    python benchmarks/squad2_curve.py --run training/squad2_scratch_v3 \\
        [--continued RUN2 ...] [--splits corpus/squad2] [--steps 1000,2000]

Every checkpoint of the run (``RUN/checkpoints/step-N.bin``, written by
``benchmarks/squad_checkpoints.py`` at each evaluation) is loaded into the
run's pipeline and scored (one CPU thread, or ``--gpu-id``) on:

1. **Forced to answer**: its best span (never "no answer") for the 2,000
   SQuAD v1.1 dev questions of the twin's curve (``--subset-file``, the ids
   ``benchmarks/squad_curve.py`` scored), official v1.1 EM / F1: the "dev F1"
   column of ``benchmarks/results/squad.md`` at the same step, read from
   ``--twin`` (the v1.1 twin's ``squad.json``). The trivial baseline (first
   words of the context) beside it.
2. **SQuAD 2.0 dev** (a seeded ``--squad2-limit`` sample of ``test.json``):
   the ROC AUC of the "no answer" probability (unanswerable above
   answerable; 0.5 is chance) and the official best-threshold F1 beside
   always-no-answer. That threshold is chosen on these same questions, so
   it is an upper bound for any threshold chosen elsewhere.
3. Held-out (the run's own log): the official best F1 on the held-out
   train articles, whose unanswerable questions are built (easier).

Scores are cached in the results JSON (``<--name>.json``), so the script
can be rerun while training goes on. Exits 1 when the last checkpoint's
forced F1 is not ``--min-margin`` points above the trivial baseline (the
run has not learned spans).
"""

import argparse
import bisect
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from bench import datafiles, machine, spacy_runs, tables

# Rows scored before the run's own batch size was recorded came from
# configs/squad2_glove_cpu.cfg (batch_by_sequence size 32, hidden 100).
CPU_QUESTIONS_PER_STEP = 32
CPU_HIDDEN_WIDTH = 100
SQUAD11_DEV = "squad/dev-v1.1.json.gz"  # in the data mirror


def roc_auc(positive: Sequence[float], negative: Sequence[float]) -> Optional[float]:
    """P(a positive scores above a negative), ties counted half (the
    Mann-Whitney statistic); None without both kinds."""
    if not positive or not negative:
        return None
    ranked = sorted(negative)
    above = 0.0
    for score in positive:
        lo = bisect.bisect_left(ranked, score)
        hi = bisect.bisect_right(ranked, score)
        above += lo + (hi - lo) / 2
    return above / (len(positive) * len(ranked))


def checkpoints(run: Path, continued: List[Path]) -> List[Dict[str, Any]]:
    """Every checkpoint of a run and the runs that continued it
    (``benchmarks/squad_continue.py``), with its step on the whole curve;
    a continued run's step 0 (its start weights) is left out."""
    points: List[Dict[str, Any]] = []
    offset, seconds0 = 0, 0.0
    for i, path in enumerate([run, *continued]):
        log = {
            r["step"]: r
            for r in map(json.loads, (path / "checkpoints" / "log.jsonl").open())
        }
        for step, rec in sorted(log.items()):
            if i and step == 0:
                continue
            points.append(
                {
                    "step": offset + step,
                    "file": path / "checkpoints" / f"step-{step}.bin",
                    "run": machine.relative(path),
                    "train_seconds": round(seconds0 + rec["seconds"], 1),
                    "heldout_best_f1": rec["other_scores"].get("qa_best_f1"),
                }
            )
        offset += max(log)
        seconds0 += log[max(log)]["seconds"]
    return points


def answerable_share(splits: Path) -> Optional[float]:
    """The share of answerable questions in the training file (from the
    splits' manifest), None when it does not say."""
    manifest = splits / "manifest.json"
    counts = (
        json.loads(manifest.read_text()).get("train", {}) if manifest.exists() else {}
    )
    total = counts.get("answerable", 0) + counts.get("unanswerable", 0)
    return counts["answerable"] / total if total else None


def architecture(nlp) -> str:
    """The registered architecture of the pipeline's QA model."""
    return nlp.config["components"]["attn_span_qa"]["model"]["@architectures"]


def run_sizes(nlp) -> Dict[str, Optional[int]]:
    """Questions per step and hidden width of the run: the GPU config trains
    the paper's sizes at batch 64, the CPU config hidden 100 at batch 32.
    None where the config does not say (a batcher with a size schedule)."""
    size = nlp.config["training"].get("batcher", {}).get("size")
    width = nlp.config["components"]["attn_span_qa"]["model"].get("hidden_width")
    return {
        "questions_per_step": size if isinstance(size, int) else None,
        "hidden_width": width if isinstance(width, int) else None,
    }


def score(nlp, squad11, squad2, batch_size: int) -> Dict[str, Any]:
    """Forced-answer v1.1 F1 and the SQuAD 2.0 "no answer" figures of the
    weights now in ``nlp``."""
    from spacy_attn.qa_eval.no_answer_eval import best_answers, trivial_baselines
    from spacy_attn.squad.metric import squad_evaluate
    from spacy_attn.squad.no_answer_metric import squad2_evaluate

    forced = best_answers(nlp, squad11, batch_size=batch_size)
    v11 = squad_evaluate(squad11["data"], {q: a["text"] for q, a in forced.items()})
    answers = best_answers(nlp, squad2, batch_size=batch_size)
    na = {q: float(a["no_answer_score"]) for q, a in answers.items()}
    preds = {q: a["text"] for q, a in answers.items()}
    official = squad2_evaluate(squad2, preds, na)
    impossible = {
        qa["id"]: not qa["answers"]
        for article in squad2["data"]
        for p in article["paragraphs"]
        for qa in p["qas"]
    }
    return {
        "forced_exact_match": v11["exact_match"],
        "forced_f1": v11["f1"],
        "squad2_no_answer_auc": roc_auc(
            [s for q, s in na.items() if impossible[q]],
            [s for q, s in na.items() if not impossible[q]],
        ),
        "squad2_best_f1": official["best_f1"],
        "squad2_always_no_answer_f1": trivial_baselines(squad2, answers)[
            "always_no_answer"
        ]["f1"],
        "squad2_forced_has_ans_f1": official.get("HasAns_f1"),
    }


def interpolate(points: Sequence[Sequence[float]], x: float) -> Optional[float]:
    """The piecewise-linear value at ``x`` of ``(x, y)`` points sorted by x;
    None outside them."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 > x0 else y0
    return None


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    twin = res.get("twin_curve", {})
    # The twin reads only answerable questions: where it had seen as many
    # answerable questions as this run (a third of this run's are not).
    by_seen = sorted(
        (v["questions_seen"], v["f1"]) for v in twin.values() if "questions_seen" in v
    )
    share = res.get("answerable_share") or 1.0
    rows = []

    # Rows cached before these were recorded are the CPU config's.
    def per_step(p: Dict[str, Any]) -> Optional[int]:
        return p.get("questions_per_step", CPU_QUESTIONS_PER_STEP)

    widths = {p.get("hidden_width", CPU_HIDDEN_WIDTH) for p in res["curve"].values()}
    sizes = {per_step(p) for p in res["curve"].values()}
    for key in sorted(res["curve"], key=int):
        p = res["curve"][key]
        t = twin.get(key, {})
        n = per_step(p)
        seen = p["step"] * n * share if n is not None else None
        rows.append(
            [
                tables.fmt(p["step"]),
                p["architecture"].rsplit(".", 1)[-1],
                tables.minutes(p["train_seconds"]),
                f"{p['forced_f1']:.1f}",
                f"{t['f1']:.1f}" if t else "",
                f"{p['forced_f1'] - t['f1']:+.1f}" if t else "",
                tables.fmt(interpolate(by_seen, seen) if seen is not None else None, 1),
                f"{100 * p['heldout_best_f1']:.1f}" if p["heldout_best_f1"] else "",
                f"{p['squad2_no_answer_auc']:.3f}",
                f"{p['squad2_best_f1']:.1f}",
                f"{p['squad2_always_no_answer_f1']:.1f}",
            ]
        )
    baseline = res.get("baseline_f1")
    archs = ", ".join(
        f"`{a}`"
        for a in dict.fromkeys(p["architecture"] for p in res["curve"].values())
    )
    return (
        tables.header(
            "SQuAD 2.0-style DCN (no answer) against the SQuAD v1.1 twin, by step",
            meta,
        )
        + "Each checkpoint's scores are cached in the JSON: a row was measured "
        "by the invocation of this command that first scored it (same data), "
        "not necessarily by the one named above.\n\n"
        + f"**Runs**: {', '.join(res['runs'])} ({archs}, hidden width "
        f"{' / '.join(str(w) for w in sorted(widths, key=str))}), "
        f"{' / '.join(str(n) for n in sorted(sizes, key=str))} questions per step, "
        "about a third of them built "
        "unanswerable (a v1.1 question asked of another paragraph of its "
        "article). **Twin**: the SQuAD v1.1 CPU run of "
        f"[squad.md](squad.md) (hidden width {CPU_HIDDEN_WIDTH}, "
        f"{CPU_QUESTIONS_PER_STEP} questions per step, every question "
        "answerable).\n\n"
        '- *forced F1*: the model\'s best span, never "no answer", on the '
        f"{res['squad11_questions']:,} SQuAD v1.1 dev questions of the twin's "
        "curve, official v1.1 metric: the twin's *dev F1* at the same step is "
        "beside it (the trivial first-words baseline: "
        f"{baseline:.1f}), and the twin's F1 where it had seen as many "
        "answerable questions (step x questions per step x "
        f"{share:.3f}, the training file's answerable share; linear between the "
        "twin's points).\n" + "- *held-out best F1*: the training log's official "
        "best-threshold F1 on 1,000 held-out train-article questions (built "
        "unanswerables).\n"
        "- *SQuAD 2.0 dev*: a seeded sample of "
        f"{res['squad2_questions']:,} questions (adversarial unanswerables): the "
        'ROC AUC of the "no answer" probability (0.5 = chance) and the '
        "official best-threshold F1 (threshold chosen on these questions: an "
        "upper bound) beside always-no-answer.\n\n"
        + tables.md_table(
            [
                "step",
                "DCN",
                "training",
                "forced F1",
                "twin F1",
                "difference",
                "twin F1, same answerable questions",
                "held-out best F1",
                "SQuAD 2.0 no-answer AUC",
                "SQuAD 2.0 best F1",
                "always no answer",
            ],
            rows,
        )
        + (f"\n{res['notes']}\n" if res.get("notes") else "")
    )


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--run", required=True, type=Path, help="spacy train output")
    p.add_argument("--continued", action="append", default=[], type=Path)
    p.add_argument("--splits", default="corpus/squad2", type=Path)
    p.add_argument(
        "--squad11-dev",
        default="",
        help=f"SQuAD v1.1 dev (default: the mirror's {SQUAD11_DEV})",
    )
    p.add_argument(
        "--subset-file", default=str(machine.RESULTS / "squad_dev_subset.json")
    )
    p.add_argument("--twin", default=str(machine.RESULTS / "squad.json"))
    p.add_argument("--squad2-limit", type=int, default=2000)
    p.add_argument("--steps", default="", help="only these steps (comma-separated)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--gpu-id", type=int, default=-1, help="CUDA device (-1: CPU)")
    p.add_argument("--min-margin", type=float, default=10.0)
    p.add_argument("--notes", default="")
    p.add_argument("--name", default="squad2_curve", help="results file name")
    p.add_argument("--out-dir", default="", help="default: benchmarks/results")
    args = p.parse_args(argv)
    import os

    os.environ.update(spacy_runs.thread_env(args.threads))
    import spacy
    import torch

    from spacy_attn.qa_eval.evaluate import baseline_predictions
    from spacy_attn.qa_eval.no_answer_eval import subset
    from spacy_attn.squad import load_squad_json
    from spacy_attn.squad.metric import squad_evaluate

    torch.set_num_threads(args.threads)
    # Before any pipeline is loaded: the checkpoints then load onto the GPU.
    device = machine.use_device(args.gpu_id)
    out_dir = Path(args.out_dir) if args.out_dir else machine.RESULTS
    cache_file = out_dir / f"{args.name}.json"
    cached = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    res = cached.get("results", {})
    if res.get("runs", [None])[0] != machine.relative(args.run):
        res = {}
    points = checkpoints(args.run, args.continued)
    if args.steps:
        wanted = {int(s) for s in args.steps.split(",")}
        points = [p for p in points if p["step"] in wanted]
    v11_path = args.squad11_dev or str(machine.data_dir() / SQUAD11_DEV)
    squad11 = load_squad_json(v11_path)
    if Path(args.subset_file).exists():
        ids = json.loads(Path(args.subset_file).read_text())["ids"]
        squad11 = datafiles.squad_subset(squad11, ids)
    squad2 = subset(load_squad_json(args.splits / "test.json"), args.squad2_limit)
    twin = json.loads(Path(args.twin).read_text()) if Path(args.twin).exists() else {}
    # Each run's own pipeline: a run continued as a later version (v2 weights
    # continued as v3) must be scored with its own architecture.
    # One pipeline in memory at a time (the points come run by run).
    loaded: Dict[str, Any] = {}
    curve = res.get("curve", {})
    for point in points:
        if str(point["step"]) in curve:
            continue
        run_dir = point["file"].parent.parent
        if str(run_dir) not in loaded:
            loaded = {str(run_dir): spacy.load(run_dir / "model-last")}
        nlp = loaded[str(run_dir)]
        nlp.get_pipe("attn_span_qa").from_bytes(point["file"].read_bytes())
        row = {k: v for k, v in point.items() if k != "file"}
        row["architecture"] = architecture(nlp)
        row.update(run_sizes(nlp))
        row.update(score(nlp, squad11, squad2, args.batch_size))
        curve[str(point["step"])] = row
        machine.log(
            f"step {row['step']}: forced F1 {row['forced_f1']:.1f}, SQuAD 2.0 "
            f"no-answer AUC {row['squad2_no_answer_auc']:.3f}, best F1 "
            f"{row['squad2_best_f1']:.1f} (always no answer "
            f"{row['squad2_always_no_answer_f1']:.1f})"
        )
    n11 = sum(len(p["qas"]) for a in squad11["data"] for p in a["paragraphs"])
    res = {
        "runs": [machine.relative(r) for r in [args.run, *args.continued]],
        "curve": curve,
        "twin_curve": {
            k: {
                key: v[key]
                for key in ("f1", "exact_match", "questions_seen")
                if key in v
            }
            for k, v in twin.get("curve", {}).items()
        },
        "answerable_share": answerable_share(args.splits),
        "baseline_f1": squad_evaluate(squad11["data"], baseline_predictions(squad11))[
            "f1"
        ],
        "squad11_questions": n11,
        "squad2_questions": args.squad2_limit,
        "notes": args.notes or res.get("notes", ""),
    }
    meta = machine.metadata(device)
    meta["command"] = machine.command_line(argv)
    md = tables.write_results(
        args.name, {**meta, "results": res}, render(meta, res), out_dir=out_dir
    )
    print(md.read_text())
    if not curve:
        sys.exit("✘ no checkpoint scored")
    last = curve[max(curve, key=int)]
    if last["forced_f1"] < res["baseline_f1"] + args.min_margin:
        sys.exit(
            f"✘ step {last['step']}: forced F1 {last['forced_f1']:.1f} is not "
            f"{args.min_margin:g} points above the first-words baseline "
            f"{res['baseline_f1']:.1f}: the run has not learned spans."
        )


if __name__ == "__main__":
    main()
