"""The listwise ranking loss and the batcher that keeps groups whole."""

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import registry

from spacy_attn import make_pair
from spacy_attn.group_batches import batch_by_group
from spacy_attn.pairs import GROUP_ID_KEY
from spacy_attn.pipeline.ranking_loss import group_softmax_loss

LABELS = ["no", "yes"]
LABELS3 = ["entailment", "neutral", "contradiction"]


def example(nlp, group, gold):
    doc = make_pair(nlp, "a question", "a sentence")
    if group is not None:
        doc.user_data[GROUP_ID_KEY] = group
    doc.cats = {"yes": 1.0} if gold else {"no": 1.0, "yes": 0.0}
    return Example(doc.copy(), doc)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_batches_hold_whole_groups_in_first_seen_order(nlp):
    groups = ["a", "b", "a", "c", None, "b", "c", "c"]
    egs = [example(nlp, g, i % 2) for i, g in enumerate(groups)]
    batches = list(batch_by_group(egs, size=3))
    keys = [[eg.reference.user_data.get(GROUP_ID_KEY) for eg in b] for b in batches]
    assert keys == [["a", "a", "b", "b"], ["c", "c", "c"], [None]]
    # A schedule of sizes, as spaCy's batchers take, and a bounded buffer
    # (a group that straddles two buffers is split there).
    assert [len(b) for b in batch_by_group(egs, size=iter([1, 8]))] == [2, 6]
    windows = batch_by_group(egs, size=1, buffer=4)
    assert [len(b) for b in windows] == [2, 1, 1, 1, 1, 2]
    batcher = registry.batchers.get("spacy-attn.batch_by_group.v1")(size=2)
    assert sum(len(b) for b in batcher(egs)) == len(egs)
    with pytest.raises(ValueError, match="buffer"):
        registry.batchers.get("spacy-attn.batch_by_group.v1")(size=2, buffer=-1)


def loss_of(egs, logits):
    """The loss of two-way softmax logits, as the component would see them."""
    e = numpy.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return group_softmax_loss(egs, probs, labels=LABELS, positive_label="yes")


def test_loss_is_a_softmax_over_each_group_with_its_gradient(nlp):
    egs = [example(nlp, g, y) for g, y in [("q", 1), ("q", 0), ("q", 0), ("r", 0)]]
    egs.append(example(nlp, None, 1))  # no group: takes no part
    logits = numpy.random.RandomState(0).normal(size=(5, 2))
    loss, d = loss_of(egs, logits)
    z = logits[:3, 1] - logits[:3, 0]
    assert loss == pytest.approx(-numpy.log(numpy.exp(z[0]) / numpy.exp(z).sum()))
    # Only group q has both kinds; the gradient matches finite differences.
    assert not d[3:].any()
    for i in range(3):
        for k in range(2):
            step = numpy.zeros_like(logits)
            step[i, k] = 1e-5
            numeric = (
                loss_of(egs, logits + step)[0] - loss_of(egs, logits - step)[0]
            ) / 2e-5
            assert d[i, k] == pytest.approx(numeric, abs=1e-4)


def test_loss_is_zero_without_a_group_to_rank(nlp):
    egs = [example(nlp, "q", 1), example(nlp, "r", 0), example(nlp, None, 0)]
    loss, d = loss_of(egs, numpy.zeros((3, 2)))
    assert loss == 0.0 and not d.any()
    with pytest.raises(ValueError, match="two exclusive labels"):
        group_softmax_loss(
            [example(nlp, "q", 1), example(nlp, "q", 0)],
            numpy.full((2, 3), 1 / 3),
            labels=["no", "yes", "maybe"],
            positive_label="yes",
        )


def pipeline(ranking_loss):
    from .test_idf_features import v6_pipeline

    return v6_pipeline(component={"ranking_loss": ranking_loss})


def test_update_adds_the_weighted_listwise_loss():
    plain, examples = pipeline(0.0)
    ranked, _ = pipeline(2.0)
    pipe = ranked.get_pipe("attn_pair_classifier")
    assert pipe.cfg["ranking_loss"] == 2.0
    # The same weights: the first update's loss differs by exactly the
    # weighted listwise loss of the scores before the step.
    scores = pipe.model.predict([eg.predicted for eg in examples])
    listwise, _ = group_softmax_loss(
        examples,
        pipe.model.ops.to_numpy(scores),
        labels=pipe.labels,
        positive_label="yes",
    )
    assert listwise > 0
    base = plain.update(examples, drop=0.0)["attn_pair_classifier"]
    both = ranked.update(examples, drop=0.0)["attn_pair_classifier"]
    assert both == pytest.approx(base + 2.0 * listwise, rel=1e-4)
    with pytest.raises(ValueError, match="ranking_loss must be 0 or more"):
        pipeline(-1.0)


def test_ranking_loss_on_a_three_way_classifier_fails_loudly():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("attn_pair_classifier", config={"ranking_loss": 1.0})
    examples = []
    for i, label in enumerate(["entailment", "neutral", "contradiction"]):
        doc = make_pair(nlp, f"a premise {i}", "a hypothesis")
        doc.user_data[GROUP_ID_KEY] = "q1"
        doc.cats = {name: float(name == label) for name in LABELS3}
        examples.append(Example(doc.copy(), doc))
    nlp.initialize(lambda: examples)
    assert not pipe.is_binary
    with pytest.raises(ValueError, match="not a binary classifier"):
        nlp.update(examples)
