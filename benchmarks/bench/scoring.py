"""Metrics computed by the benchmarks themselves: trainable parameter
counts, accuracy and macro-F, Spearman's rank correlation, mean and sd over
seeds, the official SQuAD v1.1 metric on a subset of questions, and word
overlap with its threshold tuned on dev."""

import statistics
from typing import Any, Dict, List, Sequence

from . import datafiles


def count_params(model, *, thinc: bool = True, torch: bool = True) -> int:
    """Trainable parameters of a Thinc model: its Thinc params and the torch
    parameters of its PyTorch shims (a fixed vectors table is neither)."""
    total = 0
    for node in model.walk():
        if thinc:
            total += sum(
                int(node.get_param(n).size)
                for n in node.param_names
                if node.has_param(n)
            )
        if torch:
            total += sum(
                int(p.numel()) for shim in node.shims for p in shim._model.parameters()
            )
    return total


def accuracy_macro_f(
    golds: Sequence[str], preds: Sequence[str], labels: Sequence[str]
) -> Dict[str, Any]:
    """Accuracy, macro-F over ``labels`` and per-label P / R / F of single-label
    predictions."""
    per_label = {}
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(golds, preds))
        fp = sum(g != label and p == label for g, p in zip(golds, preds))
        fn = sum(g == label and p != label for g, p in zip(golds, preds))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        per_label[label] = {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}
    return {
        "acc": sum(g == p for g, p in zip(golds, preds)) / len(golds)
        if golds
        else None,
        "macro_f": sum(v["f"] for v in per_label.values()) / len(labels)
        if labels
        else None,
        "per_label": per_label,
        "n": len(golds),
    }


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of two series (ties get their average
    rank, as ``scipy.stats.spearmanr`` does): the Pearson correlation of the
    ranks."""
    import numpy

    def ranks(values: Sequence[float]) -> "numpy.ndarray":
        values = numpy.asarray(values, dtype="float64")
        order = numpy.argsort(values, kind="mergesort")
        r = numpy.empty(len(values), dtype="float64")
        r[order] = numpy.arange(1, len(values) + 1)
        # Average the ranks of tied values.
        _, inverse, counts = numpy.unique(
            values, return_inverse=True, return_counts=True
        )
        sums = numpy.bincount(inverse, weights=r)
        return sums[inverse] / counts[inverse]

    rx, ry = ranks(x), ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / numpy.sqrt((rx * rx).sum() * (ry * ry).sum()))


def mean_sd(values: Sequence[float]) -> Dict[str, Any]:
    """Mean, sample standard deviation (None for one value) and n of the
    per-seed values of a metric."""
    values = [v for v in values if v is not None]
    if not values:
        return {"mean": None, "sd": None, "n": 0}
    return {
        "mean": statistics.mean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else None,
        "n": len(values),
    }


def squad_scores(data: Dict[str, Any], preds: Dict[str, str]) -> Dict[str, float]:
    """The official SQuAD v1.1 metric (EM, F1: 0-100) on the predicted
    questions only."""
    from spacy_attn.squad import squad_evaluate

    return squad_evaluate(datafiles.squad_subset(data, preds), preds)


def overlap_dev_tuned(
    splits: Dict[str, List[Dict[str, Any]]],
    text_cols: Sequence[str],
    label_col: str,
    positive: str,
) -> Dict[str, Any]:
    """Test scores of ``spacy attn evaluate``'s word-overlap baseline
    (``spacy_attn.baselines.word_overlap`` of the pair doc) with its threshold
    tuned on dev, as the models' thresholds are, instead of on test.

    splits (Dict[str, List[Dict[str, Any]]]): ``dev`` and ``test`` rows.
    text_cols (Sequence[str]): The two text columns.
    label_col (str): The label column (compared as text with ``positive``).
    positive (str): The positive label.
    RETURNS (Dict[str, Any]): accuracy, macro-F, positive P / R / F and the
        threshold, under spacy-attn's score names.
    """
    import spacy

    from spacy_attn import make_pair
    from spacy_attn.baselines import word_overlap
    from spacy_attn.scorers import best_threshold, prf

    nlp = spacy.blank("en")
    a, b = text_cols
    overlap, golds = {}, {}
    for split in ("dev", "test"):
        rows = splits[split]
        overlap[split] = [word_overlap(make_pair(nlp, r[a], r[b])) for r in rows]
        golds[split] = [str(r[label_col]) == positive for r in rows]
    threshold, _ = best_threshold(overlap["dev"], golds["dev"])
    t = 0.0 if threshold is None else threshold
    pairs = [(x >= t, g) for x, g in zip(overlap["test"], golds["test"])]
    pos = prf(
        sum(p and g for p, g in pairs),
        sum(p and not g for p, g in pairs),
        sum(g and not p for p, g in pairs),
    )
    neg = prf(
        sum(not p and not g for p, g in pairs),
        sum(g and not p for p, g in pairs),
        sum(p and not g for p, g in pairs),
    )
    return {
        "pair_acc": sum(p == g for p, g in pairs) / len(pairs),
        "pair_macro_f": (pos["f"] + neg["f"]) / 2,
        "pair_pos_p": pos["p"],
        "pair_pos_r": pos["r"],
        "pair_pos_f": pos["f"],
        "threshold": threshold,
    }
