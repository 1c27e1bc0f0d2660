"""The one column model of every command that reads a user's file: which
columns hold the texts, the label, the group (query) id and the row id.

``Columns`` is parsed once from the options (``Columns.parse``: init-config,
convert, evaluate, predict, distill) or built from a reader's settings
(``spacy-attn.PairCorpus.*``), checked when it is made, completed against a
file's column names (``Columns.resolve``: the names a file does not give are
detected) and then reads every record of that file: a labelled pair as a
``PairRow`` (the corpus readers, convert, evaluate, distill), a row to
predict as a task of its pipeline (predict). Columns a pipeline was trained
with fill in those a command does not name (``trained_columns``)."""

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..errors import CorpusFormatError
from .column_names import (
    COLUMN_SETTINGS,
    DEFAULT_ID_COLUMN,
    LABEL_KEYS,
    TASK_COLUMNS,
    option_hint,
    trained_columns,
)
from .rows import InputRow

# One row for the model: (id, texts).
Task = Tuple[Any, Tuple[str, ...]]


@dataclass
class PairRow:
    """One labelled (or unlabelled) text pair of a file.

    first (str): The first text (premise, question).
    second (str): The second text (hypothesis, candidate answer).
    label (Optional[str]): The raw label; None where the file has none.
    group (Optional[str]): The group (query) id, with a group column.
    id (Optional[str]): The row id, with an id column.
    line (int): The 1-based line of the file where the row is (0: unknown).
    """

    first: str
    second: str
    label: Optional[str]
    group: Optional[str] = None
    id: Optional[str] = None
    line: int = 0


