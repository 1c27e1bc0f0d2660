"""Command-line options the benchmark scripts share: comma-separated name
lists, the datasets x rows grid (``accuracy.py``, ``textcat.py``), the
speed scripts' and the SQuAD scripts' common options."""

import argparse
from pathlib import Path
from typing import Callable, Iterable, List

QUICK_HELP = "a smoke run into benchmarks/runs/ (not a measurement)"
# Why: a script run as one step of another (benchmarks/squad_gpu.sh) must
# not overwrite the committed tables of benchmarks/results/.
OUTPUT_DIR_HELP = "write the results here instead of benchmarks/results/"


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
    p.add_argument("--output-dir", type=Path, default=None, help=OUTPUT_DIR_HELP)
    return p


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
