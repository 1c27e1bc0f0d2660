"""Pair rows from a jsonl / csv / tsv file: the one row reader
(``readers.rows``) through the one column model (``readers.columns``), with
every line counted and the labels of a binary task checked."""

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from ..errors import CorpusFormatError
from .columns import Columns, PairRow
from .rows import RowReader
from .table import ReadCounts, TableFormat

logger = logging.getLogger("spacy_attn")

# Labels that mark an unlabelled row (SNLI's "-" for no consensus; empty).
UNLABELLED = ("-", "")


@dataclass
class ReadStats:
    """What reading a pair file found.

    rows (int): Labelled rows kept.
    skipped_unlabelled (int): Rows with the label "-" or empty, skipped.
    labels (Dict[str, int]): Label -> rows (after ``label_map``).
    counts (ReadCounts): Where each physical line went.
    table (Optional[TableFormat]): How the file was read.
    """

    rows: int = 0
    skipped_unlabelled: int = 0
    labels: Dict[str, int] = field(default_factory=dict)
    counts: ReadCounts = field(default_factory=ReadCounts)
    table: Optional[TableFormat] = None

    def describe(self) -> str:
        """One line for a user: e.g. "tsv (...): 4,413 lines: 1 header,
        4,412 rows, 0 blank, 0 bad; 4,412 pairs, labels {'0': 4200, '1': 212}"."""
        table = f"{self.table.describe()}: " if self.table else ""
        unlabelled = (
            f", {self.skipped_unlabelled:,} unlabelled skipped"
            if self.skipped_unlabelled
            else ""
        )
        return (
            f"{table}{self.counts.describe()}; {self.rows:,} pairs{unlabelled}; "
            f"labels {format_labels(self.labels)}"
        )


def format_labels(labels: Dict[str, int]) -> str:
    """``{'no': 3,900, 'yes': 512}``: labels with their row counts."""
    return "{" + ", ".join(f"{k!r}: {v:,}" for k, v in sorted(labels.items())) + "}"


def iter_pair_rows(
    path: Union[str, Path],
    *,
    format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    need_label: bool = True,
    columns: Optional[Columns] = None,
) -> Iterator[Tuple[int, PairRow]]:
    """Yield ``(line_number, PairRow)`` from a jsonl, csv or tsv pair file;
    the first bad row stops the read with its line.

    format, delimiter, quoting: How to read it (``readers.table.table_format``).
    columns (Optional[Columns]): The columns (default: detected).
    RAISES (CorpusFormatError): For a bad row or a missing column, naming
        file and line.
    """
    reader = _pair_reader(path, format, delimiter, quoting)
    yield from _pair_rows(reader, columns, need_label)


def _pair_reader(
    path: Union[str, Path], format: str, delimiter: Optional[str], quoting: str
) -> RowReader:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Pair corpus not found: {path}")
    return RowReader(path, input_format=format, delimiter=delimiter, quoting=quoting)


def _pair_rows(
    reader: RowReader, columns: Optional[Columns], need_label: bool
) -> Iterator[Tuple[int, PairRow]]:
    """The pair rows of ``reader``'s file (``reader.counts`` counts its lines)."""
    given = columns if columns is not None else Columns()
    for line, resolved, record in column_records(reader, given, need_label=need_label):
        yield line, resolved.pair_row(record, reader.path, line, need_label=need_label)


def column_records(
    reader: RowReader, columns: Columns, *, need_label: bool
) -> Iterator[Tuple[int, Columns, Dict[str, Any]]]:
    """Yield ``(line, resolved columns, record)`` for each row of
    ``reader``'s file: the columns are resolved once (``Columns.resolve``),
    against the header or the first row; the first bad row stops the read.

    RAISES (CorpusFormatError): For a bad row or a missing column, naming
        file and line.
    """
    path = reader.path
    resolved: Optional[Columns] = None
    for row in reader.rows():
        if resolved is None and reader.header is not None:
            resolved = _resolve(columns, reader, reader.header, need_label)
        if row.error is not None:
            raise CorpusFormatError(f"{path}:{row.line}: {row.error}.")
        assert row.record is not None
        if resolved is None:
            resolved = _resolve(columns, reader, list(row.record), need_label, row.line)
        yield row.line, resolved, row.record
    if resolved is None and reader.header is not None:
        _resolve(columns, reader, reader.header, need_label)


