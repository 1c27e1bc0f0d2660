"""Trivial baselines of pair classification, scored like a model, and the
check that a model beats them (``spacy attn evaluate``,
``scripts/check_metrics.py``): the majority class, and four lexical scores of
the two texts (``spacy_attn.lexical``), each ranking the pairs and
thresholded as a classifier.

* ``word overlap``: the Jaccard similarity of the two texts' sets of
  lower-cased words, stopwords included (``word_overlap``).
* ``shared words``: how many distinct content words the two texts share
  (``lexical.content_words``: lower-cased, without punctuation, symbols and
  spaCy's English stop words).
* ``IDF shared words``: the shared content words, each weighted by its IDF.
* ``BM25``: Okapi BM25 of the second text (the candidate) for the first
  (the query), with ``k1`` and ``b`` (defaults 1.2 and 0.75).

A binary task with a positive label thresholds each score where the positive
class's F1 is best; any other task (NLI's three labels, say) cuts the score
into as many intervals as there are labels, each called one label, where
accuracy is best (``best_intervals``). Both are chosen on the evaluated pairs
themselves: the baseline's best case, which a model must beat.

IDF and BM25's mean candidate length come from a ``lexical.IdfTable``: by
default that of the evaluated pairs' distinct candidates, or of a training
file's.
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc
from spacy.training import Example

from .lexical import (
    BM25_B,
    BM25_K1,
    STOP_WORDS,
    IdfTable,
    bm25,
    candidate_idf,
    check_bm25_settings,
    idf_shared_words,
    pair_content_words,
    shared_words,
)
from .pairs import DEFAULT_PAIR_KEY, get_pair_bounds
from .pipeline.classifier import rescale_to_threshold
from .scorers import best_threshold, pair_classifier_score

MAJORITY = "majority class"
OVERLAP = "word overlap"
SHARED = "shared words"
IDF_SHARED = "IDF shared words"
BM25 = "BM25"
# The lexical baselines, in the order of the tables.
LEXICAL = (OVERLAP, SHARED, IDF_SHARED, BM25)

# Metric key -> column title, in the order of the tables.
COLUMNS = {
    "pair_acc": "accuracy",
    "pair_macro_f": "macro-F",
    "pair_pos_p": "pos-P",
    "pair_pos_r": "pos-R",
    "pair_pos_f": "pos-F",
    "pair_map": "MAP",
    "pair_mrr": "MRR",
    "pair_p_at_1": "P@1",
    # A text classifier's (``evaluation.evaluate_texts``).
    "cats_acc": "accuracy",
    "cats_macro_f": "macro-F",
}


def majority_baseline(label_counts: Dict[str, int]) -> Dict[str, Any]:
    """Accuracy and macro-F of always predicting the most frequent label.

    label_counts (Dict[str, int]): Label -> number of pairs.
    RETURNS (Dict[str, Any]): ``label``, ``acc`` and ``macro_f`` (0-1): the
        label's share m and 2m / (1 + m) divided by the number of labels.
    RAISES (ValueError): Without labelled pairs.
    """
    total = sum(label_counts.values())
    if not total:
        raise ValueError(
            "No labelled test pairs: cannot compute the majority baseline."
        )
    label = max(sorted(label_counts), key=lambda k: label_counts[k])
    m = label_counts[label] / total
    return {"label": label, "acc": m, "macro_f": 2 * m / (1 + m) / len(label_counts)}


def word_overlap(doc: Doc, pair_key: str = DEFAULT_PAIR_KEY) -> float:
    """Jaccard similarity of the two texts' sets of lowercase words
    (punctuation and spaces left out); 0 when both are empty."""
    s1, e1, s2, e2 = get_pair_bounds(doc, pair_key)
    first = {t.lower_ for t in doc[s1:e1] if not (t.is_punct or t.is_space)}
    second = {t.lower_ for t in doc[s2:e2] if not (t.is_punct or t.is_space)}
    union = first | second
    return len(first & second) / len(union) if union else 0.0


def lexical_scores(
    docs: Sequence[Doc],
    *,
    names: Sequence[str] = LEXICAL,
    pair_key: str = DEFAULT_PAIR_KEY,
    idf: Optional[IdfTable] = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> Dict[str, numpy.ndarray]:
    """Each lexical baseline's score of each pair doc (higher: the second
    text answers the first better).

    docs (Sequence[Doc]): Pair docs.
    names (Sequence[str]): The baselines, of ``LEXICAL``.
    pair_key (str): The name of the pair in the docs.
    idf (Optional[IdfTable]): IDF and mean length (default: ``candidate_idf``
        of the docs).
    k1, b (float): BM25's settings.
    RETURNS (Dict[str, numpy.ndarray]): float64 scores (one per doc) by name.
    RAISES (ValueError): For an unknown name or BM25 setting.
    """
    unknown = [name for name in names if name not in LEXICAL]
    if unknown:
        raise ValueError(
            f"Unknown lexical baseline {unknown[0]!r}: choose from {list(LEXICAL)}."
        )
    check_bm25_settings(k1=k1, b=b)
    docs = list(docs)
    table = idf
    if table is None:  # the candidates' table, only where a baseline reads it
        needed = IDF_SHARED in names or BM25 in names
        table = candidate_idf(docs, pair_key) if needed else IdfTable(0, {}, 0.0)
    words = [pair_content_words(doc, pair_key) for doc in docs]
    scorers = {
        OVERLAP: lambda i: word_overlap(docs[i], pair_key),
        SHARED: lambda i: shared_words(*words[i]),
        IDF_SHARED: lambda i: idf_shared_words(*words[i], table),
        BM25: lambda i: bm25(*words[i], table, k1=k1, b=b),
    }
    return {
        name: numpy.asarray([scorers[name](i) for i in range(len(docs))], dtype="f8")
        for name in names
    }


def best_intervals(
    scores: Union[Sequence[float], numpy.ndarray],
    golds: Sequence[str],
    labels: Sequence[str],
) -> Tuple[List[float], List[str]]:
    """The classifier of one score that cuts it into at most ``len(labels)``
    intervals, each called one label, and gets the most items right.

    A cut lies halfway between two neighbouring distinct scores, so equal
    scores always get the same label. Dynamic programming over the distinct
    scores in order, with the interval's number and label as the state: each
    score's items join the current interval or start the next one, under
    another label (two neighbouring intervals of one label are one interval).
    Of equally good classifiers it keeps the one with fewer intervals, then
    the labels first in sorted order (so the caller's label order does not
    change the result).

    scores (Union[Sequence[float], numpy.ndarray]): One score per item.
    golds (Sequence[str]): Each item's gold label, of ``labels``.
    labels (Sequence[str]): The labels an interval may be called.
    RETURNS (Tuple[List[float], List[str]]): The cuts, ascending, and the
        label of each interval (one more than the cuts): a score s is called
        ``called[numpy.searchsorted(cuts, s, side="right")]``.
    RAISES (ValueError): Without items, or for a gold label not in labels.
    """
    labels = sorted(labels)
    index = {label: i for i, label in enumerate(labels)}
    unknown = sorted({g for g in golds if g not in index})
    if unknown or not len(golds):
        raise ValueError(
            f"best_intervals needs items with gold labels of {list(labels)} "
            f"(got {len(golds)} items; unknown labels: {unknown})."
        )
    values, group = numpy.unique(numpy.asarray(scores, dtype="f8"), return_inverse=True)
    counts = numpy.zeros((len(values), len(labels)), dtype="i8")
    numpy.add.at(counts, (group.ravel(), numpy.asarray([index[g] for g in golds])), 1)
    n_int, n_lab = len(labels), len(labels)
    # best[j][l]: most items right up to this score, which lies in interval
    # j called l; came[g][j][l]: the label of interval j - 1 where interval
    # j starts at score g, else -1 (the score joined interval j).
    none = -1
    best = [[none] * n_lab for _ in range(n_int)]
    best[0] = counts[0].tolist()
    came = numpy.full((len(values), n_int, n_lab), -1, dtype="i2")
    for g in range(1, len(values)):
        row = counts[g].tolist()
        new = [[none] * n_lab for _ in range(n_int)]
        for j in range(n_int):
            for lab in range(n_lab):
                value, origin = best[j][lab], -1
                if j:
                    for prev in range(n_lab):
                        if prev != lab and best[j - 1][prev] > value:
                            value, origin = best[j - 1][prev], prev
                if value > none:
                    new[j][lab], came[g, j, lab] = value + row[lab], origin
        best = new
    j, lab = min(
        ((j, lab) for j in range(n_int) for lab in range(n_lab)),
        key=lambda state: (-best[state[0]][state[1]], state[0], state[1]),
    )
    cuts: List[float] = []
    called = [labels[lab]]
    for g in range(len(values) - 1, 0, -1):
        prev = int(came[g, j, lab])
        if prev >= 0:
            cuts.append(float((values[g - 1] + values[g]) / 2))
            j, lab = j - 1, prev
            called.append(labels[lab])
    return cuts[::-1], called[::-1]


def _gold_class(eg: Example) -> Optional[str]:
    gold = [label for label, value in eg.reference.cats.items() if value == 1.0]
    return gold[0] if gold else None


def _with_cats(examples: List[Example], cats: Sequence[Dict[str, float]]) -> List:
    """The examples with a copy of each predicted doc holding ``cats``."""
    out = []
    for eg, c in zip(examples, cats):
        predicted = eg.predicted.copy()
        predicted.cats = dict(c)
        out.append(Example(predicted, eg.reference))
    return out


def baseline_scores(
    examples: Sequence[Example],
    *,
    labels: Sequence[str],
    positive_label: Optional[str] = None,
    pair_key: str = DEFAULT_PAIR_KEY,
    idf: Optional[IdfTable] = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> Dict[str, Dict[str, Any]]:
    """The scores (``pair_classifier_score``) of the trivial baselines on the
    examples, so that they compare with the model's directly.

    Majority class: the examples' most frequent gold class for every pair,
    with the same score for each (so it ranks at random: tied scores are
    scored at their expectation, ``scorers.ranking_scores``). The lexical
    baselines (``LEXICAL``, see ``lexical_scores``), for two labels with a
    positive one: each ranks the pairs by its score, and calls a pair
    positive from the threshold that maximizes the positive class's F1 on
    these same examples (the baseline's best case), saved
    under ``threshold`` (on the baseline's own scale). For any other two or
    more labels: each cuts its score into intervals called one label each,
    where accuracy on these same examples is best (``best_intervals``),
    saved under ``thresholds`` and ``classes``.

    examples (Sequence[Example]): Gold examples with pair docs.
    labels (Sequence[str]): The model's labels (exclusive classes).
    positive_label (Optional[str]): The positive label of a binary task.
    pair_key (str): The name of the pair in the docs.
    idf (Optional[IdfTable]): IDF and mean length of the lexical baselines
        (default: ``candidate_idf`` of the examples).
    k1, b (float): BM25's settings.
    RETURNS (Dict[str, Dict[str, Any]]): Scores by baseline name.
    """
    labelled = [eg for eg in examples if _gold_class(eg) is not None]
    counts: Dict[str, int] = {}
    for eg in labelled:
        gold = _gold_class(eg)
        assert gold is not None
        counts[gold] = counts.get(gold, 0) + 1
    if not counts:
        return {}
    kw: Dict[str, Any] = {"labels": list(labels), "positive_label": positive_label}
    label = majority_baseline(counts)["label"]
    majority = {other: float(other == label) for other in labels}
    results = {
        MAJORITY: pair_classifier_score(
            _with_cats(labelled, [majority] * len(labelled)), **kw
        )
    }
    if len(labels) < 2:
        return results
    docs = [eg.reference for eg in labelled]
    scores = lexical_scores(docs, pair_key=pair_key, idf=idf, k1=k1, b=b)
    if positive_label is None or len(labels) != 2 or positive_label not in labels:
        classes = [str(_gold_class(eg)) for eg in labelled]  # each has one
        for name, values in scores.items():
            cuts, called = best_intervals(values, classes, labels)
            pred = [called[i] for i in numpy.searchsorted(cuts, values, side="right")]
            cats = [{other: float(other == p) for other in labels} for p in pred]
            results[name] = pair_classifier_score(_with_cats(labelled, cats), **kw)
            results[name].update(thresholds=cuts, classes=called)
        return results
    negative = [other for other in labels if other != positive_label][0]
    golds = [eg.reference.cats.get(positive_label, 0.0) == 1.0 for eg in labelled]
    for name, values in scores.items():
        threshold, _ = best_threshold(values.tolist(), golds)
        pos = thresholded(values, threshold)
        cats = [{positive_label: float(p), negative: 1.0 - float(p)} for p in pos]
        results[name] = pair_classifier_score(_with_cats(labelled, cats), **kw)
        results[name]["threshold"] = threshold
    return results


def lexical_settings(
    idf: IdfTable, *, source: str, k1: float = BM25_K1, b: float = BM25_B
) -> Dict[str, Any]:
    """How the lexical baselines were computed, for a scores file.

    idf (IdfTable): The table they used.
    source (str): Where its candidates came from (a file name).
    k1, b (float): BM25's settings.
    RETURNS (Dict[str, Any]): ``words`` (which words count), ``stop_words``
        (how many), ``idf_from``, ``idf_documents`` (distinct candidates),
        ``bm25_k1`` and ``bm25_b``.
    """
    return {
        "words": (
            "lower-cased tokens with a letter or digit, without spaCy's English "
            "stop words (spacy.lang.en.stop_words.STOP_WORDS)"
        ),
        "stop_words": len(STOP_WORDS),
        "idf_from": source,
        "idf_documents": idf.n_docs,
        "bm25_k1": k1,
        "bm25_b": b,
    }


def describe_lexical(settings: Dict[str, Any]) -> str:
    """One line on ``lexical_settings``, for a command's output."""
    return (
        f"Lexical baselines: {settings['words']}; IDF from the "
        f"{settings['idf_documents']:,} distinct candidates of "
        f"{settings['idf_from']}; BM25 k1 {settings['bm25_k1']:g}, b "
        f"{settings['bm25_b']:g}."
    )


def pair_baselines(
    examples: Sequence[Example],
    idf_examples: Iterable[Example],
    *,
    labels: Sequence[str],
    positive_label: Optional[str] = None,
    pair_key: str = DEFAULT_PAIR_KEY,
    idf_source: str = "the evaluated pairs",
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> Dict[str, Any]:
    """What ``spacy attn evaluate`` reports beside a pair classifier's scores:
    ``baselines``, the trivial baselines' scores (``baseline_scores``) by
    name, and, where the lexical ones apply (two labels or more),
    ``lexical_baselines``, how they were computed (``lexical_settings``).

    examples (Sequence[Example]): The gold examples scored.
    idf_examples (Iterable[Example]): Those whose distinct candidates give
        the IDF (``examples`` themselves, or a training file's: what a
        deployed system would have indexed); read only where needed.
    labels, positive_label, pair_key: As ``baseline_scores``.
    idf_source (str): Where ``idf_examples`` come from (a file name).
    k1, b (float): BM25's settings.
    RETURNS (Dict[str, Any]): ``baselines`` and maybe ``lexical_baselines``.
    """
    lexical = len(labels) >= 2
    idf = None
    if lexical:
        idf = candidate_idf((eg.reference for eg in idf_examples), pair_key)
    out: Dict[str, Any] = {
        "baselines": baseline_scores(
            examples,
            labels=labels,
            positive_label=positive_label,
            pair_key=pair_key,
            idf=idf,
            k1=k1,
            b=b,
        )
    }
    if idf is not None and BM25 in out["baselines"]:
        out["lexical_baselines"] = lexical_settings(idf, source=idf_source, k1=k1, b=b)
    return out


def thresholded(scores: numpy.ndarray, threshold: Optional[float]) -> numpy.ndarray:
    """Non-negative scores as probabilities in [0, 1], in the same order,
    ``threshold`` mapped to 0.5 (None, when nothing is positive: 0.5): so a
    score at or above it is called positive and the ranking is unchanged."""
    # x / (1 + x) maps [0, inf) into [0, 1) monotonically, which
    # rescale_to_threshold needs; BM25 and the counts are unbounded.
    t = 0.5 if threshold is None else threshold / (1.0 + threshold)
    return rescale_to_threshold(scores / (1.0 + scores), t)


def primary_metrics(scores: Dict[str, Any]) -> List[str]:
    """The metrics a model must beat the baselines on: MAP when the pairs
    have groups, else the positive class's F1 with a positive label, else
    accuracy and macro-F (a text classifier's: ``cats_acc``)."""
    if scores.get("pair_map") is not None:
        return ["pair_map"]
    if scores.get("pair_pos_f") is not None:
        return ["pair_pos_f"]
    if scores.get("cats_acc") is not None:
        return ["cats_acc", "cats_macro_f"]
    return ["pair_acc", "pair_macro_f"]


def score_table(rows: Dict[str, Dict[str, Any]], keys: Sequence[str]) -> List[str]:
    """Lines of a table: one row per name, one column per metric key (0-1
    values with 4 decimals; "-" where a row has no value)."""
    lines = [f"{'':>16} " + " ".join(f"{COLUMNS.get(k, k):>9}" for k in keys)]
    for name, scores in rows.items():
        cells = [
            f"{scores[k]:9.4f}" if scores.get(k) is not None else f"{'-':>9}"
            for k in keys
        ]
        lines.append(f"{name:>16} " + " ".join(cells))
    return lines


def baseline_failure(
    model: Dict[str, Any],
    baselines: Dict[str, Dict[str, Any]],
    *,
    min_margin: float = 0.0,
) -> Optional[str]:
    """One line saying where the model does not beat a baseline by more than
    ``min_margin`` on its primary metrics (None when it beats them all): per
    metric, the strongest baseline it misses, then the others by name."""
    parts = []
    for key in primary_metrics(model):
        value = float(model.get(key) or 0.0)
        misses = [
            (float(scores[key]), name)
            for name, scores in baselines.items()
            if scores.get(key) is not None
            and not value > float(scores[key]) + min_margin
        ]
        if not misses:
            continue
        # Strongest first: with five baselines the line stays readable.
        misses.sort(key=lambda miss: -miss[0])
        (base, name), others = misses[0], [n for _, n in misses[1:]]
        also = f", also {', '.join(others)}" if others else ""
        parts.append(f"{COLUMNS.get(key, key)} {value:.4f} vs {name} {base:.4f}{also}")
    if not parts:
        return None
    detail = "; ".join(parts)
    margin = f" by more than {min_margin:.2f}" if min_margin else ""
    return (
        f"The model does not beat the trivial baselines{margin} on this data "
        f"({detail}): it has not learned the task."
    )


__all__ = [
    "BM25",
    "COLUMNS",
    "IDF_SHARED",
    "LEXICAL",
    "MAJORITY",
    "OVERLAP",
    "SHARED",
    "baseline_failure",
    "baseline_scores",
    "best_intervals",
    "describe_lexical",
    "lexical_scores",
    "lexical_settings",
    "majority_baseline",
    "pair_baselines",
    "primary_metrics",
    "score_table",
    "thresholded",
    "word_overlap",
]
