"""Shared machinery of the benchmark scripts: data location, device choice,
seeds, timing, summaries, machine description and writing results.

Every script in ``benchmarks/`` keeps only its own experiment (measure ->
results dict -> render) and imports the rest from here. Scripts are run from
the repository root as modules or files, e.g. ``python benchmarks/speed.py``;
this file sits next to them, so a plain ``import harness`` works without any
``sys.path`` edits (Python puts the script's folder first on the path).

Results are written as ``benchmarks/results/<name>.json`` and ``.md``; both
record the command (repository-relative, no machine paths), the git commit
and the device, so that a number can always be traced to what produced it.
"""
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
RUNS = REPO / "benchmarks" / "runs"  # git-ignored scratch (caches, quick runs)
MIRROR_ENV = "SPACY_ATTN_MIRROR"


def data_dir() -> Path:
    """The data mirror: ``$SPACY_ATTN_MIRROR``, else ``../shared/data`` beside
    the repository."""
    return Path(os.environ.get(MIRROR_ENV) or REPO.parent / "shared" / "data")


def relative(path: os.PathLike) -> str:
    """A path as it may be written into results: relative to the repository
    (``../shared/data/...`` for the mirror), never absolute."""
    path = Path(path).resolve()
    for base, prefix in ((REPO, ""), (REPO.parent, "../")):
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return path.name


def command_line() -> str:
    """The command that is running, repository-relative."""
    script = relative(sys.argv[0]) if sys.argv and sys.argv[0] else "?"
    args = [relative(a) if os.path.isabs(a) else a for a in sys.argv[1:]]
    return shlex.join(["python", script] + args)


def git_commit() -> str:
    """The commit of the working tree, with ``-dirty`` when it has changes."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO, capture_output=True, text=True,
        ).stdout.strip()
        return (sha or "unknown") + ("-dirty" if dirty else "")
    except OSError:
        return "unknown"


def spacy_vectors(rel_path: str, name: str = "") -> Path:
    """A vectors file of the mirror converted once with ``spacy init vectors``
    into the git-ignored cache ``benchmarks/runs/cache/``.

    rel_path (str): The file, relative to the mirror (e.g.
        ``glove/glove.6B.100d.top100k.txt.gz``).
    RETURNS (Path): The spaCy pipeline folder holding the vectors.
    """
    out = RUNS / "cache" / (name or Path(rel_path).name.split(".txt")[0])
    if not (out / "vocab" / "vectors").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "spacy", "init", "vectors", "en",
               str(data_dir() / rel_path), str(out)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


# -- device and seeds ---------------------------------------------------------


def use_device(gpu_id: int = -1):
    """Select the device for spaCy/Thinc and return the torch device.

    gpu_id (int): CUDA device, or -1 for the CPU.
    RETURNS (torch.device): Where the bare PyTorch loop must run too.
    """
    import torch

    if gpu_id >= 0:
        import spacy

        spacy.require_gpu(gpu_id)
        return torch.device(f"cuda:{gpu_id}")
    return torch.device("cpu")


def sync(device) -> None:
    """Wait for the device's queued work: timings must include it."""
    import torch

    if getattr(device, "type", "cpu") == "cuda":
        torch.cuda.synchronize(device)


def seed_all(seed: int) -> None:
    """Seed Python, numpy, torch and Thinc."""
    import random

    import numpy
    import torch
    from thinc.api import fix_random_seed

    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)
    fix_random_seed(seed)


def device_name(device) -> str:
    import torch

    if getattr(device, "type", "cpu") == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs)"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info(device=None) -> Dict[str, Any]:
    """What a reader needs to compare two runs."""
    import numpy
    import spacy
    import thinc
    import torch

    return {
        "device": device_name(device) if device is not None else device_name(None),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "spacy": spacy.__version__,
        "thinc": thinc.__version__,
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "load_average": os.getloadavg(),
    }


# -- timing -------------------------------------------------------------------


def timed(fn: Callable[[], Any], device=None) -> Tuple[float, Any]:
    """Run ``fn`` once. RETURNS (Tuple[float, Any]): seconds, its result."""
    sync(device)
    t0 = time.perf_counter()
    result = fn()
    sync(device)
    return time.perf_counter() - t0, result