def _resolve(
    columns: Columns,
    reader: RowReader,
    available: List[str],
    need_label: bool,
    line: int = 0,
) -> Columns:
    header = reader.header is not None
    return columns.resolve(
        available,
        where=str(reader.path) if header else f"{reader.path}:{line}",
        header=header,
        need_label=need_label,
        hint=reader.delimiter_hint(),
    )


def read_pair_rows(
    path: Union[str, Path],
    *,
    format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    label_map: Optional[Dict[str, str]] = None,
    limit: int = 0,
    columns: Optional[Columns] = None,
    positive_label: Optional[str] = None,
) -> Tuple[List[PairRow], ReadStats]:
    """Read the labelled rows of a pair file, mapping labels with
    ``label_map`` and skipping unlabelled ("-" or empty) rows.

    columns (Optional[Columns]): The columns (default: detected).
    positive_label (Optional[str]): A binary task's positive label: the
        labels read must be it and one other (``check_binary_labels``).
    RETURNS (Tuple[List[PairRow], ReadStats]): Rows and counts.
    RAISES (CorpusFormatError): For a bad row, a missing column, a file
        without labelled rows, or labels that do not fit ``positive_label``.
    """
    path = Path(path)
    reader = _pair_reader(path, format, delimiter, quoting)
    stats = ReadStats(table=reader.table)
    rows: List[PairRow] = []
    for _, row in _pair_rows(reader, columns, need_label=True):
        if row.label in UNLABELLED:
            stats.skipped_unlabelled += 1
            continue
        assert row.label is not None  # need_label (the default) above
        if label_map:
            row.label = label_map.get(row.label, row.label)
        rows.append(row)
        stats.rows += 1
        stats.labels[row.label] = stats.labels.get(row.label, 0) + 1
        if limit and len(rows) >= limit:
            break
    # This pass's counts: every line read (up to ``limit``).
    stats.counts = reader.counts
    if not rows:
        what = (
            f"only unlabelled rows ({stats.skipped_unlabelled}, label '-' or empty)"
            if stats.skipped_unlabelled
            else "no rows"
        )
        raise CorpusFormatError(
            f"{path}: {what} ({stats.counts.describe()}); a pair corpus needs "
            f"labelled rows (--label-col / label_col names the label column)."
        )
    if stats.skipped_unlabelled:
        logger.warning(
            "%s: skipped %d unlabelled row(s) (label '-' or empty)",
            path,
            stats.skipped_unlabelled,
        )
    if positive_label is not None:
        check_binary_labels(path, stats.labels, positive_label)
    return rows, stats


def check_binary_labels(
    path: Union[str, Path], labels: Dict[str, int], positive_label: str
) -> None:
    """Fail unless a binary task's file holds exactly the positive label and
    one other: a positive label the file does not use trains a model that
    scores 0 for it on every row, and a third label is not binary.

    labels (Dict[str, int]): The file's labels with their row counts.
    RAISES (CorpusFormatError): Naming the file, its labels and the fix.
    """
    found = format_labels(labels)
    if positive_label not in labels:
        raise CorpusFormatError(
            f"{path}: no row has the positive label {positive_label!r} "
            f"(--positive-label; positive_label in the config); the file's labels "
            f"are {found}. Name the label the file uses for the positive class, or "
            f"rename labels with --label-map (label_map)."
        )
    if len(labels) != 2:
        raise CorpusFormatError(
            f"{path}: a binary task needs the positive label {positive_label!r} and "
            f"one other, but the file has {len(labels)} labels: {found}. Check "
            f"--label-col (label_col), map labels with --label-map (label_map), "
            f"or train a multi-class model (init-config without --binary)."
        )


__all__ = [
    "ReadStats",
    "UNLABELLED",
    "check_binary_labels",
    "column_records",
    "format_labels",
    "iter_pair_rows",
    "read_pair_rows",
]
