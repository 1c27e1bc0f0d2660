"""The one row reader of every command that reads a user's file (``convert``,
the corpus reader under ``spacy train``, ``evaluate``, ``predict``): jsonl,
csv or tsv, optionally gzipped, read line by line so that every physical
line is accounted for: a row, a blank line, or a bad row that names its
line and why.

Quoting is a setting, because files are written two ways: csv as Excel and
pandas write it (a field may be quoted, quotes inside it doubled), and tsv as
the NLP releases write it (GLUE, SNLI, WikiQA: no quote processing at all, so
a sentence may start with ``"`` and never close it). Reading a release's tsv
with csv quoting makes one quote swallow the lines after it, which is how
rows used to disappear without a word.
"""

import codecs
import collections
import csv
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Deque, Dict, Iterator, List, Optional, Tuple, Union

from ..errors import CorpusFormatError
from .formats import DAMAGED_FILE_ERRORS, damaged_text, open_binary, open_text
from .table import DELIMITER_NAMES, ReadCounts, table_format

# The csv module refuses fields over 131,072 characters by default; length
# limits are the commands' own (``--max-chars``), not the parser's.
_FIELD_LIMIT = 2**31 - 1

_NO_CLOSE = (
    "a quoted field opens on this line and does not close on it; double a quote "
    'inside a quoted field ("") or, for a file whose quotes are plain text (as '
    "tab-separated releases are written), pass --quoting none (quoting in a "
    "reader config); if your cells hold line breaks, --quoting multiline"
)


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


