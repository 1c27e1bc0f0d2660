"""Rows and columns of batch input: read the rows of a jsonl / csv / tsv file
(optionally gzipped), a bad row as a row with an error, and find each row's
texts and id."""

import codecs
import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ..readers.columns import DEFAULT_ID_COLUMN, FIRST_KEYS, SECOND_KEYS
from ..readers.formats import (
    TEXT_FORMATS,
    detect_format,
    open_binary,
    open_text,
)
from .errors import PredictError

# One row for the model: (id, texts).
Task = Tuple[Any, Tuple[str, ...]]

# Column names tried, in order, for each text of each task.
TASK_COLUMNS: Dict[str, Tuple[Tuple[str, ...], ...]] = {
    "pair": (FIRST_KEYS, SECOND_KEYS),
    "doc": (("text",),),
    # A jsonl QA row may hold a list of contexts (``"contexts": [...]``, or a
    # list in "context"): the question is answered across all of them.
    "qa": (("question",), ("context", "contexts")),
}

# -- reading ------------------------------------------------------------------


@dataclass
class InputRow:
    """One row of the input, parsed or with the reason it could not be.

    line (int): The 1-based line of the file where the row starts.
    raw (str): The row as read, undecodable bytes as ``\\x..`` escapes.
    record (Optional[Dict[str, Any]]): Column -> value, if it parsed.
    error (Optional[str]): Why it did not parse.
    prefix_sha256 (str): The sha256 of the input up to the end of this row
        (its lines as read, a csv header included): the identity of the
        input that a resumed run has consumed.
    """

    line: int
    raw: str
    record: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    prefix_sha256: str = ""


