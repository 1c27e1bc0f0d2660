"""Results as a reader sees them: number formats, markdown tables, the
header of every results file (command, commit, device, load) and writing
``benchmarks/results/<name>.json`` and ``.md`` (or re-rendering the
markdown from the JSON)."""

import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Optional, Sequence

from . import machine


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


def doc_body(doc: Optional[str]) -> str:
    """A benchmark module's docstring after its first two paragraphs (the
    summary line and the usage), as the text under a results file's header."""
    return (doc or "").split("\n\n", 2)[2].strip() + "\n\n"


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


def results_dir(*, quick: bool = False, out_dir: Optional[Path] = None) -> Path:
    """Where a benchmark's tables go: ``out_dir`` when given, else
    ``benchmarks/results/`` (committed), or the git-ignored
    ``benchmarks/runs/`` for a ``--quick`` run."""
    if out_dir:
        return Path(out_dir)
    return machine.RUNS if quick else machine.RESULTS


def write_results(
    name: str, results: Dict[str, Any], markdown: str, *, out_dir: Optional[Path] = None
) -> Path:
    """Write ``<name>.json`` (results + metadata) and ``<name>.md``.

    RETURNS (Path): The markdown file.
    """
    out_dir = results_dir(out_dir=out_dir)
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
    out_dir: Optional[Path] = None,
) -> Path:
    """Write ``<name>.json`` (``meta`` and ``"results"``) and ``<name>.md``
    (``render(meta, results)``) into ``out_dir``, by default
    ``benchmarks/results/`` (a ``--quick`` run into the git-ignored
    ``benchmarks/runs/``), and print the markdown.

    RETURNS (Path): The markdown file.
    """
    md = write_results(
        name,
        {**meta, "results": results},
        render(meta, results),
        out_dir=results_dir(quick=quick, out_dir=out_dir),
    )
    print(md.read_text())
    return md


def measure_and_report(
    args: Any,
    measure: Callable[[Any], Any],
    render: Callable[[Dict[str, Any], Any], str],
) -> Path:
    """The end of a simple benchmark's ``main``: the machine's metadata,
    ``measure(args)``, and ``report`` under ``args.name`` (``args.quick``:
    into ``benchmarks/runs/``)."""
    meta = machine.metadata()
    return report(args.name, render, meta, measure(args), quick=args.quick)


def rerender(
    name: str, render: Callable[[Dict[str, Any], Any], str], *, quick: bool = False
) -> Path:
    """``--report-only``: rewrite ``<name>.md`` from the ``<name>.json`` that
    ``report`` wrote (after a change to the script's ``render``)."""
    saved = load_results(name, quick=quick)
    results = saved.pop("results")
    return report(name, render, saved, results, quick=quick)


def load_results(name: str, *, quick: bool = False) -> Dict[str, Any]:
    """The ``<name>.json`` that ``report`` wrote: metadata and ``results``."""
    path = results_dir(quick=quick) / f"{name}.json"
    return json.loads(path.read_text())
