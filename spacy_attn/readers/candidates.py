"""The candidates that ``spacy attn rank`` ranks: one per line of a text
file, or one per row from a named column of a jsonl / csv / tsv file read
by the row reader (never a csv's raw lines), each no longer than predict
allows a pair's text, every line accounted for (``ReadCounts``)."""

from pathlib import Path
from typing import List, Optional, Tuple

from ..errors import CorpusFormatError
from .columns import Columns
from .formats import detect_format
from .rows import RowReader
from .table import ReadCounts

# The longest candidate, in characters: predict's limit for a pair's text.
MAX_CANDIDATE_CHARS = 5_000
# Names of a file of rows (``.gz`` too), whose raw lines are no candidates.
ROW_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".tsv")


def is_text_file(path: Path) -> bool:
    """A plain text file of candidates, not a file of rows (by its name)."""
    name = path.name.lower().removesuffix(".gz")
    return not name.endswith(ROW_SUFFIXES)


def read_candidates(
    path: Path,
    *,
    column: Optional[str] = None,
    max_chars: int = MAX_CANDIDATE_CHARS,
) -> Tuple[List[Tuple[int, str]], ReadCounts]:
    """The candidates of a file, ``(line, text)`` each, the line 1-based.

    path (Path): A text file (one candidate per line, blank lines skipped)
        or, with ``column``, a jsonl / csv / tsv file.
    column (Optional[str]): The column of the candidates in a file of rows.
    max_chars (int): The longest candidate (characters).
    RETURNS (Tuple[List[Tuple[int, str]], ReadCounts]): The candidates and
        where every line went.
    RAISES (CorpusFormatError): Naming the file, the line and the fix, for a
        file of rows without ``column``, a bad row or a candidate too long.
    """
    if column is None and not is_text_file(path):
        fmt = detect_format(path)
        raise CorpusFormatError(
            f"{path}: a {fmt} file is read as rows, not lines: name the column "
            f"that holds the candidates with --column (a text file has one "
            f"candidate per line)."
        )
    if column is None:
        return _text_lines(path, max_chars)
    reader = RowReader(path)
    columns = Columns([column], kind="doc", in_config=False, max_chars=(max_chars,))
    try:
        columns = columns.resolve(
            reader.columns() or [],
            where=str(path),
            header=reader.header is not None,
            hint=reader.delimiter_hint(),
        )
    except CorpusFormatError as err:
        raise CorpusFormatError(str(err).replace("--text-cols", "--column")) from None
    found = []
    for row in reader.rows():
        task = columns.task(row) if row.error is None else row.error
        if isinstance(task, str):
            raise CorpusFormatError(f"{path}:{row.line}: {task}.")
        found.append((row.line, task[1][0]))
    return found, reader.counts


def _text_lines(path: Path, max_chars: int) -> Tuple[List[Tuple[int, str]], ReadCounts]:
    counts, found = ReadCounts(), []
    with path.open("rb") as f:
        for i, data in enumerate(f, start=1):
            counts.lines += 1
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as err:
                byte = data[err.start : err.start + 1].hex()
                raise CorpusFormatError(
                    f"{path}:{i}: invalid UTF-8 (byte 0x{byte} at byte "
                    f"{err.start + 1} of the line): the file is in another encoding "
                    f"(e.g. Latin-1 or Windows-1252); save it as UTF-8."
                ) from None
            text = line.removeprefix("\ufeff") if i == 1 else line
            text = text.rstrip("\r\n")
            if not text.strip():
                counts.blank += 1
                continue
            if len(text) > max_chars:
                raise CorpusFormatError(
                    f"{path}:{i}: the candidate has {len(text):,} characters, over "
                    f"the limit of {max_chars:,} (--max-chars); shorten it or "
                    f"raise --max-chars."
                )
            counts.rows += 1
            found.append((i, text))
    return found, counts


__all__ = ["MAX_CANDIDATE_CHARS", "is_text_file", "read_candidates"]
