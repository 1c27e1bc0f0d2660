"""Are two seeded ``spacy train`` runs of the ``squad`` workflow identical,
step by step?

Runs the ``train-squad`` command (``configs/squad_glove_cpu.cfg``: the
training file streamed from the reader's cached gold docs, reshuffled on
every pass) ``--runs`` times, one process after another, each for
``--steps`` steps, with an evaluation on ``--dev-limit`` held-out questions
every ``--eval-frequency`` steps. Each process logs one line per training
step: a fingerprint of the batch (every doc's text, length and pair
boundary), of torch's random-number state and of the weights' bytes before
the step, the step's loss and the sum of the weights after it. Every later
run is compared with the first: the first step where anything differs (with
both runs' values there), or "identical". The logs stay in
``benchmarks/runs/repeat_train/``.

``--load N`` runs N busy loops beside the runs (thread timing under load;
with torch's two threads on two cores, each step then takes several times
longer).

    python benchmarks/repeat_train.py [--runs 3 --steps 150]
    python benchmarks/repeat_train.py --quick   # smoke run -> benchmarks/runs/
    python benchmarks/repeat_train.py --report-only   # .md again from the .json

Needs ``corpus/squad/{train,dev}.spacy`` (``spacy project run prepare-squad``)
and ``training/vectors`` (``init-vectors``).
"""

import argparse
import hashlib
import json
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

from bench import machine, options, spacy_runs, tables

NAME = "repeat_train"
FIELDS = ("batch", "rng", "start", "loss", "weights")