def _escape(text: str) -> str:
    # Lone surrogates stand for undecodable bytes (surrogateescape); show
    # them as \x.. escapes so the text can be written as UTF-8.
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _has_undecodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class RowReader:
    """Stream the rows of a jsonl / csv / tsv file (optionally gzipped).

    Blank lines are not rows. A row that cannot be read (invalid UTF-8 or
    JSON, not an object, the wrong number of csv fields) comes as an
    ``InputRow`` with ``error`` set, never as an exception, so the caller
    decides between stopping and rejecting.
    """

    def __init__(self, path: Union[str, Path], *, input_format: str = "auto") -> None:
        """Initialize the reader.

        path (Union[str, Path]): The input file.
        input_format (str): "auto", "jsonl", "csv" or "tsv".
        """
        self.path = Path(path)
        if not self.path.is_file():
            raise PredictError(f"Input file not found: {self.path}")
        if input_format == "auto":
            # One detector for every input (spacy_attn.readers.formats).
            input_format = detect_format(self.path)
        if input_format not in TEXT_FORMATS:
            raise PredictError(
                f"Unknown input format {input_format!r}: use auto, "
                f"{', '.join(TEXT_FORMATS)}."
            )
        self.format = input_format
        self.header: Optional[List[str]] = None
        # The last row skipped by ``rows(skip=...)``, parsed (resume checks it).
        self.last_skipped: Optional[InputRow] = None
        self.n_skipped = 0

    def columns(self) -> Optional[List[str]]:
        """The column names: the csv / tsv header, or the keys of the first
        jsonl row that is a JSON object (later rows may differ; a row
        without the needed columns is a bad row).

        RETURNS (Optional[List[str]]): The names; None if no row parses.
        RAISES (PredictError): If the file has no rows (empty, or a header
            only): a mistake, not an empty output.
        """
        n_rows = 0
        for row in self.rows():
            n_rows += 1
            if self.header is not None:
                return list(self.header)
            if row.record is not None:
                return list(row.record)
        if not n_rows:
            what = f"only a header row {self.header}" if self.header else "no rows"
            raise PredictError(f"{self.path}: {what}; there is nothing to predict.")
        return None

    def rows(self, *, skip: int = 0) -> Iterator[InputRow]:
        """Yield the rows after the first ``skip`` ones.

        skip (int): Rows to pass over; jsonl rows are not parsed for it.
        YIELDS (InputRow): The rows, in file order.
        """
        self.n_skipped, self.last_skipped = 0, None
        if self.format == "jsonl":
            yield from self._jsonl_rows(skip)
        else:
            yield from self._delimited_rows(skip, "," if self.format == "csv" else "\t")

    def _jsonl_rows(self, skip: int) -> Iterator[InputRow]:
        digest = hashlib.sha256()
        with open_binary(self.path) as f:
            for line_no, data in enumerate(f, start=1):
                digest.update(data)
                if line_no == 1 and data.startswith(codecs.BOM_UTF8):
                    data = data[len(codecs.BOM_UTF8) :]
                if not data.strip():
                    continue
                if self.n_skipped < skip:
                    self.n_skipped += 1
                    if self.n_skipped == skip:
                        self.last_skipped = _stamp(
                            self._parse_jsonl(line_no, data), digest
                        )
                    continue
                yield _stamp(self._parse_jsonl(line_no, data), digest)

    @staticmethod
    def _parse_jsonl(line_no: int, data: bytes) -> InputRow:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raw = data.decode("utf-8", "backslashreplace").rstrip("\r\n")
            return InputRow(
                line_no, raw, error=f"invalid UTF-8 ({err.reason} at byte {err.start})"
            )
        raw = text.rstrip("\r\n")
        try:
            # The row without its line end: a truncated row is then reported
            # at the column where it ends, not at column 1 of the next line.
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            return InputRow(
                line_no, raw, error=f"invalid JSON ({err.msg} at column {err.colno})"
            )
        if not isinstance(record, dict):
            return InputRow(
                line_no,
                raw,
                error=f"expected a JSON object, got {type(record).__name__}",
            )
        return InputRow(line_no, raw, record=record)

    def _delimited_rows(self, skip: int, delimiter: str) -> Iterator[InputRow]:
        # surrogateescape: an undecodable byte rejects its row, not the file.
        text = open_text(self.path, errors="surrogateescape")
        consumed: List[str] = []
        digest = hashlib.sha256()

        def lines() -> Iterator[str]:
            # The lines the csv reader takes for the current record: its raw
            # text and its line numbers (a quoted field may span lines).
            for line in text:
                consumed.append(line)
                digest.update(line.encode("utf-8", "surrogateescape"))
                yield line

        with text:
            reader = csv.reader(lines(), delimiter=delimiter)
            try:
                header = next(reader, None)
            except csv.Error as err:
                raise PredictError(
                    f"{self.path}:1: cannot read the header row ({err})."
                ) from None
            if header is None:
                return
            if any(_has_undecodable(name) for name in header):
                raise PredictError(f"{self.path}:1: the header row is not valid UTF-8.")
            self.header = header
            next_line = 1 + len(consumed)
            consumed.clear()
            while True:
                error = None
                try:
                    fields = next(reader)
                except StopIteration:
                    break
                except csv.Error as err:
                    fields, error = None, f"invalid {self.format} ({err})"
                line_no, raw = next_line, "".join(consumed)
                next_line += len(consumed)
                consumed.clear()
                if fields is not None and not fields:
                    continue  # a blank line
                if self.n_skipped < skip:
                    self.n_skipped += 1
                    if self.n_skipped == skip:
                        self.last_skipped = _stamp(
                            self._parse_fields(line_no, raw, fields, error), digest
                        )
                    continue
                yield _stamp(self._parse_fields(line_no, raw, fields, error), digest)

    def _parse_fields(
        self, line_no: int, raw: str, fields: Optional[List[str]], error: Optional[str]
    ) -> InputRow:
        raw = _escape(raw.rstrip("\r\n"))
        if error is not None:
            return InputRow(line_no, raw, error=error)
        assert self.header is not None and fields is not None
        if len(fields) != len(self.header):
            return InputRow(
                line_no,
                raw,
                error=(
                    f"expected {len(self.header)} fields (header {self.header}), "
                    f"got {len(fields)}"
                ),
            )
        if any(_has_undecodable(value) for value in fields):
            return InputRow(line_no, raw, error="invalid UTF-8")
        return InputRow(line_no, raw, record=dict(zip(self.header, fields)))


