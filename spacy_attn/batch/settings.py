"""The options of a batch prediction run grouped as settings, and the one
call that checks them and runs it (``spacy attn predict`` is this call with
its options parsed): ``predict_with_settings``."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, NoReturn, Optional, Sequence, Union

from . import file_checks
from .driver import predict_file
from .engines import Engine, InProcessEngine, LocalPoolEngine, Model
from .errors import PredictError
from .output import PredictStats

ENGINES = ("local", "dask")
FORMATS = ("auto", "jsonl", "csv", "tsv")


@dataclass(frozen=True)
class EngineSettings:
    """Where batches are predicted.

    kind (str): "local" (this process, or a pool of ``n_process``) or "dask".
    n_process (int): Local worker processes (1: this process).
    gpu_id (int): The GPU (-1: the CPU): this process's, or each Dask worker's.
    threads (Optional[int]): torch threads of this process or of each Dask
        worker (None: torch's).
    score_threshold (Optional[float]): Span QA: drop answers scoring below it.
    scheduler (Optional[str]): Dask: the scheduler's address (None: a
        ``LocalCluster`` of ``n_workers``).
    n_workers, batches_per_task, max_in_flight, resources, startup_timeout:
        Dask: ``dask_engine.DaskEngine``'s settings of the same names.
    """

    kind: str = "local"
    n_process: int = 1
    gpu_id: int = -1
    threads: Optional[int] = None
    score_threshold: Optional[float] = None
    scheduler: Optional[str] = None
    n_workers: int = 2
    batches_per_task: int = 4
    max_in_flight: Optional[int] = None
    resources: Optional[Dict[str, float]] = None
    startup_timeout: float = 300.0

    def make_engine(self) -> Engine:
        """The engine (not started): Dask, one process, or a local pool.

        RETURNS (Engine): ``DaskEngine``, ``InProcessEngine`` or ``LocalPoolEngine``.
        """
        if self.kind == "dask":
            # Imported here: Dask is needed only by the runs that use it.
            from .dask_engine import DaskEngine

            # Every field but the engine's kind and pool size is a DaskEngine
            # setting of the same name.
            local_only = ("kind", "n_process")
            return DaskEngine(
                **{k: v for k, v in vars(self).items() if k not in local_only}
            )
        if self.n_process == 1:
            return InProcessEngine(
                gpu_id=self.gpu_id,
                threads=self.threads,
                score_threshold=self.score_threshold,
            )
        return LocalPoolEngine(self.n_process, score_threshold=self.score_threshold)


@dataclass(frozen=True)
class PredictSettings:
    """How a file is read, predicted and written (``predict_file``'s options
    of the same names; formats and guarantees: docs/batch.md).

    engine (EngineSettings): Where batches are predicted.
    batch_size (int): Input rows per batch.
    text_cols (Optional[Sequence[str]]): The text columns, in the task's order
        (None: those the pipeline was trained with, else detected).
    id_col, label_col, group_col (Optional[str]): The id, gold label and
        group columns.
    rejects_path (Optional[Path]): Write bad rows here and go on (None: stop).
    max_rejects (int): Stop when the first N rows are bad alike (0: no check).
    resume, overwrite (bool): Continue an interrupted run; replace outputs.
    input_format, delimiter, quoting: How INPUT is read.
    component (Optional[str]): The spacy-attn component, if several.
    max_chars (Optional[int]): The longest text of a row (None: per component).
    progress (bool): Show a progress bar on stderr.
    """

    engine: EngineSettings = field(default_factory=EngineSettings)
    batch_size: int = 64
    text_cols: Optional[Sequence[str]] = None
    id_col: Optional[str] = None
    label_col: Optional[str] = None
    group_col: Optional[str] = None
    rejects_path: Optional[Path] = None
    max_rejects: int = file_checks.MAX_REJECTS
    resume: bool = False
    overwrite: bool = False
    input_format: str = "auto"
    delimiter: Optional[str] = None
    quoting: str = "auto"
    component: Optional[str] = None
    max_chars: Optional[int] = None
    progress: bool = True


def check_settings(settings: PredictSettings) -> None:
    """Refuse option values, and combinations of options, that no engine
    takes, before anything is read or started.

    settings (PredictSettings): The run's settings.
    RAISES (PredictError): Naming the option (as ``spacy attn predict``
        spells it) and what it takes.
    """
    engine = settings.engine
    if engine.kind not in ENGINES:
        _refuse(f"--engine: {engine.kind!r} is not one of {', '.join(ENGINES)}.")
    if settings.input_format not in FORMATS:
        _refuse(
            f"--format: {settings.input_format!r} is not one of {', '.join(FORMATS)}."
        )
    if engine.kind == "local" and (engine.scheduler or engine.resources):
        _refuse("--scheduler and --resources are options of --engine dask.")
    if engine.kind == "dask" and engine.n_process != 1:
        _refuse(
            "--n-process is an option of --engine local; use --n-workers with dask."
        )
    if engine.n_process < 1:
        _refuse(f"--n-process must be >= 1, got {engine.n_process}.")
    if engine.n_process > 1 and engine.gpu_id >= 0:
        _refuse(
            "--gpu-id with --n-process > 1 is not supported: one process drives the GPU "
            "(a forked worker cannot use CUDA); raise --batch-size, or use "
            "--engine dask with one worker per GPU."
        )


def predict_with_settings(
    model: Model,
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    settings: PredictSettings,
) -> PredictStats:
    """Check the settings, build their engine and predict every row of
    ``input_path`` into ``output_path`` (``predict_file``).

    model (Union[str, Path, Language]): A pipeline path or package name, or a
        loaded pipeline.
    input_path (Union[str, Path]): jsonl / csv / tsv, optionally ``.gz``.
    output_path (Union[str, Path]): The jsonl output.
    settings (PredictSettings): How to read, predict and write.
    RETURNS (PredictStats): Counts and times.
    RAISES (PredictError): On settings that do not fit (``check_settings``),
        or a bad row without ``settings.rejects_path``.
    """
    check_settings(settings)
    # The fields are predict_file's options of the same names.
    options = dict(vars(settings), engine=settings.engine.make_engine())
    return predict_file(model, input_path, output_path, **options)


def describe_run(
    stats: PredictStats, output_path: Path, rejects_path: Optional[Path]
) -> str:
    """The line that ends a run: rows written, rejected and skipped, the
    time and rate, where it ran and the columns it read.

    stats (PredictStats): What ``predict_with_settings`` returned.
    output_path (Path): The output, as the user named it.
    rejects_path (Optional[Path]): The rejects file, if any.
    RETURNS (str): The line (a note and the rows read before it, if any).
    """
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
        + (f", {stats.rejected} rejected to {rejects_path}" if rejects_path else "")
        + (f", {stats.skipped} already done (--resume)" if stats.skipped else "")
        + f" in {stats.seconds:.1f} s ({rate:,.0f} rows/s){where}"
        + (
            f"; texts {list(columns_read.text_cols or ())}, "
            f"id {columns_read.id_col or 'line number'}"
            if columns_read
            else ""
        )
    )


def _refuse(message: str) -> NoReturn:
    raise PredictError(message)


__all__ = [
    "ENGINES",
    "FORMATS",
    "EngineSettings",
    "PredictSettings",
    "check_settings",
    "describe_run",
    "predict_with_settings",
]
