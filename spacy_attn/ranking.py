"""Score string pairs into an array and rank candidate texts for a query with
an ``attn_pair_classifier`` pipeline, in the manner of a cross-encoder, or
with a lexical baseline (BM25, ...: ``spacy_attn.baselines``) to compare."""

from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence

import numpy
from spacy.language import Language

from .baselines import LEXICAL, lexical_scores
from .lexical import BM25_B, BM25_K1, IdfTable
from .pairs import DEFAULT_PAIR_KEY, make_pairs
from .pipeline.lookup import find_component
from .pipeline.pair_classifier import PairClassifier


class PairScoreError(ValueError):
    """A pipeline cannot score pairs as asked: its pair classifier has no
    labels yet, the label asked for is not one of them, or ranking needs a
    label that was not given. The message is one line and says what to do."""


@dataclass(frozen=True)
class RankedCandidate:
    """One candidate of ``rank_candidates``' answer."""

    index: int
    """The candidate's position in the list passed in."""
    score: float
    """The ranking label's probability for (query, candidate)."""
    text: str
    """The candidate text."""


def _pair_classifier(nlp: Language, component: Optional[str]) -> PairClassifier:
    # RAISES ComponentLookupError (a ValueError) naming the components.
    name, _ = find_component(nlp, component, tasks=("pair",))
    pipe = nlp.get_pipe(name)
    assert isinstance(pipe, PairClassifier)  # what find_component checked
    return _trained(pipe)


def _trained(pipe: PairClassifier) -> PairClassifier:
    if not pipe.labels:
        raise PairScoreError(
            f"The pair classifier {pipe.name!r} has no labels: train the pipeline "
            f"(or initialize the component) before scoring pairs."
        )
    return pipe


def _check_label(pipe: PairClassifier, label: str) -> str:
    if label not in pipe.labels:
        raise PairScoreError(
            f"Unknown label {label!r}: the labels of the pair classifier "
            f"{pipe.name!r} are {list(pipe.labels)}."
        )
    return label


def ranking_label(pipe: PairClassifier, label: Optional[str] = None) -> str:
    """The label whose probability ranks candidates: ``label`` if given, else
    the positive label of a binary classifier, else the only label of a
    single-score classifier.

    pipe (PairClassifier): The pair classifier.
    label (Optional[str]): The label asked for.
    RETURNS (str): The label.
    RAISES (PairScoreError): If the classifier has no labels, ``label`` is
        unknown, or it is not given while the classifier has several labels
        and no positive one.
    """
    _trained(pipe)
    if label is not None:
        return _check_label(pipe, label)
    single = _single_label(pipe)
    if single is not None:
        return single
    raise PairScoreError(
        f"The pair classifier {pipe.name!r} has {len(pipe.labels)} labels "
        f"{list(pipe.labels)} and no positive label: name the one to rank by "
        f"(label= / --label)."
    )


def _single_label(pipe: PairClassifier) -> Optional[str]:
    # The positive label of a binary classifier (cfg["positive_label"], set
    # at initialization from a corpus read with positive_label), or the one
    # label of a single-score classifier.
    positive = pipe.cfg.get("positive_label")
    if positive is not None and positive in pipe.labels:
        return positive
    return pipe.labels[0] if len(pipe.labels) == 1 else None