@dataclass
class Columns:
    """The columns of a row file (jsonl / csv / tsv); None: the default.

    text_cols (Optional[Sequence[str]]): The text columns, in the task's order
        (default: detected, see ``TASK_COLUMNS``).
    label_col (Optional[str]): The label column (default: the first of
        ``LABEL_KEYS`` found, where a label is read).
    group_col (Optional[str]): The group (query) id column (default: none).
    id_col (Optional[str]): The row id column (default: "id" where the file
        has it; a pair row without it then has no id, a row to predict is a
        bad row).
    kind (Optional[str]): The task, "pair", "doc" or "qa", which sets how many
        text columns there are; None until it is known (predict, before its
        pipeline is loaded: ``for_kind``).
    max_chars (Optional[Tuple[int, ...]]): The longest text allowed in each
        text column (characters, predict's ``--max-chars``); longer: a bad row.
    in_config (bool): The columns may also be named in a reader config, which
        messages then mention beside the option.
    detected (Tuple[str, ...]): The settings ``resolve`` found in the file
        rather than by name.

    RAISES (CorpusFormatError): When made with a text column named twice or
        with no name, the wrong number of text columns for ``kind``, or a
        label column that is a text column.
    """

    text_cols: Optional[Sequence[str]] = None
    label_col: Optional[str] = None
    group_col: Optional[str] = None
    id_col: Optional[str] = None
    kind: Optional[str] = "pair"
    max_chars: Optional[Tuple[int, ...]] = None
    in_config: bool = field(default=True, compare=False)
    detected: Tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.text_cols is not None:
            self.text_cols = tuple(self.text_cols)
        texts = list(self.text_cols or ())
        hint = self.hint("text_cols")
        if "" in texts:
            raise CorpusFormatError(f"{hint}: an empty column name in {texts}.")
        twice = next((c for i, c in enumerate(texts) if c in texts[:i]), None)
        if twice is not None:
            # The same column twice would read one text as both sides.
            raise CorpusFormatError(
                f"{hint}: column {twice!r} is named twice in {texts}; each text "
                f"is its own column."
            )
        if self.kind is not None and self.text_cols is not None:
            n = len(TASK_COLUMNS[self.kind])
            if len(texts) != n:
                noun = "a pair" if self.kind == "pair" else f"a {self.kind} task"
                raise CorpusFormatError(
                    f"{hint}: {noun} needs {n} text column{'s' if n > 1 else ''}, "
                    f"got {texts}."
                )
        if self.label_col is not None and self.label_col in texts:
            raise CorpusFormatError(
                f"{self.hint('label_col')}: {self.label_col!r} is also a text "
                f"column ({hint}: {texts}); name the column that holds the labels."
            )

    @classmethod
    def parse(
        cls,
        text_cols: Optional[str],
        label_col: Optional[str] = None,
        group_col: Optional[str] = None,
        id_col: Optional[str] = None,
        *,
        kind: Optional[str] = "pair",
        in_config: bool = True,
    ) -> "Columns":
        """The columns of the command-line options; ``--text-cols`` is
        comma-separated, e.g. "question,sentence" (empty: detect them).

        RAISES (CorpusFormatError): As ``Columns`` does.
        """
        texts = [c.strip() for c in text_cols.split(",")] if text_cols else None
        return cls(texts, label_col, group_col, id_col, kind=kind, in_config=in_config)

    def for_kind(self, kind: str) -> "Columns":
        """The columns of a task of ``kind``, checked for it."""
        return replace(self, kind=kind)

    def hint(self, setting: str) -> str:
        """How to name the column of ``setting``, for messages."""
        return option_hint(setting, in_config=self.in_config)

    def settings(self) -> Dict[str, Any]:
        """The columns named, as reader settings (what a config stores):
        e.g. ``{"text_cols": ["question", "sentence"], "group_col": "qid"}``."""
        values = [getattr(self, key) for key in COLUMN_SETTINGS]
        found = dict(zip(COLUMN_SETTINGS, values))
        if self.text_cols is not None:
            found["text_cols"] = list(self.text_cols)
        return {key: value for key, value in found.items() if value is not None}

    def with_trained(
        self, trained: Dict[str, Any], settings: Sequence[str] = COLUMN_SETTINGS
    ) -> Tuple["Columns", Optional[str]]:
        """The columns with those of ``settings`` that are not named taken
        from the ones the pipeline was trained with (``trained_columns``).

        RETURNS (Tuple[Columns, Optional[str]]): The columns, and a note
            when the text columns named differ from the trained ones.
        RAISES (CorpusFormatError): When they are the trained columns in
            another order: the model would read each text as the other.
        """
        given, known = self.text_cols, trained.get("text_cols")
        note = None
        if given and known and list(given) != list(known):
            given_text, known_text = ",".join(given), ",".join(known)
            if sorted(given) == sorted(known):
                raise CorpusFormatError(
                    f"--text-cols {given_text} swaps the columns the model was "
                    f"trained with ({known_text}): a pair model reads its texts "
                    f"in order. Pass --text-cols {known_text}, or leave it out."
                )
            note = (
                f"--text-cols {given_text}: the model was trained on columns "
                f"{known_text} (in that order); make sure these hold the same texts."
            )
        filled = {
            key: trained[key]
            for key in settings
            if getattr(self, key) is None and trained.get(key) is not None
        }
        return replace(self, **filled), note

    # -- detection ------------------------------------------------------------

    def resolve(
        self,
        available: Sequence[str],
        *,
        where: str,
        header: bool = False,
        need_label: bool = False,
        hint: Optional[str] = None,
    ) -> "Columns":
        """The columns of a file whose column names are ``available`` (the
        csv / tsv header, or the keys of the first jsonl object): the text
        columns not named detected for the task (``TASK_COLUMNS``), the label
        column too with ``need_label``, and "id" as the id column where the
        file has it.

        where (str): The file, for messages.
        header (bool): ``available`` is a header, which every row has: a named
            column missing from it is an error for the file, not a bad row.
        hint (Optional[str]): What to add to an error (how to read the file).
        RETURNS (Columns): The columns, every text column named.
        RAISES (CorpusFormatError): Naming the columns missing, the columns
            found and the option to use.
        """
        kind = self.kind or "pair"
        missing: List[str] = []
        found = list(self.text_cols or ())
        detected = list(self.detected)
        if self.text_cols is None:
            for n, candidates in enumerate(TASK_COLUMNS[kind], start=1):
                column = next(
                    (c for c in candidates if c in available and c not in found), None
                )
                if column is None:
                    missing.append(
                        f"column for text {n} (looked for {list(candidates)}; name "
                        f"it with {self.hint('text_cols')})"
                    )
                found.append(column or "")
            detected.append("text_cols")
        label = self.label_col
        if need_label and label is None:
            label = next((k for k in LABEL_KEYS if k in available), None)
            if label is None:
                missing.append(
                    f"label column (looked for {list(LABEL_KEYS)}; name it with "
                    f"{self.hint('label_col')})"
                )
            detected.append("label_col")
        if header:
            missing += [
                f"column {column!r} ({self.hint(setting)})"
                for setting, column in self.named()
                if column not in available
            ]
        if missing:
            what = "the header has no" if header else "no"
            at = f"{where}:1" if header else where
            message = f"{at}: {what} {'; no '.join(missing)}; found columns "
            message += f"{list(available)}"
            raise CorpusFormatError(f"{message}; {hint}." if hint else f"{message}.")
        id_col = self.id_col
        if id_col is None and DEFAULT_ID_COLUMN in available:
            if DEFAULT_ID_COLUMN not in found:
                id_col = DEFAULT_ID_COLUMN
                detected.append("id_col")
        return replace(
            self,
            text_cols=tuple(found),
            label_col=label,
            id_col=id_col,
            detected=tuple(detected),
        )

    def named(self) -> List[Tuple[str, str]]:
        """The columns given by name, each with its setting."""
        named = [("text_cols", c) for c in self.text_cols or ()]
        for setting in ("label_col", "group_col", "id_col"):
            column = getattr(self, setting)
            if column is not None:
                named.append((setting, column))
        return named

    # -- reading records ------------------------------------------------------

    def cell_problem(self, record: Dict[str, Any], k: int) -> Optional[str]:
        """Why the ``k``-th text cell of a record cannot be read (a value
        that is not a string, an empty or whitespace-only text, one over
        ``max_chars``), or None. The last text column of a QA task may hold
        a list of strings (many contexts)."""
        assert self.text_cols is not None, "resolve() names every text column"
        column = self.text_cols[k]
        value = record[column]
        may_be_list = self.kind == "qa" and k == len(self.text_cols) - 1
        values = value if may_be_list and isinstance(value, list) else [value]
        if not values:
            return f"column {column!r} is an empty list"
        for item in values:
            if not isinstance(item, str):
                what = "a string or a list of strings" if may_be_list else "a string"
                return f"column {column!r} must be {what}, got {_describe_value(item)}"
            if not item.strip() and not may_be_list:
                # An empty text would be scored, or trained on, as a text; an
                # empty QA context is an answer: it holds none (answers: []).
                return (
                    f"column {column!r} is empty (a text is needed): fill the cell "
                    f"or remove the row"
                )
            if self.max_chars is not None and len(item) > self.max_chars[k]:
                return (
                    f"column {column!r} has {len(item):,} characters, over the "
                    f"limit of {self.max_chars[k]:,} (--max-chars)"
                )
        return None

    def id_problem(
        self, record: Dict[str, Any], setting: str
    ) -> Tuple[Optional[str], Optional[str]]:
        """The value of a record's group, id or label column (``setting``) as
        a string (a jsonl number as its text) and why it cannot be read, one
        of them None; an empty group id cannot be."""
        column, option = getattr(self, setting), self.hint(setting)
        if column not in record:
            return None, f"missing column {column!r} ({option}; found {sorted(record)})"
        value = record[column]
        # A label may be a JSON boolean (is_duplicate: true); an id may not.
        is_id = setting != "label_col"
        if (is_id and isinstance(value, bool)) or not isinstance(
            value, (str, int, float)
        ):
            return None, (
                f"column {column!r} ({option}) must be a string or number, got "
                f"{_describe_value(value)}"
            )
        if setting == "group_col" and not str(value).strip():
            # Empty group ids would put every such row in one group.
            return None, (
                f"column {column!r} ({option}) is empty: every row needs the id of "
                f"its group (query) to be ranked with it"
            )
        return str(value), None

    def task(self, row: InputRow) -> Union[Task, str]:
        """The task of a parsed row to predict, or the reason it has none.

        row (InputRow): A row with ``record``.
        RETURNS (Union[Tuple[Any, Tuple[str, ...]], str]): ``(id, texts)``
            or an error message.
        """
        record = row.record
        assert record is not None and self.text_cols is not None, "resolve() first"
        texts: List[str] = []
        for k, column in enumerate(self.text_cols):
            if column not in record:
                return f"missing column {column!r} (found {sorted(record)})"
            problem = self.cell_problem(record, k)
            if problem is not None:
                return problem
            value = record[column]
            texts.extend(value if isinstance(value, list) else [value])
        for setting in ("group_col", "label_col", "id_col"):
            if getattr(self, setting) is not None:
                _, problem = self.id_problem(record, setting)
                if problem is not None:
                    return problem
        # The id as the file has it (a jsonl number stays a number).
        row_id = row.line if self.id_col is None else record[self.id_col]
        return row_id, tuple(texts)

    def copied(self, record: Dict[str, Any]) -> Dict[str, Any]:
        """The values a row's output line carries besides its prediction:
        ``{"group": ..., "gold": ...}`` for the group and label columns
        given (a row ``task`` accepted has them)."""
        out = {}
        for key, column in (("group", self.group_col), ("gold", self.label_col)):
            if column is not None:
                out[key] = record[column]
        return out

    def pair_row(
        self, record: Dict[str, Any], path: Path, line: int, *, need_label: bool = True
    ) -> PairRow:
        """The ``PairRow`` of a record (a jsonl object or a csv / tsv row).

        RAISES (CorpusFormatError): For a missing column, an empty text or a
            value of the wrong type, naming file, line, the columns found
            and the option.
        """
        first, second = self.texts(record, path, line, need_label=need_label)
        where = f"{path}:{line}"
        label = self._label(record, where) if need_label else None
        group = self._id(record, "group_col", where)
        row_id = None
        if self.id_col is not None and self.id_col in record:
            row_id = self._id(
                record, "id_col", where, optional="id_col" in self.detected
            )
        return PairRow(first, second, label, group, row_id, line)

    def texts(
        self, record: Dict[str, Any], path: Path, line: int, *, need_label: bool = True
    ) -> Tuple[str, ...]:
        """The texts of a record, in the order of ``text_cols``.

        RAISES (CorpusFormatError): As ``pair_row``.
        """
        assert self.text_cols is not None, "resolve() names every text column"
        where = f"{path}:{line}"
        missing = [
            self._missing(setting, column)
            for setting, column in self.named()
            if column not in record and self._required(setting, need_label)
        ]
        if missing:
            raise CorpusFormatError(
                f"{where}: no {'; no '.join(missing)}; found columns {sorted(record)}."
            )
        for k, column in enumerate(self.text_cols):
            problem = self.cell_problem(record, k)
            if problem is None:
                continue
            if not isinstance(record[column], str):
                # Not text: perhaps not the text column.
                problem += f"; name the text columns with {self.hint('text_cols')}"
            raise CorpusFormatError(f"{where}: {problem}.")
        return tuple(record[column] for column in self.text_cols)

    def labels(self, record: Dict[str, Any], where: str) -> List[str]:
        """A record's label, or each of a doc task's jsonl label list, at
        ``where`` ("file:line"). RAISES (CorpusFormatError): For a null,
        empty (else a class of its own) or unreadable label."""
        key = self.label_col
        if key is None:
            return []
        value = record.get(key)
        items = value if self.kind == "doc" and isinstance(value, list) else [value]
        labels = [str(self._label({**record, key: v}, where)) for v in items]
        if not labels or "" in labels:
            raise CorpusFormatError(
                f"{where}: the label ({key!r}) is empty; give the row its label "
                f"or remove it."
            )
        return labels

    def _required(self, setting: str, need_label: bool) -> bool:
        if setting == "label_col":
            return need_label
        return not (setting == "id_col" and "id_col" in self.detected)

    def _missing(self, setting: str, column: str) -> str:
        # What a row lacks, in words: a detected column is named as found.
        if setting in self.detected and setting == "text_cols":
            assert self.text_cols is not None
            n = self.text_cols.index(column) + 1
            return (
                f"column for text {n} ({column!r}, as in the first row; name the "
                f"columns with {self.hint('text_cols')})"
            )
        if setting in self.detected:
            return (
                f"{column!r} in this row, the label column of the first row: "
                f"give the row its label or remove it"
            )
        return f"column {column!r} ({self.hint(setting)})"

    def _label(self, record: Dict[str, Any], where: str) -> Optional[str]:
        key = self.label_col
        if key is None:
            return None
        label = record.get(key)
        if label is None:
            # A JSON null label would otherwise become the label None in doc.cats.
            raise CorpusFormatError(
                f"{where}: the label ({key!r}) is null; found columns "
                f"{sorted(record)}; name the label column with "
                f"{self.hint('label_col')}."
            )
        if isinstance(label, float) and label.is_integer():
            label = int(label)
        if not isinstance(label, (str, int, bool)):
            raise CorpusFormatError(
                f"{where}: label {label!r} (column {key!r}) is not a string or "
                f"integer; name the label column with {self.hint('label_col')}."
            )
        return str(label).strip()

    def _id(
        self, record: Dict[str, Any], setting: str, where: str, optional: bool = False
    ) -> Optional[str]:
        if getattr(self, setting) is None:
            return None
        value, problem = self.id_problem(record, setting)
        if problem is not None and not optional:
            raise CorpusFormatError(f"{where}: {problem}.")
        return value


def _describe_value(value: Any) -> str:
    name = "null" if value is None else type(value).__name__
    text = repr(value)
    return f"{name} {text[:40]}{'...' if len(text) > 40 else ''}"


__all__ = [
    "COLUMN_SETTINGS",
    "DEFAULT_ID_COLUMN",
    "LABEL_KEYS",
    "TASK_COLUMNS",
    "Columns",
    "PairRow",
    "Task",
    "option_hint",
    "trained_columns",
]
