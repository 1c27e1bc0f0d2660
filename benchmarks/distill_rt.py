"""Distillation for document classification: a transformer teacher's
Rotten Tomatoes polarity distilled into the self-attentive doc classifier
(``attn_doc_embedder`` over fixed GloVe), beside spaCy's bag-of-words.

    python benchmarks/distill_rt.py [--teacher-steps 600] [--steps 2000]
        [--augment 0,8] [--threads 1] [--name distill_rt] [--quick]
    python benchmarks/distill_rt.py --report-only [--name distill_rt]

Splits: ``benchmarks/textcat.py``'s (the mirror's 8,530 sentences, seed 0,
80 / 10 / 10: 6,824 / 853 / 853). Teacher: the quickstart doc config on a
transformer (``init-config --task doc --backbone transformer``: the
self-attentive classifier over MiniLM, offline package). Students: the
quickstart GloVe doc config (``--task doc --backbone glove``) trained on the
gold labels, and distilled from the teacher (``spacy attn distill``) on the
training sentences, then with augmented copies. spaCy's ``TextCatBOW.v3``
row is ``benchmarks/textcat.py``'s, at the students' steps. Every model is
``model-best`` on dev; test accuracy and macro-F are the argmax of
``doc.cats`` over the test sentences, docs/s the median of 3 interleaved
``nlp.pipe`` passes (batch 256, tokenization included) over them, in this
process with the run's torch threads.
"""

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import distill
import textcat
import transfer
from bench import datafiles, machine, spacy_runs, tables


def config(out: Path, backbone: str, threads: int) -> Path:
    path = out / f"doc_{backbone}.cfg"
    out.mkdir(parents=True, exist_ok=True)
    done = transfer.attn(
        "init-config", path, "--task", "doc", "--backbone", backbone, threads=threads
    )
    if done.returncode:
        raise SystemExit(f"init-config failed:\n{done.stderr}")
    return path


def test_rows(path: Path, limit: int) -> List[Tuple[str, str]]:
    rows = [json.loads(line) for line in gzip.open(path, "rt")]
    rows = rows[:limit] if limit else rows
    return [(r["text"], str(r["label"])) for r in rows]


def score_and_speed(
    models: Dict[str, Path], rows: List[Tuple[str, str]], threads: int
) -> Dict[str, Dict[str, float]]:
    """Accuracy, macro-F and docs/s of each model on ``rows``."""
    import spacy
    import torch

    if threads:
        torch.set_num_threads(threads)
    texts, gold = [t for t, _ in rows], [g for _, g in rows]
    loaded = {name: spacy.load(path) for name, path in models.items()}
    times: Dict[str, List[float]] = {name: [] for name in models}
    results: Dict[str, Dict[str, float]] = {}
    for name, nlp in loaded.items():  # warm-up, and the predictions
        docs = list(nlp.pipe(texts, batch_size=256))
        pred = [max(doc.cats, key=doc.cats.get) for doc in docs]
        results[name] = scores(pred, gold)
    for _ in range(3):
        for name, nlp in loaded.items():
            began = time.perf_counter()
            list(nlp.pipe(texts, batch_size=256))
            times[name].append(time.perf_counter() - began)
    for name, t in times.items():
        results[name]["docs_per_s"] = round(len(texts) / statistics.median(t), 1)
    return results


def scores(pred: List[str], gold: List[str]) -> Dict[str, float]:
    labels = sorted(set(gold))
    f1s = []
    for label in labels:
        tp = sum(p == g == label for p, g in zip(pred, gold))
        n = pred.count(label) + gold.count(label)
        f1s.append(2 * tp / n if n else 0.0)
    acc = sum(p == g for p, g in zip(pred, gold)) / len(gold)
    return {"acc": acc, "macro_f": sum(f1s) / len(f1s)}


