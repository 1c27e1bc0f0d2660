"""The transfer set of a distillation: the rows the teacher labels and the
student learns from (docs/distill.md, "The transfer set").

Three parts, each measured in ``benchmarks/results/distill.md``: the
student's training rows (gold label kept), a user's unlabelled rows, and
copies of the training rows changed as Tang et al. (2019) do for BERT → BiLSTM
distillation: each word masked with probability ``mask``, replaced by one of
its nearest neighbours in the student's vectors with probability ``replace``
(their part-of-speech replacement needs a tagger; the student's own vectors
are always there), then the text cut to a random n-gram with probability
``ngram``. The teacher labels every row, so a changed row needs no label.
"""

import random
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..pairs import get_pair_texts, has_pair
from ..readers.distill_corpus import TRANSFER_COLUMNS

# What a masked word becomes: BERT-style tokenizers read it as their mask
# token; a vectors student reads one unknown token sequence, always the same.
MASK_TOKEN = "[MASK]"


@dataclass
class TransferRow:
    """One row of the transfer set.

    texts (Tuple[str, ...]): (first, second) for a pair, (text,) for a doc.
    cats (Dict[str, float]): The gold cats; empty without a gold label.
    source (str): "train", "unlabelled" or "augmented".
    """

    texts: Tuple[str, ...]
    cats: Dict[str, float] = field(default_factory=dict)
    source: str = "train"

    def record(self, teacher: Dict[str, float]) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): The row as ``spacy-attn.DistillCorpus.v1``
        reads it, with the teacher's cats."""
        columns = TRANSFER_COLUMNS["pair" if len(self.texts) == 2 else "doc"]
        head: Dict[str, Any] = dict(zip(columns.text_cols or (), self.texts))
        head.update({"cats": self.cats, "teacher": teacher, "source": self.source})
        return head


@dataclass(frozen=True)
class AugmentSettings:
    """How many changed copies of each training row, and how they change.

    copies (int): Changed copies per training row (0: none). Tang et al.
        use 20; duplicates and unchanged copies are dropped.
    mask (float): Probability of masking each word.
    replace (float): Probability of replacing each word by a vector neighbour.
    ngram (float): Probability of cutting each text to an n-gram (1-5 words).
    neighbours (int): How many nearest neighbours a replacement draws from.
    seed (int): The random seed.
    """

    copies: int = 0
    mask: float = 0.1
    replace: float = 0.1
    ngram: float = 0.1
    neighbours: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        if self.copies < 0:
            raise ValueError(f"copies must be >= 0, got {self.copies}.")
        for name in ("mask", "replace", "ngram"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}.")
        if self.neighbours < 1:
            raise ValueError(f"neighbours must be >= 1, got {self.neighbours}.")


def training_rows(examples: Iterable[Example]) -> List[TransferRow]:
    """The transfer rows of the student's training examples: the texts of
    each reference doc (its pair, or the whole doc) and its gold cats.

    examples (Iterable[Example]): The training corpus's examples.
    RETURNS (List[TransferRow]): One row per example.
    """
    rows = []
    for eg in examples:
        doc = eg.reference
        texts = get_pair_texts(doc) if has_pair(doc) else (doc.text,)
        rows.append(TransferRow(tuple(texts), dict(doc.cats), "train"))
    return rows


