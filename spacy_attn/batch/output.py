"""Output and resume: the output and rejects files, written so that together
they always hold a prefix of the input's rows, and the checks that let
``--resume`` go on after the finished rows of an interrupted run.
"""

import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    BinaryIO,
    Dict,
    Iterable,
    List,
    Optional,
    Tuple,
)

from ..readers.table import ReadCounts
from .errors import PredictError
from .rows import Columns, InputRow, RowReader, prefix_sha256

if TYPE_CHECKING:  # engines import this module
    from .engines import EngineInfo


def finished_lines(path: Optional[Path]) -> Tuple[int, Optional[str]]:
    """Count the complete lines of an output file and cut off an incomplete
    last line (a run killed mid-write), so that its row is predicted again.

    path (Optional[Path]): The output (or rejects) file; it may not exist.
    RETURNS (Tuple[int, Optional[str]]): The complete lines and the last one.
    """
    if path is None or not path.exists():
        return 0, None
    n, end, size = 0, 0, 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            count = chunk.count(b"\n")
            if count:
                n += count
                end = size + chunk.rindex(b"\n") + 1
            size += len(chunk)
    if end < size:
        with open(path, "r+b") as f:
            f.truncate(end)
    if n == 0:
        return 0, None
    with open(path, "rb") as f:
        return n, _line_before(f, end - 1).decode("utf-8", "replace")


def _line_before(f: BinaryIO, newline: int) -> bytes:
    """The line that ends at byte ``newline`` (a "\\n"), read backwards in
    blocks (an embedding's line may be long)."""
    parts, pos = [], newline
    while pos > 0:
        start = max(0, pos - (1 << 16))
        f.seek(start)
        data = f.read(pos - start)
        cut = data.rfind(b"\n")
        if cut >= 0:
            parts.append(data[cut + 1 :])
            break
        parts.append(data)
        pos = start
    return b"".join(reversed(parts))


class OutputFiles:
    """The output and rejects files, written so that together they always
    hold a prefix of the input's rows: before writing to one file, the other
    is flushed, so neither can reach the disk ahead of earlier rows of the
    other. A kill then leaves at most a half-written last line."""

    def __init__(self, output: Path, rejects: Optional[Path], *, append: bool) -> None:
        mode = "a" if append else "w"
        self.output = open(output, mode, encoding="utf-8", newline="\n")
        self.rejects = (
            open(rejects, mode, encoding="utf-8", newline="\n") if rejects else None
        )
        self._last = self.output

    def _switch(self, to: IO[str]) -> None:
        if self._last is not to:
            self._last.flush()
            self._last = to

    def write_row(self, line: str) -> None:
        self._switch(self.output)
        self.output.write(line + "\n")

    def write_reject(self, row: InputRow, reason: str) -> None:
        # Callers write rejects only when a rejects file was given.
        assert self.rejects is not None
        self._switch(self.rejects)
        self.rejects.write(
            json.dumps(
                {"line": row.line, "raw": row.raw, "reason": reason}, ensure_ascii=False
            )
            + "\n"
        )

    def flush(self) -> None:
        # The other file was flushed when the last one was switched to.
        self._last.flush()

    def close(self) -> None:
        self.output.close()
        if self.rejects is not None:
            self.rejects.close()


@dataclass
class PredictStats:
    """What a ``predict_file`` run did.

    rows (int): Input rows handled in this run (written + rejected).
    written (int): Output rows written in this run.
    rejected (int): Rows written to the rejects file in this run.
    skipped (int): Rows skipped because an earlier run finished them.
    seconds (float): Wall time of the prediction loop (from the first batch
        to the last written).
    startup_seconds (float): Loading the model, starting workers or
        connecting to a cluster.
    component (str): The component that made the predictions.
    task (str): "pair", "doc" or "qa".
    columns (Optional[Columns]): The columns read.
    counts (Optional[ReadCounts]): Where each line of the input went.
    note (Optional[str]): Said to the user beside the counts (e.g. columns
        other than the ones the model was trained with).
    engine (str): "local" or "dask".
    workers (int): Processes that predicted (1: this one).
    details (Dict[str, Any]): What the engine reports besides, e.g. the Dask
        scheduler's address and the tasks submitted.
    """

    rows: int = 0
    counts: Optional[ReadCounts] = None
    note: Optional[str] = None
    written: int = 0
    rejected: int = 0
    skipped: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0
    component: str = ""
    task: str = ""
    columns: Optional[Columns] = None
    engine: str = "local"
    workers: int = 1
    details: Dict[str, Any] = field(default_factory=dict)


