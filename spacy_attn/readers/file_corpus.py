"""The base of the corpus readers (``PairCorpus``, ``TextCatCorpus``,
``DistillCorpus`` and the SQuAD readers): one file, or None for an empty
corpus, read in a seeded order and cut to ``limit``."""

import random
from itertools import islice
from pathlib import Path
from typing import Iterator, List, Optional, TypeVar, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import ensure_path

from .formats import read_docbin

T = TypeVar("T")


class FileCorpus:
    """A corpus of one file: which file, and which of its rows or docs are
    read, in which order. A subclass is the reader: called with a pipeline,
    it yields the ``Example``s (none without a file)."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        """Initialize the corpus.

        path (Optional[Union[str, Path]]): The file; None gives an empty corpus.
        limit (int): Read at most this many rows or docs (0 = all).
        shuffle (bool): Shuffle them once with ``seed`` before ``limit``.
        seed (int): The shuffle's seed.
        """
        self.path: Optional[Path] = ensure_path(path) if path is not None else None
        self.limit = limit
        self.shuffle = shuffle
        self.seed = seed

    def sample(self, items: List[T]) -> List[T]:
        """The items to read: ``items`` shuffled in place with ``seed`` (with
        ``shuffle``), then the first ``limit`` of them.

        items (List[T]): Every row or doc of the file, in file order.
        RETURNS (List[T]): The selection.
        """
        if self.shuffle:
            random.Random(self.seed).shuffle(items)
        return items[: self.limit] if self.limit else items

    def first_docs(self, nlp: Language) -> Iterator[Doc]:
        """The first ``limit`` docs of the file, a DocBin, in file order
        (read no further).

        nlp (Language): The pipeline whose vocab the docs are read into.
        RETURNS (Iterator[Doc]): The docs.
        RAISES (CorpusFormatError): If the DocBin is damaged (``read_docbin``).
        """
        assert self.path is not None  # readers return first without a path
        docs = read_docbin(self.path, nlp.vocab)
        return islice(docs, self.limit) if self.limit else docs


__all__ = ["FileCorpus"]