def _undecodable(text: str) -> Optional[str]:
    """Where ``text`` holds an undecodable byte: "byte 0xe9 at column 12"."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        byte = text[err.start].encode("utf-8", "surrogateescape")
        return f"byte 0x{byte.hex()} at column {err.start + 1}"
    return None


_CONTINUED = (
    "continues the quoted cell that opens on line {line} (a cell with a line "
    "break), not a row of its own: pass --quoting multiline (quoting in a "
    "reader config)"
)
# How far a quoted cell that does not close on its line is followed, to tell
# a cell with line breaks (Excel) from a stray quote.
_CELL_LINES = 20

_NOT_UTF8 = (
    "invalid UTF-8 ({where}): the file is in another encoding (e.g. Latin-1 or "
    "Windows-1252); save it as UTF-8"
)


class RowReader:
    """Stream the rows of a jsonl / csv / tsv file (optionally gzipped).

    Blank lines are not rows. A row that cannot be read (invalid UTF-8 or
    JSON, not an object, the wrong number of fields, a quote that does not
    close) comes as an ``InputRow`` with ``error`` set, never as an
    exception, so the caller decides between stopping and rejecting.
    ``counts`` says where each line of the last pass went.
    """

    def __init__(
        self,
        path: Union[str, Path],
        *,
        input_format: str = "auto",
        delimiter: Optional[str] = None,
        quoting: str = "auto",
    ) -> None:
        """Initialize the reader.

        path (Union[str, Path]): The input file.
        input_format (str): "auto", "jsonl", "csv" or "tsv".
        delimiter (Optional[str]): The csv / tsv delimiter (default: "," for
            csv, tab for tsv).
        quoting (str): One of ``QUOTINGS``.
        RAISES (CorpusFormatError): If the file is missing or an option is
            not valid.
        """
        self.path = Path(path)
        if not self.path.is_file():
            raise CorpusFormatError(f"Input file not found: {self.path}")
        self.table = table_format(
            self.path, format=input_format, delimiter=delimiter, quoting=quoting
        )
        self.format = self.table.format
        self.header: Optional[List[str]] = None
        self.counts = ReadCounts()
        # The last row skipped by ``rows(skip=...)``, parsed (resume checks it).
        self.last_skipped: Optional[InputRow] = None
        self.n_skipped = 0
        if csv.field_size_limit() < _FIELD_LIMIT:
            csv.field_size_limit(_FIELD_LIMIT)

    def reopen(self) -> "RowReader":
        """A new reader of the same file, read the same way."""
        table = self.table
        if table.format == "jsonl":
            return RowReader(self.path, input_format="jsonl")
        return RowReader(
            self.path,
            input_format=table.format,
            delimiter=table.delimiter,
            quoting=table.quoting,
        )

    def columns(self) -> Optional[List[str]]:
        """The column names: the csv / tsv header, or the keys of the first
        jsonl row that is a JSON object (later rows may differ; a row
        without the needed columns is a bad row).

        RETURNS (Optional[List[str]]): The names; None if no row parses.
        RAISES (CorpusFormatError): If the file has no rows (empty, or a
            header only): a mistake, not an empty output.
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
            raise CorpusFormatError(f"{self.path}: {what}; there is nothing to read.")
        return None

    def rows(self, *, skip: int = 0) -> Iterator[InputRow]:
        """Yield the rows after the first ``skip`` ones.

        skip (int): Rows to pass over; jsonl rows are not parsed for it.
        YIELDS (InputRow): The rows, in file order.
        RAISES (CorpusFormatError): If the header cannot be read.
        """
        self.n_skipped, self.last_skipped = 0, None
        self.counts = ReadCounts()
        if self.format == "jsonl":
            rows = self._jsonl_rows()
        elif self.table.quoting == "multiline":
            rows = self._multiline_rows()
        else:
            rows = self._line_rows()
        for row in _undamaged(rows, self.path):
            if row.error is None:
                self.counts.rows += 1
            else:
                self.counts.bad += 1
            if self.n_skipped < skip:
                self.n_skipped += 1
                if self.n_skipped == skip:
                    self.last_skipped = row
                continue
            yield row

    def _jsonl_rows(self) -> Iterator[InputRow]:
        digest = hashlib.sha256()
        with open_binary(self.path) as f:
            for line_no, data in enumerate(f, start=1):
                self.counts.lines += 1
                digest.update(data)
                if line_no == 1 and data.startswith(codecs.BOM_UTF8):
                    data = data[len(codecs.BOM_UTF8) :]
                if not data.strip():
                    self.counts.blank += 1
                    continue
                yield _stamp(self._parse_jsonl(line_no, data), digest)

    @staticmethod
    def _parse_jsonl(line_no: int, data: bytes) -> InputRow:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raw = data.decode("utf-8", "backslashreplace").rstrip("\r\n")
            where = f"byte 0x{data[err.start : err.start + 1].hex()} at byte {err.start + 1}"
            return InputRow(line_no, raw, error=_NOT_UTF8.format(where=where))
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

    def _split(self, text: str) -> Tuple[Optional[List[str]], Optional[str]]:
        """The fields of one line (its line end removed), or why it has none."""
        if self.table.quoting == "none":
            return text.split(self.table.delimiter), None
        try:
            reader = csv.reader([text], delimiter=self.table.delimiter, strict=True)
            return next(reader, []), None
        except csv.Error as err:
            if "end of data" in str(err):
                return None, _NO_CLOSE
            return None, f"invalid {self.format} ({err})"

    def _line_rows(self) -> Iterator[InputRow]:
        # One physical line, one row: a bad quote cannot take the next lines.
        digest = hashlib.sha256()
        # Line -> the line where the quoted cell it continues opens.
        continued: Dict[int, int] = {}
        # surrogateescape: an undecodable byte rejects its row, not the file.
        with open_text(self.path, errors="surrogateescape") as text:
            lines = _Lookahead(enumerate(_physical_lines(text), start=1))
            for line_no, line in lines:
                self.counts.lines += 1
                digest.update(line.encode("utf-8", "surrogateescape"))
                content = line.rstrip("\r\n")
                if line_no == 1:
                    self._read_header(*self._split(content))
                    self.counts.header = 1
                    continue
                if line_no in continued:
                    cell = _CONTINUED.format(line=continued.pop(line_no))
                    yield _stamp(
                        InputRow(line_no, _escape(content), error=cell), digest
                    )
                    continue
                if not content:
                    self.counts.blank += 1
                    continue
                fields, error = self._split(content)
                if error == _NO_CLOSE:
                    for later in self._cell_lines(line, lines.peek(_CELL_LINES)):
                        continued[later] = line_no
                yield _stamp(
                    self._parse_fields(line_no, content, fields, error), digest
                )

    def _cell_lines(self, line: str, upcoming: List[Tuple[int, str]]) -> List[int]:
        """The lines after ``line`` (whose quote does not close on it) that
        hold the rest of its quoted cell: those that, joined to it, make one
        row of the header's width (else none: a stray quote)."""
        joined = line
        for k, (_, later) in enumerate(upcoming):
            joined += later
            try:
                records = list(
                    csv.reader(
                        io.StringIO(joined, newline=""),
                        delimiter=self.table.delimiter,
                        strict=True,
                    )
                )
            except csv.Error as err:
                if "end of data" in str(err):
                    continue  # still inside the quoted cell
                return []
            width = len(self.header or ())
            if len(records) == 1 and len(records[0]) == width:
                return [n for n, _ in upcoming[: k + 1]]
            return []
        return []

    def _multiline_rows(self) -> Iterator[InputRow]:
        text = open_text(self.path, errors="surrogateescape")
        consumed: List[str] = []
        digest = hashlib.sha256()

        def lines() -> Iterator[str]:
            # The lines the csv reader takes for the current record: its raw
            # text and its line numbers (a quoted field may span lines).
            for line in _physical_lines(text):
                consumed.append(line)
                self.counts.lines += 1
                digest.update(line.encode("utf-8", "surrogateescape"))
                yield line

        with text:
            reader = csv.reader(lines(), delimiter=self.table.delimiter, strict=True)
            try:
                header = next(reader, None)
            except csv.Error as err:
                header = None
                self._read_header(None, f"invalid {self.format} ({err})")
            if header is None:
                return
            self._read_header(header, None)
            self.counts.header = len(consumed)
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
                    if "end of data" in str(err):
                        error = (
                            f"a quoted field opens on this line and never closes: "
                            f"it runs to the end of the file ({len(consumed)} lines)"
                        )
                line_no, raw = next_line, "".join(consumed)
                next_line += len(consumed)
                consumed.clear()
                if fields is not None and not fields:
                    self.counts.blank += 1
                    continue
                yield _stamp(
                    self._parse_fields(line_no, raw.rstrip("\r\n"), fields, error),
                    digest,
                )

    def _read_header(self, fields: Optional[List[str]], error: Optional[str]) -> None:
        if error is not None or fields is None:
            raise CorpusFormatError(
                f"{self.path}:1: cannot read the header row ({error})."
            )
        bad = next((_undecodable(name) for name in fields if _undecodable(name)), None)
        if bad is not None:
            raise CorpusFormatError(
                f"{self.path}:1: the header row is {_NOT_UTF8.format(where=bad)}."
            )
        twice = [n for n, name in enumerate(fields) if name in fields[:n]]
        if twice:
            # A dict of the row keeps one of the two cells: every row read wrong.
            name = fields[twice[0]]
            raise CorpusFormatError(
                f"{self.path}:1: the header names column {name!r} twice (fields "
                f"{fields.index(name) + 1} and {twice[0] + 1} of {fields}); give "
                f"each column its own name."
            )
        self.header = fields

    def _parse_fields(
        self, line_no: int, raw: str, fields: Optional[List[str]], error: Optional[str]
    ) -> InputRow:
        # The column of an undecodable byte counts from the line's start.
        bad = _undecodable(raw)
        raw = _escape(raw)
        if error is not None:
            return InputRow(line_no, raw, error=error)
        assert self.header is not None and fields is not None
        if len(fields) != len(self.header):
            return InputRow(line_no, raw, error=self._count_error(fields))
        if fields == self.header:
            # Two files joined: their second header would be read as a row.
            return InputRow(
                line_no,
                raw,
                error="this line repeats the header (line 1), as where two files "
                "were joined; remove it",
            )
        if bad is not None:
            return InputRow(line_no, raw, error=_NOT_UTF8.format(where=bad))
        return InputRow(line_no, raw, record=dict(zip(self.header, fields)))

    def _count_error(self, fields: List[str]) -> str:
        assert self.header is not None
        name = DELIMITER_NAMES.get(self.table.delimiter, repr(self.table.delimiter))
        error = (
            f"expected {len(self.header)} {name}-separated fields (header "
            f"{self.header}), got {len(fields)}"
        )
        hint = self.delimiter_hint()
        return f"{error}; {hint}" if hint else error

    def delimiter_hint(self) -> Optional[str]:
        """What to pass when the header was read as one column that holds
        another delimiter (a semicolon-separated ".csv", a tab-separated
        one): None otherwise."""
        if self.header is None or len(self.header) != 1:
            return None
        found = [d for d in (";", "\t", "|", ",") if d in self.header[0]]
        if not found:
            return None
        if found[0] == "\t":
            return (
                "the header is one column, and holds tabs: pass --format tsv "
                "(format in a reader config)"
            )
        return (
            f"the header is one column, and holds {found[0]!r}: pass --delimiter "
            f"{found[0]!r} (delimiter in a reader config)"
        )


