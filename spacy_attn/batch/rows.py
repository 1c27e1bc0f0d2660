"""Rows and columns of batch input: read the rows of a jsonl / csv / tsv file
(optionally gzipped), a bad row as a row with an error, and find each row's
texts and id (``readers.columns.Columns``)."""

from pathlib import Path
from typing import Optional, Union

from ..readers.columns import DEFAULT_ID_COLUMN, TASK_COLUMNS, Columns, Task
from ..readers.formats import open_binary
from ..readers.rows import InputRow, RowReader

# -- reading ------------------------------------------------------------------


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


__all__ = [
    "TASK_COLUMNS",
    "DEFAULT_ID_COLUMN",
    "Task",
    "InputRow",
    "RowReader",
    "Columns",
    "count_rows",
    "prefix_sha256",
]
