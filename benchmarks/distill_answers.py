"""Distillation for answer selection with the questions a user has: a
transformer teacher trained on a few hundred questions, distilled into the
quickstart GloVe model with the user's unlabelled questions.

    python benchmarks/distill_answers.py [--size 500] [--pool 2000]
        [--teacher-steps 300] [--steps 1500] [--augment 4] [--threads 1]
        [--name distill_answers] [--quick]
    python benchmarks/distill_answers.py --report-only [--name distill_answers]

The set is ``benchmarks/transfer.py``'s (SQuADShifts new_wiki, split by
article; 10 test articles, 1,000 test questions; each question's candidates
are its paragraph's sentences, ``yes`` where one holds an answer), with
``--size`` labelled training questions. The unlabelled rows are the
question-sentence rows of ``--pool`` training questions of the same
articles (labels dropped; the labelled questions' rows are dropped as
duplicates). Teacher: the quickstart transformer config (``init-config
--backbone transformer --binary --group-col``, MiniLM, offline package)
trained on the labelled questions. Students: the quickstart GloVe config
(``--backbone glove``) trained on the gold labels, and distilled (``spacy
attn distill``) from the teacher on the training rows, with the unlabelled
rows, and with augmented copies too; all the same steps on one thread,
selected on dev MAP. Every system is scored by ``spacy attn evaluate`` on
the same test questions, beside its majority-class and word-overlap rows;
pairs/s as in ``benchmarks/distill.py`` over the first 1,000 test pairs.
"""

import argparse
import csv
import time
from pathlib import Path
from typing import Any, Dict, List

import distill
import transfer
from bench import datafiles, lexical, machine, spacy_runs, tables

COLS = transfer.COLS
BINARY = ["--binary", "--positive-label", "yes"]


def config(out: Path, backbone: str, threads: int) -> Path:
    path = out / f"{backbone}.cfg"
    out.mkdir(parents=True, exist_ok=True)
    done = transfer.attn(
        "init-config", path, "--backbone", backbone, *BINARY, *COLS, threads=threads
    )
    if done.returncode:
        raise SystemExit(f"init-config failed:\n{done.stderr}")
    return path


