"""The registered scorer, on hand-checked cases."""

import pytest
import spacy
from spacy.training import Example

from spacy_attn import make_pair
from spacy_attn.scorers import pair_classifier_score


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