def _fingerprint(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()[:12]


def child(log_path: str, train_args: List[str]) -> None:
    """``spacy train train_args`` in this process, one log line per step."""
    import torch
    from spacy.cli import app

    from spacy_attn.freeze_weights import torch_modules
    from spacy_attn.pipeline.base import AttnPipe

    train_step = AttnPipe._train_step
    log = open(log_path, "w", buffering=1)

    def logged_step(self, examples, loss_function, *, drop, sgd, losses):
        batch = "\x1e".join(
            f"{eg.predicted.text}\x1f{len(eg.predicted)}\x1f"
            f"{sorted(eg.predicted.user_data.items(), key=repr)!r}"
            for eg in examples
        )
        rng = _fingerprint(torch.get_rng_state().numpy().tobytes())
        params = [
            p for module in torch_modules(self.model) for p in module.parameters()
        ]
        start = _fingerprint(b"".join(p.detach().numpy().tobytes() for p in params))
        before = losses.get(self.name, 0.0)
        train_step(self, examples, loss_function, drop=drop, sgd=sgd, losses=losses)
        weights = sum(float(p.detach().double().sum()) for p in params)
        record = {
            "batch": _fingerprint(batch.encode()),
            "rng": rng,
            "start": start,
            "loss": losses[self.name] - before,
            "weights": weights,
        }
        log.write(json.dumps(record) + "\n")

    # Patched on the base class: every attn_* component's training step.
    AttnPipe._train_step = logged_step
    sys.argv = ["spacy", "train", *train_args]
    app()


def first_difference(
    runs: List[List[Dict[str, Any]]],
) -> List[Optional[Dict[str, Any]]]:
    """For each run after the first: None where its log equals the first
    run's, else ``{"step", "field"}``: the first step (1-based) and the first
    of ``FIELDS`` that differ there (``"length"`` where one log is a prefix
    of the other)."""
    first = runs[0]
    out: List[Optional[Dict[str, Any]]] = []
    for run in runs[1:]:
        found = None
        for step, (a, b) in enumerate(zip(first, run), start=1):
            field = next((f for f in FIELDS if a[f] != b[f]), None)
            if field is not None:
                found = {"step": step, "field": field}
                break
        if found is None and len(first) != len(run):
            found = {"step": min(len(first), len(run)) + 1, "field": "length"}
        out.append(found)
    return out


def train_args(args: argparse.Namespace, output: str) -> List[str]:
    """The workflow's ``train-squad`` arguments, with this run's budget."""
    return [
        args.config,
        "--output",
        output,
        "--paths.train",
        args.train,
        "--paths.dev",
        args.dev,
        "--paths.vectors",
        args.vectors,
        "--training.max_steps",
        str(args.steps),
        "--training.eval_frequency",
        str(args.eval_frequency),
        "--corpora.dev.limit",
        str(args.dev_limit),
        "--components.attn_span_qa.model.input_width",
        "100",
        "--components.attn_span_qa.model.tok2vec.key_attr",
        "LOWER",
    ]


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    env = spacy_runs.thread_env(args.threads)
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(args.load)
    ]
    runs: List[List[Dict[str, Any]]] = []
    seconds: List[float] = []
    folder = machine.RUNS / NAME
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for i in range(args.runs):
            log = folder / f"run{i + 1}.jsonl"
            machine.log(f"run {i + 1}/{args.runs} -> {machine.relative(log)}")
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(log), "--"]
                + train_args(args, str(folder / f"output{i + 1}")),
                env=env,
                capture_output=True,
                text=True,
            )
            seconds.append(time.perf_counter() - start)
            if proc.returncode != 0:
                sys.exit(f"run {i + 1} failed:\n{proc.stderr[-3000:]}")
            runs.append([json.loads(line) for line in open(log)])
    finally:
        for p in busy:
            p.kill()
    differences = first_difference(runs)
    for run, diff in zip(runs[1:], differences):
        if diff is not None and diff["field"] != "length":
            # Both runs' records at the step where they part.
            diff["run_1"] = runs[0][diff["step"] - 1]
            diff["this_run"] = run[diff["step"] - 1]
    return {
        "steps": args.steps,
        "threads": args.threads,
        "load": args.load,
        "train_args": train_args(args, "OUTPUT"),
        "runs": [
            {
                "steps_logged": len(run),
                "seconds": round(s, 1),
                "last_loss": run[-1]["loss"] if run else None,
                "last_weights": run[-1]["weights"] if run else None,
            }
            for run, s in zip(runs, seconds)
        ],
        "differences": differences,
    }


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    md = tables.header("Repeated seeded training runs, step by step", meta)
    md += (
        f"The `train-squad` command, {res['steps']} steps, run "
        f"{len(res['runs'])} times one after another with {res['threads']} "
        f"torch thread(s) and {res['load']} busy loop(s) beside it:\n\n"
        f"```\npython -m spacy train {' '.join(res['train_args'])}\n```\n\n"
        "Each run is compared with run 1, step by step: the batch, torch's "
        "random state and the weights' bytes before the step, the step's "
        "loss and the sum of the weights after it.\n\n"
    )
    header = [
        "run",
        "steps",
        "seconds",
        "last step's loss",
        "weights' sum",
        "against run 1",
    ]
    rows = []
    for i, (run, diff) in enumerate(
        zip(res["runs"], [None] + res["differences"]), start=1
    ):
        if i == 1:
            verdict = "—"
        elif diff is None:
            verdict = "identical"
        elif "this_run" in diff:
            field = diff["field"]
            verdict = (
                f"differs from step {diff['step']} ({field}: "
                f"{diff['this_run'][field]!r} against {diff['run_1'][field]!r})"
            )
        else:
            verdict = f"differs from step {diff['step']} ({diff['field']})"
        rows.append(
            [
                str(i),
                str(run["steps_logged"]),
                tables.fmt(run["seconds"]),
                f"{run['last_loss']!r}",
                f"{run['last_weights']!r}",
                verdict,
            ]
        )
    return md + tables.md_table(header, rows) + "\n"


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], argv[3:])  # --child LOG -- <spacy train args>
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--eval-frequency", type=int, default=100)
    p.add_argument("--dev-limit", type=int, default=50)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--load", type=int, default=0)
    p.add_argument("--config", default="configs/squad_glove_cpu.cfg")
    p.add_argument("--train", default="corpus/squad/train.spacy")
    p.add_argument("--dev", default="corpus/squad/dev.spacy")
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--quick", action="store_true", help=options.QUICK_HELP)
    p.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite the .md from the saved .json (after a change to render)",
    )
    args = p.parse_args(argv)
    if args.report_only:
        tables.rerender(NAME, render, quick=args.quick)
        return
    if args.quick:
        args.runs, args.steps, args.eval_frequency, args.dev_limit = 2, 4, 2, 5
    tables.report(NAME, render, machine.metadata(), measure(args), quick=args.quick)


if __name__ == "__main__":
    main()
