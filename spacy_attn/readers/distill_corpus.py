"""The distillation corpus reader ``spacy-attn.DistillCorpus.v1``: the
transfer set that ``spacy attn distill`` writes (texts, gold cats where there
are any, the teacher's cats) into ``Example``s the classifiers learn from
(docs/distill.md)."""

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError
from ..pairs import DEFAULT_PAIR_KEY, make_pair
from ..teacher_targets import DistillSettings, set_teacher_target
from .columns import Columns
from .file_corpus import FileCorpus
from .pair_corpus import one_line_corpus_errors

# The text columns of a transfer set, by task: what ``spacy attn distill``
# writes (``TransferRow.record``), gives its teacher and reads back here.
TRANSFER_COLUMNS = {
    "pair": Columns(("first", "second")),
    "doc": Columns(("text",), kind="doc"),
}


def transfer_columns(record: Dict[str, Any]) -> Columns:
    """The text columns of a transfer row: "text" for a doc, else the pair's."""
    return TRANSFER_COLUMNS["doc" if "text" in record else "pair"]


@registry.readers("spacy-attn.DistillCorpus.v1")
def create_distill_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    temperature: float = 1.0,
    gold_weight: float = 0.0,
    loss: str = "kl",
    pair_key: str = DEFAULT_PAIR_KEY,
    limit: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a transfer set for distillation: one JSON object per line with
    the texts (``"first"`` and ``"second"`` for a pair, ``"text"`` for a
    doc), the gold ``"cats"`` (``{}`` for an unlabelled or augmented row) and
    the teacher's ``"teacher"`` cats; ``"source"`` says where the row came
    from (``train``, ``unlabelled``, ``augmented``). The teacher's cats and
    the settings go to each reference doc's ``user_data`` (see
    ``spacy_attn.pipeline.distill_loss``), the gold cats to ``doc.cats``.

    path (Union[str, Path]): The jsonl file; None gives an empty corpus.
    temperature (float): The softening temperature (``DistillSettings``).
    gold_weight (float): The gold label's share of the loss where there is one.
    loss (str): "kl" or "mse".
    pair_key (str): The name of the pair (see ``spacy_attn.pairs``).
    limit (int): Read at most this many rows (0 = all).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    """
    settings = DistillSettings(
        temperature=temperature, gold_weight=gold_weight, loss=loss
    )
    one_line_corpus_errors()
    corpus = DistillCorpus(path, settings=settings, pair_key=pair_key, limit=limit)
    # Read (and keep) the rows now, when spacy train builds the reader: a bad
    # row stops the run before its first step.
    if corpus.path is not None:
        corpus.rows()
    return corpus


class DistillCorpus(FileCorpus):
    """Iterate over the ``Example``s of a transfer set (see
    ``create_distill_corpus_reader``). Rows are parsed once and kept (spaCy
    calls the reader every epoch); docs are made on each pass."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        settings: DistillSettings,
        pair_key: str = DEFAULT_PAIR_KEY,
        limit: int = 0,
    ) -> None:
        super().__init__(path, limit=limit)
        self.settings = settings
        self.pair_key = pair_key
        self._rows: Optional[List[Dict[str, Any]]] = None

    def rows(self) -> List[Dict[str, Any]]:
        """RETURNS (List[Dict[str, Any]]): The rows, checked.
        RAISES (CorpusFormatError): Naming the line of a row that is not a
            transfer-set row."""
        if self._rows is None:
            assert self.path is not None
            if not self.path.is_file():
                raise CorpusFormatError(
                    f"{self.path}: transfer set not found; {_WRITTEN_BY}."
                )
            rows = []
            with self.path.open("rb") as file:
                for number, line in enumerate(file, start=1):
                    if not line.strip():
                        continue
                    rows.append(_checked_row(line, f"{self.path}:{number}"))
                    if self.limit and len(rows) >= self.limit:
                        break
            self._rows = rows
            sources = Counter(row.get("source", "train") for row in rows)
            print(
                f"ℹ {self.path}: {len(rows):,} transfer rows "
                f"({', '.join(f'{k} {v:,}' for k, v in sorted(sources.items()))}); "
                f"teacher loss {self.settings.loss}, T={self.settings.temperature:g}, "
                f"gold weight {self.settings.gold_weight:g}",
                file=sys.stderr,
            )
        return self._rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        for row in self.rows():
            reference = self._doc(nlp, row)
            reference.cats = dict(row.get("cats") or {})
            set_teacher_target(reference.user_data, row["teacher"], self.settings)
            predicted = reference.copy()
            predicted.cats = {}
            yield Example(predicted, reference)

    def _doc(self, nlp: Language, row: Dict[str, Any]) -> Doc:
        columns = transfer_columns(row)
        texts = [row[column] for column in columns.text_cols or ()]
        if columns.kind == "doc":
            return nlp.make_doc(texts[0])
        return make_pair(nlp, texts[0], texts[1], pair_key=self.pair_key)


# What to do about a transfer set that cannot be read: it is a file that
# distill writes, not one a user writes by hand.
_WRITTEN_BY = (
    "a transfer set is the file `spacy attn distill` writes "
    "(OUTPUT/transfer/transfer.jsonl): run distill again to rewrite it"
)


def _checked_row(data: bytes, where: str) -> Dict[str, Any]:
    try:
        row = json.loads(data.decode("utf-8").rstrip("\r\n"))
    except UnicodeDecodeError as err:
        raise CorpusFormatError(
            f"{where}: invalid UTF-8 (byte 0x{data[err.start : err.start + 1].hex()} "
            f"at byte {err.start + 1}); {_WRITTEN_BY}."
        ) from None
    except json.JSONDecodeError as err:
        raise CorpusFormatError(
            f"{where}: invalid JSON ({err.msg} at column {err.colno}); {_WRITTEN_BY}."
        ) from None
    if not isinstance(row, dict):
        raise CorpusFormatError(
            f"{where}: expected a JSON object, got {type(row).__name__}; {_WRITTEN_BY}."
        )
    columns = transfer_columns(row)
    texts = columns.text_cols or ()
    if any(column not in row for column in texts):
        raise CorpusFormatError(
            f'{where}: a transfer row needs "first" and "second" (a pair) or '
            f'"text" (a doc), got keys {sorted(row)}; {_WRITTEN_BY}.'
        )
    for k in range(len(texts)):
        problem = columns.cell_problem(row, k)
        if problem is not None:
            raise CorpusFormatError(f"{where}: {problem}.")
    for key in ("teacher", "cats"):
        cats = row.get(key)
        if key == "cats" and cats is None:
            continue
        if not isinstance(cats, dict) or (key == "teacher" and not cats):
            raise CorpusFormatError(
                f'{where}: no "{key}" cats ({{label: score}}); {_WRITTEN_BY}.'
            )
        if not all(_is_score(value) for value in cats.values()):
            raise CorpusFormatError(
                f'{where}: "{key}" holds a score that is not a number ({cats!r}); '
                f"{_WRITTEN_BY}."
            )
    return row


def _is_score(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


__all__ = [
    "TRANSFER_COLUMNS",
    "DistillCorpus",
    "create_distill_corpus_reader",
    "transfer_columns",
]
