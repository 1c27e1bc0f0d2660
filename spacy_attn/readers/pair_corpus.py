"""The text-pair corpus reader ``spacy-attn.PairCorpus.v1``: jsonl, tsv or
DocBin files into pair ``Example``s."""

import random
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import ensure_path, registry

from ..pairs import DEFAULT_PAIR_KEY, make_pair, renamed_pair_key, upgrade_pair
from .formats import PairRow, ReadStats, detect_format, read_docbin, read_pair_rows


def cats_for(label: str, positive_label: Optional[str]) -> Dict[str, float]:
    """Gold ``doc.cats`` for a row. Exclusive classes store only the gold
    label (the pair classifier treats the others as 0). With a
    ``positive_label``, a row of another label also stores the positive
    label as 0.0: that explicit zero is how the pair classifier learns which
    label is positive (docs/pair_classifier.md, "Binary and imbalanced
    tasks")."""
    if positive_label is not None and label != positive_label:
        return {label: 1.0, positive_label: 0.0}
    return {label: 1.0}


@registry.readers("spacy-attn.PairCorpus.v1")
def create_pair_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    format: str = "auto",
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    span_key: Optional[str] = None,
) -> Callable[[Language], Iterable[Example]]:
    """Read a text-pair corpus for training and evaluation.

    path (Union[str, Path]): A jsonl, tsv or DocBin (.spacy) file, optionally
        gzipped. None gives an empty corpus (e.g. for an unused dev set).
    format (str): "auto", "jsonl", "tsv" or "spacy".
    pair_key (str): The name of the pair (see ``spacy_attn.pairs``).
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g.
        {"0": "not_duplicate", "1": "duplicate"}.
    positive_label (Optional[str]): Binary task: the positive label, which
        rows of the other label store as 0.0 (see ``cats_for``).
    limit (int): Read at most this many labelled rows (0 = all).
    shuffle (bool): Shuffle the rows once, with ``seed``, before ``limit`` is
        applied through the order (useful for subsampling).
    span_key (Optional[str]): The old name of ``pair_key``, read from configs
        written before the rename (with a ``DeprecationWarning``); leave it
        unset (``null``).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    """
    return PairCorpus(
        path,
        format=format,
        pair_key=renamed_pair_key(pair_key, span_key, "spacy-attn.PairCorpus.v1"),
        label_map=label_map,
        positive_label=positive_label,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
    )


class PairCorpus:
    """Iterate over pair ``Example``s. Both the predicted and the reference doc
    carry the pair spans, so ``nlp.evaluate`` and ``spacy train`` dev scoring
    work (spaCy's own ``Corpus`` re-tokenizes predicted docs and loses them)."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        format: str = "auto",
        pair_key: str = DEFAULT_PAIR_KEY,
        label_map: Optional[Dict[str, str]] = None,
        positive_label: Optional[str] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        self.path = ensure_path(path) if path is not None else None
        self.format = format
        self.pair_key = pair_key
        self.label_map = dict(label_map) if label_map else None
        self.positive_label = positive_label
        self.limit = limit
        self.shuffle = shuffle
        self.seed = seed
        self._rows: Optional[List[PairRow]] = None
        self.stats: Optional[ReadStats] = None

    def _load_rows(self) -> List[PairRow]:
        # Rows are parsed once and kept: spaCy calls the reader every epoch.
        if self._rows is None:
            assert self.path is not None  # __call__ returns first without a path
            rows, self.stats = read_pair_rows(
                self.path, format=self.format, label_map=self.label_map
            )
            if self.shuffle:
                random.Random(self.seed).shuffle(rows)
            if self.limit:
                rows = rows[: self.limit]
            self._rows = rows
        return self._rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        fmt = detect_format(self.path) if self.format == "auto" else self.format
        if fmt == "spacy":
            yield from self._read_docbin(nlp)
            return
        for row in self._load_rows():
            predicted = make_pair(nlp, row.first, row.second, pair_key=self.pair_key)
            reference = predicted.copy()
            assert row.label is not None  # read_pair_rows keeps labelled rows only
            reference.cats = cats_for(row.label, self.positive_label)
            yield Example(predicted, reference)

    def _read_docbin(self, nlp: Language) -> Iterator[Example]:
        assert self.path is not None  # __call__ returns first without a path
        for i, reference in enumerate(read_docbin(self.path, nlp.vocab)):
            if self.limit and i >= self.limit:
                break
            # DocBins of spacy-attn 0.1 hold the pair as a span group, which
            # makes every Doc.copy in nlp.update slow: move it to user_data.
            upgrade_pair(reference, self.pair_key)
            predicted = reference.copy()
            predicted.cats = {}
            yield Example(predicted, reference)
