"""The driver: the one loop of batch prediction, whatever the engine.

check paths -> read rows -> start the engine -> resolve columns -> resume ->
cut fixed batches -> the engine predicts -> write each batch's lines and
rejects in input order -> close. See ``spacy_attn.batch`` for the guarantees.
"""

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .engines import Engine, InProcessEngine, LocalPoolEngine, Model
from .errors import PredictError
from .output import (
    OUTPUT_FORMAT,
    OutputFiles,
    PredictStats,
    check_paths,
    check_run_record,
    resume_rows,
    write_run_record,
)
from .pool import WorkerDied
from .predictor import row_error_reason, text_limits
from .rows import Columns, InputRow, RowReader, Task, count_rows, resolve_columns

ENGINES = ("local", "dask")


@dataclass
class Batch:
    """The rows of one batch, in input order: None for a row whose output the
    engine computes, ``(row, reason)`` for a bad one. The first ``done`` rows
    were finished by the run being resumed."""

    rows: List[Optional[Tuple[InputRow, str]]] = field(default_factory=list)
    done: int = 0
    # Every row of the batch, for the rejects of rows the pipeline fails on.
    inputs: List[InputRow] = field(default_factory=list)


def make_batches(
    rows: Iterable[InputRow],
    columns: Optional[Columns],
    batch_size: int,
    *,
    keep_going: bool,
    n_done: int = 0,
) -> Iterator[Tuple[Batch, List[Task]]]:
    """Group rows into batches of ``batch_size`` input rows (bad ones count
    too: a batch is a fixed slice of the input, whatever is in it, and a file
    of bad rows is still streamed in bounded pieces). Stop at the first bad
    row unless bad rows are kept (``keep_going``). The first ``n_done``
    rows were finished by an earlier run: predicted again, not written."""
    batch, tasks = Batch(), []
    for index, row in enumerate(rows):
        if row.error is not None:
            extracted: Union[Task, str] = row.error
        else:
            # Columns are None only for an input without rows.
            assert columns is not None
            extracted = columns.extract(row)
        if index < n_done:
            batch.done += 1
        if isinstance(extracted, str) and not keep_going and index >= n_done:
            # Stop. The rows of this batch before the bad one are not
            # written either: once the row is fixed, --resume predicts the
            # whole batch, as an uninterrupted run would.
            yield Batch(rows=[(row, extracted)]), []
            return
        batch.inputs.append(row)
        if isinstance(extracted, str):
            batch.rows.append((row, extracted))
        else:
            batch.rows.append(None)
            tasks.append(extracted)
        if len(batch.rows) >= batch_size:
            yield batch, tasks
            batch, tasks = Batch(), []
    if batch.rows:
        yield batch, tasks


def write_batch(
    batch: Batch,
    lines: List[str],
    sinks: OutputFiles,
    stats: PredictStats,
    input_path: Path,
) -> None:
    """Write one batch: its output lines and its rejects, in input order,
    skipping the rows a resumed run had finished; then flush.

    RAISES (PredictError): At a bad row when there is no rejects file (the
        batches before it are written).
    """
    results = iter(lines)
    for index, item in enumerate(batch.rows):
        line = next(results) if item is None else None
        if index < batch.done:
            continue  # written by the run being resumed
        if item is None:
            assert line is not None
            failure = row_error_reason(line)
            if failure is None:
                sinks.write_row(line)
                stats.written += 1
                stats.rows += 1
                continue
            # The pipeline failed on this row alone: a bad row too.
            row, reason = batch.inputs[index], failure
        else:
            row, reason = item
        if sinks.rejects is None:
            sinks.flush()
            raise PredictError(
                f"{input_path}:{row.line}: {reason}. The first {stats.skipped + stats.rows} "
                f"rows are in the output (whole batches); fix the row or pass --rejects "
                f"PATH, then rerun with --resume."
            )
        sinks.write_reject(row, reason)
        stats.rejected += 1
        stats.rows += 1
    sinks.flush()


def progress_bar(input_path: Path, skip: int, *, header: bool, enabled: bool) -> Any:
    """A tqdm bar on stderr with rate and ETA (None if not ``enabled``)."""
    if not enabled:
        return None
    from tqdm import tqdm

    # The total is estimated from line counts (a quick pass over the file):
    # it is what gives the bar its ETA.
    total = count_rows(input_path, header=header)
    return tqdm(
        total=max(total, skip),
        initial=skip,
        unit=" rows",
        unit_scale=True,
        file=sys.stderr,
        mininterval=0.5,
        smoothing=0.05,
        dynamic_ncols=True,
    )