def score_pairs(
    nlp: Language,
    pairs: Iterable[Sequence[str]],
    *,
    label: Optional[str] = None,
    component: Optional[str] = None,
    batch_size: int = 256,
    n_process: int = 1,
    baseline: Optional[str] = None,
    idf: Optional[IdfTable] = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> numpy.ndarray:
    """Score ``(first, second)`` string pairs with a pipeline's pair
    classifier, like a cross-encoder's ``predict``. The pairs go through
    ``nlp.pipe`` (every component of the pipeline runs, e.g. a shared
    transformer) and the scores are the ``doc.cats`` it writes. With a
    ``baseline``, the pairs are only tokenized (``nlp.make_doc``) and scored
    by that lexical baseline instead, to compare the model with.

    nlp (Language): A pipeline with an ``attn_pair_classifier``.
    pairs (Iterable[Sequence[str]]): ``(first, second)`` string pairs;
        consumed lazily.
    label (Optional[str]): Return only this label's probabilities.
    component (Optional[str]): Name of the pair classifier, if the pipeline
        has several.
    batch_size (int): Pairs per ``nlp.pipe`` batch.
    n_process (int): Processes for ``nlp.pipe`` (on the CPU; each gets one
        torch thread).
    baseline (Optional[str]): Score with this lexical baseline, one of
        ``spacy_attn.baselines.LEXICAL`` ("word overlap", "shared words",
        "IDF shared words", "BM25"), instead of the model.
    idf (Optional[IdfTable]): The baseline's IDF and mean candidate length
        (default: those of the pairs' distinct second texts).
    k1, b (float): BM25's settings.
    RETURNS (numpy.ndarray): float32. Shape ``(n_pairs,)`` with ``label``,
        for a binary classifier (its positive label) and for a single-score
        one (one label, ``exclusive_classes = false``): that label's score in
        ``doc.cats``. Otherwise ``(n_pairs, n_labels)``, one column per label
        in the order of ``nlp.get_pipe(component).labels``. With a
        ``baseline``: its score, shape ``(n_pairs,)``.
    RAISES (ComponentLookupError): If the pipeline has no pair classifier,
        or several and no ``component``.
    RAISES (PairScoreError): If the classifier has no labels or ``label`` is
        not one of them; if ``baseline`` is unknown, or given with ``label``;
        for a BM25 setting out of range.
    """
    if baseline is not None:
        if label is not None:
            raise PairScoreError(
                f"A lexical baseline ({baseline!r}) scores each pair once: it "
                f"has no label to choose ({label!r} given)."
            )
        return baseline_pair_scores(nlp, pairs, baseline, idf=idf, k1=k1, b=b)
    pipe = _pair_classifier(nlp, component)
    single = _check_label(pipe, label) if label is not None else _single_label(pipe)
    columns = [single] if single is not None else list(pipe.labels)
    docs = nlp.pipe(
        make_pairs(nlp, pairs, pair_key=pipe.pair_key),
        batch_size=batch_size,
        n_process=n_process,
    )
    rows = [[doc.cats[column] for column in columns] for doc in docs]
    scores = numpy.asarray(rows, dtype="float32").reshape((len(rows), len(columns)))
    return scores[:, 0] if len(columns) == 1 else scores


def baseline_pair_scores(
    nlp: Language,
    pairs: Iterable[Sequence[str]],
    baseline: str,
    *,
    idf: Optional[IdfTable] = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> numpy.ndarray:
    """``score_pairs`` with a lexical ``baseline``: the pairs tokenized by
    ``nlp`` and scored by ``spacy_attn.baselines.lexical_scores``.

    RETURNS (numpy.ndarray): float32, shape ``(n_pairs,)``.
    RAISES (PairScoreError): For an unknown baseline or BM25 setting.
    """
    if baseline not in LEXICAL:
        raise PairScoreError(
            f"Unknown baseline {baseline!r}: choose one of {list(LEXICAL)}."
        )
    docs = list(make_pairs(nlp.make_doc, pairs, pair_key=DEFAULT_PAIR_KEY))
    try:
        scores = lexical_scores(docs, names=[baseline], idf=idf, k1=k1, b=b)
    except ValueError as err:  # a BM25 setting out of range
        raise PairScoreError(str(err)) from err
    return scores[baseline].astype("float32")


def rank_candidates(
    nlp: Language,
    query: str,
    candidates: Sequence[str],
    *,
    top_k: Optional[int] = None,
    label: Optional[str] = None,
    component: Optional[str] = None,
    batch_size: int = 256,
    n_process: int = 1,
    baseline: Optional[str] = None,
    idf: Optional[IdfTable] = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> List[RankedCandidate]:
    """Rank candidate texts for a query, like a cross-encoder's ``rank``:
    each pair ``(query, candidate)`` is scored (``score_pairs``) and the
    candidates are sorted by the ranking label's probability, best first.

    nlp (Language): A pipeline with an ``attn_pair_classifier``.
    query (str): The first text of every pair (question, query, ...).
    candidates (Sequence[str]): The second texts (sentences, passages, ...).
    top_k (Optional[int]): Keep the best ``top_k`` (None: all).
    label (Optional[str]): The label whose probability ranks; needed unless
        the classifier is binary (its positive label ranks) or single-score.
    component (Optional[str]): Name of the pair classifier, if several.
    batch_size (int): Pairs per ``nlp.pipe`` batch.
    n_process (int): Processes for ``nlp.pipe``.
    baseline (Optional[str]): Rank by this lexical baseline instead of the
        model (``score_pairs``): e.g. "BM25", its IDF and mean length from
        the candidates unless ``idf`` is given.
    idf (Optional[IdfTable]): The baseline's IDF table.
    k1, b (float): BM25's settings.
    RETURNS (List[RankedCandidate]): ``(index, score, text)`` per kept
        candidate, highest score first; equal scores keep the input order.
        An empty ``candidates`` gives ``[]``.
    RAISES (ComponentLookupError): As ``score_pairs``.
    RAISES (PairScoreError): If ``label`` is unknown or needed, or ``top_k``
        is below 1.
    """
    if not isinstance(query, str):
        raise TypeError(f"rank_candidates: query must be a string, got {query!r}.")
    if isinstance(candidates, str):
        raise TypeError(
            "rank_candidates: candidates must be a sequence of strings, not one string."
        )
    if top_k is not None and top_k < 1:
        raise PairScoreError(f"top_k must be 1 or more, got {top_k}.")
    texts = list(candidates)
    pairs = ((query, text) for text in texts)
    if baseline is not None:
        scores = score_pairs(
            nlp, pairs, label=label, baseline=baseline, idf=idf, k1=k1, b=b
        )
    else:
        pipe = _pair_classifier(nlp, component)
        scores = score_pairs(
            nlp,
            pairs,
            label=ranking_label(pipe, label),
            component=pipe.name,
            batch_size=batch_size,
            n_process=n_process,
        )
    # A stable sort of the negated scores: ties keep the candidates' order.
    order = numpy.argsort(-scores, kind="stable")[:top_k]
    return [RankedCandidate(int(i), float(scores[i]), texts[i]) for i in order]


__all__ = [
    "PairScoreError",
    "RankedCandidate",
    "baseline_pair_scores",
    "rank_candidates",
    "ranking_label",
    "score_pairs",
]
