"""The sentence-level overlap measures of spacy-attn.DecomposableAttention.v5
(beyond the paper), and starting a v5 model from a v4 one."""

import numpy
import pytest
import spacy
import torch
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn import make_pair
from spacy_attn.models.decomposable_attention import (
    N_LEXICAL,
    DecomposableAttention,
    lexical_features,
)
from spacy_attn.start_weights import HEAD_LAYERS, copy_weights

from .util import make_examples, pair_config


def da_config(version: int, **settings) -> dict:
    config = pair_config("tok2vec")
    config["model"]["@architectures"] = f"spacy-attn.DecomposableAttention.v{version}"
    config["model"].update(settings)
    return config


def module_of(model) -> DecomposableAttention:
    return model.get_ref("attention").shims[0]._model


def same_matrix(ids_a, ids_b, null=False):
    """The exact-match matrix of one pair of id lists (as the module builds
    it: no match on padding, and a NULL row / column of no matches)."""
    same = torch.tensor([[[a == b for b in ids_b] for a in ids_a]])
    if null:
        same = torch.nn.functional.pad(same, (1, 0, 1, 0))
    return same


@pytest.mark.parametrize("null", [False, True])
def test_lexical_features_of_a_pair(null):
    # "the cat sat" / "the cat ran away": two shared words, one shared bigram.
    same = same_matrix([1, 2, 3], [1, 2, 4, 5], null=null)
    got = lexical_features(same, torch.tensor([3]), torch.tensor([4]))[0]
    want = [2 / 3, 2 / 4, 2 / 4, 1 / 2, 1 / 3, 1 / 3, 3 / 4]
    assert got.shape == (N_LEXICAL,)
    torch.testing.assert_close(got, torch.tensor(want))


def test_lexical_features_identical_disjoint_and_empty_texts():
    ids = [1, 2, 3, 4]
    full = lexical_features(same_matrix(ids, ids), torch.tensor([4]), torch.tensor([4]))
    torch.testing.assert_close(full, torch.ones(1, N_LEXICAL))
    none = lexical_features(
        same_matrix(ids, [5, 6]), torch.tensor([4]), torch.tensor([2])
    )
    torch.testing.assert_close(none[0, :6], torch.zeros(6))
    assert none[0, 6] == pytest.approx(0.5)
    # An empty first text: its padding row matches nothing, every measure 0.
    empty = lexical_features(
        torch.zeros(1, 1, 2, dtype=torch.bool), torch.tensor([0]), torch.tensor([2])
    )
    torch.testing.assert_close(empty, torch.zeros(1, N_LEXICAL))


def test_registry_resolves_v5_and_its_output_reads_the_features():
    build = registry.architectures.get("spacy-attn.DecomposableAttention.v5")
    model = build(hidden_width=16, dropout=0.0)
    module = module_of(model)
    assert module.lexical_features and module.exact_match and module.null_token
    assert model.get_ref("output_layer").get_dim("nI") == 16 + N_LEXICAL
    plain = build(hidden_width=16, dropout=0.0, lexical_features=False)
    assert not module_of(plain).lexical_features
    assert plain.get_ref("output_layer").get_dim("nI") == 16
    # The features need the token ids even without the exact-match signal.
    bare = build(hidden_width=16, exact_match=False)
    assert bare.has_ref("exact_match") and not module_of(bare).exact_match
    A, B = torch.randn(1, 2, 8), torch.randn(1, 3, 8)
    lengths = (torch.tensor([2]), torch.tensor([3]))
    with pytest.raises(ValueError, match="pass the token ids"):
        DecomposableAttention(8, 6, 3, lexical_features=True)(
            A, lengths[0], B, lengths[1]
        )


def pipeline(version: int, examples_rows, **settings):
    nlp = spacy.blank("en")
    # The torch weights are drawn when the model is built.
    fix_random_seed(0)
    nlp.add_pipe("attn_pair_classifier", config=da_config(version, **settings))
    examples = make_examples(nlp, examples_rows)
    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    return nlp, examples


def predictions(nlp, pairs):
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    return numpy.asarray([[d.cats[k] for k in sorted(d.cats)] for d in nlp.pipe(docs)])


def test_v5_without_features_computes_what_v4_computes(snli_rows):
    v4, _ = pipeline(4, snli_rows[:6])
    v5, _ = pipeline(5, snli_rows[:6], lexical_features=False)
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[:6]]
    numpy.testing.assert_array_equal(predictions(v5, pairs), predictions(v4, pairs))


def test_a_v4_start_fills_every_v5_weight_but_the_head(snli_rows):
    """What `init-config --init-from V4_START --new-head` relies on for a v5
    config: the features hold no weights, so only the output layer is new."""
    v4, _ = pipeline(4, snli_rows[:6])
    v5, _ = pipeline(5, snli_rows[:6])
    source = v4.get_pipe("attn_pair_classifier").model
    target = v5.get_pipe("attn_pair_classifier").model
    report = copy_weights(source, target)
    assert report["copied"]
    assert all(
        label.split("/")[0].split(":")[1] in HEAD_LAYERS for label in report["kept"]
    )
    assert report["kept"], "the output layer (wider in v5) is the v5 model's own"
    assert module_of(target).match_bias == module_of(source).match_bias


def test_features_change_the_prediction_and_get_no_gradient_of_their_own(snli_rows):
    nlp, examples = pipeline(5, snli_rows[:6])
    model = nlp.get_pipe("attn_pair_classifier").model
    W = model.get_ref("output_layer").get_param("W")
    assert W.shape[1] == 32 + N_LEXICAL
    pairs = [("a cat sat on the mat", "a cat sat on the mat"), ("a cat", "dogs bark")]
    before = predictions(nlp, pairs)
    W[:, -N_LEXICAL:] = 0.0  # the columns that read the features
    model.get_ref("output_layer").set_param("W", W)
    after = predictions(nlp, pairs)
    assert not numpy.allclose(before, after)
    # Training steps run and keep the output finite.
    optimizer = nlp.resume_training()
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    assert numpy.isfinite(predictions(nlp, pairs)).all()
