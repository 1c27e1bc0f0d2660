"""The registered scorer, on hand-checked cases."""

import itertools

import numpy
import pytest
import spacy
from spacy.training import Example

from spacy_attn import make_pair
from spacy_attn.pairs import GROUP_ID_KEY
from spacy_attn.readers import cats_for
from spacy_attn.scorers import (
    best_threshold,
    expected_group_metrics,
    make_pair_ranking_scorer,
    pair_classifier_score,
    pair_ranking_score,
    ranking_scores,
)


def _eg(nlp, pred, gold):
    doc = make_pair(nlp, "a", "b")
    doc.cats = pred
    ref = make_pair(nlp, "a", "b")
    ref.cats = gold
    return Example(doc, ref)


def test_exclusive_scores():
    nlp = spacy.blank("en")
    labels = ["entailment", "neutral", "contradiction"]
    egs = [
        _eg(
            nlp,
            {"entailment": 0.7, "neutral": 0.2, "contradiction": 0.1},
            {"entailment": 1.0},
        ),
        _eg(
            nlp,
            {"entailment": 0.6, "neutral": 0.3, "contradiction": 0.1},
            {"neutral": 1.0},
        ),
        _eg(
            nlp,
            {"entailment": 0.1, "neutral": 0.2, "contradiction": 0.7},
            {"contradiction": 1.0},
        ),
        _eg(
            nlp,
            {"entailment": 0.1, "neutral": 0.8, "contradiction": 0.1},
            {"neutral": 1.0},
        ),
        _eg(
            nlp, {"entailment": 0.1, "neutral": 0.8, "contradiction": 0.1}, {}
        ),  # no gold: skipped
    ]
    s = pair_classifier_score(egs, labels=labels)
    assert s["pair_acc"] == pytest.approx(3 / 4)
    # entailment: tp 1, fp 1 -> p .5 r 1 f .667; neutral: tp 1 fn 1 -> p 1 r .5 f .667;
    # contradiction 1/1/1
    assert s["pair_f_per_type"]["entailment"] == pytest.approx(
        {"p": 0.5, "r": 1.0, "f": 2 / 3}
    )
    assert s["pair_f_per_type"]["neutral"] == pytest.approx(
        {"p": 1.0, "r": 0.5, "f": 2 / 3}
    )
    assert s["pair_macro_f"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    assert s["pair_macro_p"] == pytest.approx((0.5 + 1 + 1) / 3)


def test_multi_label_scores():
    nlp = spacy.blank("en")
    egs = [
        _eg(nlp, {"dup": 0.9}, {"dup": 1.0}),
        _eg(nlp, {"dup": 0.4}, {"dup": 1.0}),
        _eg(nlp, {"dup": 0.6}, {"dup": 0.0}),
        _eg(nlp, {"dup": 0.1}, {"dup": 0.0}),
    ]
    s = pair_classifier_score(egs, labels=["dup"], multi_label=True, threshold=0.5)
    assert s["pair_acc"] == 0.5
    assert s["pair_f_per_type"]["dup"] == pytest.approx({"p": 0.5, "r": 0.5, "f": 0.5})
    s = pair_classifier_score(egs, labels=["dup"], multi_label=True, threshold=0.35)
    assert s["pair_acc"] == 0.75


def test_no_gold_gives_none():
    nlp = spacy.blank("en")
    s = pair_classifier_score([_eg(nlp, {"a": 1.0, "b": 0.0}, {})], labels=["a", "b"])
    assert s["pair_acc"] is None


# (group, P(yes), gold) per pair; group "d" has no positive and is skipped.
RANKED = [
    ("a", 0.9, "no"),
    ("a", 0.8, "yes"),
    ("a", 0.7, "yes"),
    ("b", 0.3, "yes"),
    ("b", 0.2, "no"),
    ("c", 0.5, "yes"),  # tied with a negative: either order, half the time
    ("c", 0.5, "no"),
    ("d", 0.1, "no"),
]


def _ranked_examples(with_groups=True):
    nlp = spacy.blank("en")
    egs = []
    for group, p, gold in RANKED:
        eg = _eg(nlp, {"yes": p, "no": 1 - p}, cats_for(gold, "yes"))
        if with_groups:
            eg.reference.user_data[GROUP_ID_KEY] = group
        egs.append(eg)
    return egs


def test_ranking_metrics_hand_computed():
    s = ranking_scores((g, p, gold == "yes") for g, p, gold in RANKED)
    # AP: a (1/2 + 2/3) / 2 = 7/12, b 1, c (1 + 1/2) / 2; RR: 1/2, 1, 3/4;
    # P@1: 0, 1, 1/2.
    assert s["map"] == pytest.approx((7 / 12 + 1 + 3 / 4) / 3)
    assert s["mrr"] == pytest.approx((1 / 2 + 1 + 3 / 4) / 3)
    assert s["p_at_1"] == pytest.approx(1.5 / 3)
    assert s["n_groups"] == 3
    scores = pair_classifier_score(
        _ranked_examples(), labels=["yes", "no"], positive_label="yes"
    )
    assert scores["pair_map"] == pytest.approx(s["map"])
    assert scores["pair_mrr"] == pytest.approx(s["mrr"])
    assert scores["pair_p_at_1"] == pytest.approx(s["p_at_1"])
    # Positive class at the argmax (a 0.5 tie goes to "yes", the first
    # label): predicted for .9 .8 .7 .5 .5, of which 3 of the 4 positives.
    assert scores["pair_pos_p"] == pytest.approx(3 / 5)
    assert scores["pair_pos_r"] == pytest.approx(3 / 4)
    assert scores["pair_score"] == scores["pair_pos_f"]
    ranking = pair_ranking_score(
        _ranked_examples(), labels=["yes", "no"], positive_label="yes"
    )
    assert ranking["pair_score"] == pytest.approx(s["map"])


def test_ranking_needs_groups():
    scores = pair_classifier_score(
        _ranked_examples(with_groups=False), labels=["yes", "no"], positive_label="yes"
    )
    assert scores["pair_map"] is None and scores["pair_pos_f"] is not None
    with pytest.raises(ValueError, match="group id"):
        pair_ranking_score(
            _ranked_examples(with_groups=False),
            labels=["yes", "no"],
            positive_label="yes",
        )
    assert make_pair_ranking_scorer() is pair_ranking_score


def test_best_threshold():
    t, f = best_threshold([0.9, 0.8, 0.4, 0.3, 0.1], [True, False, True, False, False])
    # Cut below 0.4: tp 2, fp 1 -> F 0.8 (cut below 0.9: F 2/3).
    assert t == pytest.approx(0.35) and f == pytest.approx(0.8)
    assert best_threshold([0.5, 0.2], [False, False]) == (None, 0.0)


def _brute_force(pairs):
    """AP, RR and P@1 averaged over every order of the items that keeps the
    scores descending (all orders of the tied ones)."""
    orders = [
        o
        for o in itertools.permutations(pairs)
        if all(o[i][0] >= o[i + 1][0] for i in range(len(o) - 1))
    ]
    totals = numpy.zeros(3)
    for order in orders:
        ranked = [positive for _, positive in order]
        hits, precisions = 0, []
        for rank, positive in enumerate(ranked, start=1):
            if positive:
                hits += 1
                precisions.append(hits / rank)
        totals += [
            sum(precisions) / len(precisions),
            1 / (ranked.index(True) + 1),
            float(ranked[0]),
        ]
    return totals / len(orders)


@pytest.mark.parametrize("seed", range(12))
def test_expected_metrics_equal_the_average_over_tie_orders(seed):
    rng = numpy.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    scores = rng.integers(0, 3, size=n).astype(float)  # many ties
    golds = rng.random(n) < 0.4
    golds[int(rng.integers(n))] = True
    pairs = list(zip(scores.tolist(), golds.tolist()))
    got = expected_group_metrics(pairs)
    numpy.testing.assert_allclose(got, _brute_force(pairs), rtol=1e-12)