def _stop_on_dead_workers(
    results: Iterator[Tuple[Batch, List[str]]], stats: PredictStats
) -> Iterator[Tuple[Batch, List[str]]]:
    """The engine's results; a local worker that died (the OOM killer, a
    crash) ends the run with one line saying how to go on."""
    try:
        yield from results
    except WorkerDied as err:
        raise PredictError(
            f"{err} The first {stats.skipped + stats.rows} rows are in the output; "
            f"rerun with --resume (with a lower --batch-size if it ran out of memory)."
        ) from err


def make_engine(
    engine: Union[str, Engine],
    *,
    n_process: int = 1,
    gpu_id: int = -1,
    threads: Optional[int] = None,
    start_method: Optional[str] = None,
    scheduler: Any = None,
    n_workers: int = 2,
    batches_per_task: int = 4,
    max_in_flight: Optional[int] = None,
    resources: Optional[Dict[str, float]] = None,
    startup_timeout: float = 300.0,
) -> Engine:
    """The engine for ``predict_file``'s options (see there).

    RETURNS (Engine): An engine, not started.
    RAISES (PredictError): On options that do not fit the engine.
    """
    if isinstance(engine, Engine):
        return engine
    if engine == "local":
        if n_process < 1:
            raise PredictError(f"--n-process must be >= 1, got {n_process}.")
        if n_process == 1:
            return InProcessEngine(gpu_id=gpu_id, threads=threads)
        if gpu_id >= 0:
            raise PredictError(
                "--gpu-id with --n-process > 1 is not supported: one process drives the GPU "
                "(a forked worker cannot use CUDA); raise --batch-size, or use "
                "--engine dask with one worker per GPU."
            )
        return LocalPoolEngine(n_process, start_method=start_method)
    if engine == "dask":
        from .dask_engine import DaskEngine

        return DaskEngine(
            scheduler=scheduler,
            n_workers=n_workers,
            batches_per_task=batches_per_task,
            max_in_flight=max_in_flight,
            gpu_id=gpu_id,
            threads=threads,
            resources=resources,
            startup_timeout=startup_timeout,
        )
    raise PredictError(f"Unknown engine {engine!r}: use {' or '.join(ENGINES)}.")


