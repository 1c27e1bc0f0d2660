"""Mistakes of a whole input file, not of its rows, that batch prediction
stops on before it writes anything: a file for another task than the
model's, and rows that are all rejected for one reason (with ``--rejects``,
which would otherwise write every row there and exit 0)."""

import itertools
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

from ..errors import CorpusFormatError
from ..readers.task_input import (
    is_squad_document,
    is_squad_name,
    other_task_hint,
    qa_rows_note,
    squad_for_rows,
)
from .errors import PredictError
from .rows import Columns, InputRow

# With --rejects: stop when the first this many rows are all rejected for
# one reason (or every row of a shorter file is): it is the file.
MAX_REJECTS = 100


def check_input_kind(input_path: Path, kind: str) -> None:
    """Refuse a SQuAD JSON file (``is_squad_document``): rows are read one
    per line.

    RAISES (PredictError): Saying what the model of ``kind`` reads.
    """
    if is_squad_document(input_path):
        raise PredictError(str(squad_for_rows(input_path, kind)))


def reader_error(err: CorpusFormatError, input_path: Path) -> PredictError:
    """The error of an input that cannot be read as rows, with a word on
    SQuAD JSON for a ``.json`` name (a file over many lines is no rows)."""
    message = str(err)
    if is_squad_name(input_path):
        message = (
            f"{message.rstrip('.')}; if it is SQuAD JSON, it is not rows: "
            f"predict reads one row per line (jsonl, csv or tsv) and `spacy "
            f"attn evaluate` scores a SQuAD file."
        )
    return PredictError(message)


def columns_error(
    err: CorpusFormatError, kind: str, available: Sequence[str]
) -> PredictError:
    """The error of columns that do not resolve, with a word on the task when
    the file's columns are another task's (``other_task_hint``)."""
    message = str(err)
    hint = other_task_hint(kind, available)
    if hint is not None:
        message = f"{message.rstrip('.')}; {hint}."
    return PredictError(message)


def task_note(
    note: Optional[str],
    kind: str,
    text_cols: Optional[Sequence[str]],
    trained: Optional[Sequence[str]],
) -> Optional[str]:
    """``note`` (on the columns) with ``qa_rows_note`` added where it applies."""
    notes = [note, qa_rows_note(kind, text_cols, trained)]
    return " ".join(n for n in notes if n) or None


def option_columns(
    text_cols: Optional[Sequence[str]],
    label_col: Optional[str],
    group_col: Optional[str],
    id_col: Optional[str],
) -> Columns:
    """The columns the options name, checked (the task is not yet known).

    RAISES (PredictError): For a column named twice or with no name.
    """
    try:
        return Columns(
            text_cols, label_col, group_col, id_col, kind=None, in_config=False
        )
    except CorpusFormatError as err:
        raise PredictError(str(err)) from None


def stop_on_file_mistake(
    rows: Iterable[InputRow],
    input_path: Path,
    *,
    max_rejects: int,
    made: Optional[Path] = None,
) -> Iterator[InputRow]:
    """The rows, once the first ``max_rejects`` (0: no check) are read ahead
    and checked: when they, or every row of a shorter file, are bad rows for
    one reason, the file is wrong (a misspelled column, a delimiter on every
    line), and the run stops before writing anything.

    rows (Iterable[InputRow]): The rows, each with its ``error`` set.
    made (Optional[Path]): A file the run has written so far (its run
        record), removed when it stops.
    RETURNS (Iterator[InputRow]): The same rows.
    RAISES (PredictError): Naming the reason, the rows and what to do.
    """
    rows = iter(rows)
    if max_rejects <= 0:
        return rows
    head = list(itertools.islice(rows, max_rejects))
    reasons = {row.error for row in head}
    if not head or None in reasons or len(reasons) != 1:
        return itertools.chain(head, rows)
    first, last = head[0].line, head[-1].line
    which = (
        f"the first {len(head)} rows (lines {first}-{last})"
        if len(head) == max_rejects
        else f"all {len(head)} rows"
    )
    if len(head) == 1:
        which = f"its only row (line {first}) is bad"
    else:
        which += " are bad"
    if made is not None:
        made.unlink(missing_ok=True)
    raise PredictError(
        f"{input_path}: {which} for one reason, so it is the file, not "
        f"its rows: {head[0].error}. Fix the file or the options, or pass "
        f"--max-rejects 0 to write such rows to --rejects and go on. Nothing "
        f"was written."
    )


__all__ = [
    "MAX_REJECTS",
    "check_input_kind",
    "columns_error",
    "option_columns",
    "reader_error",
    "stop_on_file_mistake",
    "task_note",
]
