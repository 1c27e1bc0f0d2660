"""spacy-attn's commands as a spaCy CLI plugin: ``python -m spacy attn ...``.

spaCy reads the ``spacy_cli`` entry point of setup.cfg (``registry.cli``)
when its command line starts, which imports this module; importing it adds
the ``attn`` group to spaCy's typer app, as spacy-curated-transformers does
for its commands. ``python -m spacy_attn ...`` runs the same group.

    python -m spacy attn predict MODEL INPUT OUTPUT [--engine local|dask]
    python -m spacy attn evaluate MODEL DATA
    python -m spacy attn convert INPUT OUTPUT
    python -m spacy attn benchmark-speed MODEL DATA
    python -m spacy attn device-check --gpu-id 0
    python -m spacy attn squad-eval DATASET PREDICTIONS
    python -m spacy attn code-path

Every problem a user can cause (a missing or wrong pipeline path, a missing
input, a bad row, options that do not fit) ends in one line ``Error: ...``
on stderr and exit code 1, not a traceback.
"""

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, NoReturn, Optional

import typer
from typing_extensions import Annotated

from .pairs import DEFAULT_PAIR_KEY

HELP = """spacy-attn: attention models as spaCy components. Batch prediction,
evaluation and conversion for pair, doc and QA pipelines.
"""

attn_cli = typer.Typer(
    name="attn",
    help=HELP,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
)
Arg = typer.Argument
Opt = typer.Option

