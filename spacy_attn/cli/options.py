"""Typer argument and option types that several commands declare alike, and
the parsing of option values they share."""

import json
from pathlib import Path
from typing import Dict, Optional

import typer
from typing_extensions import Annotated

from .errors import fail

Arg = typer.Argument
Opt = typer.Option

ModelArg = Annotated[
    str,
    Arg(
        metavar="MODEL",
        help="Pipeline directory or installed package name",
        show_default=False,
    ),
]
PairDataArg = Annotated[
    Path,
    Arg(
        metavar="DATA",
        help=(
            "Pair corpus: jsonl / tsv (optionally .gz) or a .spacy DocBin of pair docs"
        ),
        show_default=False,
    ),
]
PairKeyOpt = Annotated[
    str, Opt("--pair-key", help="Name of the pair in the docs (pair_key of make_pair)")
]
LabelMapOpt = Annotated[
    Optional[str],
    Opt(
        "--label-map",
        help=(
            'Raw label -> label, as JSON, e.g. \'{"0": "no", "1": "yes"}\' '
            "(default: labels as they are)"
        ),
        show_default=False,
    ),
]
PositiveLabelOpt = Annotated[
    Optional[str],
    Opt(
        "--positive-label",
        help="Binary task: the positive label (default: none)",
        show_default=False,
    ),
]
GpuIdOpt = Annotated[int, Opt("--gpu-id", help="GPU to use, -1 for the CPU")]


def parse_label_map(value: Optional[str]) -> Optional[Dict[str, str]]:
    """``--label-map '{"0": "no"}'`` as a dict of strings (None: no map)."""
    if not value:
        return None
    try:
        mapping = json.loads(value)
    except ValueError as err:
        fail(f"--label-map: not JSON ({err}): {value!r}")
    if not isinstance(mapping, dict):
        fail(f"--label-map: expected a JSON object, got {value!r}")
    return {str(k): str(v) for k, v in mapping.items()}


__all__ = [
    "Arg",
    "GpuIdOpt",
    "LabelMapOpt",
    "ModelArg",
    "Opt",
    "PairDataArg",
    "PairKeyOpt",
    "PositiveLabelOpt",
    "parse_label_map",
]