def row(system: str, scores: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    return {"system": system, **{k: scores.get(k) for k in transfer.METRICS}, **extra}


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = machine.RUNS / args.name
    files = transfer.split_articles(runs / "src")
    data = transfer.build_set(files, args.size, runs / f"data_{args.size}")
    pool = transfer.build_set(files, args.pool, runs / f"pool_{args.pool}")
    vectors = Path(args.vectors).resolve()
    base = {
        "paths.train": data / "train.csv",
        "paths.dev": data / "dev.csv",
        "training.eval_frequency": args.eval_frequency,
    }
    machine.log("teacher: spacy train")
    teacher_cfg = config(runs, "transformer", args.threads)
    teacher_run = spacy_runs.spacy_train(
        teacher_cfg, runs / "teacher",
        overrides={**base, "paths.transformer": datafiles.minilm_dir(),
                   "training.max_steps": args.teacher_steps},
        threads=args.threads,
    )  # fmt: skip
    if teacher_run["returncode"]:
        raise SystemExit(f"teacher failed: {spacy_runs.log_tail(teacher_run['log'])}")
    teacher = runs / "teacher" / "model-best"
    test = data / "test.csv"
    scores = transfer.evaluate(teacher, test, args.threads)
    rows = [row("teacher: DA on MiniLM (quickstart transformer config)", scores,
                model="teacher", seconds=teacher_run["seconds"])]  # fmt: skip
    baselines = scores["baselines"]
    student_cfg = config(runs, "glove", args.threads)
    student = {**base, "paths.vectors": vectors, "training.max_steps": args.steps}
    machine.log("plain student: spacy train")
    plain = spacy_runs.spacy_train(
        student_cfg, runs / "plain", overrides=student, threads=args.threads
    )
    if plain["returncode"]:
        raise SystemExit(f"training failed: {spacy_runs.log_tail(plain['log'])}")
    scores = transfer.evaluate(runs / "plain" / "model-best", test, args.threads)
    rows.append(row("plain student: GloVe DA (quickstart glove config), gold labels",
                    scores, model="plain", seconds=plain["seconds"]))  # fmt: skip
    models = {"teacher": teacher, "plain": runs / "plain" / "model-best"}
    commands = [teacher_run["command"], plain["command"]]
    unlabelled = [
        "--unlabelled",
        pool / "train.csv",
        "--unlabelled-cols",
        "question,sentence",
    ]
    variants = [
        ("training rows", "a", []),
        ("+ unlabelled rows", "u", unlabelled),
        (f"+ unlabelled + {args.augment} augmented copies", "ua",
         [*unlabelled, "--augment", args.augment]),
    ]  # fmt: skip
    for label, key, options in variants:
        machine.log(f"distilled: {label}")
        out = runs / f"distilled_{key}"
        options = ["--temperature", args.temperature, *options]
        done = distill.distill_run(
            teacher, student_cfg, out, options, student, args.threads
        )
        scores = transfer.evaluate(out / "model-best", test, args.threads)
        rows.append(row(f"distilled student: {label}", scores, model=key,
                        seconds=done["seconds"], teacher_seconds=done["teacher_seconds"],
                        transfer_rows=done["transfer_rows"]))  # fmt: skip
        models[key] = out / "model-best"
        commands.append(done["command"])
    for key in ("majority class", "word overlap"):
        rows.append(row(key, baselines[key]))
    machine.log("speed")
    with test.open(newline="", encoding="utf8") as file:
        pairs = [(r["question"], r["sentence"]) for r in csv.DictReader(file)][:1000]
    speed = distill.pairs_per_second(models, pairs, args.threads)
    for r in rows:
        r["pairs_per_s"] = speed.get(r.get("model", ""))
    return {
        "rows": rows,
        "commands": commands,
        "settings": {"size": args.size, "pool": args.pool, "steps": args.steps,
                     "teacher_steps": args.teacher_steps,
                     "temperature": args.temperature, "threads": args.threads},
    }  # fmt: skip


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    rows = results["rows"]
    teacher_speed = next(r["pairs_per_s"] for r in rows if r.get("model") == "teacher")
    head = ["system", "MAP", "MRR", "P@1", "pos-F", "pairs/s", "× teacher",
            "transfer rows", "teacher min", "total min"]  # fmt: skip
    body: List[List[str]] = []
    for r in rows:
        speed = r.get("pairs_per_s")
        body.append([
            r["system"], *(tables.fmt(r[k], 3) for k in transfer.METRICS),
            tables.fmt(speed), tables.fmt(speed / teacher_speed if speed else None, 1),
            tables.fmt(r.get("transfer_rows")), tables.minutes(r.get("teacher_seconds")),
            tables.minutes(r.get("seconds")),
        ])  # fmt: skip
    s = results["settings"]
    text = tables.header(
        "Distillation: answer selection with a few hundred questions", meta
    )
    text += tables.doc_body(__doc__)
    text += (
        f"{s['size']} labelled training questions, {s['pool']} in the pool; teacher "
        f"{s['teacher_steps']} steps, students {s['steps']} steps, temperature "
        f"{s['temperature']:g}, {s['threads']} torch thread(s).\n\n"
    )
    text += tables.md_table(head, body) + "\n" + lexical.note(meta)
    text += "\nCommands:\n\n" + "".join(f"- `{c}`\n" for c in results["commands"])
    return text


def failure(results: Dict[str, Any]) -> str:
    rows = results["rows"]
    best = max(
        (r for r in rows if r["system"].startswith("distilled")),
        key=lambda r: r["pair_map"],
    )
    name, base = lexical.strongest({r["system"]: r["pair_map"] for r in rows})
    if best["pair_map"] > base:
        return ""
    return (
        f"The distilled student (MAP {best['pair_map']:.3f}) does not beat {name} "
        f"({base:.3f})."
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=500)
    p.add_argument("--pool", type=int, default=2000)
    p.add_argument("--teacher-steps", type=int, default=300)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--eval-frequency", type=int, default=100)
    p.add_argument("--augment", type=int, default=4)
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--name", default="distill_answers")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    args.start = (
        "teacher"  # run_benchmark's pipeline check; the teacher is trained here
    )
    began = time.perf_counter()
    transfer.run_benchmark(p, args, measure, render, lambda r: failure(r) or None)
    machine.log(f"done in {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
