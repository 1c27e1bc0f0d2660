"""What every part of ``peers.py`` shares: the checkpointed run (one
``result.json`` per dataset, row and seed, skipped when done, locked while
another process runs it), the shared budget (batch 32, a fixed number of
epochs with a dev evaluation after each) and the pair splits of
``accuracy.py``, and ``spacy train`` of a generated config."""

import json
import math
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import accuracy  # benchmarks/accuracy.py: pair splits and configs
from bench import datafiles, machine, spacy_runs

QUICK_LIMITS = {"train": 160, "dev": 40, "test": 80}
BATCH = 32
MAX_LENGTH = 128  # MiniLM word pieces per input (pair) / sentence


def runs_root(quick: bool) -> Path:
    return machine.RUNS / "peers" / ("quick" if quick else "")


def checkpointed(
    path: Path, force: bool, fn: Callable[[], Dict[str, Any]], *, stamp: Dict[str, Any]
) -> Dict[str, Any]:
    """The run's ``result.json`` if it exists (and not ``force``), else run
    ``fn`` and write its result with ``stamp`` (command, seed, load...)."""
    if path.exists() and not force:
        machine.log(f"skip {machine.relative(path.parent)} (done; --force re-runs it)")
        return json.loads(path.read_text())
    # Several invocations may share the work (one per core): a run that
    # another live process has started is left to it.
    lock = path.parent / "running.pid"
    if lock.exists() and _alive(int(lock.read_text() or 0)):
        machine.log(
            f"skip {machine.relative(path.parent)} (running in process {lock.read_text()})"
        )
        return {}
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(os.getpid()))
    try:
        return _run_checkpoint(path, fn, stamp)
    finally:
        lock.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return pid > 0
    except OSError:
        return False


def _run_checkpoint(
    path: Path, fn: Callable[[], Dict[str, Any]], stamp: Dict[str, Any]
) -> Dict[str, Any]:
    stamp = {
        **stamp,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    machine.log(
        f"RUN {machine.relative(path.parent)} (load {stamp['load_at_start'][0]})"
    )
    start = time.perf_counter()
    # The stamp is what this invocation asked for: it wins over a key of the
    # same name in the measured result (textcat.run_one reports "rt" as the
    # dataset of a learning-curve subset).
    result = {**fn(), **stamp, "run_seconds": None}
    result["run_seconds"] = round(time.perf_counter() - start, 1)
    datafiles.write_json(path, result)
    return result


def pair_splits(dataset: str, quick: bool) -> Dict[str, Any]:
    """accuracy.py's split files of ``dataset`` and their rows (truncated
    with ``--quick``)."""
    manifest = accuracy.ensure_splits(dataset)
    limits = QUICK_LIMITS if quick else {}
    rows = {
        s: datafiles.read_jsonl_gz(
            machine.REPO / manifest["files"][s], limit=limits.get(s, 0)
        )
        for s in accuracy.SPLITS
    }
    labels = sorted(set(manifest["labels"]["train"]) | set(manifest["labels"]["test"]))
    return {
        "manifest": manifest,
        "rows": rows,
        "labels": labels,
        "limits": limits or None,
    }


def steps_per_epoch(n_train: int) -> int:
    return math.ceil(n_train / BATCH)


def fixed_epochs(
    cfg, n_train: int, epochs: int, limits: Optional[Dict[str, int]]
) -> None:
    """The same budget for every spaCy row: ``epochs`` passes of batch 32
    (spaCy reshuffles the training set every epoch), a dev evaluation at
    the end of each; ``model-best`` is the best of them. spaCy evaluates
    after steps 0, k, 2k... (k = steps per epoch), so the run takes one
    extra step to reach the last epoch's evaluation."""
    spe = steps_per_epoch(n_train)
    cfg["training"].update(
        {
            "max_steps": epochs * spe + 1,
            "eval_frequency": spe,
            "patience": 0,
            "max_epochs": 0,
        }
    )
    cfg["training"]["batcher"]["size"] = BATCH
    if limits:
        cfg["corpora"]["train"]["limit"] = limits["train"]
        cfg["corpora"]["dev"]["limit"] = limits["dev"]


def train_spacy(cfg, run_dir: Path, threads: int) -> Dict[str, Any]:
    """Write the config and ``spacy train`` it; RETURNS the training record."""
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg.to_disk(run_dir / "config.cfg")
    run = spacy_runs.spacy_train(
        run_dir / "config.cfg", run_dir / "model", threads=threads
    )
    if run["returncode"] != 0:
        raise SystemExit(
            f"spacy train failed ({machine.relative(run['log'])}):\n  "
            + spacy_runs.log_tail(run["log"])
        )
    curve = spacy_runs.parse_train_log(run["log"])
    return {
        "train_wall_s": round(run["seconds"], 1),
        "train_command": run["command"],
        "steps": curve["steps"],
        "dev_curve": curve["dev_curve"],
    }