class Augmenter:
    """Make changed copies of rows (see the module docstring)."""

    def __init__(self, nlp: Language, settings: AugmentSettings) -> None:
        """Initialize the augmenter.

        nlp (Language): The student pipeline: its tokenizer splits the texts
            and its vectors give the neighbours (none: no replacement).
        settings (AugmentSettings): How to change the rows.
        """
        self.nlp = nlp
        self.settings = settings
        self.rng = random.Random(settings.seed)
        vectors = nlp.vocab.vectors
        self.has_vectors = bool(vectors.shape[0]) and settings.replace > 0
        self._neighbours: Dict[str, List[str]] = {}

    def copies(self, rows: Sequence[TransferRow]) -> Iterator[TransferRow]:
        """Yield up to ``copies`` changed copies of each row (new texts only).

        rows (Sequence[TransferRow]): The training rows.
        YIELDS (TransferRow): Rows with source "augmented" and no gold cats.
        """
        if not self.settings.copies:
            return
        docs = [[self.nlp.make_doc(text) for text in row.texts] for row in rows]
        if self.has_vectors:
            self._find_neighbours(
                tok.lower_ for row in docs for doc in row for tok in doc
            )
        for row, row_docs in zip(rows, docs):
            seen = {row.texts}
            for _ in range(self.settings.copies * 2):
                texts = tuple(self._change(doc) for doc in row_docs)
                if texts in seen:
                    continue
                seen.add(texts)
                yield TransferRow(texts, {}, "augmented")
                if len(seen) > self.settings.copies:
                    break

    def _change(self, doc: Doc) -> str:
        s, rng = self.settings, self.rng
        words = []
        for token in doc:
            word = token.text
            if not token.is_punct and not token.is_space:
                draw = rng.random()
                if draw < s.mask:
                    word = MASK_TOKEN
                elif draw < s.mask + s.replace and self.has_vectors:
                    choices = self._neighbours.get(token.lower_)
                    if choices:
                        word = _same_case(rng.choice(choices), token.text)
            words.append(word + token.whitespace_)
        if len(words) > 1 and rng.random() < s.ngram:
            n = rng.randint(1, min(5, len(words)))
            start = rng.randint(0, len(words) - n)
            words = words[start : start + n]
        return "".join(words).strip()

    def _find_neighbours(self, words: Iterable[str]) -> None:
        """Fill the neighbour table for ``words`` (lower-cased) in one pass
        over the vectors, in blocks (a dot product with every row)."""
        vectors = self.nlp.vocab.vectors
        strings = self.nlp.vocab.strings
        table = numpy.asarray(vectors.data, dtype="float32")
        if hasattr(vectors.data, "get"):  # cupy
            table = vectors.data.get()
        norms = numpy.linalg.norm(table, axis=1)
        norms[norms == 0] = 1.0
        unit = table / norms[:, None]
        # One string per vectors row (several keys may share a row).
        row_word: Dict[int, str] = {}
        for key, row in vectors.key2row.items():
            if row not in row_word and key in strings:
                row_word[row] = strings[key]
        wanted = sorted(
            {w for w in words if w not in self._neighbours and w.isalpha()}
            & {w for w in (strings[k] for k in vectors.key2row if k in strings)}
        )
        k = self.settings.neighbours
        for start in range(0, len(wanted), 512):
            block = wanted[start : start + 512]
            rows = [vectors.key2row[strings[w]] for w in block]
            sims = unit[rows] @ unit.T
            top = numpy.argpartition(-sims, k + 1, axis=1)[:, : k + 1]
            for word, own, candidates in zip(block, rows, top):
                self._neighbours[word] = [
                    row_word[int(c)]
                    for c in candidates
                    if int(c) != own and int(c) in row_word and row_word[int(c)] != word
                ][:k]


def _same_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def unlabelled_rows(texts: Iterable[Tuple[str, ...]]) -> List[TransferRow]:
    """Transfer rows of a user's unlabelled texts.

    texts (Iterable[Tuple[str, ...]]): (first, second) or (text,) per row.
    RETURNS (List[TransferRow]): Rows with source "unlabelled".
    """
    return [TransferRow(tuple(t), {}, "unlabelled") for t in texts]


def transfer_set(
    train: Sequence[TransferRow],
    *,
    augmenter: Optional[Augmenter] = None,
    unlabelled: Sequence[TransferRow] = (),
) -> List[TransferRow]:
    """The whole transfer set: training rows, unlabelled rows, then the
    augmented copies (duplicates of an earlier row's texts dropped).

    RETURNS (List[TransferRow]): The rows, in that order.
    """
    rows: List[TransferRow] = list(train)
    seen = {row.texts for row in rows}
    extra = list(unlabelled)
    if augmenter is not None:
        extra.extend(augmenter.copies(train))
    for row in extra:
        if row.texts not in seen:
            seen.add(row.texts)
            rows.append(row)
    return rows


__all__ = [
    "MASK_TOKEN",
    "AugmentSettings",
    "Augmenter",
    "TransferRow",
    "training_rows",
    "transfer_set",
    "unlabelled_rows",
]