def _stamp(row: InputRow, digest: "hashlib._Hash") -> InputRow:
    row.prefix_sha256 = digest.copy().hexdigest()
    return row


def prefix_sha256(reader: "RowReader", n_rows: int) -> Optional[str]:
    """The sha256 of the input up to the end of its ``n_rows``-th row (one
    pass over that part; jsonl rows are not parsed for it).

    reader (RowReader): The input.
    n_rows (int): Rows (> 0).
    RETURNS (Optional[str]): The digest, None if the input has fewer rows.
    """
    for _ in reader.rows(skip=n_rows):
        break
    row = reader.last_skipped
    return row.prefix_sha256 if row is not None and reader.n_skipped == n_rows else None


def count_rows(path: Union[str, Path], *, header: bool = False) -> int:
    """Estimate the rows of a file quickly (its lines, less the header row
    of csv / tsv), for the progress bar's ETA. Reads the file once, in
    chunks.

    path (Union[str, Path]): The input file.
    header (bool): The first line is a header.
    RETURNS (int): The estimate.
    """
    path = Path(path)
    n, last = 0, b"\n"
    with open_binary(path) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    n += last != b"\n"
    return max(0, n - header)


# -- columns ------------------------------------------------------------------


@dataclass
class Columns:
    """Where a row's texts and id are.

    texts (Tuple[str, ...]): The text columns, in the task's order.
    id (Optional[str]): The id column; None: the line number is the id.
    max_chars (Optional[Tuple[int, ...]]): The longest text allowed in each
        text column (characters); a longer one makes its row a bad row.
    group (Optional[str]): The group (query) id column, copied to the output.
    label (Optional[str]): The gold label column, copied to the output.
    """

    texts: Tuple[str, ...]
    id: Optional[str] = None
    max_chars: Optional[Tuple[int, ...]] = None
    group: Optional[str] = None
    label: Optional[str] = None
    # The last text column may hold a list of strings (QA: many contexts);
    # the row's texts are then the first ones followed by the list's.
    last_may_be_list: bool = False

    def copied(self, record: Dict[str, Any]) -> Dict[str, Any]:
        """The values a row's output line carries besides its prediction:
        ``{"group": ..., "gold": ...}`` for the group and label columns
        given (a row ``extract`` accepted has them)."""
        out = {}
        for key, column in (("group", self.group), ("gold", self.label)):
            if column is not None:
                out[key] = record[column]
        return out

    def extract(self, row: InputRow) -> Union[Task, str]:
        """The task of a parsed row, or the reason it has none.

        row (InputRow): A row with ``record``.
        RETURNS (Union[Tuple[Any, Tuple[str, ...]], str]): ``(id, texts)``
            or an error message.
        """
        record = row.record
        assert record is not None, "extract() takes parsed rows"
        texts: List[str] = []
        for k, column in enumerate(self.texts):
            if column not in record:
                return f"missing column {column!r} (found {sorted(record)})"
            value = record[column]
            may_be_list = self.last_may_be_list and k == len(self.texts) - 1
            values = value if may_be_list and isinstance(value, list) else [value]
            if not values:
                return f"column {column!r} is an empty list"
            for item in values:
                if not isinstance(item, str):
                    what = (
                        "a string or a list of strings" if may_be_list else "a string"
                    )
                    return (
                        f"column {column!r} must be {what}, got {_describe_value(item)}"
                    )
                if self.max_chars is not None:
                    limit = self.max_chars[k]
                    if len(item) > limit:
                        return (
                            f"column {column!r} has {len(item):,} characters, over the "
                            f"limit of {limit:,} (--max-chars)"
                        )
            texts.extend(values)
        for extra, option in (
            (self.group, "--group-col"),
            (self.label, "--label-col"),
        ):
            if extra is None:
                continue
            if extra not in record:
                return f"missing column {extra!r} ({option}; found {sorted(record)})"
            value = record[extra]
            if value is None or not isinstance(value, (str, int, float)):
                return (
                    f"column {extra!r} ({option}) must be a string or number, "
                    f"got {_describe_value(value)}"
                )
        if self.id is None:
            return row.line, tuple(texts)
        if self.id not in record:
            return f"missing id column {self.id!r} (found {sorted(record)})"
        row_id = record[self.id]
        if isinstance(row_id, bool) or not isinstance(row_id, (str, int, float)):
            return (
                f"id column {self.id!r} must be a string or number, "
                f"got {_describe_value(row_id)}"
            )
        return row_id, tuple(texts)


