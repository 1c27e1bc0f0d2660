"""Whether a file is the right input for a pipeline's task: rows of text
pairs for a pair classifier, SQuAD JSON (``evaluate``, ``spacy train``) or
question / context rows (``predict``) for a span-QA model. Each check names
what was given, what the model expects and what to do, in one line."""

import json
from pathlib import Path
from typing import Collection, Optional, Sequence, Union

from ..errors import CorpusFormatError
from .column_names import FIRST_KEYS, SECOND_KEYS
from .formats import text_lines

# The columns of a QA row, which a pair reader also detects as a pair.
QA_COLUMNS = ("question", "context")


def is_squad_name(path: Union[str, Path]) -> bool:
    """A SQuAD-format file (QA) by its name: ``.json`` or ``.json.gz``."""
    name = Path(path).name.lower()
    return name.endswith(".json") or name.endswith(".json.gz")


def is_squad_document(path: Union[str, Path]) -> bool:
    """A ``.json`` file that is one JSON document in SQuAD's layout (its
    first line is "{" or an object with "data"), not JSON lines (which a
    ``.json`` name may hold too)."""
    if not is_squad_name(path):
        return False
    try:
        first = next((line for line in text_lines(Path(path)) if line.strip()), "")
    except CorpusFormatError:
        return False  # the reader reports a damaged file
    try:
        document = json.loads(first)
    except ValueError:
        return first.strip() in ("{", "[")
    return isinstance(document, dict) and "data" in document


def squad_for_pairs(path: Union[str, Path]) -> CorpusFormatError:
    """The error for a SQuAD JSON file given to a pair reader."""
    return CorpusFormatError(
        f"{path}: SQuAD JSON (one document, not rows) is read by a QA config "
        f"(init-config --task qa); a pair corpus is jsonl, csv, tsv or .spacy, "
        f"one pair per row."
    )


def squad_for_rows(path: Union[str, Path], kind: str) -> CorpusFormatError:
    """The error for a SQuAD JSON file given to a command that reads rows
    (``predict``, ``rank``) with a pipeline of ``kind``."""
    if kind == "qa":
        todo = (
            "write one question / context row per line (jsonl, csv or tsv; "
            "docs/batch.md), or score the SQuAD file with `spacy attn evaluate`"
        )
    else:
        todo = (
            "SQuAD questions are for a span-QA model (attn_span_qa); give this "
            f"{kind} model a jsonl, csv or tsv file of rows"
        )
    return CorpusFormatError(
        f"{path}: a .json file is SQuAD JSON, not rows (one per line): {todo}."
    )


def pair_rows_for_qa(path: Union[str, Path], component: str) -> CorpusFormatError:
    """The error for a file of rows (jsonl / csv / tsv / .spacy) given to
    ``evaluate`` or a QA reader with a span-QA pipeline."""
    return CorpusFormatError(
        f"{path}: a file of rows (jsonl, csv, tsv or .spacy) is scored as text "
        f"pairs, by a pair classifier, and this pipeline's {component!r} is a "
        f"span-QA model: evaluate it on SQuAD JSON (.json, .json.gz; "
        f"docs/span_qa.md), or pass a pair classifier pipeline."
    )


def other_task_hint(kind: str, available: Sequence[str]) -> Optional[str]:
    """What to say when a file's columns are those of another task than the
    model's ``kind``: pair columns for a QA model, question / context for a
    document model; None when they are not."""
    names = set(available)
    if kind == "qa" and names & set(FIRST_KEYS) and names & set(SECOND_KEYS):
        return (
            "these look like the columns of text pairs, for a pair classifier, "
            "and this model answers questions (attn_span_qa): give it question "
            "/ context rows, or pass a pair classifier pipeline"
        )
    if kind != "qa" and names >= set(QA_COLUMNS):
        return (
            f"these look like question / context rows, for a span-QA model, "
            f"and this is a {kind} model"
        )
    return None


def qa_rows_note(
    kind: str, text_cols: Optional[Sequence[str]], trained: Optional[Sequence[str]]
) -> Optional[str]:
    """A note for a pair model that reads question / context columns, the
    columns of span-QA rows, which it was not trained on (``trained``: the
    columns it was trained with, if known); None otherwise."""
    cols = tuple(text_cols or ())
    if kind != "pair" or cols != QA_COLUMNS or tuple(trained or ()) == cols:
        return None
    trained_on = f" was trained on columns {','.join(trained)} and" if trained else ""
    return (
        f"the texts are columns question,context, the columns of span-QA rows "
        f"(for attn_span_qa); this pair model{trained_on} scores each question "
        f"with its context as a pair: make sure that is the task it learned."
    )


def check_positive_label(
    positive_label: Optional[str], labels: Collection[str], *, component: str
) -> None:
    """Refuse ``--positive-label`` for a multi-class model (3 labels or more),
    whose labels are all scored.

    RAISES (CorpusFormatError): Naming the model's labels and what to do.
    """
    if positive_label is None or len(labels) <= 2:
        return
    raise CorpusFormatError(
        f"--positive-label {positive_label!r}: {component!r} is a multi-class "
        f"model ({len(labels)} labels: {sorted(labels)}), and a positive label "
        f"is one side of a binary task; leave --positive-label out (accuracy and "
        f"macro-F score every label)."
    )


__all__ = [
    "QA_COLUMNS",
    "check_positive_label",
    "is_squad_document",
    "is_squad_name",
    "squad_for_pairs",
    "other_task_hint",
    "pair_rows_for_qa",
    "qa_rows_note",
    "squad_for_rows",
]
