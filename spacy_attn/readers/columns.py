"""The one column model of every command that reads a user's file: which
columns hold the texts, the label, the group (query) id and the row id. A
labelled pair file's record becomes a ``PairRow`` (``PairColumns``: convert,
the corpus readers, evaluate); a row to predict becomes a task of its
pipeline (``Columns`` from ``resolve_columns``: predict), with the same
column names detected; both default to the columns a pipeline was trained
with (``trained_columns``)."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..errors import CorpusFormatError
from .rows import InputRow

FIRST_KEYS = (
    "premise",
    "sentence1",
    "text_a",
    "question1",
    "#1 String",
    "question",
    "first",
)
SECOND_KEYS = (
    "hypothesis",
    "sentence2",
    "text_b",
    "question2",
    "#2 String",
    "context",
    "second",
)
LABEL_KEYS = ("label", "gold_label", "is_duplicate", "Quality")
DEFAULT_ID_COLUMN = "id"

# How a user names each column: the command-line option and the setting of
# spacy-attn.PairCorpus.v1 (one name per concept, spelled for each place).
OPTION_NAMES = {
    "text_cols": "--text-cols",
    "label_col": "--label-col",
    "group_col": "--group-col",
    "id_col": "--id-col",
}


def option_hint(setting: str) -> str:
    """How to name a column, for messages: e.g. "--text-cols (text_cols in a
    reader config)"."""
    return f"{OPTION_NAMES[setting]} ({setting} in a reader config)"


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
class PairColumns:
    """The columns of a pair file; None: the default.

    text_cols (Optional[Sequence[str]]): The two text columns, in order
        (default: the first of ``FIRST_KEYS`` and of ``SECOND_KEYS`` found).
    label_col (Optional[str]): The label column (default: the first of
        ``LABEL_KEYS`` found).
    group_col (Optional[str]): The group (query) id column (default: none).
    id_col (Optional[str]): The row id column (default: "id" where a row has
        it).
    """

    text_cols: Optional[Sequence[str]] = None
    label_col: Optional[str] = None
    group_col: Optional[str] = None
    id_col: Optional[str] = None

    def __post_init__(self) -> None:
        if self.text_cols is not None:
            self.text_cols = tuple(self.text_cols)
            if len(self.text_cols) != 2:
                raise CorpusFormatError(
                    f"{option_hint('text_cols')}: a pair needs 2 text columns, "
                    f"got {list(self.text_cols)}."
                )
        if self.label_col is not None and self.label_col in (self.text_cols or ()):
            raise CorpusFormatError(
                f"{option_hint('label_col')}: {self.label_col!r} is also a text "
                f"column ({option_hint('text_cols')}: {list(self.text_cols or ())}); "
                f"name the column that holds the labels."
            )

    def named(self, *, need_label: bool = True) -> List[Tuple[str, str]]:
        """The columns given by name, each with its setting."""
        named = [("text_cols", c) for c in self.text_cols or ()]
        if self.label_col is not None and need_label:
            named.append(("label_col", self.label_col))
        for setting in ("group_col", "id_col"):
            column = getattr(self, setting)
            if column is not None:
                named.append((setting, column))
        return named

    def check_header(
        self, header: Sequence[str], path: Path, *, need_label: bool = True
    ) -> None:
        """Fail if a csv / tsv header lacks a named column, or (unnamed) the
        texts and label are not found in it: one error for the file, not one
        per row.

        RAISES (CorpusFormatError): Naming the file, line 1, the columns
            found and the option to use.
        """
        record = dict.fromkeys(header, "")
        missing = self.missing(record, need_label=need_label)
        if missing:
            raise CorpusFormatError(
                f"{path}:1: the header has no {'; no '.join(missing)}; "
                f"found columns {list(header)}."
            )

    def missing(self, record: Dict[str, Any], *, need_label: bool = True) -> List[str]:
        """What a record lacks, each with the option that names it."""
        missing = [
            f"column {column!r} ({option_hint(setting)})"
            for setting, column in self.named(need_label=need_label)
            if column not in record
        ]
        if self.text_cols is None:
            for n, keys in enumerate((FIRST_KEYS, SECOND_KEYS), start=1):
                if not any(key in record for key in keys):
                    missing.append(
                        f"column for text {n} (looked for {list(keys)}; name it "
                        f"with {option_hint('text_cols')})"
                    )
        if need_label and self.label_col is None:
            if not any(key in record for key in LABEL_KEYS):
                missing.append(
                    f"label column (looked for {list(LABEL_KEYS)}; name it with "
                    f"{option_hint('label_col')})"
                )
        return missing

    def row(
        self, record: Dict[str, Any], path: Path, line: int, *, need_label: bool = True
    ) -> PairRow:
        """The ``PairRow`` of a record (a jsonl object or a csv / tsv row).

        RAISES (CorpusFormatError): For a missing column or a value of the
            wrong type, naming file, line, the columns found and the option.
        """
        missing = self.missing(record, need_label=need_label)
        if missing:
            raise CorpusFormatError(
                f"{path}:{line}: no {'; no '.join(missing)}; found columns "
                f"{sorted(record)}."
            )
        if self.text_cols is not None:
            k1, k2 = self.text_cols
        else:
            k1 = next(k for k in FIRST_KEYS if k in record)
            k2 = next(k for k in SECOND_KEYS if k in record)
        texts = []
        for key in (k1, k2):
            value = record[key]
            if not isinstance(value, str):
                raise CorpusFormatError(
                    f"{path}:{line}: column {key!r} must be a string, got "
                    f"{value!r}; name the text columns with {option_hint('text_cols')}."
                )
            texts.append(value)
        label = self._label(record, path, line) if need_label else None
        group = self._value(record, self.group_col, "group_col", path, line)
        row_id = self._value(record, self.id_col, "id_col", path, line)
        if self.id_col is None:
            # The default id column is optional: used where it holds an id.
            value = record.get(DEFAULT_ID_COLUMN)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                row_id = str(value)
        return PairRow(texts[0], texts[1], label, group, row_id, line)

    def _label(self, record: Dict[str, Any], path: Path, line: int) -> Optional[str]:
        key = self.label_col
        if key is None:
            key = next((k for k in LABEL_KEYS if k in record), None)
            if key is None:
                return None
        label = record.get(key)
        if label is None:
            # A JSON null label would otherwise become the label None in doc.cats.
            raise CorpusFormatError(
                f"{path}:{line}: the label ({key!r}) is null; found columns "
                f"{sorted(record)}; name the label column with "
                f"{option_hint('label_col')}."
            )
        if isinstance(label, float) and label.is_integer():
            label = int(label)
        if not isinstance(label, (str, int, bool)):
            raise CorpusFormatError(
                f"{path}:{line}: label {label!r} (column {key!r}) is not a string "
                f"or integer; name the label column with {option_hint('label_col')}."
            )
        return str(label).strip()

    @staticmethod
    def _value(
        record: Dict[str, Any],
        column: Optional[str],
        setting: str,
        path: Path,
        line: int,
    ) -> Optional[str]:
        # A group or row id as a string (a jsonl number as its text).
        if column is None:
            return None
        value = record[column]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise CorpusFormatError(
                f"{path}:{line}: column {column!r} ({option_hint(setting)}) must "
                f"be a string or number, got {value!r}."
            )
        return str(value)


