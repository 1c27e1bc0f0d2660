"""Trivial baselines of pair classification (the majority class, word overlap
between the two texts), scored like a model, and the check that a model beats
them (``spacy attn evaluate``, ``scripts/check_metrics.py``)."""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example

from .pairs import DEFAULT_PAIR_KEY, get_pair_bounds
from .pipeline.classifier import rescale_to_threshold
from .scorers import best_threshold, pair_classifier_score

MAJORITY = "majority class"
OVERLAP = "word overlap"

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
) -> Dict[str, Dict[str, Any]]:
    """The scores (``pair_classifier_score``) of the trivial baselines on the
    examples, so that they compare with the model's directly.

    Majority class: the examples' most frequent gold class for every pair,
    with the same score for each (so it ranks nothing: ties rank positives
    last). Word overlap, for two labels with a positive one: P(positive) =
    ``word_overlap``, positive from the threshold that maximizes the
    positive class's F1 on these same examples (the baseline's best case).

    examples (Sequence[Example]): Gold examples with pair docs.
    labels (Sequence[str]): The model's labels (exclusive classes).
    positive_label (Optional[str]): The positive label of a binary task.
    pair_key (str): The name of the pair in the docs.
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
    if positive_label is None or len(labels) != 2 or positive_label not in labels:
        return results
    overlap = numpy.asarray([word_overlap(eg.reference, pair_key) for eg in labelled])
    golds = [eg.reference.cats.get(positive_label, 0.0) == 1.0 for eg in labelled]
    threshold, _ = best_threshold(overlap.tolist(), golds)
    pos = rescale_to_threshold(overlap, 0.5 if threshold is None else threshold)
    negative = [other for other in labels if other != positive_label][0]
    cats = [{positive_label: float(p), negative: 1.0 - float(p)} for p in pos]
    results[OVERLAP] = pair_classifier_score(_with_cats(labelled, cats), **kw)
    return results


def primary_metrics(scores: Dict[str, Any]) -> List[str]:
    """The metrics a model must beat the baselines on: MAP when the pairs
    have groups, else the positive class's F1 with a positive label, else
    accuracy and macro-F."""
    if scores.get("pair_map") is not None:
        return ["pair_map"]
    if scores.get("pair_pos_f") is not None:
        return ["pair_pos_f"]
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
    ``min_margin`` on its primary metrics (None when it beats them all)."""
    misses: List[Tuple[str, str, float, float]] = []
    for key in primary_metrics(model):
        value = float(model.get(key) or 0.0)
        for name, scores in baselines.items():
            base = scores.get(key)
            if base is not None and not value > float(base) + min_margin:
                misses.append((COLUMNS.get(key, key), name, value, float(base)))
    if not misses:
        return None
    detail = "; ".join(f"{m} {v:.4f} vs {n} {b:.4f}" for m, n, v, b in misses)
    margin = f" by more than {min_margin:.2f}" if min_margin else ""
    return (
        f"The model does not beat the trivial baselines{margin} on this data "
        f"({detail}): it has not learned the task."
    )


__all__ = [
    "COLUMNS",
    "MAJORITY",
    "OVERLAP",
    "baseline_failure",
    "baseline_scores",
    "majority_baseline",
    "primary_metrics",
    "score_table",
    "word_overlap",
]
