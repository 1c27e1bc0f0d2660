"""Distillation (``spacy attn distill``): a transformer teacher's accuracy
at the fast model's speed, on SICK entailment.

    python benchmarks/distill.py --teacher TEACHER [--steps 6000]
        [--augment 8] [--threads 1] [--name distill] [--quick]
    python benchmarks/distill.py --report-only [--name distill]

Rows, all on the official SICK test set (4,906 pairs; train 4,439, trial
495 as dev): the teacher (the DA on the MiniLM spacy-transformers listener,
``configs/transformer.cfg``, trained on SICK train); the plain student
(``configs/glove_adam.cfg`` over fixed GloVe 100d, ``spacy train`` on the
gold labels); the same student distilled from the teacher (``spacy attn
distill``) on the training rows alone, then with augmented copies (Tang et
al. 2019: masking, vector-neighbour replacement, n-grams), each at the same
number of steps and selected on trial accuracy; the majority class and word
overlap (``spacy attn evaluate``'s baselines). Accuracy and macro-F are
``spacy attn evaluate --json``; pairs/s is ``nlp.pipe`` (batch 256) over
the first 1,000 test pairs made into pair docs beforehand (tokenization
excluded), the median of 3 interleaved passes of teacher and students, in
this process with the run's torch threads.
"""

import argparse
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import transfer
from bench import lexical, machine, spacy_runs, tables

SICK = {
    "train": "sick/train.jsonl.gz",
    "dev": "sick/trial.jsonl.gz",
    "test": "sick/test.jsonl.gz",
}
STUDENT_CONFIG = "configs/glove_adam.cfg"


def files() -> Dict[str, Path]:
    return {k: machine.data_dir() / v for k, v in SICK.items()}


def overrides(args: argparse.Namespace, data: Dict[str, Path]) -> Dict[str, Any]:
    return {
        "paths.train": data["train"],
        "paths.dev": data["dev"],
        "paths.vectors": Path(args.vectors).resolve(),
        "training.max_steps": args.steps,
        "training.eval_frequency": args.eval_frequency,
    }


def distill_args(
    teacher: Path, config: Any, out: Path, options: List[Any], overrides: Dict[str, Any]
) -> List[Any]:
    """The ``spacy attn distill`` arguments of a student config."""
    options = [*options, "--no-progress"]
    for key, value in overrides.items():
        options += [f"--{key}", value]
    return ["distill", Path(teacher).resolve(), config, "--output", out, *options]


def distill_log(text: str) -> Dict[str, Any]:
    """The teacher's time and rows and the transfer set's size, from the
    command's output."""
    found = re.search(r"teacher: ([\d,]+) rows labelled in ([\d.]+) s", text)
    rows = re.search(r"transfer set: ([\d,]+) rows", text)
    return {
        "teacher_seconds": float(found.group(2)) if found else None,
        "teacher_rows": int(found.group(1).replace(",", "")) if found else None,
        "transfer_rows": int(rows.group(1).replace(",", "")) if rows else None,
    }


def distill_run(
    teacher: Path,
    config: Any,
    out: Path,
    options: List[Any],
    overrides: Dict[str, Any],
    threads: int,
    *,
    collect: bool = False,
) -> Dict[str, Any]:
    """``spacy attn distill`` of a student config; its wall time and the
    teacher's share of it (the command's "teacher:" line). ``collect``: the
    run was made by an earlier invocation; read its saved output (no wall
    time)."""
    args = distill_args(teacher, config, out, options, overrides)
    log = out.parent / f"{out.name}.log"
    seconds = None
    if not collect:
        began = time.perf_counter()
        done = transfer.attn(*args, threads=threads)
        seconds = time.perf_counter() - began
        log.write_text(done.stdout + done.stderr)
        if done.returncode:
            raise SystemExit(f"distill failed:\n{done.stderr[-3000:]}")
    return {
        "command": "python -m spacy attn " + " ".join(machine.relative_args(args)),
        "seconds": seconds,
        **distill_log(log.read_text()),
    }


def pairs_per_second(
    models: Dict[str, Path], pairs: List[Tuple[str, str]], threads: int
) -> Dict[str, float]:
    """Median pairs/s of ``nlp.pipe`` (batch 256) over ``pairs`` made into
    pair docs beforehand, 3 passes per model, interleaved."""
    import spacy
    import torch

    from spacy_attn import make_pair

    if threads:
        torch.set_num_threads(threads)
    loaded = {name: spacy.load(path) for name, path in models.items()}
    docs = {
        name: [make_pair(nlp, first, second) for first, second in pairs]
        for name, nlp in loaded.items()
    }
    times: Dict[str, List[float]] = {name: [] for name in models}
    for name, nlp in loaded.items():  # warm-up
        list(nlp.pipe([d.copy() for d in docs[name][:64]], batch_size=256))
    for _ in range(3):
        for name, nlp in loaded.items():
            batch = [d.copy() for d in docs[name]]
            began = time.perf_counter()
            list(nlp.pipe(batch, batch_size=256))
            times[name].append(time.perf_counter() - began)
    return {
        name: round(len(pairs) / statistics.median(t), 1) for name, t in times.items()
    }


