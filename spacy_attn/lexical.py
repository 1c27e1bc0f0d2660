"""Lexical scores of a text pair, the scores behind the lexical baselines
(``spacy_attn.baselines``): the content words of a text, the IDF table of a
collection of candidate texts, shared words with and without IDF weights,
and Okapi BM25.

Words: each token's lower-cased text, without punctuation, spaces and
symbols (tokens without a letter or digit) and without ``STOP_WORDS``,
spaCy's English stop words.
"""

import math
from collections import Counter
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Sequence, Set, Tuple

from spacy.lang.en.stop_words import STOP_WORDS as SPACY_STOP_WORDS
from spacy.tokens import Doc, Token

from .pairs import DEFAULT_PAIR_KEY, get_pair_bounds

# spaCy's English stop words (spacy.lang.en.stop_words.STOP_WORDS, 326
# lower-case words with the clitics "'s", "n't", ...), the list the
# sentence-selection benchmark has always removed: one list for both.
STOP_WORDS: FrozenSet[str] = frozenset(SPACY_STOP_WORDS)
# Okapi BM25's usual settings (Robertson and Zaragoza 2009; Lucene's and
# Elasticsearch's defaults): term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


def content_words(
    tokens: Iterable[Token], *, stop_words: FrozenSet[str] = STOP_WORDS
) -> List[str]:
    """The content words of some tokens, in order (repeats kept): each
    token's lower-cased text, leaving out punctuation, spaces and symbols
    (tokens without a letter or digit) and the ``stop_words``.

    tokens (Iterable[Token]): A doc or span.
    stop_words (FrozenSet[str]): Lower-case words to leave out.
    RETURNS (List[str]): The words.
    """
    words = (t.lower_ for t in tokens)
    return [w for w in words if is_content_word(w, stop_words=stop_words)]


def is_content_word(word: str, *, stop_words: FrozenSet[str] = STOP_WORDS) -> bool:
    """Whether a lower-cased word is a content word: it has a letter or digit
    and is not one of the ``stop_words`` (the rule of ``content_words``)."""
    return any(c.isalnum() for c in word) and word not in stop_words


def pair_content_words(
    doc: Doc, pair_key: str = DEFAULT_PAIR_KEY
) -> Tuple[List[str], List[str]]:
    """``content_words`` of a pair doc's first and second text."""
    s1, e1, s2, e2 = get_pair_bounds(doc, pair_key)
    return content_words(doc[s1:e1]), content_words(doc[s2:e2])


@dataclass(frozen=True)
class IdfTable:
    """Document frequencies and mean length (in content words) of a
    collection of candidate texts: what IDF and BM25 need."""

    n_docs: int
    """How many candidate texts the table counts."""
    doc_freq: Dict[str, int]
    """Word -> how many of them hold it."""
    avg_len: float
    """Their mean length in words (0.0 without texts)."""

    @classmethod
    def from_documents(cls, documents: Iterable[Sequence[str]]) -> "IdfTable":
        """The table of some documents, each given as its words (repeats
        count towards its length, once towards the document frequencies)."""
        doc_freq: Counter = Counter()
        n_docs = total = 0
        for words in documents:
            n_docs += 1
            total += len(words)
            doc_freq.update(set(words))
        return cls(n_docs, dict(doc_freq), total / n_docs if n_docs else 0.0)

    def idf(self, word: str) -> float:
        """BM25's IDF, ``ln(1 + (N - n + 0.5) / (n + 0.5))`` for a word in n
        of the N documents (Lucene's form: positive even for a word in most
        documents, where Robertson's ``ln((N - n + 0.5) / (n + 0.5))`` turns
        negative and would make sharing a common word count against a pair)."""
        n = self.doc_freq.get(word, 0)
        return math.log(1.0 + (self.n_docs - n + 0.5) / (n + 0.5))


