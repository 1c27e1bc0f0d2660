"""Rows and columns of batch input: read the rows of a jsonl / csv / tsv file
(optionally gzipped), a bad row as a row with an error, and find each row's
texts and id."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..readers.columns import DEFAULT_ID_COLUMN, FIRST_KEYS, SECOND_KEYS
from ..readers.formats import open_binary
from ..readers.rows import InputRow, RowReader
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