BASELINES = (lexical.OVERLAP, *lexical.ADDED)  # spacy_attn.baselines' names
BINNED = " (10 bins, each its majority training label)"
OVERLAP_ROW = lexical.OVERLAP + BINNED


def overlap_baseline(data: Dict[str, Path], n_test: int) -> Dict[str, float]:
    """Word overlap as a 3-way classifier (``binned_baselines``)."""
    return binned_baselines(data, n_test, (lexical.OVERLAP,))[0][lexical.OVERLAP]


def binned_baselines(
    data: Dict[str, Path], n_test: int, names: Tuple[str, ...]
) -> Tuple[Dict[str, Dict[str, float]], Any]:
    """Lexical baselines (``spacy_attn.baselines.lexical_scores``, IDF from
    the training hypotheses) as 3-way classifiers: the training pairs' scores
    cut into 10 equal-count bins, each predicting its most frequent training
    label; accuracy and macro-F on the first ``n_test`` test pairs (0: all)
    by name, and the IDF table."""
    import gzip
    from collections import Counter

    import numpy
    import spacy

    from spacy_attn import make_pair
    from spacy_attn.baselines import lexical_scores
    from spacy_attn.lexical import candidate_idf

    nlp = spacy.blank("en")

    def read(path: Path, n: int = 0) -> Tuple[List[Any], List[str]]:
        rows = [json.loads(line) for line in gzip.open(path, "rt")]
        rows = rows[:n] if n else rows
        docs = [make_pair(nlp, r["premise"], r["hypothesis"]) for r in rows]
        return docs, [r["label"] for r in rows]

    (train, train_gold), (test, gold) = read(data["train"]), read(data["test"], n_test)
    idf = candidate_idf(train)
    out = {}
    for name in names:
        fit = lexical_scores(train, names=(name,), idf=idf)[name]
        edges = numpy.quantile(fit, numpy.linspace(0, 1, 11)[1:-1])
        votes: Dict[int, Counter] = {}
        for o, label in zip(fit, train_gold):
            votes.setdefault(int(numpy.searchsorted(edges, o)), Counter())[label] += 1
        scores = lexical_scores(test, names=(name,), idf=idf)[name]
        pred = [
            votes[int(numpy.searchsorted(edges, o))].most_common(1)[0][0]
            for o in scores
        ]
        out[name] = accuracy_and_macro_f(pred, gold)
    return out, idf


def accuracy_and_macro_f(pred: List[str], gold: List[str]) -> Dict[str, float]:
    labels = sorted(set(gold))
    f1s = []
    for label in labels:
        tp = sum(p == g == label for p, g in zip(pred, gold))
        p_n, g_n = pred.count(label), gold.count(label)
        f1s.append(2 * tp / (p_n + g_n) if p_n + g_n else 0.0)
    acc = sum(p == g for p, g in zip(pred, gold)) / len(gold)
    return {"pair_acc": acc, "pair_macro_f": sum(f1s) / len(f1s)}


def limit(args: argparse.Namespace) -> List[str]:
    """evaluate's options: the first ``--limit`` test pairs (0: all)."""
    return ["--limit", str(args.limit)] if args.limit else []