def predict_file(
    model: Model,
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    *,
    engine: Union[str, Engine] = "local",
    n_process: int = 1,
    batch_size: int = 64,
    gpu_id: int = -1,
    threads: Optional[int] = None,
    text_cols: Optional[Sequence[str]] = None,
    id_col: Optional[str] = None,
    rejects_path: Optional[Union[str, Path]] = None,
    resume: bool = False,
    overwrite: bool = False,
    input_format: str = "auto",
    component: Optional[str] = None,
    max_chars: Optional[int] = None,
    progress: bool = True,
    start_method: Optional[str] = None,
    scheduler: Any = None,
    n_workers: int = 2,
    batches_per_task: int = 4,
    max_in_flight: Optional[int] = None,
    resources: Optional[Dict[str, float]] = None,
    startup_timeout: float = 300.0,
) -> PredictStats:
    """Predict every row of ``input_path`` and write one JSON line per row to
    ``output_path`` (see ``spacy_attn.batch`` for formats and guarantees).

    model (Union[str, Path, Language]): A pipeline path or package name, or a
        loaded pipeline (local worker processes then need the fork start
        method; the Dask engine sends it to its workers as config and bytes).
    input_path (Union[str, Path]): jsonl / csv / tsv, optionally ``.gz``.
    output_path (Union[str, Path]): The jsonl output (not gzipped: it is
        appended to and truncated on resume).
    engine (Union[str, Engine]): "local" (this process, or ``n_process``
        worker processes), "dask" (a Dask cluster), or an ``Engine``.
    n_process (int): Local worker processes; 1 predicts in this process.
    batch_size (int): Rows per batch (one job of a worker, one flush).
    gpu_id (int): GPU to use (-1: CPU): of this process (local engine,
        ``n_process=1``) or of each Dask worker.
    threads (Optional[int]): torch intra-op threads of this process (local,
        ``n_process=1``) or of each Dask worker; None: torch's default.
        Local workers always use one each.
    text_cols (Optional[Sequence[str]]): The text columns, in the task's
        order; None: detected from the first row.
    id_col (Optional[str]): The id column; None: ``id`` if present, else
        the line number.
    rejects_path (Optional[Union[str, Path]]): Write bad rows here
        (``{"line", "raw", "reason"}``) instead of stopping at the first.
    resume (bool): Continue an interrupted run (of either engine): keep the
        finished rows of OUTPUT and REJECTS and skip that many input rows.
        Pass the same INPUT and options as the first run.
    overwrite (bool): Replace an existing OUTPUT / REJECTS.
    input_format (str): "auto", "jsonl", "csv" or "tsv".
    component (Optional[str]): The spacy-attn component, if several.
    max_chars (Optional[int]): The longest text (characters) a row may
        hold; a longer one makes its row a bad row (rejected, or the run
        stops). None: the component's limits (``predictor.MAX_CHARS``).
    progress (bool): Show a progress bar with rate and ETA on stderr.
    start_method (Optional[str]): Multiprocessing start method of local
        workers; None: the platform's default.
    scheduler (Union[None, str, distributed.Client]): Dask: None starts a
        ``LocalCluster`` of ``n_workers`` processes; an address connects to a
        running cluster; a ``Client`` is used as it is.
    n_workers (int): Dask: workers of the ``LocalCluster``.
    batches_per_task (int): Dask: batches per task.
    max_in_flight (Optional[int]): Dask: tasks submitted and not yet
        written; None: two per worker thread.
    resources (Optional[Dict[str, float]]): Dask: worker resources every
        batch needs, e.g. ``{"GPU": 1}``.
    startup_timeout (float): Dask: seconds to wait for workers and loads.
    RETURNS (PredictStats): Counts and times.
    RAISES (PredictError): On a bad row without ``rejects_path`` (after the
        rows before it are written), or on options that do not fit.
    """
    input_path, output_path = Path(input_path), Path(output_path)
    rejects = Path(rejects_path) if rejects_path is not None else None
    if batch_size < 1:
        raise PredictError(f"--batch-size must be >= 1, got {batch_size}.")
    if max_chars is not None and max_chars < 1:
        raise PredictError(f"--max-chars must be >= 1, got {max_chars}.")
    runner = make_engine(
        engine,
        n_process=n_process,
        gpu_id=gpu_id,
        threads=threads,
        start_method=start_method,
        scheduler=scheduler,
        n_workers=n_workers,
        batches_per_task=batches_per_task,
        max_in_flight=max_in_flight,
        resources=resources,
        startup_timeout=startup_timeout,
    )
    check_paths(output_path, rejects, resume=resume, overwrite=overwrite)
    reader = RowReader(input_path, input_format=input_format)
    available = reader.columns()

    stats = PredictStats(engine=runner.name)
    sinks, bar = None, None
    failed = True
    start = time.perf_counter()
    try:
        info = runner.start(model, component=component)
        stats.startup_seconds = time.perf_counter() - start
        stats.component, stats.task = info.component, info.kind
        stats.workers, stats.details = info.workers, dict(info.details)
        columns = None
        if available is not None:
            columns = resolve_columns(
                info.kind,
                available,
                text_cols=text_cols,
                id_col=id_col,
                where=str(input_path),
                header=reader.header is not None,
            )
        limits = text_limits(info.kind, max_length=info.max_length, limit=max_chars)
        if columns is not None:
            columns.max_chars = limits
        stats.columns = columns
        # What defines this run: written beside OUTPUT, or checked on resume.
        record: Dict[str, Any] = {
            "model": info.model_hash,
            "component": info.component,
            "text_cols": list(columns.texts) if columns else None,
            "id_col": columns.id if columns else None,
            "input_format": reader.format,
            "rejects": rejects is not None,
            "max_chars": list(limits),
            "output_format": OUTPUT_FORMAT,
        }
        record = check_run_record(record, reader, output_path, rejects, resume=resume)
        # Resume: the finished rows of both files are a prefix of the input.
        rows, stats.skipped, n_done = resume_rows(
            reader, columns, output_path, rejects, batch_size, resume=resume
        )
        start = time.perf_counter()
        # Opened after local workers are forked, so they hold no copy.
        sinks = OutputFiles(output_path, rejects, append=resume)
        bar = progress_bar(
            input_path, stats.skipped, header=reader.format != "jsonl", enabled=progress
        )
        batches = make_batches(
            rows, columns, batch_size, keep_going=rejects is not None, n_done=n_done
        )
        for batch, lines in _stop_on_dead_workers(runner.run(batches), stats):
            write_batch(batch, lines, sinks, stats, input_path)
            # The input consumed so far, for a resume to check (after the
            # flush: the record never covers rows that are not written).
            record["input_prefix"] = {
                "rows": stats.skipped + stats.rows,
                "sha256": batch.inputs[-1].prefix_sha256,
            }
            write_run_record(output_path, record)
            if bar is not None:
                bar.update(len(batch.rows))
        failed = False
    finally:
        stats.seconds = time.perf_counter() - start
        tasks = getattr(runner, "tasks", None)
        if tasks is not None:
            stats.details["tasks"] = tasks
        runner.close(failed=failed)
        if sinks is not None:
            sinks.close()
        if bar is not None:
            bar.close()
    return stats


__all__ = [
    "ENGINES",
    "Batch",
    "make_batches",
    "make_engine",
    "predict_file",
    "progress_bar",
    "write_batch",
]