def check_paths(
    output_path: Path, rejects: Optional[Path], *, resume: bool, overwrite: bool
) -> None:
    """Check OUTPUT and REJECTS before a run: plain files, not the same one,
    and not overwritten by accident.

    RAISES (PredictError): If they do not fit the options.
    """
    if output_path.name.endswith(".gz"):
        raise PredictError(
            f"{output_path}: write plain jsonl (it is appended to on --resume); "
            "compress it afterwards."
        )
    if rejects is not None and rejects.resolve() == output_path.resolve():
        raise PredictError("--rejects must be another file than OUTPUT.")
    for path in (output_path, rejects):
        if (
            path is not None
            and not resume
            and not overwrite
            and path.exists()
            and path.stat().st_size
        ):
            raise PredictError(
                f"{path} exists: pass --resume to continue that run or --overwrite to replace it."
            )


def resume_rows(
    reader: RowReader,
    columns: Optional[Columns],
    output_path: Path,
    rejects: Optional[Path],
    batch_size: int,
    *,
    resume: bool,
) -> Tuple[Iterable[InputRow], int, int]:
    """The input rows of this run, as ``predict_file`` picks them: all rows,
    or on ``resume`` the rows from the start of the batch holding the first
    unfinished row (that batch is predicted whole again, so its numbers are
    those of an uninterrupted run).

    RETURNS (Tuple[Iterable[InputRow], int, int]): The rows, the rows already
        finished (skipped) and the finished rows at the start of ``rows``
        (predicted, not written).
    """
    if not resume:
        return reader.rows(), 0, 0
    n_out, last_output = finished_lines(output_path)
    n_rej, last_reject = finished_lines(rejects) if rejects is not None else (0, None)
    skip = n_out + n_rej
    if not skip:
        return reader.rows(), 0, 0
    # Restart at the beginning of the batch holding the first unfinished row
    # and predict that whole batch again (writing only its unfinished rows):
    # every batch then holds the same rows as in an uninterrupted run, and so
    # gives the same numbers (padding and kernel choice depend on the batch).
    batch_start = skip - skip % batch_size
    rest = reader.rows(skip=batch_start)
    # One row more than the replay, so the skipping happens now.
    head = list(itertools.islice(rest, skip - batch_start + 1))
    replay = head[: skip - batch_start]
    last = replay[-1] if replay else reader.last_skipped
    check_resume(
        last,
        reader.n_skipped + len(replay),
        skip,
        columns,
        reader.path,
        output_path,
        rejects,
        last_output,
        last_reject,
    )
    return itertools.chain(head, rest), skip, len(replay)


def check_resume(
    row: Optional[InputRow],
    n_rows: int,
    skip: int,
    columns: Optional[Columns],
    input_path: Path,
    output_path: Path,
    rejects: Optional[Path],
    last_output: Optional[str],
    last_reject: Optional[str],
) -> None:
    """The finished rows must be the input's first ``skip`` rows: the last
    of them (``row``) is either the last reject (same line) or the last
    output row (same id). Otherwise OUTPUT belongs to another input or was
    made with other options."""
    files = f"{output_path}" + (f" + {rejects}" if rejects else "")
    if n_rows < skip or row is None:
        raise PredictError(
            f"--resume: {files} hold {skip} finished rows but {input_path} has only "
            f"{n_rows}: not the same input?"
        )
    if last_reject is not None and _json_field(last_reject, "line") == row.line:
        return
    if last_output is not None and row.error is None and columns is not None:
        extracted = columns.task(row)
        if (
            not isinstance(extracted, str)
            and _json_field(last_output, "id") == extracted[0]
        ):
            return
    raise PredictError(
        f"--resume: the last finished row does not match {input_path}:{row.line} "
        f"(input row {skip}); {files} were made from another input or with other "
        f"options (--rejects, --text-cols, --id-col). Start again with --overwrite."
    )


def _json_field(line: str, key: str) -> Any:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value.get(key) if isinstance(value, dict) else None


# -- the run record ---------------------------------------------------------------

# What a run's output lines are: changes when they would change for the same
# model and input.
OUTPUT_FORMAT = "spacy-attn-predict/1"
# What defines a run, and how a refusal names each item when it differs.
# Batch size, engine, process count and threads are not part of it: they may
# change between an interrupted run and its resume.
RUN_ITEMS: Dict[str, str] = {
    "model": "the model (its config or weights)",
    "component": "the component",
    "text_cols": "the text columns (--text-cols)",
    "id_col": "the id column (--id-col)",
    "group_col": "the group column (--group-col)",
    "label_col": "the label column (--label-col)",
    "input_format": "the input format (--format)",
    "delimiter": "the delimiter (--delimiter)",
    "quoting": "how quotes are read (--quoting)",
    "rejects": "--rejects (given or not)",
    "input_prefix": "the input (its rows that run had finished)",
    "max_chars": "the text limits (--max-chars)",
    "score_threshold": "the answer score threshold (--score-threshold)",
    "output_format": "the output format (another spacy-attn version)",
}


