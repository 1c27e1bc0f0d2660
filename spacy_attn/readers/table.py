"""How a row file is read (its format, delimiter and quoting) and what
reading it found (``ReadCounts``): the settings and counts of the one row
reader, ``spacy_attn.readers.rows.RowReader``."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ..errors import CorpusFormatError
from .formats import TEXT_FORMATS, detect_format

# How quotes are read in csv / tsv files (``--quoting``):
# - "auto": "line" for csv, "none" for tsv;
# - "none": no quote processing, a field is the text between delimiters;
# - "line": csv quoting within a line; a quote that does not close on its
#   line is an error for that line (the next lines are read as rows);
# - "multiline": csv quoting where a quoted field may hold line breaks (as
#   Excel writes them); a quote that never closes is an error.
QUOTINGS = ("auto", "none", "line", "multiline")

DELIMITER_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "bar"}


@dataclass(frozen=True)
class TableFormat:
    """How a row file is read.

    format (str): "jsonl", "csv" or "tsv".
    delimiter (str): The field delimiter of csv / tsv ("" for jsonl).
    quoting (str): "none", "line" or "multiline" for csv / tsv (see
        ``QUOTINGS``; "none" for jsonl).
    """

    format: str
    delimiter: str = ""
    quoting: str = "none"

    def describe(self) -> str:
        """E.g. "tsv (tab-separated, no quote processing)"."""
        if self.format == "jsonl":
            return "jsonl"
        delimiter = DELIMITER_NAMES.get(self.delimiter, repr(self.delimiter))
        quotes = {
            "none": "no quote processing",
            "line": "csv quotes within a line",
            "multiline": "csv quotes, cells may span lines",
        }[self.quoting]
        return f"{self.format} ({delimiter}-separated, {quotes})"


def table_format(
    path: Union[str, Path],
    *,
    format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
) -> TableFormat:
    """The ``TableFormat`` of a row file from the options (``--format``,
    ``--delimiter``, ``--quoting``), the format detected for "auto".

    RAISES (CorpusFormatError): For an option value that is not one, a
        DocBin, or csv options on a jsonl file.
    """
    path = Path(path)
    fmt = detect_format(path) if format == "auto" else format
    if fmt not in TEXT_FORMATS:
        detected = f" (detected from the name {path.name})" if format == "auto" else ""
        raise CorpusFormatError(
            f"{path}: cannot read rows from format {fmt!r}{detected}; use --format "
            f"(format in a reader config) auto, {', '.join(TEXT_FORMATS)}."
        )
    if quoting not in QUOTINGS:
        raise CorpusFormatError(
            f"--quoting (quoting in a reader config): {quoting!r} is not one of "
            f"{', '.join(QUOTINGS)}."
        )
    if fmt == "jsonl":
        if delimiter is not None or quoting != "auto":
            raise CorpusFormatError(
                f"{path}: --delimiter and --quoting are options of csv and tsv "
                f"files; this one is read as jsonl."
            )
        return TableFormat("jsonl")
    if delimiter is None:
        delimiter = "," if fmt == "csv" else "\t"
    delimiter = "\t" if delimiter in ("\\t", "tab") else delimiter
    if len(delimiter) != 1 or delimiter in '\r\n"':
        raise CorpusFormatError(
            f"--delimiter (delimiter in a reader config): expected one character "
            f"(e.g. ';' or '\\t'), got {delimiter!r}."
        )
    if quoting == "auto":
        quoting = "line" if fmt == "csv" else "none"
    return TableFormat(fmt, delimiter, quoting)


@dataclass
class ReadCounts:
    """Where each physical line of a file went.

    lines (int): Physical lines read.
    header (int): Header lines (1 for csv / tsv).
    blank (int): Blank lines (not rows).
    rows (int): Rows parsed.
    bad (int): Rows that could not be parsed (each names its line).
    """

    lines: int = 0
    header: int = 0
    blank: int = 0
    rows: int = 0
    bad: int = 0

    def describe(self) -> str:
        """E.g. "4,413 lines: 1 header, 4,412 rows, 0 blank, 0 bad"."""
        return (
            f"{self.lines:,} lines: {self.header} header, {self.rows:,} rows, "
            f"{self.blank:,} blank, {self.bad:,} bad"
        )


__all__ = ["DELIMITER_NAMES", "QUOTINGS", "ReadCounts", "TableFormat", "table_format"]