def _describe_value(value: Any) -> str:
    name = "null" if value is None else type(value).__name__
    text = repr(value)
    return f"{name} {text[:40]}{'...' if len(text) > 40 else ''}"


def resolve_columns(
    kind: str,
    available: Sequence[str],
    *,
    text_cols: Optional[Sequence[str]] = None,
    id_col: Optional[str] = None,
    where: str = "",
    header: bool = False,
    group_col: Optional[str] = None,
    label_col: Optional[str] = None,
) -> Columns:
    """Pick the text and id columns of a task.

    kind (str): "pair", "doc" or "qa".
    available (Sequence[str]): The csv header, or the keys of the first
        jsonl object.
    text_cols (Optional[Sequence[str]]): Explicit text columns.
    id_col (Optional[str]): Explicit id column; None: ``id`` if available.
    group_col (Optional[str]): The group column copied to the output.
    label_col (Optional[str]): The label column copied to the output.
    where (str): The file, for messages.
    header (bool): ``available`` is a csv header, which every row has: a
        named column missing from it is an error, not a bad row.
    RETURNS (Columns): The columns.
    RAISES (PredictError): If columns are missing or their count is wrong.
    """
    wanted = TASK_COLUMNS[kind]
    if text_cols:
        if len(text_cols) != len(wanted):
            raise PredictError(
                f"--text-cols: a {kind} pipeline needs {len(wanted)} text column(s), "
                f"got {list(text_cols)}."
            )
        texts = tuple(text_cols)
    else:
        found: List[str] = []
        for candidates in wanted:
            column = next(
                (c for c in candidates if c in available and c not in found), None
            )
            if column is None:
                raise PredictError(
                    f"{where}: no column for the {kind} task's text {len(found) + 1} "
                    f"(looked for {list(candidates)}; the input has {list(available)}). "
                    f"Name the columns with --text-cols."
                )
            found.append(column)
        texts = tuple(found)
    named = [(c, "--text-cols") for c in texts]
    named += [
        (column, option)
        for column, option in (
            (id_col, "--id-col"),
            (group_col, "--group-col"),
            (label_col, "--label-col"),
        )
        if column
    ]
    missing = [f"{c!r} ({option})" for c, option in named if c not in available]
    if header and missing:
        raise PredictError(
            f"{where}:1: the header has no column {', '.join(missing)}; found "
            f"columns {list(available)}."
        )
    if (
        id_col is None
        and DEFAULT_ID_COLUMN in available
        and DEFAULT_ID_COLUMN not in texts
    ):
        id_col = DEFAULT_ID_COLUMN
    return Columns(
        texts, id_col, group=group_col, label=label_col, last_may_be_list=kind == "qa"
    )


__all__ = [
    "TASK_COLUMNS",
    "DEFAULT_ID_COLUMN",
    "Task",
    "InputRow",
    "RowReader",
    "Columns",
    "count_rows",
    "prefix_sha256",
    "resolve_columns",
]
