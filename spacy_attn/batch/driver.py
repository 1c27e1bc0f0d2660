"""The driver: the one loop of batch prediction, whatever the engine (check
paths, read rows, start the engine, resolve columns, resume, cut batches, write
lines and rejects in input order)."""

import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import CorpusFormatError
from ..file_safety import check_outputs
from . import file_checks
from .engines import Engine, InProcessEngine, Model
from .errors import PredictError
from .output import (
    OutputFiles,
    PredictStats,
    check_paths,
    check_run_record,
    resume_rows,
    run_record,
    run_record_path,
    write_run_record,
)
from .pool import WorkerDied
from .predictor import row_error_reason, text_limits
from .rows import Columns, InputRow, RowReader, Task, count_rows


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
            extracted = columns.task(row)
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
    columns: Optional[Columns] = None,
) -> None:
    """Write one batch: its output lines and its rejects, in input order,
    skipping the rows a resumed run had finished; then flush.

    columns (Optional[Columns]): The columns read; their group and label
        columns are copied to the output lines.
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
                record = batch.inputs[index].record
                if columns is not None and record is not None:
                    copied = columns.copied(record)
                    if copied:
                        # Spliced in, not re-encoded: the worker's line stays as is.
                        line = (
                            line[:-1]
                            + ", "
                            + json.dumps(copied, ensure_ascii=False)[1:]
                        )
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


class FileRun:
    """One run of ``predict_file``: its input, its output files, the options
    that are not the engine's, and what it counted (``stats``). ``start``
    starts the engine and settles the columns, the run record and the rows
    to predict; ``write`` predicts and writes them; ``close`` ends the run."""

    def __init__(
        self,
        input_path: Path,
        output_path: Path,
        rejects: Optional[Path],
        *,
        batch_size: int,
        resume: bool,
        overwrite: bool,
        input_format: str,
        max_chars: Optional[int],
        delimiter: Optional[str] = None,
        quoting: str = "auto",
        max_rejects: int = file_checks.MAX_REJECTS,
    ) -> None:
        """Check the options and the output files and open the input.

        RAISES (PredictError): On options or files that do not fit.
        RAISES (OutputPathError): If OUTPUT or REJECTS is INPUT.
        """
        if batch_size < 1:
            raise PredictError(f"--batch-size must be >= 1, got {batch_size}.")
        if max_chars is not None and max_chars < 1:
            raise PredictError(f"--max-chars must be >= 1, got {max_chars}.")
        check_run_paths(input_path, output_path, rejects)
        check_paths(output_path, rejects, resume=resume, overwrite=overwrite)
        self.input_path, self.output_path, self.rejects = (
            input_path,
            output_path,
            rejects,
        )
        self.batch_size, self.resume, self.max_chars = batch_size, resume, max_chars
        self.max_rejects = max_rejects
        try:
            self.reader = RowReader(
                input_path,
                input_format=input_format,
                delimiter=delimiter,
                quoting=quoting,
            )
            self.available = self.reader.columns()
        except CorpusFormatError as err:
            raise file_checks.reader_error(err, input_path) from None
        self.stats = PredictStats()
        self.record: Dict[str, Any] = {}
        self.batches: Iterator[Tuple[Batch, List[Task]]] = iter(())
        self._start = time.perf_counter()
        self._sinks: Optional[OutputFiles] = None
        self._bar: Any = None

    def start(
        self, engine: Engine, model: Model, *, component: Optional[str], given: Columns
    ) -> None:
        """Start the engine, resolve the task's columns (``given``: those
        named, the rest from the pipeline's training or detected), write or
        check the run record and pick the rows to predict (all, or those a
        resumed run has not finished)."""
        stats = self.stats
        stats.engine = engine.name
        check_run_paths(self.input_path, self.output_path, self.rejects, model=model)
        info = engine.start(model, component=component)
        stats.startup_seconds = time.perf_counter() - self._start
        stats.component, stats.task = info.component, info.kind
        stats.workers, stats.details = info.workers, dict(info.details)
        file_checks.check_input_kind(self.input_path, info.kind)
        columns = None
        trained = info.trained_columns if info.kind in ("pair", "doc") else {}
        try:
            # The model knows its columns: the file it was trained on needs
            # no --text-cols, and a file that lacks them fails by their names.
            given, stats.note = given.for_kind(info.kind).with_trained(
                trained, ("text_cols",)
            )
        except CorpusFormatError as err:
            raise PredictError(str(err)) from None
        if given.group_col is None and trained.get("group_col") in (
            self.available or ()
        ):
            given = replace(given, group_col=trained["group_col"])
        if self.available is not None:
            columns = self._resolve_columns(given, self.available)
            cols = columns.text_cols
            known = trained.get("text_cols")
            stats.note = file_checks.task_note(stats.note, info.kind, cols, known)
        limits = text_limits(
            info.kind, max_length=info.max_length, limit=self.max_chars
        )
        if columns is not None:
            columns.max_chars = limits
        stats.columns = columns
        record = run_record(info, self.reader, columns, limits, self.rejects)
        self.record = check_run_record(
            record, self.reader, self.output_path, self.rejects, resume=self.resume
        )
        # Resume: the finished rows of both files are a prefix of the input.
        rows, stats.skipped, n_done = resume_rows(
            self.reader,
            columns,
            self.output_path,
            self.rejects,
            self.batch_size,
            resume=self.resume,
        )
        keep_going = self.rejects is not None
        rows = self._counted(rows, columns)
        if keep_going:  # read ahead: all bad for one reason is the file's fault
            limit = self.max_rejects  # a new run's record goes if it stops
            made = None if self.resume else run_record_path(self.output_path)
            rows = file_checks.stop_on_file_mistake(
                rows, self.input_path, max_rejects=limit, made=made
            )
        self.batches = make_batches(
            rows,
            columns,
            self.batch_size,
            keep_going=keep_going,
            n_done=n_done,
        )

    def _counted(
        self, rows: Iterable[InputRow], columns: Optional[Columns]
    ) -> Iterator[InputRow]:
        # A row that parses but has no task (a missing column, an empty
        # text) is a bad row too: counted as one, with its reason.
        for row in rows:
            if row.error is None and columns is not None:
                task = columns.task(row)
                if isinstance(task, str):
                    row.error = task
                    self.reader.counts.rows -= 1
                    self.reader.counts.bad += 1
            yield row

    def _resolve_columns(self, given: Columns, available: Sequence[str]) -> Columns:
        # The columns, or the error with what to pass when the header was
        # read as one column (a semicolon-separated or tab-separated ".csv").
        try:
            return given.resolve(
                available,
                where=str(self.input_path),
                header=self.reader.header is not None,
                hint=self.reader.delimiter_hint(),
            )
        except CorpusFormatError as err:
            raise file_checks.columns_error(
                err, given.kind or "pair", available
            ) from None

    def write(self, engine: Engine, *, progress: bool) -> None:
        """Predict the batches on the engine and write each one, then the run
        record that covers it (after the flush: the record never covers rows
        that are not written)."""
        stats = self.stats
        self._start = time.perf_counter()
        # Opened after local workers are forked, so they hold no copy.
        self._sinks = OutputFiles(self.output_path, self.rejects, append=self.resume)
        header = self.reader.format != "jsonl"
        self._bar = progress_bar(
            self.input_path, stats.skipped, header=header, enabled=progress
        )
        results = _stop_on_dead_workers(engine.run(self.batches), stats)
        try:
            self._write_all(results)
        except CorpusFormatError as err:  # the input ends early (a damaged .gz)
            raise PredictError(
                f"{str(err).rstrip('.')}. {stats.skipped + stats.written:,} rows are "
                f"in {self.output_path}: once INPUT is whole, rerun with --resume."
            ) from None

    def _write_all(self, results: Iterator[Tuple[Batch, List[str]]]) -> None:
        stats, record = self.stats, self.record
        assert self._sinks is not None
        for batch, lines in results:
            write_batch(
                batch, lines, self._sinks, stats, self.input_path, stats.columns
            )
            record["input_prefix"] = {
                "rows": stats.skipped + stats.rows,
                "sha256": batch.inputs[-1].prefix_sha256,
            }
            write_run_record(self.output_path, record)
            if self._bar is not None:
                self._bar.update(len(batch.rows))

    def close(self, engine: Engine, *, failed: bool) -> None:
        """Stop the engine (dropping its work in flight if ``failed``) and
        close the files and the progress bar."""
        self.stats.seconds = time.perf_counter() - self._start
        self.stats.counts = self.reader.counts
        self.stats.details.update(engine.run_details())
        engine.close(failed=failed)
        if self._sinks is not None:
            self._sinks.close()
        if self._bar is not None:
            self._bar.close()


def check_run_paths(
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    rejects_path: Optional[Union[str, Path]],
    *,
    model: Optional[Model] = None,
) -> None:
    """Refuse, before a run opens them, an OUTPUT or REJECTS that is INPUT
    (a link to it included) or lies in the MODEL directory: --overwrite must
    never empty the input.

    RAISES (OutputPathError): Naming both paths (``spacy_attn.file_safety``).
    """
    outputs = {"OUTPUT": output_path, "--rejects": rejects_path}
    check_outputs(outputs, {"INPUT": input_path, "MODEL": model})


def predict_file(
    model: Model,
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    *,
    engine: Optional[Engine] = None,
    batch_size: int = 64,
    text_cols: Optional[Sequence[str]] = None,
    id_col: Optional[str] = None,
    group_col: Optional[str] = None,
    label_col: Optional[str] = None,
    rejects_path: Optional[Union[str, Path]] = None,
    resume: bool = False,
    overwrite: bool = False,
    input_format: str = "auto",
    component: Optional[str] = None,
    max_chars: Optional[int] = None,
    progress: bool = True,
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    max_rejects: int = file_checks.MAX_REJECTS,
) -> PredictStats:
    """Predict every row of ``input_path`` and write one JSON line per row to
    ``output_path`` (formats and guarantees: docs/batch.md).

    model (Union[str, Path, Language]): A pipeline path or package name, or a
        loaded pipeline (local workers need fork; Dask gets config and bytes).
    input_path (Union[str, Path]): jsonl / csv / tsv, optionally ``.gz``.
    output_path (Union[str, Path]): The jsonl output (plain: resume appends).
    engine (Optional[Engine]): Where batches are predicted (not started):
        ``InProcessEngine`` (None: one on the CPU), ``LocalPoolEngine`` or
        ``dask_engine.DaskEngine``.
    batch_size (int): Rows per batch (one job of a worker, one flush).
    text_cols (Optional[Sequence[str]]): The text columns, in the task's
        order; None: those the pipeline was trained with, else detected.
    id_col (Optional[str]): The id column; None: ``id``, else the line.
    group_col, label_col (Optional[str]): Copied to the output as "group", "gold".
    rejects_path (Optional[Union[str, Path]]): Write bad rows here
        (``{"line", "raw", "reason"}``) instead of stopping at the first, but
        stop if the first ``max_rejects`` (0: no check) fail alike.
    resume (bool): Continue an interrupted run (same INPUT and options, any
        engine): keep the rows of OUTPUT and REJECTS, skip as many.
    overwrite (bool): Replace an existing OUTPUT / REJECTS.
    input_format, delimiter, quoting: How INPUT is read ("auto", "jsonl",
        "csv" or "tsv"; see ``spacy_attn.readers.table_format``).
    component (Optional[str]): The spacy-attn component, if several.
    max_chars (Optional[int]): The longest text (characters) of a row that is
        not a bad row; None: the component's limits (``predictor.MAX_CHARS``).
    progress (bool): Show a progress bar with rate and ETA on stderr.
    RETURNS (PredictStats): Counts and times.
    RAISES (PredictError): On a bad row without ``rejects_path`` (the rows
        before it written), or on options that do not fit.
    """
    given = file_checks.option_columns(text_cols, label_col, group_col, id_col)
    run = FileRun(
        Path(input_path),
        Path(output_path),
        Path(rejects_path) if rejects_path is not None else None,
        batch_size=batch_size,
        resume=resume,
        overwrite=overwrite,
        input_format=input_format,
        max_chars=max_chars,
        delimiter=delimiter,
        quoting=quoting,
        max_rejects=max_rejects,
    )
    runner = engine if engine is not None else InProcessEngine()
    failed = True
    try:
        run.start(runner, model, component=component, given=given)
        run.write(runner, progress=progress)
        failed = False
    finally:
        run.close(runner, failed=failed)
    return run.stats


__all__ = [
    "Batch",
    "check_run_paths",
    "FileRun",
    "make_batches",
    "predict_file",
    "progress_bar",
    "run_record",
    "write_batch",
]
