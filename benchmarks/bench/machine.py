"""Where a benchmark runs and how it is timed: folders, the data mirror,
repository-relative paths and commands (results never hold a machine path),
git commit, device, seeds, machine description, load and timing helpers."""

import datetime
import importlib.util
import os
import platform
import shlex
import site
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

REPO = Path(__file__).resolve().parents[2]  # benchmarks/bench/ -> the checkout


def checkout_module(relpath: str) -> ModuleType:
    """A checkout script imported by its file (``scripts/`` is no package and
    stays off ``sys.path``); one module per name, shared with any importer
    that loaded it first (the tests import ``data_mirror`` by name)."""
    path = REPO / relpath
    if path.stem in sys.modules:
        return sys.modules[path.stem]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


# The data mirror helper is checkout tooling (scripts/data_mirror.py).
_data_mirror = checkout_module("scripts/data_mirror.py")
MIRROR_ENV: str = _data_mirror.MIRROR_ENV
mirror_dir: Callable[[], Path] = _data_mirror.mirror_dir


RESULTS = REPO / "benchmarks" / "results"


RUNS = REPO / "benchmarks" / "runs"  # git-ignored scratch (caches, quick runs)


PathLike = Union[str, os.PathLike]


def data_dir() -> Path:
    """The data mirror (``scripts/data_mirror.py``'s ``mirror_dir``: ``$SPACY_ATTN_MIRROR``,
    else ``../shared/data`` beside the repository)."""
    return mirror_dir()


def relative(path: PathLike) -> str:
    """A path as it may be written into results, never absolute:
    ``<package>/...`` inside site-packages (a venv in the checkout included);
    relative to the repository; ``$SPACY_ATTN_MIRROR/...`` inside a mirror
    named by the environment variable; ``../shared/data/...`` (any sibling
    of the checkout); else the bare name.

    Both the path as named and its symlink-resolved target are tried against
    each base (as named and resolved too): ``../shared`` beside the checkout
    is often a symlink to the real mirror, and resolving it alone would lose
    the ``../`` form (the path would then match no base)."""
    named = Path(os.path.abspath(path))
    forms = [named, named.resolve()]
    sites = site.getsitepackages() + [site.getusersitepackages()]
    bases = [(Path(d), "") for d in sites] + [(REPO, "")]
    if os.environ.get(MIRROR_ENV):
        bases.append((mirror_dir(), f"${MIRROR_ENV}/"))
    bases.append((REPO.parent, "../"))
    for base, prefix in bases:
        base = Path(os.path.abspath(base))
        for form in forms:
            for base_form in (base, base.resolve()):
                try:
                    rel = form.relative_to(base_form)
                except ValueError:
                    continue
                return (prefix + rel.as_posix()).rstrip("/") or "."
    parts = forms[-1].parts
    if "site-packages" in parts:  # another environment's packages
        return "/".join(parts[len(parts) - parts[::-1].index("site-packages") :])
    return forms[-1].name


def relative_args(args: Iterable[Any]) -> List[str]:
    """Command-line arguments with every absolute path made ``relative``."""
    return [relative(a) if os.path.isabs(str(a)) else str(a) for a in args]


def command_line(argv: Optional[Sequence[str]] = None) -> str:
    """The command that is running (or ``argv``), repository-relative."""
    argv = list(sys.argv if argv is None else argv)
    script = relative(argv[0]) if argv and argv[0] else "?"
    return shlex.join(["python", script] + relative_args(argv[1:]))


def git_commit() -> str:
    """The commit of the working tree, with ``-dirty`` when it has changes."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not sha:  # a copy without .git (the GPU bundle): the caller says which
            return os.environ.get("SPACY_ATTN_COMMIT") or archived_commit()
        return sha + ("-dirty" if dirty else "")
    except OSError:
        return "unknown"


# ``git archive`` writes the archived commit into this file (``export-subst``
# in .gitattributes): the GPU bundle is such an archive, without ``.git``.
ARCHIVED_COMMIT = Path(__file__).with_name("archived_commit.txt")


def archived_commit() -> str:
    """The commit ``git archive`` stamped into ``ARCHIVED_COMMIT``, or
    "unknown" in a checkout (where the file keeps its placeholder) or when
    the file is missing."""
    try:
        text = ARCHIVED_COMMIT.read_text(encoding="utf8").strip()
    except OSError:
        return "unknown"
    return text if text and not text.startswith("$Format") else "unknown"


def log(msg: str, *, file: Optional[PathLike] = None) -> None:
    """Print a timestamped progress line (and append it to ``file``)."""
    line = f"[{datetime.datetime.now():%H:%M:%S}] {msg}"
    print(line, flush=True)
    if file is not None:
        with open(file, "a", encoding="utf-8") as f:
            f.write(line + "\n")


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
    """The GPU's name, or the CPU model and its logical CPU count."""
    import torch

    if getattr(device, "type", "cpu") == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs)"


def cpu_model() -> str:
    """The CPU model name (``/proc/cpuinfo``)."""
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


def environment(threads: Union[int, str, None] = None) -> Dict[str, Any]:
    """``machine_info`` plus what the training benchmarks record: the CPU
    count, the threads per run and the git commit."""
    return {
        **machine_info(),
        "cpus": os.cpu_count(),
        "threads": threads or "default",
        "git_commit": git_commit(),
    }


def metadata(device=None) -> Dict[str, Any]:
    """Command, commit, date and ``machine_info``: the ``meta`` of ``header``."""
    return {
        "command": command_line(),
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"
        ),
        "machine": machine_info(device),
    }


def wait_for_quiet(
    threshold: float = 1.0, *, timeout: float = 0.0, poll: float = 30.0
) -> Tuple[bool, List[float]]:
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
        print(
            f"load average {load[0]:.2f} >= {threshold}: waiting ...", file=sys.stderr
        )
        time.sleep(poll)


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
    """``seq`` in consecutive slices of ``size``."""
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def profile(
    fn: Callable[[], Any], n: int, *, per: str = "item", top: int = 25
) -> List[Dict[str, Any]]:
    """cProfile of one call of ``fn``: the ``top`` functions by own time, in
    µs per ``per`` (``n`` of them)."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.runcall(fn)
    stats = pstats.Stats(prof, stream=io.StringIO())
    rows = [
        {
            "function": f"{Path(file).name}:{line}({name})",
            "calls": nc,
            f"tottime_us_per_{per}": tt / n * 1e6,
            f"cumtime_us_per_{per}": ct / n * 1e6,
        }
        for (file, line, name), (cc, nc, tt, ct, _) in stats.stats.items()
    ]
    return sorted(rows, key=lambda r: -r[f"tottime_us_per_{per}"])[:top]