def interleaved(
    fns: Dict[str, Callable[[], Any]], repeats: int, device=None, *, warmup: int = 1
) -> Dict[str, List[float]]:
    """Time every function ``repeats`` times, alternating the order between
    repeats so that drift (thermal, other processes) spreads evenly.

    RETURNS (Dict[str, List[float]]): seconds per run, by name.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: Dict[str, List[float]] = {name: [] for name in fns}
    names = list(fns)
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(timed(fns[name], device)[0])
    return times


def summary(values: Sequence[float]) -> Dict[str, float]:
    """Median, min, max and n of a series."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def chunk(seq: Sequence, size: int) -> List[Sequence]:
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def fmt(x: Optional[float], digits: int = 0) -> str:
    if x is None:
        return "—"
    return f"{x:,.{digits}f}"


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> str:
    """A markdown table; ``align`` gives one of l/r per column (default: the
    first column left, the others right)."""
    header = list(header)
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# -- results ------------------------------------------------------------------


def header(title: str, meta: Dict[str, Any]) -> str:
    """The top of every results file: title, command, commit, device."""
    m = meta["machine"]
    return (
        f"# {title}\n\n"
        f"Reproduce (from the repository root):\n\n```\n{meta['command']}\n```\n\n"
        f"Generated {meta['date']} at commit `{meta['commit']}` on **{m['device']}** "
        f"(torch {m['torch']}, {m['torch_threads']} torch threads, spaCy {m['spacy']}, "
        f"Thinc {m['thinc']}, Python {m['python']}; load average at start "
        f"{' '.join(f'{x:.2f}' for x in m['load_average'])}). Every number below "
        f"was measured in that run.\n\n"
    )


def metadata(device=None) -> Dict[str, Any]:
    return {
        "command": command_line(),
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(device),
    }


def write_results(
    name: str, results: Dict[str, Any], markdown: str, *, out_dir: Optional[Path] = None
) -> Path:
    """Write ``<name>.json`` (results + metadata) and ``<name>.md``.

    RETURNS (Path): The markdown file.
    """
    out_dir = Path(out_dir) if out_dir else RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    md = out_dir / f"{name}.md"
    md.write_text(markdown)
    return md


# -- spaCy vs a bare PyTorch loop (the speed benchmarks) -----------------------


def noop_nlp():
    """A blank English pipeline whose only pipe is trainable and does nothing:
    ``nlp.update`` on it costs what spaCy itself costs per example before any
    component work (``Doc.copy`` and ``Example`` construction): the floor of
    the overhead split."""
    import spacy
    from spacy.language import Language
    from spacy.pipeline import TrainablePipe
    from thinc.api import Model

    class NoOp(TrainablePipe):
        def __init__(self, vocab, name="noop"):
            self.vocab, self.name, self.cfg = vocab, name, {}
            self.model = Model("noop", lambda m, X, is_train: (X, lambda d: d))

        def update(self, examples, *, drop=0.0, sgd=None, losses=None):
            losses = {} if losses is None else losses
            losses.setdefault(self.name, 0.0)
            return losses

    if not Language.has_factory("bench_noop"):
        Language.factory("bench_noop", func=lambda nlp, name: NoOp(nlp.vocab, name))
    nlp = spacy.blank("en")
    nlp.add_pipe("bench_noop")
    return nlp


def compare_training(
    nlp, bare, examples: Sequence, batch_size: int, *, optimizer, repeats: int, device=None,
    unit: str = "items", log: str = "",
) -> Dict[str, Dict[str, float]]:
    """One training row of a speed benchmark: interleaved epochs of spaCy's
    ``nlp.update`` (with ``optimizer``), the bare loop (``bare.tensorize`` per
    batch, untimed, then ``bare.train_epoch``) and the no-op floor pipeline,
    on the same batches of ``examples``; summarized by ``train_row``.
    ``log`` prefixes a progress line on stderr."""
    sp_batches = chunk(examples, batch_size)
    bare_batches = [bare.tensorize(b) for b in sp_batches]
    floor = noop_nlp()
    floor_batches = [[type(eg)(eg.predicted, eg.reference) for eg in b] for b in sp_batches]
    times = interleaved({
        "spacy": lambda: [nlp.update(b, sgd=optimizer) for b in sp_batches],
        "bare": lambda: bare.train_epoch(bare_batches),
        "floor": lambda: [floor.update(b) for b in floor_batches],
    }, repeats, device)
    row = train_row(times, len(examples), unit)
    print(f"{log}train bs={batch_size}: " + ", ".join(
        f"{k} {v['median']:.3g}" for k, v in row.items()), file=sys.stderr)
    return row