# Options that several pair commands declare alike.
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


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: message`` (one line) on stderr and exit with ``code``."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user causes (bad input, options, pipeline, corpus
    files) into one line and exit code 1; anything else is a bug and keeps
    its traceback."""
    from .batch import PredictError
    from .errors import CorpusFormatError
    from .loading import PipelineLoadError
    from .pipeline.base import ComponentLoadError

    try:
        yield
    except (
        PredictError,
        PipelineLoadError,
        ComponentLoadError,
        CorpusFormatError,
    ) as err:
        fail(" ".join(str(err).split()))
    except FileNotFoundError as err:
        fail(f"File not found: {err.filename or err}")
    except IsADirectoryError as err:
        fail(f"{err.filename}: a directory where a file was expected")


def project_mirror(folder: Path) -> Optional[Path]:
    """The data mirror a spaCy project folder names (``vars.mirror`` of its
    ``project.yml``, relative to the folder), or None."""
    import srsly

    config = folder / "project.yml"
    if not config.exists():
        return None
    value = (srsly.read_yaml(config).get("vars") or {}).get("mirror")
    return folder / value if value else None


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


def _label_map(value: Optional[str]) -> Optional[Dict[str, str]]:
    if not value:
        return None
    try:
        mapping = json.loads(value)
    except ValueError as err:
        fail(f"--label-map: not JSON ({err}): {value!r}")
    if not isinstance(mapping, dict):
        fail(f"--label-map: expected a JSON object, got {value!r}")
    return {str(k): str(v) for k, v in mapping.items()}


def _existing_file(path: Path, what: str) -> None:
    if not path.exists():
        fail(f"{what} not found: {path}")
    if path.is_dir():
        fail(f"{what} {path} is a directory; pass a file.")


# -- predict ---------------------------------------------------------------------


@attn_cli.command("predict", no_args_is_help=True)
def predict_cli(
    model: Annotated[
        str,
        Arg(
            metavar="MODEL",
            help=(
                "Pipeline directory or installed package name (with the Dask "
                "engine, visible to every worker)"
            ),
            show_default=False,
        ),
    ],
    input_path: Annotated[
        Path,
        Arg(
            metavar="INPUT",
            help="Rows to predict: jsonl, csv or tsv, optionally gzipped",
            show_default=False,
        ),
    ],
    output_path: Annotated[
        Path,
        Arg(
            metavar="OUTPUT",
            help="Output: one JSON line per row, in input order (plain jsonl)",
            show_default=False,
        ),
    ],
    engine: Annotated[
        str,
        Opt(
            "--engine",
            help=(
                "Where batches are predicted: local (this process, or --n-process "
                "workers) or dask (a Dask cluster)"
            ),
        ),
    ] = "local",
    n_process: Annotated[
        int,
        Opt(
            "--n-process",
            help="local: worker processes, one torch thread each (1: this process)",
        ),
    ] = 1,
    batch_size: Annotated[
        int,
        Opt(
            "--batch-size",
            help="Input rows per batch (one job of a worker, one flush of OUTPUT)",
        ),
    ] = 64,
    gpu_id: Annotated[
        int,
        Opt(
            "--gpu-id",
            help=(
                "GPU to predict on, -1 for the CPU (local: with --n-process 1; "
                "dask: each worker's)"
            ),
        ),
    ] = -1,
    threads: Annotated[
        Optional[int],
        Opt(
            "--threads",
            help=(
                "torch threads of this process (local, --n-process 1) or of each "
                "Dask worker (default: torch's)"
            ),
            show_default=False,
        ),
    ] = None,
    text_cols: Annotated[
        Optional[str],
        Opt(
            "--text-cols",
            help=(
                "Comma-separated text columns in the task's order, e.g. "
                "premise,hypothesis (default: detected from the first row)"
            ),
            show_default=False,
        ),
    ] = None,
    id_col: Annotated[
        Optional[str],
        Opt(
            "--id-col",
            help="Id column (default: 'id' if present, else the line number)",
            show_default=False,
        ),
    ] = None,
    rejects: Annotated[
        Optional[Path],
        Opt(
            "--rejects",
            help=(
                "Write bad rows here (jsonl: line, raw, reason) and go on, instead "
                "of stopping at the first (default: stop)"
            ),
            show_default=False,
        ),
    ] = None,
    resume: Annotated[
        bool,
        Opt(
            "--resume",
            help=(
                "Continue an interrupted run: keep the finished rows of OUTPUT (and"
                " --rejects) and predict the rest"
            ),
        ),
    ] = False,
    overwrite: Annotated[
        bool, Opt("--overwrite", help="Replace an existing OUTPUT / --rejects")
    ] = False,
    input_format: Annotated[
        str,
        Opt(
            "--format",
            help=(
                "Input format: auto (from the file name, else the first line), "
                "jsonl, csv or tsv"
            ),
        ),
    ] = "auto",
    component: Annotated[
        Optional[str],
        Opt(
            "--component",
            help=(
                "The spacy-attn component to use if the pipeline has several "
                "(default: the only one)"
            ),
            show_default=False,
        ),
    ] = None,
    max_chars: Annotated[
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
    ] = None,
    no_progress: Annotated[
        bool, Opt("--no-progress", help="No progress bar on stderr")
    ] = False,
    scheduler: Annotated[
        Optional[str],
        Opt(
            "--scheduler",
            help=(
                "dask: scheduler address, e.g. tcp://host:8786 (default: a "
                "LocalCluster of --n-workers)"
            ),
            show_default=False,
        ),
    ] = None,
    n_workers: Annotated[
        int,
        Opt(
            "--n-workers",
            help="dask: worker processes of the LocalCluster (without --scheduler)",
        ),
    ] = 2,
    batches_per_task: Annotated[
        int, Opt("--batches-per-task", help="dask: batches per Dask task")
    ] = 4,
    max_in_flight: Annotated[
        Optional[int],
        Opt(
            "--max-in-flight",
            help=(
                "dask: tasks submitted and not yet written (default: two per worker"
                " thread)"
            ),
            show_default=False,
        ),
    ] = None,
    resources: Annotated[
        Optional[str],
        Opt(
            "--resources",
            help="dask: worker resources every batch needs, e.g. GPU=1 (default: none)",
            show_default=False,
        ),
    ] = None,
    startup_timeout: Annotated[
        float,
        Opt(
            "--startup-timeout",
            help="dask: seconds to wait for workers and model loads",
        ),
    ] = 300.0,
) -> None:
    """Predict every row of INPUT with the pipeline's spacy-attn component
    (pairs -> cats; docs -> embedding and cats; QA -> answers) and write one
    JSON line per row, in input order, to OUTPUT. Streaming, resumable, on
    local worker processes or a Dask cluster.
    """
    from .batch import ENGINES, predict_file

    if engine not in ENGINES:
        fail(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}.")
    if input_format not in ("auto", "jsonl", "csv", "tsv"):
        fail(f"--format: {input_format!r} is not one of auto, jsonl, csv, tsv.")
    if engine == "local" and (scheduler or resources):
        fail("--scheduler and --resources are options of --engine dask.")
    if engine == "dask" and n_process != 1:
        fail("--n-process is an option of --engine local; use --n-workers with dask.")
    columns = [c.strip() for c in text_cols.split(",")] if text_cols else None
    needs = parse_resources(resources)
    with user_errors():
        stats = predict_file(
            model,
            input_path,
            output_path,
            engine=engine,
            n_process=n_process,
            batch_size=batch_size,
            gpu_id=gpu_id,
            threads=threads,
            text_cols=columns,
            id_col=id_col,
            rejects_path=rejects,
            resume=resume,
            overwrite=overwrite,
            input_format=input_format,
            component=component,
            max_chars=max_chars,
            progress=not no_progress,
            scheduler=scheduler,
            n_workers=n_workers,
            batches_per_task=batches_per_task,
            max_in_flight=max_in_flight,
            resources=needs,
            startup_timeout=startup_timeout,
        )
    rate = stats.rows / stats.seconds if stats.seconds else 0.0
    where = ""
    if stats.engine == "dask":
        where = (
            f" on {stats.workers} Dask workers at {stats.details.get('scheduler')} "
            f"(startup {stats.startup_seconds:.1f} s)"
        )
    elif stats.workers > 1:
        where = f" on {stats.workers} worker processes"
    columns_read = stats.columns
    typer.echo(
        f"{stats.component} ({stats.task}): {stats.written} rows written to {output_path}"
        + (f", {stats.rejected} rejected to {rejects}" if rejects else "")
        + (f", {stats.skipped} already done (--resume)" if stats.skipped else "")
        + f" in {stats.seconds:.1f} s ({rate:,.0f} rows/s){where}"
        + (
            f"; texts {list(columns_read.texts)}, id {columns_read.id or 'line number'}"
            if columns_read
            else ""
        ),
        err=True,
    )


# -- evaluate, convert, benchmark-speed -------------------------------------------


@attn_cli.command("evaluate", no_args_is_help=True)
def evaluate_cli(
    model: Annotated[
        str,
        Arg(
            metavar="MODEL",
            help="Pipeline directory or installed package name",
            show_default=False,
        ),
    ],
    data: Annotated[
        Path,
        Arg(
            metavar="DATA",
            help=(
                "Pair corpus: jsonl / tsv (optionally .gz) or a .spacy DocBin of "
                "pair docs"
            ),
            show_default=False,
        ),
    ],
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Write the scores as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: LabelMapOpt = None,
    positive_label: PositiveLabelOpt = None,
    limit: Annotated[
        int, Opt("--limit", help="Evaluate on the first N pairs (0: all)")
    ] = 0,
    batch_size: Annotated[int, Opt("--batch-size", help="Pairs per batch")] = 256,
    gpu_id: GpuIdOpt = -1,
) -> None:
    """Evaluate a pipeline on a pair corpus, like `spacy evaluate` but keeping
    each doc's pair (read with spacy-attn.PairCorpus.v1); prints the scores
    as JSON.
    """
    from .loading import load_pipeline
    from .readers import PairCorpus

    _existing_file(data, "DATA")
    mapping = _label_map(label_map)
    with user_errors():
        nlp = load_pipeline(model, gpu_id=gpu_id)
        corpus = PairCorpus(
            data,
            pair_key=pair_key,
            label_map=mapping,
            positive_label=positive_label,
            limit=limit,
        )
        scores = nlp.evaluate(list(corpus(nlp)), batch_size=batch_size)
    text = json.dumps(scores, indent=2)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf8")
    typer.echo(text)


@attn_cli.command("convert", no_args_is_help=True)
def convert_cli(
    input_path: Annotated[
        Path,
        Arg(
            metavar="INPUT",
            help="Pair corpus: jsonl or tsv, optionally gzipped",
            show_default=False,
        ),
    ],
    output_path: Annotated[
        Path,
        Arg(
            metavar="OUTPUT",
            help="DocBin (.spacy) of pair docs to write",
            show_default=False,
        ),
    ],
    lang: Annotated[
        str, Opt("--lang", help="Language of the blank pipeline that tokenizes")
    ] = "en",
    model: Annotated[
        Optional[str],
        Opt(
            "--model",
            help="Pipeline whose tokenizer to use instead of --lang (default: none)",
            show_default=False,
        ),
    ] = None,
    input_format: Annotated[
        str, Opt("--format", help="Input format: auto, jsonl or tsv")
    ] = "auto",
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: LabelMapOpt = None,
    positive_label: PositiveLabelOpt = None,
    limit: Annotated[
        int, Opt("--limit", help="Convert the first N pairs (0: all)")
    ] = 0,
) -> None:
    """Convert a pair corpus (jsonl / tsv) to a DocBin of pair docs for
    `spacy train`."""
    import spacy
    from spacy.tokens import DocBin

    from .loading import load_pipeline
    from .pairs import make_pair
    from .readers import cats_for, read_pair_rows

    _existing_file(input_path, "INPUT")
    if input_format not in ("auto", "jsonl", "tsv"):
        fail(f"--format: {input_format!r} is not one of auto, jsonl, tsv.")
    mapping = _label_map(label_map)
    with user_errors():
        if model is None:
            try:
                nlp = spacy.blank(lang)
            except ImportError:
                fail(f"--lang: {lang!r} is not a language spaCy knows.")
        else:
            nlp = load_pipeline(model)
        rows, stats = read_pair_rows(
            input_path, format=input_format, label_map=mapping, limit=limit
        )
        docbin = DocBin(store_user_data=True)
        for row in rows:
            doc = make_pair(nlp, row.first, row.second, pair_key=pair_key)
            assert row.label is not None  # read_pair_rows skips unlabelled rows
            doc.cats = cats_for(row.label, positive_label)
            docbin.add(doc)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output_path)
    typer.echo(
        f"Wrote {stats.rows} pairs to {output_path} (skipped {stats.skipped_unlabelled} "
        f"unlabelled); labels: {stats.labels}"
    )


@attn_cli.command("benchmark-speed", no_args_is_help=True)
def benchmark_speed_cli(
    model: Annotated[
        str,
        Arg(
            metavar="MODEL",
            help="Pipeline directory or installed package name",
            show_default=False,
        ),
    ],
    data: Annotated[
        Path,
        Arg(
            metavar="DATA",
            help=(
                "Pair corpus: jsonl / tsv (optionally .gz) or a .spacy DocBin of "
                "pair docs"
            ),
            show_default=False,
        ),
    ],
    batch_size: Annotated[
        Optional[int],
        Opt(
            "--batch-size",
            help="Docs per batch (default: the pipeline's nlp.batch_size)",
            show_default=False,
        ),
    ] = None,
    batches: Annotated[int, Opt("--batches", help="Batches to time")] = 50,
    warmup_epochs: Annotated[
        int, Opt("--warmup", help="Warm-up passes over the corpus")
    ] = 3,
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    gpu_id: GpuIdOpt = -1,
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Write the measurements as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Words per second of a pipeline on pair docs, tokenization included:
    `spacy benchmark speed` (same warm-up, batches and statistics) with each
    doc rebuilt as a pair doc."""
    import random

    from spacy.cli.benchmark_speed import (
        annotate,
        print_mean_with_ci,
        print_outliers,
        warmup,
    )

    from .loading import load_pipeline
    from .pairs import get_pair_texts, make_pair
    from .readers import PairCorpus

    _existing_file(data, "DATA")
    if batches < 1 or (batch_size is not None and batch_size < 1):
        fail("--batches and --batch-size must be >= 1.")
    with user_errors():
        nlp = load_pipeline(model, gpu_id=gpu_id)
        size = batch_size or nlp.batch_size
        docs = [eg.predicted for eg in PairCorpus(data, pair_key=pair_key)(nlp)]
    if not docs:
        fail(f"{data}: no pairs to benchmark.")
    texts = [get_pair_texts(doc, pair_key) for doc in docs]
    typer.echo(f"Warming up for {warmup_epochs} epochs...")
    warmup(nlp, docs, warmup_epochs, size)
    typer.echo(f"\nBenchmarking {batches} batches...")
    rng = random.Random(0)
    picks = [rng.choice(texts) for _ in range(batches * size)]
    # A generator, not a list: tokenization stays inside the timed loop, as
    # in `spacy benchmark speed`.
    pairs = (make_pair(nlp, a, b, pair_key=pair_key) for a, b in picks)
    wps = annotate(nlp, pairs, size)  # type: ignore[arg-type]
    typer.echo()
    print_outliers(wps)
    print_mean_with_ci(wps)
    if output:
        import numpy

        result = {
            "words_per_second_mean": float(numpy.mean(wps)),
            "batches": len(wps),
            "batch_size": size,
            "words_per_second": [float(x) for x in wps],
        }
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")


