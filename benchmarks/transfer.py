"""Transfer: a pair model fine-tuned from a pretrained start (``init-config
--init-from``) against the same model from scratch, the start zero-shot, and
the trivial baselines, on an answer-selection set the start never saw, per
training-set size (how much data a user needs).

    python benchmarks/transfer.py --start START [--sizes 100,500,2000]
        [--max-steps 1500] [--threads 1] [--name transfer] [--quick]
        [--seed N] [--no-scratch]
    python benchmarks/transfer.py --report-only [--name transfer]

The set: SQuADShifts new_wiki (Wikipedia articles written after SQuAD; the
mirror's official file), its articles shuffled with seed 0 and split into
10 test articles and the rest, which ``scripts/sentence_selection.py``
splits again by article into train and dev (``--dev-articles 6``). Each
question's candidates are the sentences of its paragraph, ``yes`` where the
sentence holds an answer, as for the SQuAD-built set the start was trained
on. Every system is scored on the same test questions by ``spacy attn
evaluate`` (MAP over the questions, with its majority-class and word-overlap
rows); both trainings run the quickstart config (``init-config --binary
--group-col``) for the same steps on one thread, selected on dev MAP.
"""

import argparse
import gzip
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from bench import lexical, machine, spacy_runs, tables

SOURCE = "squad_shifts/new_wiki.json.gz"
TEST_ARTICLES = 10
COLS = ["--text-cols", "question,sentence", "--group-col", "question_id"]
METRICS = ("pair_map", "pair_mrr", "pair_p_at_1", "pair_pos_f")


def split_articles(out: Path) -> Dict[str, Path]:
    """new_wiki as two SQuAD files by article: ``rest.json`` and ``test.json``."""
    data = json.load(gzip.open(machine.data_dir() / SOURCE))
    articles = list(data["data"])
    random.Random("0:transfer").shuffle(articles)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, part in (
        ("rest", articles[TEST_ARTICLES:]),
        ("test", articles[:TEST_ARTICLES]),
    ):
        files[name] = out / f"{name}.json"
        files[name].write_text(json.dumps({"version": "1.1", "data": part}))
    return files


def build_set(files: Dict[str, Path], size: int, out: Path) -> Path:
    """The answer-selection CSVs with ``size`` training questions."""
    cmd = [
        sys.executable, "scripts/sentence_selection.py", str(out),
        "--train-file", str(files["rest"]), "--test-file", str(files["test"]),
        "--dev-articles", "6", "--train-questions", str(size),
        "--dev-questions", "200", "--test-questions", "1000",
    ]  # fmt: skip
    subprocess.run(cmd, check=True, cwd=machine.REPO, stdout=subprocess.DEVNULL)
    return out


def attn(*args: Any, threads: int) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "spacy", "attn", *[str(a) for a in args]]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        cwd=machine.REPO,
        env=spacy_runs.thread_env(threads),
    )


def evaluate(
    model: Path, test: Path, threads: int, options: Sequence[str] = tuple(COLS)
) -> Dict[str, Any]:
    """``spacy attn evaluate --json`` of ``model`` on ``test``."""
    done = attn(
        "evaluate", model, test, *options, "--json", "--no-check", threads=threads
    )
    if done.returncode:
        raise SystemExit(f"evaluate {model} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def train(
    data: Path,
    out: Path,
    start: Path,
    *,
    scratch: bool,
    args: argparse.Namespace,
    resume: bool = False,
) -> Dict[str, Any]:
    """init-config then spacy train (``resume``: reuse a finished run of the
    same command in ``out``); the model-best's test scores."""
    cfg = out / "config.cfg"
    base = ["init-config", cfg, "--binary", "--positive-label", "yes", *COLS]
    extra = ["--backbone", "glove"] if scratch else ["--init-from", start]
    done = attn(*base, *extra, threads=args.threads)
    if done.returncode:
        raise SystemExit(f"init-config failed:\n{done.stderr}")
    overrides = {
        "paths.train": data / "train.csv",
        "paths.dev": data / "dev.csv",
        "training.max_steps": args.max_steps,
        "training.eval_frequency": args.eval_frequency,
    }
    if args.seed:  # seed 0 is the configs' own: its commands stay as they were
        overrides["system.seed"] = args.seed
    if scratch:  # the start's own vectors, so that only the weights differ
        overrides["paths.vectors"] = start
    run = spacy_runs.spacy_train(
        cfg, out / "model", overrides=overrides, threads=args.threads, resume=resume
    )
    if run["returncode"]:
        raise SystemExit(f"training failed: {spacy_runs.log_tail(run['log'])}")
    scores = evaluate(out / "model" / "model-best", data / "test.csv", args.threads)
    return {
        "command": run["command"],
        "seconds": run["seconds"],
        "scores": scores,
        "resumed": bool(run.get("resumed")),
    }