def train_row(times: Dict[str, List[float]], n: int, unit: str) -> Dict[str, Dict[str, float]]:
    """Summaries of ``interleaved`` epoch times of "spacy", "bare" and "floor"
    over ``n`` items: throughput of both (``spacy_<unit>_s``, ``bare_<unit>_s``),
    the spaCy / bare throughput ratio, the overhead in µs per item (spaCy −
    bare, from the per-repeat paired differences) and its split into spaCy's
    floor (the no-op pipe) and ours (overhead − floor)."""
    us = {k: [t / n * 1e6 for t in v] for k, v in times.items()}
    overhead = [s - b for s, b in zip(us["spacy"], us["bare"])]
    return {
        f"spacy_{unit}_s": summary([n / t for t in times["spacy"]]),
        f"bare_{unit}_s": summary([n / t for t in times["bare"]]),
        "ratio": summary([b / s for s, b in zip(us["spacy"], us["bare"])]),
        "overhead_us": summary(overhead),
        "floor_us": summary(us["floor"]),
        "ours_us": summary([o - f for o, f in zip(overhead, us["floor"])]),
    }


def torch_vectors(vectors, n_oov: int, *, normalize: bool, device):
    """The torch counterpart of ``spacy-attn.FrozenVectors.v1`` for bare
    loops: a module holding the (optionally unit-normalized) vectors table as
    a fixed buffer and ``n_oov`` trainable OOV embeddings.

    ``ids(keys)`` (untimed preparation) maps token keys (e.g. LOWER) to rows:
    a known key to its table row, an unknown one to ``n + key % n_oov`` with
    spaCy's stable string hash as the key (never Python's ``hash()``), as
    FrozenVectors buckets them. ``pad(id_lists)`` gives padded ids and
    lengths on the device; calling the module on them gives the (B, L, d)
    vectors, zero on padding.
    """
    import numpy
    import torch
    from torch import nn

    class FrozenLookup(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            data = vectors.data if isinstance(vectors.data, numpy.ndarray) else vectors.data.get()
            table = numpy.asarray(data, dtype="float32")
            if normalize:
                table = table / numpy.maximum(numpy.linalg.norm(table, axis=1, keepdims=True), 1e-8)
            self.n, self.key2row = len(table), vectors.key2row
            self.register_buffer("table", torch.from_numpy(table))
            self.oov = nn.Embedding(max(n_oov, 1), table.shape[1])
            nn.init.normal_(self.oov.weight, 0.0, table.shape[1] ** -0.5 if normalize else 1.0)

        def ids(self, keys) -> List[int]:
            return [self.key2row.get(int(k), self.n + int(k) % n_oov) for k in keys]

        def pad(self, id_lists):
            L = max(max((len(x) for x in id_lists), default=0), 1)
            ids = torch.zeros(len(id_lists), L, dtype=torch.long)
            for i, x in enumerate(id_lists):
                ids[i, : len(x)] = torch.tensor(x, dtype=torch.long)
            lengths = torch.tensor([len(x) for x in id_lists])
            return ids.to(self.table.device), lengths.to(self.table.device)

        def forward(self, ids, lengths):
            X = torch.where(
                (ids < self.n).unsqueeze(-1),
                self.table[ids.clamp(max=self.n - 1)],
                self.oov((ids - self.n).clamp(min=0)),
            )
            mask = torch.arange(ids.shape[1], device=ids.device) < lengths.unsqueeze(1)
            return X * mask.unsqueeze(-1)

    return FrozenLookup().to(device)


# -- processes: memory, other load ---------------------------------------------


def wait_for_quiet(threshold: float = 1.0, *, timeout: float = 0.0, poll: float = 30.0) -> Tuple[bool, List[float]]:
    """Wait until the 1-minute load average is below ``threshold`` (the
    machine is shared: timings taken under other jobs' load mislead).

    threshold (float): The load average to get under.
    timeout (float): Seconds to wait at most (0: check once).
    poll (float): Seconds between checks.
    RETURNS (Tuple[bool, List[float]]): Whether it got quiet, and the load
        averages (1, 5, 15 min) of the last check.
    """
    deadline = time.monotonic() + timeout
    while True:
        load = list(os.getloadavg())
        if load[0] < threshold:
            return True, load
        if time.monotonic() + poll > deadline:
            return False, load
        print(f"load average {load[0]:.2f} >= {threshold}: waiting ...", file=sys.stderr)
        time.sleep(poll)


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
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
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
