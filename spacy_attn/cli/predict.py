"""``spacy attn predict``: batch prediction over a file, on the engine that
its options build (``spacy_attn.batch``)."""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional

import typer

from .app import attn_cli
from .errors import fail, user_errors
from .options import (
    BatchesPerTaskOpt,
    BatchSizeOpt,
    ComponentOpt,
    DelimiterOpt,
    EngineOpt,
    FormatOpt,
    GroupColOpt,
    IdColOpt,
    InputArg,
    LabelColOpt,
    MaxCharsOpt,
    MaxInFlightOpt,
    MaxRejectsOpt,
    NoProgressOpt,
    NProcessOpt,
    NWorkersOpt,
    OutputArg,
    OverwriteOpt,
    PredictGpuIdOpt,
    PredictModelArg,
    QuotingOpt,
    RejectsOpt,
    ResourcesOpt,
    ResumeOpt,
    SchedulerOpt,
    ScoreThresholdOpt,
    StartupTimeoutOpt,
    TextColsOpt,
    ThreadsOpt,
    parse_text_cols,
)

if TYPE_CHECKING:  # the batch package is imported when a run starts
    from ..batch import Engine, PredictStats

ENGINES = ("local", "dask")
FORMATS = ("auto", "jsonl", "csv", "tsv")


@attn_cli.command("predict", no_args_is_help=True)
def predict_cli(
    model: PredictModelArg,
    input_path: InputArg,
    output_path: OutputArg,
    engine: EngineOpt = "local",
    n_process: NProcessOpt = 1,
    batch_size: BatchSizeOpt = 64,
    gpu_id: PredictGpuIdOpt = -1,
    threads: ThreadsOpt = None,
    text_cols: TextColsOpt = None,
    id_col: IdColOpt = None,
    label_col: LabelColOpt = None,
    group_col: GroupColOpt = None,
    rejects: RejectsOpt = None,
    max_rejects: MaxRejectsOpt = 100,
    resume: ResumeOpt = False,
    overwrite: OverwriteOpt = False,
    input_format: FormatOpt = "auto",
    delimiter: DelimiterOpt = None,
    quoting: QuotingOpt = "auto",
    component: ComponentOpt = None,
    max_chars: MaxCharsOpt = None,
    score_threshold: ScoreThresholdOpt = None,
    no_progress: NoProgressOpt = False,
    scheduler: SchedulerOpt = None,
    n_workers: NWorkersOpt = 2,
    batches_per_task: BatchesPerTaskOpt = 4,
    max_in_flight: MaxInFlightOpt = None,
    resources: ResourcesOpt = None,
    startup_timeout: StartupTimeoutOpt = 300.0,
) -> None:
    """Predict every row of INPUT with the pipeline's spacy-attn component
    (pairs -> cats; docs -> embedding and cats; QA -> answers) and write one
    JSON line per row, in input order, to OUTPUT. Streaming, resumable, on
    local worker processes or a Dask cluster."""
    from ..batch import predict_file

    check_options(
        engine, input_format, n_process=n_process, gpu_id=gpu_id,
        dask_only=bool(scheduler or resources),
    )  # fmt: skip
    with user_errors():
        runner = make_engine(
            engine,
            n_process=n_process,
            gpu_id=gpu_id,
            threads=threads,
            score_threshold=score_threshold,
            dask_options={
                "scheduler": scheduler,
                "n_workers": n_workers,
                "batches_per_task": batches_per_task,
                "max_in_flight": max_in_flight,
                "resources": parse_resources(resources),
                "startup_timeout": startup_timeout,
            },
        )
        stats = predict_file(
            model,
            input_path,
            output_path,
            engine=runner,
            batch_size=batch_size,
            text_cols=parse_text_cols(text_cols),
            id_col=id_col,
            group_col=group_col,
            label_col=label_col,
            rejects_path=rejects,
            max_rejects=max_rejects,
            resume=resume,
            overwrite=overwrite,
            input_format=input_format,
            delimiter=delimiter,
            quoting=quoting,
            component=component,
            max_chars=max_chars,
            progress=not no_progress,
        )
    typer.echo(summary(stats, output_path, rejects), err=True)


def make_engine(
    kind: str,
    *,
    n_process: int,
    gpu_id: int,
    threads: Optional[int],
    score_threshold: Optional[float],
    dask_options: Dict[str, Any],
) -> "Engine":
    """The engine the options ask for: Dask (``dask_options`` are
    ``DaskEngine``'s own), one process, or a local pool of ``n_process``."""
    from ..batch import InProcessEngine, LocalPoolEngine

    if kind == "dask":
        from ..batch.dask_engine import DaskEngine

        return DaskEngine(
            gpu_id=gpu_id,
            threads=threads,
            score_threshold=score_threshold,
            **dask_options,
        )
    if n_process == 1:
        return InProcessEngine(
            gpu_id=gpu_id, threads=threads, score_threshold=score_threshold
        )
    return LocalPoolEngine(n_process, score_threshold=score_threshold)


def check_options(
    engine: str, input_format: str, *, n_process: int, gpu_id: int, dask_only: bool
) -> None:
    """Fail on option values, and combinations of options, that no engine
    takes (``dask_only``: --scheduler or --resources is given)."""
    if engine not in ENGINES:
        fail(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}.")
    if input_format not in FORMATS:
        fail(f"--format: {input_format!r} is not one of {', '.join(FORMATS)}.")
    if engine == "local" and dask_only:
        fail("--scheduler and --resources are options of --engine dask.")
    if engine == "dask" and n_process != 1:
        fail("--n-process is an option of --engine local; use --n-workers with dask.")
    if n_process < 1:
        fail(f"--n-process must be >= 1, got {n_process}.")
    if n_process > 1 and gpu_id >= 0:
        fail(
            "--gpu-id with --n-process > 1 is not supported: one process drives the GPU "
            "(a forked worker cannot use CUDA); raise --batch-size, or use "
            "--engine dask with one worker per GPU."
        )


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


def summary(stats: "PredictStats", output_path: Path, rejects: Optional[Path]) -> str:
    """The line that ends a run: rows written, rejected and skipped, the
    time and rate, where it ran and the columns it read."""
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
    read = f"Read {stats.counts.describe()}. " if stats.counts else ""
    read = f"Note: {stats.note}\n{read}" if stats.note else read
    return read + (
        f"{stats.component} ({stats.task}): {stats.written} rows written to {output_path}"
        + (f", {stats.rejected} rejected to {rejects}" if rejects else "")
        + (f", {stats.skipped} already done (--resume)" if stats.skipped else "")
        + f" in {stats.seconds:.1f} s ({rate:,.0f} rows/s){where}"
        + (
            f"; texts {list(columns_read.text_cols or ())}, "
            f"id {columns_read.id_col or 'line number'}"
            if columns_read
            else ""
        )
    )


__all__ = ["ENGINES", "check_options", "parse_resources", "predict_cli", "summary"]
