"""Typer argument and option types that several commands declare alike, and
the parsing of option values they share."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import typer
from typing_extensions import Annotated

from .errors import fail

if TYPE_CHECKING:
    from ..readers import Columns

Opt = typer.Option


def argument(metavar: str, help: str) -> Any:
    """A command's positional argument: required, so no default to show;
    ``metavar`` names it in the usage line and in its help.

    metavar (str): Its name in upper case, e.g. "MODEL".
    help (str): What to pass.
    RETURNS (Any): The ``typer.Argument`` to annotate it with.
    """
    return typer.Argument(metavar=metavar, help=help, show_default=False)


ModelArg = Annotated[
    str,
    argument("MODEL", "Pipeline directory or installed package name"),
]
PairDataArg = Annotated[
    Path,
    argument(
        "DATA",
        "Pair corpus: jsonl / csv / tsv (optionally .gz) or a .spacy DocBin "
        "of pair docs",
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
# The columns of a row file (jsonl / csv / tsv), alike in convert, evaluate
# and predict and named as the settings of spacy-attn.PairCorpus.v1
# (text_cols, label_col, group_col, id_col).
TextColsOpt = Annotated[
    Optional[str],
    Opt(
        "--text-cols",
        help=(
            "Comma-separated text columns in the task's order, e.g. "
            "question,sentence (default: detected from the column names)"
        ),
        show_default=False,
    ),
]
LabelColOpt = Annotated[
    Optional[str],
    Opt(
        "--label-col",
        help="Label column (default: label, gold_label, is_duplicate or Quality)",
        show_default=False,
    ),
]
GroupColOpt = Annotated[
    Optional[str],
    Opt(
        "--group-col",
        help=(
            "Group (query) id column, e.g. question_id: pairs that share it are "
            "ranked together (default: none)"
        ),
        show_default=False,
    ),
]
IdColOpt = Annotated[
    Optional[str],
    Opt(
        "--id-col",
        help="Row id column (default: 'id' if present, else the line number)",
        show_default=False,
    ),
]
FormatOpt = Annotated[
    str,
    Opt(
        "--format",
        help=(
            "Input format: auto (from the file name, else the first line), "
            "jsonl, csv or tsv"
        ),
    ),
]
# How a row file is read (spacy_attn.readers.rows), alike in every command
# that reads one and named as the settings of spacy-attn.PairCorpus.v2.
DelimiterOpt = Annotated[
    Optional[str],
    Opt(
        "--delimiter",
        help="csv / tsv field delimiter, e.g. ';' or '\\t' (default: ',' for csv, tab for tsv)",
        show_default=False,
    ),
]
QuotingOpt = Annotated[
    str,
    Opt(
        "--quoting",
        help=(
            "Quotes in csv / tsv: auto (csv quotes within a line for csv, none for "
            "tsv), none, line, or multiline (quoted cells may hold line breaks)"
        ),
    ),
]
InitFromOpt = Annotated[
    Optional[str],
    Opt(
        "--init-from",
        help=(
            "Start from this trained pipeline (directory or package): its "
            "components, weights, labels and vectors (default: random weights)"
        ),
        show_default=False,
    ),
]
NewHeadOpt = Annotated[
    bool,
    Opt(
        "--new-head",
        help=(
            "With --init-from: a new output layer for your own labels, every "
            "other weight from the start (default: the start's component "
            "whole, your labels mapped onto its)"
        ),
    ),
]
LexicalFeaturesOpt = Annotated[
    bool,
    Opt(
        "--lexical-features",
        help=(
            "Pair task: give the model the two texts' word and bigram overlap "
            "(spacy-attn.DecomposableAttention.v6); for paraphrase and "
            "duplicate data. With --init-from, needs --new-head"
        ),
    ),
]
GpuIdOpt = Annotated[int, Opt("--gpu-id", help="GPU to use, -1 for the CPU")]
JsonOpt = Annotated[
    bool, Opt("--json", help="Print the scores as JSON instead of a table")
]
# The lexical baselines' settings (``spacy_attn.baselines``): evaluate, rank.
Bm25K1Opt = Annotated[
    float, Opt("--bm25-k1", help="BM25's term-frequency saturation k1 (>= 0)")
]
Bm25BOpt = Annotated[float, Opt("--bm25-b", help="BM25's length normalisation b (0-1)")]
# The commands that score pairs in batches of nlp.pipe: evaluate, rank.
PairBatchSizeOpt = Annotated[int, Opt("--batch-size", help="Pairs per batch")]


def json_output_opt(what: str) -> Any:
    """``--output``: a file to write what a command prints to, as JSON.

    what (str): How its help starts, e.g. "Write the scores".
    RETURNS (Any): The ``typer.Option`` to annotate an ``Optional[Path]`` with.
    """
    return Opt(
        "--output",
        help=f"{what} as JSON here (default: print only)",
        show_default=False,
    )


def component_opt(what: str) -> Any:
    """``--component``: the name of the component to use where a pipeline
    has several (without it, the only one; ``spacy_attn.pipeline.lookup``).

    what (str): How its help starts, e.g. "Span-QA component".
    RETURNS (Any): The ``typer.Option`` to annotate an ``Optional[str]`` with.
    """
    return Opt(
        "--component", help=f"{what} (default: the only one)", show_default=False
    )


# The options of `spacy attn predict` (engines, workers, resume, limits).
PredictModelArg = Annotated[
    str,
    argument(
        "MODEL",
        "Pipeline directory or installed package name (with the Dask "
        "engine, visible to every worker)",
    ),
]
InputArg = Annotated[
    Path,
    argument("INPUT", "Rows to predict: jsonl, csv or tsv, optionally gzipped"),
]
OutputArg = Annotated[
    Path,
    argument("OUTPUT", "Output: one JSON line per row, in input order (plain jsonl)"),
]
EngineOpt = Annotated[
    str,
    Opt(
        "--engine",
        help=(
            "Where batches are predicted: local (this process, or --n-process "
            "workers) or dask (a Dask cluster)"
        ),
    ),
]
NProcessOpt = Annotated[
    int,
    Opt(
        "--n-process",
        help="local: worker processes, one torch thread each (1: this process)",
    ),
]
BatchSizeOpt = Annotated[
    int,
    Opt(
        "--batch-size",
        help="Input rows per batch (one job of a worker, one flush of OUTPUT)",
    ),
]
PredictGpuIdOpt = Annotated[
    int,
    Opt(
        "--gpu-id",
        help=(
            "GPU to predict on, -1 for the CPU (local: with --n-process 1; "
            "dask: each worker's)"
        ),
    ),
]
ThreadsOpt = Annotated[
    Optional[int],
    Opt(
        "--threads",
        help=(
            "torch threads of this process (local, --n-process 1) or of each "
            "Dask worker (default: torch's)"
        ),
        show_default=False,
    ),
]
RejectsOpt = Annotated[
    Optional[Path],
    Opt(
        "--rejects",
        help=(
            "Write bad rows here (jsonl: line, raw, reason) and go on, instead "
            "of stopping at the first (default: stop)"
        ),
        show_default=False,
    ),
]
MaxRejectsOpt = Annotated[
    int,
    Opt(
        "--max-rejects",
        help=(
            "With --rejects: stop (exit 1, nothing written) when the first N "
            "rows, or every row of a shorter file, are bad for one reason, a "
            "mistake of the file; 0: write them to --rejects and go on"
        ),
    ),
]
ResumeOpt = Annotated[
    bool,
    Opt(
        "--resume",
        help=(
            "Continue an interrupted run: keep the finished rows of OUTPUT (and"
            " --rejects) and predict the rest"
        ),
    ),
]
OverwriteOpt = Annotated[
    bool, Opt("--overwrite", help="Replace an existing OUTPUT / --rejects")
]
ComponentOpt = Annotated[
    Optional[str],
    component_opt("The spacy-attn component to use if the pipeline has several"),
]
MaxCharsOpt = Annotated[
    Optional[int],
    Opt(
        "--max-chars",
        help=(
            "Longest text (characters) a row may hold; a longer one is a bad "
            "row (default: per component: pair 5,000 per text, doc 20,000, "
            "QA question 2,000 and context 1,000,000)"
        ),
        show_default=False,
    ),
]
ScoreThresholdOpt = Annotated[
    Optional[float],
    Opt(
        "--score-threshold",
        help=(
            "Span QA: drop answers scoring below it; a model that scores 'no "
            "answer' then says 'no answer' when none is left (default: keep all)"
        ),
        show_default=False,
    ),
]
NoProgressOpt = Annotated[bool, Opt("--no-progress", help="No progress bar on stderr")]
SchedulerOpt = Annotated[
    Optional[str],
    Opt(
        "--scheduler",
        help=(
            "dask: scheduler address, e.g. tcp://host:8786 (default: a "
            "LocalCluster of --n-workers)"
        ),
        show_default=False,
    ),
]
NWorkersOpt = Annotated[
    int,
    Opt(
        "--n-workers",
        help="dask: worker processes of the LocalCluster (without --scheduler)",
    ),
]
BatchesPerTaskOpt = Annotated[
    int, Opt("--batches-per-task", help="dask: batches per Dask task")
]
MaxInFlightOpt = Annotated[
    Optional[int],
    Opt(
        "--max-in-flight",
        help=(
            "dask: tasks submitted and not yet written (default: two per worker thread)"
        ),
        show_default=False,
    ),
]
ResourcesOpt = Annotated[
    Optional[str],
    Opt(
        "--resources",
        help="dask: worker resources every batch needs, e.g. GPU=1 (default: none)",
        show_default=False,
    ),
]
StartupTimeoutOpt = Annotated[
    float,
    Opt(
        "--startup-timeout",
        help="dask: seconds to wait for workers and model loads",
    ),
]


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


def parse_resources(value: Optional[str]) -> Optional[Dict[str, float]]:
    """``--resources GPU=1,MEM=2e9`` as a dict (None: no resources)."""
    if not value:
        return None
    resources = {}
    for item in value.split(","):
        name, sep, amount = item.partition("=")
        try:
            resources[name.strip()] = float(amount)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            fail(f"--resources: expected NAME=AMOUNT[,NAME=AMOUNT], got {value!r}.")
    return resources


def comma_list(value: Optional[str]) -> Optional[List[str]]:
    """``--text-cols question,sentence`` as a list, each name stripped (None:
    not given), as ``Columns.parse`` reads it."""
    return [c.strip() for c in value.split(",")] if value else None


def parse_text_cols(value: Optional[str]) -> Optional[List[str]]:
    """``--text-cols question,sentence`` as a list (None: detect them), for a
    command whose pipeline says how many texts a row has (predict, distill)."""
    columns = pair_columns(value, kind=None, in_config=False).text_cols
    return list(columns) if columns is not None else None


def pair_columns(
    *options: Optional[str], kind: Optional[str] = "pair", in_config: bool = True
) -> "Columns":
    """The columns of the column options, passed as ``Columns.parse`` takes
    them (``--text-cols``, then ``--label-col``, ``--group-col`` and
    ``--id-col`` where the command has them), or one line naming the
    mistake."""
    from ..errors import CorpusFormatError
    from ..readers import Columns

    try:
        return Columns.parse(*options, kind=kind, in_config=in_config)
    except CorpusFormatError as err:
        fail(str(err))


__all__ = [
    "PredictModelArg",
    "InputArg",
    "OutputArg",
    "EngineOpt",
    "NProcessOpt",
    "BatchSizeOpt",
    "PredictGpuIdOpt",
    "ThreadsOpt",
    "RejectsOpt",
    "MaxRejectsOpt",
    "ResumeOpt",
    "OverwriteOpt",
    "ComponentOpt",
    "component_opt",
    "MaxCharsOpt",
    "ScoreThresholdOpt",
    "NoProgressOpt",
    "SchedulerOpt",
    "NWorkersOpt",
    "BatchesPerTaskOpt",
    "MaxInFlightOpt",
    "ResourcesOpt",
    "StartupTimeoutOpt",
    "argument",
    "DelimiterOpt",
    "FormatOpt",
    "QuotingOpt",
    "GpuIdOpt",
    "JsonOpt",
    "Bm25BOpt",
    "Bm25K1Opt",
    "PairBatchSizeOpt",
    "json_output_opt",
    "GroupColOpt",
    "InitFromOpt",
    "NewHeadOpt",
    "LexicalFeaturesOpt",
    "IdColOpt",
    "LabelColOpt",
    "LabelMapOpt",
    "ModelArg",
    "Opt",
    "PairDataArg",
    "PairKeyOpt",
    "PositiveLabelOpt",
    "TextColsOpt",
    "comma_list",
    "pair_columns",
    "parse_label_map",
    "parse_resources",
    "parse_text_cols",
]
