"""Transfer from the pretrained NLI start (the ``nli`` workflow): zero-shot
on SNLI test and SICK test, and fine-tuned (``init-config --init-from``) on
RTE and MRPC against the same model from scratch, beside the majority class
and the lexical baselines (zero-shot: each cut into three intervals where it
is most accurate on the test set, as ``spacy attn evaluate`` cuts it).

    python benchmarks/transfer_nli.py --start START [--max-steps 1500]
        [--threads 1] [--name transfer_nli] [--quick] [--new-head]
        [--tasks RTE,MRPC] [--systems scratch,start,head,teacher,distill]
        [--seed N] [--teacher PIPELINE] [--augment 8]
    python benchmarks/transfer_nli.py --report-only [--name transfer_nli]

None of these sets is in the start's training data (``scripts/nli_start.py``).
RTE (GLUE; test: its dev set, 277 pairs) and MRPC (test: the official test
set, 1,725 pairs) each keep a seeded 10% of their train file for dev (model
selection). From scratch: the quickstart config (``init-config --backbone
glove --binary``) on the file's own labels, with the start's vectors. From
the start: its three labels, the file's mapped onto them (``--label-map``:
RTE ``not_entailment`` and MRPC ``0`` -> ``neutral``; RTE ``entailment``
and MRPC ``1`` -> ``entailment``), positive label ``entailment``. Both run
the same steps on one thread, selected on dev; every row is ``spacy attn
evaluate`` on the test file.
"""

import argparse
import gzip
import json
import random
from pathlib import Path
from typing import Any, Dict, List, Optional

import distill
import transfer
from bench import datafiles, lexical, machine, scoring, spacy_runs, tables

# task -> (train file, test file, positive label, the start's label per label)
TASKS = {
    "RTE": (
        "rte/train.jsonl.gz",
        "rte/dev.jsonl.gz",
        "entailment",
        {"entailment": "entailment", "not_entailment": "neutral"},
    ),
    "MRPC": (
        "mrpc/train.jsonl.gz",
        "mrpc/test.jsonl.gz",
        "1",
        {"1": "entailment", "0": "neutral"},
    ),
}
NEW_HEAD = "from the start, new head"
NEW_HEAD_TEXT = (
    "From the start, new head (``--new-head``): the file's own labels, every "
    "weight of the start but its output layer (``spacy-attn.start_weights.v1``), "
    "the same steps."
)
LEXICAL = "from the start, new head, lexical features"
LEXICAL_TEXT = (
    "From the start, new head, lexical features (``--new-head "
    "--lexical-features``): as the new head, in ``spacy-attn."
    "DecomposableAttention.v5``, whose output layer also reads the two texts' "
    "word and bigram overlap."
)
TEACHER = "teacher: DA on MiniLM"
DISTILLED = "from the start, new head, distilled from the teacher"
DISTILL_TEXT = (
    "Teacher: the quickstart transformer config (``init-config --backbone "
    "transformer --binary``: the DA on the MiniLM listener, about 30 times slower "
    "than the GloVe student where docs/distill.md measured it) trained on the "
    "task's training split. Distilled: the "
    "new-head start trained by ``spacy attn distill`` on the teacher's scores of "
    "the training rows and their augmented copies, the same steps, selected on dev."
)
# (row name, key), in the table's order.
SYSTEMS = (
    ("from scratch", "scratch"),
    ("from the start", "start"),
    (NEW_HEAD, "head"),
    (LEXICAL, "lexical"),
    (TEACHER, "teacher"),
    (DISTILLED, "distill"),
)
SYSTEM_KEYS = dict(SYSTEMS)
# The files' two text columns (the readers find them by themselves).
TEXT_COLS = {"RTE": ("premise", "hypothesis"), "MRPC": ("text_a", "text_b")}
OVERLAP_DEV = "word overlap, threshold tuned on dev"
ZERO_SHOT = {"SNLI test": "snli/test.jsonl.gz", "SICK test": "sick/test.jsonl.gz"}