def row(system: str, scores: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    return {
        "system": system,
        "acc": scores.get("pair_acc"),
        "macro_f": scores.get("pair_macro_f"),
        **extra,
    }


def train_plain(
    args: argparse.Namespace, data: Dict[str, Path], runs: Path
) -> Dict[str, Any]:
    """``spacy train`` of the plain student (``--collect``: its command only)."""
    machine.log("plain student: spacy train")
    if args.collect:
        command = spacy_runs.train_command(
            STUDENT_CONFIG, runs / "plain", overrides(args, data)
        )
        return {"returncode": 0, "seconds": None, "command": command}
    plain = spacy_runs.spacy_train(
        STUDENT_CONFIG,
        runs / "plain",
        overrides=overrides(args, data),
        threads=args.threads,
    )
    if plain["returncode"]:
        raise SystemExit(f"training failed: {spacy_runs.log_tail(plain['log'])}")
    return plain


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = machine.RUNS / args.name
    runs.mkdir(parents=True, exist_ok=True)
    data = files()
    teacher = Path(args.teacher).resolve()
    machine.log("teacher: evaluate")
    began = time.perf_counter()
    teacher_scores = transfer.evaluate(teacher, data["test"], args.threads, limit(args))
    teacher_eval = time.perf_counter() - began
    plain = train_plain(args, data, runs)
    plain_scores = transfer.evaluate(
        runs / "plain" / "model-best", data["test"], args.threads, limit(args)
    )
    students = {"plain": runs / "plain" / "model-best"}
    rows = [
        row("teacher: DA on the MiniLM listener (configs/transformer.cfg)", teacher_scores,
            model="teacher", eval_seconds=teacher_eval),
        row("plain student: DA, fixed GloVe 100d (configs/glove_adam.cfg)", plain_scores,
            model="plain", seconds=plain["seconds"]),
    ]  # fmt: skip
    commands = [plain["command"]]
    for augment in args.augment:
        name = f"distilled_a{augment}"
        machine.log(f"{name}: spacy attn distill")
        options = ["--temperature", args.temperature, "--gold-weight", args.gold_weight,
                   "--augment", augment]  # fmt: skip
        done = distill_run(
            teacher,
            STUDENT_CONFIG,
            runs / name,
            options,
            overrides(args, data),
            args.threads,
            collect=args.collect,
        )
        scores = transfer.evaluate(
            runs / name / "model-best", data["test"], args.threads, limit(args)
        )
        label = (
            "training rows"
            if not augment
            else f"training rows + {augment} augmented copies each"
        )
        rows.append(
            row(f"distilled student: {label}", scores, model=name, seconds=done["seconds"],
                teacher_seconds=done["teacher_seconds"], transfer_rows=done["transfer_rows"])
        )  # fmt: skip
        students[name] = runs / name / "model-best"
        commands.append(done["command"])
    rows.append(row("majority class", plain_scores["baselines"]["majority class"]))
    rows.append(row(OVERLAP_ROW, overlap_baseline(data, args.limit)))
    machine.log("speed")
    import gzip

    test_rows = [json.loads(line) for line in gzip.open(data["test"], "rt")]
    n_speed = min(1000, args.limit or 1000)
    pairs = [(r["premise"], r["hypothesis"]) for r in test_rows[:n_speed]]
    speed = pairs_per_second({"teacher": teacher, **students}, pairs, args.threads)
    for r in rows:
        r["pairs_per_s"] = speed.get(r.get("model", ""))
    return {
        "rows": rows,
        "commands": commands,
        "teacher": machine.relative(teacher),
        "collected": args.collect,
        "note": args.note,
        "settings": {"steps": args.steps, "temperature": args.temperature,
                     "gold_weight": args.gold_weight, "threads": args.threads},
    }  # fmt: skip


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    teacher_speed = next(
        r["pairs_per_s"] for r in results["rows"] if r.get("model") == "teacher"
    )
    head = ["system", "test acc", "macro-F", "pairs/s", "× teacher", "transfer rows",
            "teacher min", "total min"]  # fmt: skip
    body = []
    for r in results["rows"]:
        speed = r.get("pairs_per_s")
        body.append([
            r["system"], tables.fmt(r["acc"] * 100 if r["acc"] is not None else None, 1),
            tables.fmt(r["macro_f"] * 100 if r["macro_f"] is not None else None, 1),
            tables.fmt(speed), tables.fmt(speed / teacher_speed if speed else None, 1),
            tables.fmt(r.get("transfer_rows")), tables.minutes(r.get("teacher_seconds")),
            tables.minutes(r.get("seconds")),
        ])  # fmt: skip
    s = results["settings"]
    text = tables.header(
        "Distillation: SICK entailment", meta, measured=not results.get("collected")
    )
    text += tables.doc_body(__doc__)
    text += (
        f"Teacher: `{results['teacher']}`. Every student: {s['steps']} steps, batch 32, "
        f"{s['threads']} torch thread(s); distilled with temperature {s['temperature']:g} "
        f"and gold weight {s['gold_weight']:g}.\n\n"
    )
    text += tables.md_table(head, body) + "\n" + lexical.note(meta)
    if results.get("note"):
        text += "\n" + results["note"] + "\n"
    text += "\nCommands:\n\n" + "".join(f"- `{c}`\n" for c in results["commands"])
    return text


def failure(results: Dict[str, Any]) -> Optional[str]:
    rows = results["rows"]
    best = max(
        (r for r in rows if r["system"].startswith("distilled")), key=lambda r: r["acc"]
    )
    floor = max(
        r["acc"] for r in rows if r["system"].startswith(("majority", *BASELINES))
    )
    if best["acc"] <= floor:
        return (
            f"The distilled student ({best['acc']:.3f}) does not beat the "
            f"baselines ({floor:.3f})."
        )
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--teacher", help="The teacher pipeline")
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--eval-frequency", type=int, default=500)
    p.add_argument("--augment", default="0,8", help="Comma-separated copies per row")
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--gold-weight", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--name", default="distill")
    p.add_argument("--limit", type=int, default=0, help="Test pairs (0: all)")
    p.add_argument(
        "--collect",
        action="store_true",
        help="Score the trained runs of an earlier invocation (same options): test "
        "scores and speed measured now, no training, no wall times",
    )
    p.add_argument("--note", default="", help="A paragraph printed under the table")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    args.augment = [int(a) for a in args.augment.split(",")]
    args.start = args.teacher  # run_benchmark's required pipeline
    transfer.run_benchmark(p, args, measure, render, failure)


if __name__ == "__main__":
    main()
