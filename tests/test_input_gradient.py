"""The DCN skips the gradient of its input vectors when the tok2vec learns
nothing from it (FrozenVectors without OOV buckets), and trains the same."""

import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn.layers._util import takes_gradient

from .test_span_qa import qa_examples, train
from .util import add_random_vectors, squad_pairs, tok2vec_config

WIDTH = 16


def vectors(oov_buckets):
    return {
        "@architectures": "spacy-attn.FrozenVectors.v1",
        "key_attr": "LOWER",
        "oov_buckets": oov_buckets,
        "normalize": False,
    }


def dcn_config(tok2vec):
    return {
        "@architectures": "spacy-attn.DynamicCoattention.v4",
        "hidden_width": 8,
        "pool_size": 2,
        "max_iterations": 2,
        "dropout": 0.2,
        "window": 60,
        "stride": 30,
        "input_width": WIDTH,
        "tok2vec": tok2vec,
    }


def build(tok2vec):
    return registry.resolve({"model": dcn_config(tok2vec)})["model"]


@pytest.mark.parametrize(
    "tok2vec,expected",
    [
        (vectors(0), False),
        (vectors(5), True),
        ({**vectors(0), "@architectures": "spacy-attn.TrainableVectors.v1"}, True),
        (tok2vec_config(WIDTH), True),
    ],
)
def test_input_gradient_follows_the_tok2vec(tok2vec, expected):
    model = build(tok2vec)
    assert takes_gradient(model.get_ref("tok2vec")) is expected
    torch_layer = model.get_ref("coattention")
    assert torch_layer.attrs["input_gradient"] is expected
    # The converter the torch layer runs: its float inputs ask for a
    # gradient in training only when the tok2vec takes one.
    X = (
        numpy.zeros((2, 3, WIDTH), dtype="float32"),
        numpy.asarray([3, 2], dtype="int32"),
        numpy.zeros((2, 5, WIDTH), dtype="float32"),
        numpy.asarray([5, 4], dtype="int32"),
    )
    convert = torch_layer.attrs["convert_inputs"]
    args = convert(torch_layer, X, True)[0].args
    assert [args[0].requires_grad, args[2].requires_grad] == [expected, expected]
    assert not convert(torch_layer, X, False)[0].args[0].requires_grad


def train_fixed_vectors(input_gradient, steps=3):
    """Weights and losses of a DCN on fixed vectors after a few updates, its
    torch layer's input_gradient set as given."""
    questions = squad_pairs(2)
    nlp = spacy.blank("en")
    add_random_vectors(
        nlp, [q.question + " " + q.context for q in questions], width=WIDTH
    )
    fix_random_seed(0)
    component = nlp.add_pipe("attn_span_qa", config={"model": dcn_config(vectors(0))})
    component.model.get_ref("coattention").attrs["input_gradient"] = input_gradient
    losses = train(nlp, qa_examples(nlp, questions), steps)
    module = component.model.get_ref("coattention").shims[0]._model
    weights = [p.detach().numpy().copy() for p in module.parameters()]
    return losses, weights


def test_skipped_input_gradient_trains_the_same_weights():
    losses, weights = train_fixed_vectors(False)
    losses_with, weights_with = train_fixed_vectors(True)
    assert losses == losses_with
    assert len(weights) == len(weights_with)
    for a, b in zip(weights, weights_with):
        numpy.testing.assert_array_equal(a, b)
    # It trained: the weights moved from their start.
    _, start = train_fixed_vectors(False, steps=0)
    assert any(not numpy.array_equal(a, b) for a, b in zip(weights, start))
