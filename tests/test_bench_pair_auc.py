"""benchmarks/pair_auc.py's statistics on hand-checked scores."""

import numpy
import pytest

from .util import load_script


@pytest.fixture(scope="module")
def pa():
    return load_script("benchmarks/pair_auc.py")


def test_roc_auc_counts_ordered_pairs_and_halves_ties(pa):
    gold = numpy.array([1, 1, 0, 0])
    assert pa.roc_auc(numpy.array([0.9, 0.8, 0.2, 0.1]), gold) == 1.0
    assert pa.roc_auc(numpy.array([0.1, 0.2, 0.8, 0.9]), gold) == 0.0
    # Positive 0.5 ties negative 0.5: of the 4 (positive, negative) pairs,
    # 0.9 beats both, 0.5 beats 0.1 and ties 0.5 -> (2 + 1 + 0.5) / 4.
    assert pa.roc_auc(numpy.array([0.9, 0.5, 0.5, 0.1]), gold) == 0.875
    with pytest.raises(ValueError, match="both classes"):
        pa.roc_auc(numpy.array([0.3, 0.4]), numpy.array([1, 1]))


def test_best_thresholds_scan_every_score(pa):
    gold = numpy.array([1, 1, 0, 1, 0])
    scores = numpy.array([0.9, 0.7, 0.6, 0.4, 0.1])
    best = pa.best_thresholds(scores, gold)
    # t = 0.4: 4 said positive, 3 right -> P 0.75, R 1.0, F 6/7, accuracy 0.8.
    assert best["pos_f"] == pytest.approx(6 / 7)
    assert best["acc_at_f"] == pytest.approx(0.8)
    # No threshold gets above 0.8 accuracy; t = 0.7 ties it with F 0.8, and
    # the tie keeps the lower threshold, the first one scanned.
    assert best["acc"] == pytest.approx(0.8)
    assert best["pos_f_at_acc"] == pytest.approx(6 / 7)