def split(task: str, out: Path) -> Dict[str, Path]:
    """The task's train file as train / dev (seeded 10%), and its test file."""
    train_rel, test_rel, _, _ = TASKS[task]
    rows = [json.loads(ln) for ln in gzip.open(machine.data_dir() / train_rel, "rt")]
    random.Random(f"0:{task}").shuffle(rows)
    n_dev = len(rows) // 10
    out.mkdir(parents=True, exist_ok=True)
    files = {"test": machine.data_dir() / test_rel}
    for name, part in (("dev", rows[:n_dev]), ("train", rows[n_dev:])):
        files[name] = out / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in part))
    return files


def overlap_dev(task: str, files: Dict[str, Path]) -> Dict[str, Any]:
    """Word overlap on test with its threshold tuned on the dev split, as
    the models' are (``evaluate``'s word-overlap row tunes it on test)."""
    positive = TASKS[task][2]
    splits = {}
    for name in ("dev", "test"):
        opener = gzip.open if files[name].suffix == ".gz" else open
        with opener(files[name], "rt") as f:
            splits[name] = [json.loads(line) for line in f if line.strip()]
    return scoring.overlap_dev_tuned(splits, TEXT_COLS[task], "label", positive)


def fine_tune(
    task: str,
    files: Dict[str, Path],
    out: Path,
    start: Path,
    *,
    kind: str,
    args: argparse.Namespace,
    teacher: Optional[Path] = None,
) -> Dict[str, Any]:
    """Write the ``kind`` system's config with ``init-config``, train it (or
    distill it from ``teacher``) and evaluate its model-best on test."""
    _, _, positive, mapping = TASKS[task]
    cfg = out / "config.cfg"
    if kind == "scratch":
        options = ["--backbone", "glove", "--binary", "--positive-label", positive]
    elif kind == "teacher":
        options = [
            "--backbone",
            "transformer",
            "--binary",
            "--positive-label",
            positive,
        ]
    elif kind in ("head", "lexical", "distill"):  # the file's own labels, a new head
        options = ["--binary", "--positive-label", positive, "--init-from", start,
                   "--new-head"]  # fmt: skip
        if kind == "lexical":
            options.append("--lexical-features")
    else:
        options = ["--binary", "--positive-label", "entailment", "--init-from", start,
                   "--label-map", json.dumps(mapping)]  # fmt: skip
    done = transfer.attn("init-config", cfg, *options, threads=args.threads)
    if done.returncode:
        raise SystemExit(f"init-config failed:\n{done.stderr}")
    overrides: Dict[str, Any] = {
        "paths.train": files["train"],
        "paths.dev": files["dev"],
        "training.max_steps": args.max_steps,
        "training.eval_frequency": args.eval_frequency,
    }
    if args.seed:  # seed 0 is the configs' own: its commands stay as they were
        overrides["system.seed"] = args.seed
    if kind == "scratch":
        overrides["paths.vectors"] = start
    if kind == "teacher":
        overrides["paths.transformer"] = datafiles.minilm_dir()
        overrides["training.max_steps"] = args.teacher_steps
    if kind == "distill":
        assert teacher is not None
        run = distill_student(teacher, cfg, out / "model", overrides, args)
    else:
        run = spacy_runs.spacy_train(
            cfg, out / "model", overrides=overrides, threads=args.threads,
            resume=args.resume,
        )  # fmt: skip
        if run["returncode"]:
            raise SystemExit(f"training failed: {spacy_runs.log_tail(run['log'])}")
    label = ["--positive-label", positive if kind != "start" else "entailment"]
    scores = transfer.evaluate(
        out / "model" / "model-best", files["test"], args.threads, label
    )
    return {
        "command": run["command"],
        "seconds": run["seconds"],
        "scores": scores,
        "resumed": bool(run.get("resumed")),
    }