# -- device-check, squad-eval, code-path -------------------------------------------


@attn_cli.command("device-check")
def device_check_cli(
    gpu_id: Annotated[int, Opt("--gpu-id", help="GPU to check, -1 for the CPU")] = 0,
    steps: Annotated[
        int, Opt("--steps", help="Training updates per component and backbone")
    ] = 20,
    components: Annotated[
        Optional[List[str]],
        Opt(
            "--component",
            help="Component to check; repeat for several (default: all three)",
            show_default=False,
        ),
    ] = None,
    backbones: Annotated[
        Optional[List[str]],
        Opt(
            "--backbone",
            help=(
                "Backbone to check: vectors, tok2vec or transformer; repeat for "
                "several (default: all three)"
            ),
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Write the results as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
    mirror: Annotated[
        Optional[Path],
        Opt(
            "--mirror",
            envvar="SPACY_ATTN_MIRROR",
            help=(
                "Data mirror folder with snli/dev.jsonl.gz, "
                "rotten_tomatoes/train.jsonl.gz and squad/dev-v1.1.json.gz "
                "(default: $SPACY_ATTN_MIRROR, else vars.mirror of the "
                "project.yml in the working directory)"
            ),
            show_default=False,
        ),
    ] = None,
) -> None:
    """Train, save, reload and compare every component on a device (data: a
    mirror folder); exit code 1 if a check failed."""
    from .device_check import BACKBONES, COMPONENTS, DATA_FILES, run

    components = list(components or COMPONENTS)
    backbones = list(backbones or BACKBONES)
    unknown = [c for c in components if c not in COMPONENTS] + [
        b for b in backbones if b not in BACKBONES
    ]
    if unknown:
        fail(
            f"Unknown component or backbone {unknown}: components are "
            f"{', '.join(COMPONENTS)}; backbones {', '.join(BACKBONES)}."
        )
    if steps < 1:
        fail("--steps must be >= 1.")
    if mirror is None:
        # The setting of the spaCy project the command runs in (its
        # project.yml's vars.mirror, relative to that folder), never a path
        # derived from where the package is installed.
        mirror = project_mirror(Path.cwd())
        if mirror is None:
            fail(
                "No data: pass --mirror DIR (a data mirror folder), set "
                "SPACY_ATTN_MIRROR, or run from a project folder whose "
                "project.yml sets vars.mirror."
            )
    if not mirror.is_dir():
        fail(f"--mirror {mirror}: no such folder.")
    missing = [
        DATA_FILES[c] for c in components if not (mirror / DATA_FILES[c]).exists()
    ]
    if missing:
        fail(f"The data mirror {mirror} lacks {', '.join(missing)}.")
    if gpu_id >= 0:
        import torch

        if not torch.cuda.is_available():
            fail("No CUDA device: run with --gpu-id -1 for the CPU check.", code=2)
    with user_errors():
        results = run(
            data=mirror,
            gpu_id=gpu_id,
            steps=steps,
            components=components,
            backbones=backbones,
        )
    if output:
        output.write_text(json.dumps(results, indent=2) + "\n")
    failed = [r for r in results if r["status"] == "failed"]
    for r in failed:
        typer.echo(
            f"\nFAILED {r['component']} / {r['backbone']}:\n{r.get('traceback', r)}",
            err=True,
        )
    if failed:
        raise typer.Exit(1)


@attn_cli.command("squad-eval", no_args_is_help=True)
def squad_eval_cli(
    dataset_file: Annotated[
        Path,
        Arg(
            metavar="DATASET",
            help="SQuAD 1.1 dataset (JSON, optionally .gz)",
            show_default=False,
        ),
    ],
    prediction_file: Annotated[
        Path,
        Arg(
            metavar="PREDICTIONS",
            help="Predictions: JSON {question id: answer text}",
            show_default=False,
        ),
    ],
) -> None:
    """Exact Match and F1 (0-100) of SQuAD 1.1 predictions with the official
    metric (the command line of evaluate-v1.1.py); prints the JSON scores."""
    from .squad import load_squad_json, squad_evaluate

    _existing_file(dataset_file, "DATASET")
    _existing_file(prediction_file, "PREDICTIONS")
    with user_errors():
        dataset = load_squad_json(dataset_file)
        try:
            predictions: Any = json.loads(prediction_file.read_text(encoding="utf8"))
        except ValueError as err:
            fail(f"{prediction_file}: invalid JSON ({err})")
    if not isinstance(predictions, dict):
        fail(f"{prediction_file}: expected a JSON object {{question id: answer text}}.")
    typer.echo(json.dumps(squad_evaluate(dataset["data"], predictions)))


@attn_cli.command("code-path")
def code_path_cli() -> None:
    """Print the path of the file to pass to `spacy train|evaluate --code`
    so that spaCy's own corpus keeps the pairs of pair docs."""
    from .corpus_patch import code_path

    typer.echo(code_path())


def main(
    argv: Optional[List[str]] = None, *, prog_name: str = "python -m spacy_attn"
) -> None:
    """Run the ``attn`` commands (``python -m spacy_attn``, the alias of
    ``python -m spacy attn``).

    argv (Optional[List[str]]): The arguments; None: ``sys.argv[1:]``.
    prog_name (str): The program name in help and usage messages.
    """
    command = typer.main.get_command(attn_cli)
    try:
        command.main(
            args=list(sys.argv[1:] if argv is None else argv),
            prog_name=prog_name,
            standalone_mode=True,
        )
    except SystemExit as exit:
        # Standalone mode always exits; a caller (a test, a script) can run
        # several commands, so only a failure leaves.
        if exit.code:
            raise


def register_with_spacy() -> None:
    """Add the ``attn`` group to spaCy's command line (``python -m spacy
    attn``); called when this module is imported, once."""
    from spacy.cli import app

    if not any(group.typer_instance is attn_cli for group in app.registered_groups):
        app.add_typer(attn_cli)


register_with_spacy()


__all__ = ["attn_cli", "main", "register_with_spacy"]
