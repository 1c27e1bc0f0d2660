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
from spacy.util import ensure_path, registry

from ..errors import CorpusFormatError
from ..pairs import DEFAULT_PAIR_KEY, make_pair
from ..pipeline.distill_loss import DistillSettings, set_teacher_target
from .columns import Columns

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
    return DistillCorpus(path, settings=settings, pair_key=pair_key, limit=limit)


class DistillCorpus:
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
        self.path = ensure_path(path) if path is not None else None
        self.settings = settings
        self.pair_key = pair_key
        self.limit = limit
        self._rows: Optional[List[Dict[str, Any]]] = None

    def rows(self) -> List[Dict[str, Any]]:
        """RETURNS (List[Dict[str, Any]]): The rows, checked.
        RAISES (CorpusFormatError): Naming the line of a row that is not a
            transfer-set row."""
        if self._rows is None:
            assert self.path is not None
            rows = []
            with self.path.open(encoding="utf8") as file:
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


def _checked_row(line: str, where: str) -> Dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as err:
        raise CorpusFormatError(f"{where}: not a JSON object ({err.msg}).") from None
    if not isinstance(row, dict):
        raise CorpusFormatError(f"{where}: not a JSON object.")
    columns = transfer_columns(row)
    texts = columns.text_cols or ()
    if any(column not in row for column in texts):
        raise CorpusFormatError(
            f'{where}: a transfer row needs "first" and "second" (a pair) or '
            f'"text" (a doc), got keys {sorted(row)}.'
        )
    for k in range(len(texts)):
        problem = columns.cell_problem(row, k)
        if problem is not None:
            raise CorpusFormatError(f"{where}: {problem}.")
    teacher = row.get("teacher")
    if not isinstance(teacher, dict) or not teacher:
        raise CorpusFormatError(
            f'{where}: no "teacher" cats; run `spacy attn distill`, which writes them.'
        )
    return row


__all__ = [
    "TRANSFER_COLUMNS",
    "DistillCorpus",
    "create_distill_corpus_reader",
    "transfer_columns",
]