def distill_student(
    teacher: Path,
    cfg: Path,
    out: Path,
    overrides: Dict[str, Any],
    args: argparse.Namespace,
) -> Dict[str, Any]:
    """``spacy attn distill`` of the new-head config from ``teacher``
    (``--resume``: reuse a finished run in ``out``, its saved log)."""
    options: List[Any] = ["--augment", args.augment, "--temperature", args.temperature]
    if args.augment:
        options += ["--seed", args.seed]
    resumed = bool(
        args.resume
        and (out / "model-best").exists()
        and (out.parent / f"{out.name}.log").exists()
    )
    run = distill.distill_run(
        teacher, cfg, out, options, overrides, args.threads, collect=resumed
    )
    return {**run, "resumed": resumed}


def row(task: str, system: str, scores: Dict[str, Any], seconds: Any) -> Dict[str, Any]:
    keys = ("pair_acc", "pair_macro_f", "pair_pos_f")
    return {
        "task": task,
        "system": system,
        **{k: scores.get(k) for k in keys},
        "seconds": seconds,
    }


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = machine.RUNS / args.name
    start = Path(args.start).resolve()
    rows: List[Dict[str, Any]] = []
    commands: List[str] = []
    for name, rel in ZERO_SHOT.items() if not args.fine_tune_only else ():
        scores = transfer.evaluate(start, machine.data_dir() / rel, args.threads, ())
        rows.append(row(name, "start, zero-shot", scores, None))
        # The majority class and the lexical baselines, each cut where it is
        # most accurate on this test set (evaluate's best case).
        for base, base_scores in scores["baselines"].items():
            rows.append(row(name, base, base_scores, None))
    for task in args.tasks:
        files = split(task, runs / task)
        systems = [(system, kind) for system, kind in SYSTEMS if kind in args.systems]
        teacher = Path(args.teacher).resolve() if args.teacher else None
        baselines: Dict[str, Any] = {}
        for system, kind in systems:
            machine.log(f"{task}: {system}")
            out = runs / f"{task}_{kind}"
            if kind == "distill" and teacher is None:
                teacher = runs / f"{task}_teacher" / "model" / "model-best"
                if not teacher.exists():
                    raise SystemExit(
                        f"{teacher}: no teacher; add teacher to --systems or "
                        "pass --teacher PIPELINE"
                    )
            done = fine_tune(
                task, files, out, start, kind=kind, args=args, teacher=teacher
            )
            if kind == "teacher":
                teacher = out / "model" / "model-best"
            rows.append(row(task, system, done["scores"], done["seconds"]))
            rows[-1]["resumed"] = done["resumed"]
            commands.append(done["command"])
            # The baselines depend on the test file only: one row each.
            baselines = baselines or done["scores"].get("baselines", {})
        for key in ("majority class", "word overlap"):
            if key in baselines:
                rows.append(row(task, key, baselines[key], None))
        rows.append(row(task, OVERLAP_DEV, overlap_dev(task, files), None))
    return {
        "rows": rows,
        "train_commands": commands,
        "start": machine.relative(start),
        "teacher": machine.relative(Path(args.teacher).resolve())
        if args.teacher
        else None,
    }


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    head = ["test set", "system", "accuracy", "macro-F", "pos-F", "train min"]
    body = [
        [
            r["task"],
            r["system"],
            *(tables.fmt(r[k], 3) for k in ("pair_acc", "pair_macro_f", "pair_pos_f")),
            tables.minutes(r["seconds"]),
        ]
        for r in results["rows"]
    ]
    text = tables.header("Transfer from a pretrained start", meta)
    text += tables.doc_body(__doc__)
    if any(r["system"] == NEW_HEAD for r in results["rows"]):
        text += NEW_HEAD_TEXT + "\n\n"
    if any(r["system"] == LEXICAL for r in results["rows"]):
        text += LEXICAL_TEXT + "\n\n"
    if any(r["system"] in (TEACHER, DISTILLED) for r in results["rows"]):
        text += DISTILL_TEXT + "\n\n"
    if results.get("teacher"):
        text += f"Teacher: `{results['teacher']}` (trained by an earlier run).\n\n"
    resumed = [
        f"{r['task']} {r['system']}" for r in results["rows"] if r.get("resumed")
    ]
    if resumed:
        text += (
            f"Trained by an earlier run of the same training command and reused "
            f"here (`--resume`): {', '.join(resumed)}; their minutes are that "
            "run's. Every evaluation and baseline is this run's.\n\n"
        )
    text += f"Start: `{results['start']}`.\n\n" + tables.md_table(head, body) + "\n"
    text += lexical.note(meta)
    text += "\nTraining commands:\n\n" + "".join(
        f"- `{c}`\n" for c in results["train_commands"]
    )
    return text