def get_teacher(
    args: argparse.Namespace, runs: Path, base: Dict[str, Any]
) -> Tuple[Path, Dict[str, Any]]:
    """The teacher: ``--teacher``, or trained here with ``spacy train``."""
    if args.teacher:  # trained by an earlier run of this script
        teacher = Path(args.teacher).resolve()
        teacher_run = {
            "seconds": None,
            "command": f"(teacher: {machine.relative(teacher)})",
        }
    else:
        machine.log("teacher: spacy train")
        teacher_run = spacy_runs.spacy_train(
            config(runs, "transformer", args.threads), runs / "teacher",
            overrides={**base, "paths.transformer": datafiles.minilm_dir(),
                       "training.max_steps": args.teacher_steps},
            threads=args.threads,
        )  # fmt: skip
        if teacher_run["returncode"]:
            raise SystemExit(
                f"teacher failed: {spacy_runs.log_tail(teacher_run['log'])}"
            )
        teacher = runs / "teacher" / "model-best"
    return teacher, teacher_run


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = machine.RUNS / args.name
    splits = textcat.ensure_splits("rt")
    paths = splits["paths"]
    vectors = Path(args.vectors).resolve()
    base = {
        "paths.train": paths["train"],
        "paths.dev": paths["dev"],
        "training.eval_frequency": args.eval_frequency,
    }
    teacher, teacher_run = get_teacher(args, runs, base)
    student_cfg = config(runs, "glove", args.threads)
    student = {**base, "paths.vectors": vectors, "training.max_steps": args.steps}
    if args.penalty is not None:
        student["components.attn_doc_embedder.model.encoder.penalty_coef"] = (
            args.penalty
        )
    machine.log("plain student: spacy train")
    plain = spacy_runs.spacy_train(
        student_cfg, runs / "plain", overrides=student, threads=args.threads
    )
    if plain["returncode"]:
        raise SystemExit(f"training failed: {spacy_runs.log_tail(plain['log'])}")
    models = {"teacher": teacher, "plain": runs / "plain" / "model-best"}
    rows = [
        {"system": "teacher: self-attentive classifier on MiniLM (quickstart doc "
         "transformer config)", "model": "teacher", "seconds": teacher_run["seconds"]},
        {"system": "plain student: self-attentive classifier, fixed GloVe "
         "(quickstart doc glove config), gold labels", "model": "plain",
         "seconds": plain["seconds"]},
    ]  # fmt: skip
    commands = [teacher_run["command"], plain["command"]]
    for augment in args.augment:
        key = f"distilled_a{augment}"
        machine.log(f"{key}: spacy attn distill")
        options = ["--temperature", args.temperature, "--augment", augment]
        done = distill.distill_run(
            teacher, student_cfg, runs / key, options, student, args.threads
        )
        label = "training sentences" if not augment else (
            f"training sentences + {augment} augmented copies each")  # fmt: skip
        rows.append({"system": f"distilled student: {label}", "model": key,
                     "seconds": done["seconds"], "teacher_seconds": done["teacher_seconds"],
                     "transfer_rows": done["transfer_rows"]})  # fmt: skip
        models[key] = runs / key / "model-best"
        commands.append(done["command"])
    machine.log("spaCy BOW")
    budget = {"max_steps": args.steps, "eval_frequency": args.eval_frequency}
    textcat.run_one("rt", "bow", splits=splits, vectors=vectors, quick=False,
                    force=True, run_dir=runs / "bow", budget=budget)  # fmt: skip
    bow = json.loads((runs / "bow" / "result.json").read_text())
    models["bow"] = runs / "bow" / "model" / "model-best"
    rows.append({"system": "spaCy textcat, TextCatBOW.v3 (benchmarks/textcat.py)",
                 "model": "bow", "seconds": bow["train_wall_s"]})  # fmt: skip
    commands.append(bow["command"])
    machine.log("test scores and speed")
    test = test_rows(paths["test"], args.limit)
    measured = score_and_speed(models, test, args.threads)
    for r in rows:
        r.update(measured[r["model"]])
    gold = [g for _, g in test]
    majority = max(sorted(set(gold)), key=gold.count)
    rows.append({"system": "majority class", **scores([majority] * len(gold), gold)})
    return {
        "rows": rows,
        "commands": commands,
        "settings": {"steps": args.steps, "teacher_steps": args.teacher_steps,
                     "penalty": args.penalty,
                     "temperature": args.temperature, "threads": args.threads},
    }  # fmt: skip


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    rows = results["rows"]
    teacher_speed = next(r["docs_per_s"] for r in rows if r.get("model") == "teacher")
    head = ["system", "test acc", "macro-F", "docs/s", "× teacher", "transfer rows",
            "teacher min", "total min"]  # fmt: skip
    body = []
    for r in rows:
        speed = r.get("docs_per_s")
        body.append([
            r["system"], tables.fmt(r["acc"] * 100, 1), tables.fmt(r["macro_f"] * 100, 1),
            tables.fmt(speed), tables.fmt(speed / teacher_speed if speed else None, 1),
            tables.fmt(r.get("transfer_rows")), tables.minutes(r.get("teacher_seconds")),
            tables.minutes(r.get("seconds")),
        ])  # fmt: skip
    s = results["settings"]
    text = tables.header("Distillation: Rotten Tomatoes polarity", meta)
    text += tables.doc_body(__doc__)
    penalty = s.get("penalty")
    text += (
        f"Teacher {s['teacher_steps']} steps; students and BOW {s['steps']} steps, batch "
        f"32; temperature {s['temperature']:g}; {s['threads']} torch thread(s)"
        + (f"; students' attention penalty {penalty:g}" if penalty is not None else "")
        + ".\n\n"
    )
    text += tables.md_table(head, body) + "\n"
    text += "\nCommands:\n\n" + "".join(f"- `{c}`\n" for c in results["commands"])
    return text


def failure(results: Dict[str, Any]) -> Any:
    rows = results["rows"]
    best = max(
        (r for r in rows if r["system"].startswith("distilled")), key=lambda r: r["acc"]
    )
    majority = next(r["acc"] for r in rows if r["system"] == "majority class")
    if best["acc"] <= majority:
        return f"The distilled student ({best['acc']:.3f}) does not beat the majority class."
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--teacher", help="A teacher trained by an earlier run (default: train one)"
    )
    p.add_argument("--teacher-steps", type=int, default=600)
    p.add_argument(
        "--penalty",
        type=float,
        help="The students' attention penalty (default: the config's)",
    )
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--eval-frequency", type=int, default=200)
    p.add_argument("--augment", default="0,8")
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--limit", type=int, default=0, help="Test sentences (0: all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--name", default="distill_rt")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    args.augment = [int(a) for a in args.augment.split(",")]
    args.start = (
        "teacher"  # run_benchmark's pipeline check; the teacher is trained here
    )
    transfer.run_benchmark(p, args, measure, render, failure)


if __name__ == "__main__":
    main()
