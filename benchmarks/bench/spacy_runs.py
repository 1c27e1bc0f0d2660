"""``spacy train`` in a subprocess (from the checkout, paths recorded
repository-relative) and its console log, and a monitor of a process tree
(peak memory, the CPU other jobs use meanwhile) for any command a benchmark
runs."""

import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from . import machine


def thread_env(threads: int = 0, **extra: str) -> Dict[str, str]:
    """This process's environment for a subprocess limited to ``threads``
    BLAS / OpenMP threads (0: unchanged), plus ``extra`` variables."""
    env = dict(os.environ, **extra)
    if threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(threads)
    return env


def _train_args(
    config: machine.PathLike,
    output: machine.PathLike,
    overrides: Optional[Dict[str, Any]],
) -> List[Any]:
    args: List[Any] = ["-m", "spacy", "train", config, "--output", output]
    for key, value in (overrides or {}).items():
        args += [f"--{key}", value]
    return args


def train_command(
    config: machine.PathLike,
    output: machine.PathLike,
    overrides: Optional[Dict[str, Any]] = None,
) -> str:
    """The ``python -m spacy train`` command line as it is recorded,
    repository-relative (what :func:`spacy_train` runs)."""
    return shlex.join(
        ["python"] + machine.relative_args(_train_args(config, output, overrides))
    )


def spacy_train(
    config: machine.PathLike,
    output: machine.PathLike,
    *,
    overrides: Optional[Dict[str, Any]] = None,
    log_path: Optional[machine.PathLike] = None,
    threads: int = 0,
    timeout: Optional[float] = None,
    env: Optional[Dict[str, str]] = None,
    resume: bool = False,
) -> Dict[str, Any]:
    """Run ``python -m spacy train`` from the repository root, its console
    output into ``log_path`` (default: ``<output>/../train.log``).

    config (PathLike): The config file.
    output (PathLike): The ``--output`` folder (``model-best``, ``model-last``).
    overrides (Dict[str, Any]): Config overrides, e.g. ``{"paths.train": path}``;
        path values are passed repository-relative.
    threads (int): BLAS / OpenMP threads of the subprocess (0: unchanged).
    timeout (float): Seconds after which training is stopped (``model-best``
        is saved at every dev evaluation, so it stays usable); None: no limit.
    env (Dict[str, str]): Extra environment variables.
    resume (bool): Reuse a run that finished before in ``output`` (its
        ``run.json``, written when a run ends without error or timeout, with
        the same command), so that a benchmark stopped part-way continues
        where it was.
    RETURNS (Dict[str, Any]): ``command`` (repository-relative, as it may be
        recorded), ``returncode``, ``seconds`` (wall time), ``stopped``
        (whether the timeout stopped it) and ``log`` (the log's path).
    """
    output = Path(output)
    log_path = Path(log_path) if log_path else output.parent / "train.log"
    record = output / "run.json"
    command = train_command(config, output, overrides)
    if resume and record.exists() and (output / "model-best").exists():
        done = json.loads(record.read_text())
        if done.get("command") == command:
            return {**done, "log": log_path, "resumed": True}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    args = _train_args(config, output, overrides)
    # Run with checkout paths relative to the checkout (the run's saved
    # config then holds no machine path); record every path relative.
    run_args = [_in_repo(a) for a in args]
    environ = thread_env(threads, PYTHONWARNINGS="ignore", **(env or {}))
    start, stopped = time.perf_counter(), False
    with open(log_path, "w") as f:
        proc = subprocess.Popen(
            [sys.executable] + run_args,
            stdout=f,
            stderr=subprocess.STDOUT,
            env=environ,
            cwd=machine.REPO,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait()
            stopped = True
    result = {
        "command": command,
        "returncode": proc.returncode,
        "seconds": time.perf_counter() - start,
        "stopped": stopped,
    }
    if proc.returncode == 0 and not stopped:
        output.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(result))
    return {**result, "log": log_path}


def _in_repo(arg: Any) -> str:
    """An argument for a subprocess run from the checkout: a path inside the
    checkout relative to it, anything else unchanged."""
    if isinstance(arg, os.PathLike) or os.path.isabs(str(arg)):
        path = Path(arg).resolve()
        try:
            return str(path.relative_to(machine.REPO))
        except ValueError:
            return str(path)
    return str(arg)


def log_tail(path: machine.PathLike, n: int = 15) -> str:
    """The last ``n`` lines of a log, indented, for an error message."""
    return "\n  ".join(Path(path).read_text(errors="replace").splitlines()[-n:])