def _physical_lines(text: Any) -> Iterator[str]:
    """The lines of a text stream opened with ``newline=""``, split at
    ``\\n`` only (with a ``\\r`` before it kept): a stray ``\\r`` inside a
    field is text, not a line end."""
    pending = ""
    for piece in text:
        pending += piece
        if pending.endswith("\n"):
            yield pending
            pending = ""
    if pending:
        yield pending


class _Lookahead:
    """An iterator whose next items can be looked at before they are taken."""

    def __init__(self, items: Iterator[Tuple[int, str]]) -> None:
        self._items = items
        self._ahead: Deque[Tuple[int, str]] = collections.deque()

    def __iter__(self) -> "_Lookahead":
        return self

    def __next__(self) -> Tuple[int, str]:
        return self._ahead.popleft() if self._ahead else next(self._items)

    def peek(self, n: int) -> List[Tuple[int, str]]:
        """Up to ``n`` next items, left to be taken."""
        while len(self._ahead) < n:
            item = next(self._items, None)
            if item is None:
                break
            self._ahead.append(item)
        return list(self._ahead)[:n]


def _undamaged(rows: Iterator[InputRow], path: Path) -> Iterator[InputRow]:
    """The rows, or one error naming the file when it cannot be read to its
    end: gzip and zlib name neither (a truncated .gz gives only "Compressed
    file ended before the end-of-stream marker was reached")."""
    try:
        yield from rows
    except DAMAGED_FILE_ERRORS as err:
        raise damaged_text(path, err) from err


def _stamp(row: InputRow, digest: "hashlib._Hash") -> InputRow:
    row.prefix_sha256 = digest.copy().hexdigest()
    return row


__all__ = ["InputRow", "RowReader"]