def row(system: str, size: Any, scores: Dict[str, Any], seconds: Any) -> Dict[str, Any]:
    return {
        "system": system,
        "train_questions": size,
        **{k: scores.get(k) for k in METRICS},
        "seconds": seconds,
    }


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = machine.RUNS / args.name
    files = split_articles(runs / "src")
    start = Path(args.start).resolve()
    rows: List[Dict[str, Any]] = []
    commands: List[str] = []
    for size in args.sizes:
        data = build_set(files, size, runs / f"data_{size}")
        if not rows:  # the same test set for every size: score it once
            zero = evaluate(start, data / "test.csv", args.threads)
            rows.append(row("start, zero-shot", 0, zero, None))
            for key in zero["baselines"]:  # the majority class, the lexical ones
                rows.append(row(key, "-", zero["baselines"][key], None))
        systems = (("from scratch", True), ("from the start", False))
        for system, scratch in systems[int(args.no_scratch) :]:
            machine.log(f"{system}, {size} questions")
            out = runs / f"{size}_{'scratch' if scratch else 'start'}"
            done = train(data, out, start, scratch=scratch, args=args)
            rows.append(row(system, size, done["scores"], done["seconds"]))
            commands.append(done["command"])
    return {"rows": rows, "train_commands": commands, "start": machine.relative(start)}


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    head = ["system", "train questions", "MAP", "MRR", "P@1", "pos-F", "train min"]
    body = [
        [
            r["system"],
            str(r["train_questions"]),
            *(tables.fmt(r[k], 3) for k in METRICS),
            tables.minutes(r["seconds"]),
        ]
        for r in results["rows"]
    ]
    text = tables.header("Transfer: fine-tuning from a pretrained start", meta)
    text += tables.doc_body(__doc__)
    text += f"Start: `{results['start']}`.\n\n" + tables.md_table(head, body) + "\n"
    text += lexical.note(meta)
    text += "\nTraining commands:\n\n" + "".join(
        f"- `{c}`\n" for c in results["train_commands"]
    )
    return text


def common_args(p: argparse.ArgumentParser, name: str) -> None:
    """The options the transfer benchmarks share (this one, transfer_nli)."""
    p.add_argument("--start", help="The pretrained pipeline")
    p.add_argument("--max-steps", type=int, default=1500)
    p.add_argument("--eval-frequency", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--name", default=name)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")


def run_benchmark(
    p: argparse.ArgumentParser,
    args: argparse.Namespace,
    measure: Callable[[argparse.Namespace], Dict[str, Any]],
    render: Callable[[Dict[str, Any], Dict[str, Any]], str],
    failure: Callable[[Dict[str, Any]], Optional[str]],
) -> None:
    """Measure, write the results table, and exit 1 with ``failure``'s line
    when the start does not beat what it must."""
    if args.report_only:
        tables.rerender(args.name, render, quick=args.quick)
        return
    if not args.start:
        p.error("--start is required")
    meta = machine.metadata()
    if args.threads:
        # Every training and evaluation runs in a subprocess with --threads;
        # this process's own torch threads measure nothing.
        meta["machine"]["torch_threads"] = args.threads
    began = time.perf_counter()
    results = measure(args)
    results["wall_seconds"] = time.perf_counter() - began
    tables.report(args.name, render, meta, results, quick=args.quick)
    message = failure(results)
    if message:
        raise SystemExit(message)


def overlap_failure(results: Dict[str, Any]) -> Optional[str]:
    rows = results["rows"]
    best = max(r["pair_map"] or 0 for r in rows if r["system"] == "from the start")
    name, base = lexical.strongest({r["system"]: r["pair_map"] for r in rows})
    if best > base:
        return None
    return f"The fine-tuned start (MAP {best:.3f}) does not beat {name} ({base:.3f})."


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_args(p, "transfer")
    p.add_argument("--sizes", default="100,500,2000")
    p.add_argument("--seed", type=int, default=0, help="system.seed of training")
    p.add_argument("--no-scratch", action="store_true", help="only fine-tune the start")
    args = p.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    run_benchmark(p, args, measure, render, overlap_failure)


if __name__ == "__main__":
    main()