class IdfCounter:
    """Counts the distinct candidates (second texts) of pair docs, one doc
    at a time, into an ``IdfTable``: a candidate paired with several queries
    is one document, as in the index a search engine would build over the
    candidates. One pass over a corpus that is read as a stream."""

    def __init__(self, pair_key: str = DEFAULT_PAIR_KEY) -> None:
        self.pair_key = pair_key
        self._seen: Set[str] = set()
        self._words: List[List[str]] = []

    def add(self, doc: Doc) -> None:
        """Count one pair doc's candidate (if not counted before)."""
        _, _, s2, e2 = get_pair_bounds(doc, self.pair_key)
        span = doc[s2:e2]
        if span.text not in self._seen:
            self._seen.add(span.text)
            self._words.append(content_words(span))

    def table(self) -> IdfTable:
        """RETURNS (IdfTable): The table of the candidates counted so far."""
        return IdfTable.from_documents(self._words)


def candidate_idf(docs: Iterable[Doc], pair_key: str = DEFAULT_PAIR_KEY) -> IdfTable:
    """The ``IdfTable`` of the pair docs' distinct candidates (second texts)
    (``IdfCounter``).

    docs (Iterable[Doc]): Pair docs.
    pair_key (str): The name of the pair in the docs.
    RETURNS (IdfTable): The table.
    """
    counter = IdfCounter(pair_key)
    for doc in docs:
        counter.add(doc)
    return counter.table()


def shared_words(first: Sequence[str], second: Sequence[str]) -> float:
    """How many distinct words the two word lists share."""
    return float(len(set(first) & set(second)))


def idf_shared_words(
    first: Sequence[str], second: Sequence[str], idf: IdfTable
) -> float:
    """The sum of the IDFs (``IdfTable.idf``) of the distinct shared words."""
    # Summed in sorted order: a set's order changes with the process's hash
    # seed, and float sums with the order, so the score would differ in its
    # last bits from one process to the next.
    return sum(idf.idf(w) for w in sorted(set(first) & set(second)))


def bm25(
    query: Sequence[str],
    candidate: Sequence[str],
    idf: IdfTable,
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> float:
    """Okapi BM25 of a candidate for a query: the sum over the query's
    distinct words w of ``idf(w) * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
    len / avg_len))``, tf the count of w in the candidate, len its length and
    avg_len the table's mean length.

    query (Sequence[str]): The query's words (``content_words``).
    candidate (Sequence[str]): The candidate's words.
    idf (IdfTable): The collection's IDF and mean length.
    k1 (float): Term-frequency saturation (>= 0; 0: presence only).
    b (float): Length normalisation, 0 (none) to 1 (full).
    RETURNS (float): The score (>= 0).
    RAISES (ValueError): For k1 < 0 or b outside [0, 1].
    """
    check_bm25_settings(k1=k1, b=b)
    tf = Counter(candidate)
    if not tf:
        return 0.0
    length = len(candidate) / idf.avg_len if idf.avg_len else 1.0
    norm = k1 * (1.0 - b + b * length)
    return sum(  # in sorted order, as idf_shared_words (the same in every process)
        idf.idf(w) * tf[w] * (k1 + 1.0) / (tf[w] + norm)
        for w in sorted(set(query))
        if w in tf
    )


def check_bm25_settings(*, k1: float, b: float) -> None:
    """RAISES (ValueError): For k1 < 0 or b outside [0, 1]."""
    if not k1 >= 0.0:
        raise ValueError(f"BM25's k1 must be 0 or more, got {k1}.")
    if not 0.0 <= b <= 1.0:
        raise ValueError(f"BM25's b must be between 0 and 1, got {b}.")


__all__ = [
    "BM25_B",
    "BM25_K1",
    "STOP_WORDS",
    "IdfCounter",
    "IdfTable",
    "bm25",
    "candidate_idf",
    "check_bm25_settings",
    "content_words",
    "idf_shared_words",
    "is_content_word",
    "pair_content_words",
    "shared_words",
]