COLUMN_SETTINGS = ("text_cols", "label_col", "group_col", "id_col")
# What else a pipeline's reader knew of its files: how their labels map onto
# the model's (a model fine-tuned from a start with other labels).
TRAINED_SETTINGS = (*COLUMN_SETTINGS, "label_map")


def trained_columns(config: Any) -> Dict[str, Any]:
    """The column settings a pipeline was trained with: those of its
    ``[corpora.train]`` pair reader (``spacy-attn.PairCorpus.*``), set ones
    only ({} for a pipeline trained otherwise, e.g. on a DocBin).

    config (Any): The pipeline's config (``nlp.config``).
    RETURNS (Dict[str, Any]): e.g. ``{"text_cols": ["question", "sentence"],
        "group_col": "question_id"}``, and ``label_map`` where one was set.
    """
    try:
        reader = dict(config["corpora"]["train"])
    except (KeyError, TypeError):
        return {}
    if not str(reader.get("@readers", "")).startswith("spacy-attn.PairCorpus"):
        return {}
    found = {key: reader.get(key) for key in TRAINED_SETTINGS}
    if found["text_cols"] is not None:
        found["text_cols"] = list(found["text_cols"])
    if found["label_map"] is not None:
        found["label_map"] = dict(found["label_map"])
    return {key: value for key, value in found.items() if value is not None}


def check_against_trained(
    text_cols: Optional[Sequence[str]], trained: Dict[str, Any]
) -> Optional[str]:
    """Compare the text columns a command was given with those the pipeline
    was trained with.

    RETURNS (Optional[str]): A note when the names differ (a file may name
        its columns otherwise), None when they agree or either is unknown.
    RAISES (CorpusFormatError): When they are the trained columns in another
        order: the model would read each text as the other, silently.
    """
    known = trained.get("text_cols")
    if not text_cols or not known or list(text_cols) == list(known):
        return None
    if sorted(text_cols) == sorted(known):
        raise CorpusFormatError(
            f"--text-cols {','.join(text_cols)} swaps the columns the model was "
            f"trained with ({','.join(known)}): a pair model reads its texts in "
            f"order. Pass --text-cols {','.join(known)}, or leave it out."
        )
    return (
        f"--text-cols {','.join(text_cols)}: the model was trained on columns "
        f"{','.join(known)} (in that order); make sure these hold the same texts."
    )


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
    RAISES (CorpusFormatError): If columns are missing or their count is wrong.
    """
    wanted = TASK_COLUMNS[kind]
    if text_cols:
        if len(text_cols) != len(wanted):
            raise CorpusFormatError(
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
                raise CorpusFormatError(
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
        raise CorpusFormatError(
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
    "Columns",
    "Task",
    "resolve_columns",
    "COLUMN_SETTINGS",
    "check_against_trained",
    "trained_columns",
    "DEFAULT_ID_COLUMN",
    "FIRST_KEYS",
    "LABEL_KEYS",
    "OPTION_NAMES",
    "SECOND_KEYS",
    "PairColumns",
    "PairRow",
    "option_hint",
]
