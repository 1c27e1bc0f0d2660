"""The names of columns: those tried, in order, where a file's columns are
not named (``Columns.resolve`` in ``readers.columns``), the options and
reader settings that name them, and the columns a pipeline was trained with."""

from typing import Any, Dict, Tuple

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

# Column names tried, in order, for each text of each task.
TASK_COLUMNS: Dict[str, Tuple[Tuple[str, ...], ...]] = {
    "pair": (FIRST_KEYS, SECOND_KEYS),
    "doc": (("text",),),
    # A jsonl QA row may hold a list of contexts (``"contexts": [...]``, or a
    # list in "context"): the question is answered across all of them.
    "qa": (("question",), ("context", "contexts")),
}

# How a user names each column: the command-line option and the setting of
# spacy-attn.PairCorpus.* (one name per concept, spelled for each place).
COLUMN_SETTINGS = ("text_cols", "label_col", "group_col", "id_col")
OPTION_NAMES = {
    "text_cols": "--text-cols",
    "label_col": "--label-col",
    "group_col": "--group-col",
    "id_col": "--id-col",
}
# What else a pipeline's reader knew of its files: how their labels map onto
# the model's (a model fine-tuned from a start with other labels).
TRAINED_SETTINGS = (*COLUMN_SETTINGS, "label_map")
# The readers whose settings name columns that way (name prefixes).
ROW_READERS = ("spacy-attn.PairCorpus.", "spacy-attn.TextCatCorpus.v2")


def option_hint(setting: str, *, in_config: bool = True) -> str:
    """How to name a column, for messages: e.g. "--text-cols (text_cols in a
    reader config)"; the option alone where no reader config applies."""
    if not in_config:
        return OPTION_NAMES[setting]
    return f"{OPTION_NAMES[setting]} ({setting} in a reader config)"


def trained_columns(config: Any) -> Dict[str, Any]:
    """The column settings a pipeline was trained with: those of its
    ``[corpora.train]`` row reader (``spacy-attn.PairCorpus.*``,
    ``spacy-attn.TextCatCorpus.v2``), set ones only ({} for a pipeline
    trained otherwise, e.g. on a DocBin).

    config (Any): The pipeline's config (``nlp.config``).
    RETURNS (Dict[str, Any]): e.g. ``{"text_cols": ["question", "sentence"],
        "group_col": "question_id"}``, and ``label_map`` where one was set.
    """
    try:
        reader = dict(config["corpora"]["train"])
    except (KeyError, TypeError):
        return {}
    name = str(reader.get("@readers", ""))
    if not name.startswith(ROW_READERS):
        return {}
    found = {key: reader.get(key) for key in TRAINED_SETTINGS}
    if found["text_cols"] is not None:
        found["text_cols"] = list(found["text_cols"])
    if found["label_map"] is not None:
        found["label_map"] = dict(found["label_map"])
    return {key: value for key, value in found.items() if value is not None}


__all__ = [
    "COLUMN_SETTINGS",
    "DEFAULT_ID_COLUMN",
    "FIRST_KEYS",
    "LABEL_KEYS",
    "OPTION_NAMES",
    "SECOND_KEYS",
    "TASK_COLUMNS",
    "TRAINED_SETTINGS",
    "option_hint",
    "trained_columns",
]