def baseline_failure(results: Dict[str, Any]) -> Optional[str]:
    """What the start does not beat: zero-shot, the majority class and the
    lexical baselines on accuracy; fine-tuned, the majority class and the
    lexical baselines (``evaluate``'s, and word overlap tuned on dev) on
    accuracy and positive F1."""
    rows = results["rows"]
    zero = {r["task"]: r for r in rows if r["system"] == "start, zero-shot"}
    baselines = ("majority class", "word overlap", *lexical.ADDED, OVERLAP_DEV)
    missed = [
        f"{t} zero-shot: accuracy {zero[t]['pair_acc']:.4f} vs {b['system']} "
        f"{b['pair_acc']:.4f}"
        for t in zero
        for b in rows
        if b["task"] == t and b["system"] in baselines
        if not zero[t]["pair_acc"] > b["pair_acc"]
    ]
    for r in rows:
        if r["system"] not in (NEW_HEAD, LEXICAL, DISTILLED, "from the start"):
            continue
        for b in rows:
            if b["task"] != r["task"] or b["system"] not in baselines:
                continue
            for key, name in (("pair_acc", "accuracy"), ("pair_pos_f", "pos-F")):
                if not (r[key] or 0) > (b[key] or 0):
                    missed.append(
                        f"{r['task']} {r['system']}: {name} {r[key]:.4f} vs "
                        f"{b['system']} {b[key]:.4f}"
                    )
    return (
        "The start does not beat the trivial baselines: " + "; ".join(missed)
        if missed
        else None
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    transfer.common_args(p, "transfer_nli")
    p.add_argument("--new-head", action="store_true", help=f"also {NEW_HEAD!r}")
    p.add_argument("--tasks", default=",".join(TASKS), help="fine-tuning tasks")
    p.add_argument("--seed", type=int, default=0, help="system.seed of training")
    p.add_argument(
        "--teacher",
        default=None,
        help="distill: this trained teacher (default: the teacher system's, trained "
        "in this run's folder)",
    )
    p.add_argument("--teacher-steps", type=int, default=600, help="teacher: max_steps")
    p.add_argument("--augment", type=int, default=8, help="distill: copies per row")
    p.add_argument("--temperature", type=float, default=1.0, help="distill: T")
    p.add_argument(
        "--resume",
        action="store_true",
        help="reuse trainings that finished with the same command (run.json)",
    )
    p.add_argument(
        "--fine-tune-only", action="store_true", help="skip the zero-shot rows"
    )
    p.add_argument(
        "--systems",
        default=None,
        help="which fine-tuned rows, of scratch,start,head,lexical,teacher,distill "
        "(default: scratch,start and head with --new-head); a start whose labels "
        "are not NLI's (the answer-selection start) runs head, lexical, teacher "
        "and distill",
    )
    args = p.parse_args()
    default = "scratch,start" + (",head" if args.new_head else "")
    args.systems = [s for s in (args.systems or default).split(",") if s]
    wrong = sorted(set(args.systems) - set(SYSTEM_KEYS.values()))
    if wrong:
        p.error(
            f"unknown systems {wrong}: choose from {', '.join(SYSTEM_KEYS.values())}"
        )
    args.tasks = [t for t in args.tasks.split(",") if t]
    unknown = sorted(set(args.tasks) - set(TASKS))
    if unknown:
        p.error(f"unknown tasks {unknown}: choose from {sorted(TASKS)}")
    transfer.run_benchmark(p, args, measure, render, baseline_failure)


if __name__ == "__main__":
    main()
