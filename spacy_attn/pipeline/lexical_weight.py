"""The interpolation of a binary pair classifier's score with BM25
(``attn_pair_classifier``'s ``lexical_weight``; docs/pair_classifier.md, "IDF
features and BM25"): the positive label's probability becomes
``sigmoid(logit(p) + weight * bm25)``, bm25 the normalised BM25 of the
second text for the first (``layers.lexical_scores.bm25_scores``, in [0, 1]).

A weight "chosen on dev" is picked as the binary threshold is: at the first
scoring after training updates (``spacy train``'s dev evaluation), the grid
weight with the best MAP over the dev examples' groups.
"""

from typing import Hashable, Optional, Sequence

import numpy

from ..scorers import ranking_scores

# The weights tried on dev. A trained model's logits span about +-10, the
# normalised BM25 [0, 1]: past 8 BM25 alone would decide, which the 0-weight
# end of the grid and evaluate's BM25 row already cover.
WEIGHT_GRID = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
# Probabilities are clipped this far from 0 and 1 before their logit, so
# that a saturated float32 probability stays finite and keeps its order.
EPS = 1e-7


def logit(probs: numpy.ndarray) -> numpy.ndarray:
    """The logits (float64) of some probabilities, clipped to [EPS, 1 - EPS]."""
    p = numpy.clip(numpy.asarray(probs, dtype="f8"), EPS, 1.0 - EPS)
    return numpy.log(p) - numpy.log1p(-p)


def interpolate(
    positive: numpy.ndarray, bm25: numpy.ndarray, weight: float
) -> numpy.ndarray:
    """``sigmoid(logit(positive) + weight * bm25)``, float64.

    positive (numpy.ndarray): The model's P(positive label), (n,).
    bm25 (numpy.ndarray): The normalised BM25 of each pair, (n,).
    weight (float): The weight of BM25 (0: the model's probability).
    RETURNS (numpy.ndarray): (n,) probabilities.
    """
    z = logit(positive) + weight * numpy.asarray(bm25, dtype="f8")
    return 1.0 / (1.0 + numpy.exp(-z))


def pick_weight(
    positive: numpy.ndarray,
    bm25: numpy.ndarray,
    golds: Sequence[bool],
    groups: Sequence[Optional[Hashable]],
    *,
    grid: Sequence[float] = WEIGHT_GRID,
) -> Optional[float]:
    """The weight of ``grid`` whose interpolation ranks the pairs best within
    their groups (MAP; the smaller weight on a tie).

    positive (numpy.ndarray): The model's P(positive label), (n,).
    bm25 (numpy.ndarray): The normalised BM25 of each pair, (n,).
    golds (Sequence[bool]): Whether each pair is positive.
    groups (Sequence[Optional[Hashable]]): Each pair's group (query) id;
        pairs without one are left out.
    grid (Sequence[float]): The weights to try.
    RETURNS (Optional[float]): The weight, or None where no group has a
        positive pair (nothing to rank).
    """
    keep = [i for i, group in enumerate(groups) if group is not None]
    best: Optional[float] = None
    best_map = -1.0
    for weight in sorted(grid):
        probs = interpolate(positive[keep], bm25[keep], weight)
        items = [(groups[i], float(p), bool(golds[i])) for i, p in zip(keep, probs)]
        score = ranking_scores(items)["map"]
        if score is not None and score > best_map + 1e-12:
            best, best_map = weight, score
    return best


__all__ = ["WEIGHT_GRID", "interpolate", "logit", "pick_weight"]