def run_record_path(output_path: Path) -> Path:
    """Where the run record of an output lives: ``OUTPUT.run.json``.

    output_path (Path): The output file.
    RETURNS (Path): The record's path.
    """
    return output_path.with_name(output_path.name + ".run.json")


def write_run_record(output_path: Path, record: Dict[str, Any]) -> None:
    """Write (replace) the run record beside the output, atomically: a kill
    leaves the old record or the new one.

    output_path (Path): The output file.
    record (Dict[str, Any]): The record.
    """
    path = run_record_path(output_path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    os.replace(tmp, path)


def check_run_record(
    record: Dict[str, Any],
    reader: RowReader,
    output_path: Path,
    rejects: Optional[Path] = None,
    *,
    resume: bool,
) -> Dict[str, Any]:
    """Write the record of this run beside its output, or on ``resume``
    check that the output was made by the same run: the same ``RUN_ITEMS``
    and the same input, as far as that run consumed it (the sha256 of its
    first rows, ``input_prefix``, which the driver updates after every
    batch; the rows after it may change, e.g. a bad row fixed).

    record (Dict[str, Any]): This run's items (``RUN_ITEMS``).
    reader (RowReader): The input (read again up to the recorded prefix).
    output_path (Path): The output file.
    rejects (Optional[Path]): The rejects file, if any.
    resume (bool): The run continues an earlier one.
    RETURNS (Dict[str, Any]): The record to go on with (the saved one on
        resume, with its input prefix).
    RAISES (PredictError): On resume, if the output has finished rows and no
        record, or a record that differs; the message names what changed.
    """
    path = run_record_path(output_path)
    finished = any(
        p is not None and p.exists() and p.stat().st_size
        for p in (output_path, rejects)
    )
    if resume and finished:
        if not path.exists():
            raise PredictError(
                f"--resume: {output_path} has no run record ({path.name}), so it cannot "
                f"be checked to come from this model, input and options. Start over "
                f"with --overwrite."
            )
        try:
            saved = json.loads(path.read_text(encoding="utf8"))
        except ValueError:
            raise PredictError(
                f"--resume: the run record {path} is damaged (invalid JSON). Start over "
                f"with --overwrite."
            ) from None
        changed = [
            key
            for key in RUN_ITEMS
            if key != "input_prefix" and saved.get(key) != record.get(key)
        ]
        prefix = saved.get("input_prefix") or {}
        if not changed and prefix.get("rows"):
            again = reader.reopen()
            if prefix_sha256(again, prefix["rows"]) != prefix.get("sha256"):
                changed.append("input_prefix")
        if changed:
            raise PredictError(
                f"--resume: {output_path} was made by another run: "
                f"{_list(RUN_ITEMS[key] for key in changed)} "
                f"{'differs' if len(changed) == 1 else 'differ'} from this run. "
                f"Resume with that run's model, input and options, or start over "
                f"with --overwrite."
            )
        return dict(record, input_prefix=prefix)
    # A new run (or a resume with nothing finished): this run's record.
    record = dict(record, input_prefix={"rows": 0, "sha256": ""})
    write_run_record(output_path, record)
    return record


def _list(items: Iterable[str]) -> str:
    words: List[str] = list(items)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def run_record(
    info: "EngineInfo",
    reader: RowReader,
    columns: Optional[Columns],
    limits: Tuple[int, ...],
    rejects: Optional[Path],
) -> Dict[str, Any]:
    """What defines a run: written beside OUTPUT, or checked on resume."""
    return {
        "model": info.model_hash,
        "component": info.component,
        "text_cols": list(columns.text_cols or ()) if columns else None,
        "id_col": columns.id_col if columns else None,
        "group_col": columns.group_col if columns else None,
        "label_col": columns.label_col if columns else None,
        "input_format": reader.format,
        "delimiter": reader.table.delimiter,
        "quoting": reader.table.quoting,
        "rejects": rejects is not None,
        "max_chars": list(limits),
        "score_threshold": info.score_threshold,
        "output_format": OUTPUT_FORMAT,
    }


__all__ = [
    "run_record",
    "OUTPUT_FORMAT",
    "RUN_ITEMS",
    "OutputFiles",
    "check_run_record",
    "write_run_record",
    "run_record_path",
    "PredictStats",
    "finished_lines",
    "check_paths",
    "resume_rows",
    "check_resume",
]