def train_log_rows(path: machine.PathLike) -> List[List[float]]:
    """The rows of ``spacy train``'s console table (``E  #  LOSS ...  SCORE``):
    epoch, step, then every loss and score column, as numbers."""
    rows = []
    for line in Path(path).read_text(errors="replace").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0].isdigit() and fields[1].isdigit():
            try:
                rows.append([float(x) for x in fields])
            except ValueError:
                continue
    return rows


def parse_train_log(path: machine.PathLike) -> Dict[str, Any]:
    """Last epoch and step and the dev curve ``[[step, score], ...]`` (the
    final ``SCORE`` column) of a ``spacy train`` log."""
    rows = train_log_rows(path)
    return {
        "epochs": int(rows[-1][0]) if rows else None,
        "steps": int(rows[-1][1]) if rows else None,
        "dev_curve": [[int(r[1]), r[-1]] for r in rows],
    }


class TreeMonitor:
    """Sample a process and all its descendants in a background thread:
    peak memory of the tree and the CPU that *other* processes use meanwhile.

    * ``peak_rss_mb``: the largest sum of RSS over the tree's processes at one
      sample (pages shared between forked processes count once per process),
      and ``peak_pss_mb``, the same with PSS (shared pages split between
      their processes: the tree's real footprint); ``max_process_rss_mb``:
      the largest single process.
    * ``other_cpu``: busy CPUs of the whole machine minus the tree's own, in
      cores, averaged over the samples (the load of other jobs during the
      measurement; the load average cannot tell it from our own).

    Usage::

        with TreeMonitor(proc.pid) as mon:
            proc.wait()
        print(mon.result())
    """

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        import threading

        import psutil

        self.root = psutil.Process(pid)
        self.interval = interval
        self.peak_rss = self.peak_pss = self.max_rss = 0
        self.max_procs = 0
        self.other: List[float] = []
        self._cpu: Dict[int, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "TreeMonitor":
        import psutil

        psutil.cpu_percent(None)  # start the machine-wide CPU counter
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psutil

        ncpu = psutil.cpu_count() or 1
        while not self._stop.wait(self.interval):
            try:
                procs = [self.root] + self.root.children(recursive=True)
            except psutil.Error:
                break
            rss = pss = ours = 0.0
            for p in procs:
                try:
                    if p.pid not in self._cpu:
                        self._cpu[p.pid] = p
                        p.cpu_percent(None)  # first call: starts its counter
                    else:
                        ours += self._cpu[p.pid].cpu_percent(None) / 100.0
                    mem = p.memory_full_info()
                except psutil.Error:
                    continue
                rss += mem.rss
                pss += getattr(mem, "pss", mem.rss)
                self.max_rss = max(self.max_rss, mem.rss)
            self.max_procs = max(self.max_procs, len(procs))
            self.peak_rss, self.peak_pss = (
                max(self.peak_rss, rss),
                max(self.peak_pss, pss),
            )
            busy = psutil.cpu_percent(None) / 100.0 * ncpu
            self.other.append(max(0.0, busy - ours))

    def result(self) -> Dict[str, float]:
        mb = 1 << 20
        return {
            "peak_rss_mb": self.peak_rss / mb,
            "peak_pss_mb": self.peak_pss / mb,
            "max_process_rss_mb": self.max_rss / mb,
            "processes": self.max_procs,
            "other_cpu": statistics.mean(self.other) if self.other else 0.0,
        }


def monitored_run(
    cmd: Sequence[str], *, timeout: float, name: str = ""
) -> Dict[str, Any]:
    """Run ``cmd`` from the repository root in its own process group under a
    ``TreeMonitor``; kill the whole group after ``timeout`` seconds.

    RETURNS (Dict[str, Any]): ``TreeMonitor.result()`` plus ``wall_seconds``
        and ``load_before`` (the load averages at the start).
    RAISES RuntimeError: On a timeout or a non-zero exit code.
    """
    name = name or shlex.join(machine.relative_args(cmd))
    load = list(os.getloadavg())
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=machine.REPO, start_new_session=True)
    with TreeMonitor(proc.pid) as monitor:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired as err:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise RuntimeError(f"{name} did not finish in {timeout:.0f} s") from err
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed with exit code {proc.returncode}")
    return {**monitor.result(), "wall_seconds": wall, "load_before": load}
