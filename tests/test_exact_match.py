"""The exact-match signal of spacy-attn.DecomposableAttention.v4 (beyond the
paper): a bias on the attention logits of identical tokens, and a "has a
match in the other text" input to the compare network."""

import numpy
import pytest
import spacy
import torch
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn import make_pair
from spacy_attn.layers.exact_match import token_match_ids
from spacy_attn.models.decomposable_attention import DecomposableAttention

from .util import make_examples, pair_config


def v4_config(**settings) -> dict:
    config = pair_config("tok2vec")
    config["model"]["@architectures"] = "spacy-attn.DecomposableAttention.v4"
    config["model"].update(settings)
    return config


def module_of(model) -> DecomposableAttention:
    return model.get_ref("attention").shims[0]._model


def predictions(nlp, pairs):
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    return numpy.asarray([[d.cats[k] for k in sorted(d.cats)] for d in nlp.pipe(docs)])


def test_registry_resolves_v4_with_exact_match_by_default():
    build = registry.architectures.get("spacy-attn.DecomposableAttention.v4")
    model = build(hidden_width=16, dropout=0.0)
    module = module_of(model)
    assert module.exact_match and module.null_token
    assert model.has_ref("exact_match")
    plain = build(hidden_width=16, dropout=0.0, exact_match=False)
    assert not module_of(plain).exact_match
    assert not plain.has_ref("exact_match")
    with pytest.raises(ValueError, match="match_attr must be a token attribute"):
        build(match_attr="SPELLING")


def test_token_match_ids():
    nlp = spacy.blank("en")
    docs = [
        make_pair(nlp, "Who wrote Hamlet ?", "hamlet was written by Shakespeare"),
        make_pair(nlp, "", "Who"),
    ]
    ids_a, ids_b = token_match_ids(docs, "pair")
    assert ids_a.shape == (2, 4) and ids_b.shape == (2, 5)
    # "Hamlet" == "hamlet" by LOWER; padding (-1 / -2) never equals anything.
    assert ids_a[0, 2] == ids_b[0, 0]
    assert len(set(ids_a[0].tolist()) & set(ids_b[0].tolist())) == 1
    assert (ids_a[1] == -1).all() and ids_b[1, 0] == ids_a[0, 0]
    assert (ids_b[1, 1:] == -2).all()
    orth_a, orth_b = token_match_ids(docs, "pair", attr="orth")
    assert orth_a[0, 2] != orth_b[0, 0]


def match_batch(nI=8):
    """Two pairs with the ids of 'a b c' / 'c d', 'a' / 'a a' (+ padding)."""
    gen = torch.Generator().manual_seed(1)
    A = torch.randn(2, 3, nI, generator=gen)
    B = torch.randn(2, 2, nI, generator=gen)
    ids_a = torch.tensor([[1, 2, 3], [1, -1, -1]])
    ids_b = torch.tensor([[3, 4], [1, 1]])
    return A, torch.tensor([3, 1]), B, torch.tensor([2, 2]), ids_a, ids_b


@pytest.mark.parametrize("null_token", [False, True])
def test_match_bias_moves_attention_onto_identical_tokens(null_token):
    torch.manual_seed(0)
    module = DecomposableAttention(
        8, 6, 3, dropout=0.0, null_token=null_token, exact_match=True
    )
    A, la, B, lb, ids_a, ids_b = match_batch()
    start = int(null_token)
    with torch.no_grad():
        module.match_bias.fill_(0.0)
        flat = module.attention(A, la, B, lb, ids_a, ids_b)
        module.match_bias.fill_(5.0)
        peaked = module.attention(A, la, B, lb, ids_a, ids_b)
    # Token "c" (row 2) matches column 0 of the first pair's second text.
    assert peaked[0, start + 2, start] > flat[0, start + 2, start] + 0.3
    # "b" (row 1) matches nothing: its row changes by no more than noise.
    torch.testing.assert_close(peaked[0, start + 1], flat[0, start + 1])
    with pytest.raises(ValueError, match="pass the token ids"):
        module(A, la, B, lb)


def test_match_feature_and_bias_get_gradients_and_padding_is_masked():
    torch.manual_seed(0)
    module = DecomposableAttention(8, 6, 3, dropout=0.0, exact_match=True)
    A, la, B, lb, ids_a, ids_b = match_batch()
    out = module(A, la, B, lb, ids_a, ids_b)
    out.logsumexp(-1).sum().backward()
    assert module.match_bias.grad is not None and module.match_bias.grad != 0
    # The "has a match" column of G's first layer gets a gradient.
    assert module.G.layers[1].weight.grad[:, -1].abs().sum() > 0
    # Padded ids that happen to be equal across the texts change nothing.
    odd_a, odd_b = ids_a.clone(), ids_b.clone()
    odd_a[1, 1:] = 7
    odd_b[0, :] = torch.tensor([3, 4])
    torch.testing.assert_close(module(A, la, B, lb, odd_a, odd_b), out.detach())
    with torch.no_grad():
        plain = module(A, la, B, lb, ids_a, torch.tensor([[8, 9], [8, 9]]))
    assert not torch.allclose(plain, out.detach())


@pytest.fixture(scope="module")
def trained(snli_rows):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=v4_config())
    examples = make_examples(nlp, snli_rows[:12])
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    losses = []
    for _ in range(80):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["attn_pair_classifier"])
    return nlp, losses


def test_overfit_and_round_trip(trained, snli_rows, tmp_path):
    nlp, losses = trained
    assert losses[0] > 0.5
    assert losses[-1] < 0.05, losses[-5:]
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[:12]]
    pairs.append(("A dog runs.", "A dog moves."))
    before = predictions(nlp, pairs)
    copy = spacy.blank("en")
    copy.add_pipe("attn_pair_classifier", config=v4_config())
    copy.from_bytes(nlp.to_bytes())
    numpy.testing.assert_array_equal(predictions(copy, pairs), before)
    nlp.to_disk(tmp_path / "nlp")
    numpy.testing.assert_array_equal(
        predictions(spacy.load(tmp_path / "nlp"), pairs), before
    )


def test_batch_equals_single_and_short_inputs(trained, snli_rows):
    nlp, _ = trained
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[12:24]]
    pairs += [("", "A person."), ("A man plays.", ""), ("", ""), ("Dogs", "dogs")]
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    batched = [d.cats for d in nlp.pipe([d.copy() for d in docs], batch_size=64)]
    for doc, cats in zip(docs, batched):
        single = nlp(doc.copy()).cats
        assert numpy.isfinite(list(cats.values())).all()
        for label in cats:
            assert cats[label] == pytest.approx(single[label], abs=1e-5)


def test_alignment_sees_the_match(snli_rows):
    """``pipe.alignment`` reads the exact-match signal from the docs: with a
    large match bias, "guitar" attends to "guitar". (The bias is set, not
    trained: what a tiny trained fixture attends to depends on the
    machine's floating point.)"""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("attn_pair_classifier", config=v4_config())
    fix_random_seed(0)
    nlp.initialize(lambda: make_examples(nlp, snli_rows[:4]))
    with torch.no_grad():
        module_of(pipe.model).match_bias.fill_(50.0)
    docs = [make_pair(nlp, "A man plays a guitar.", "A guitar is played.")]
    (weights,) = pipe.alignment(docs)
    assert weights.shape == (6, 5)
    # "guitar" (first text, token 4) puts its largest weight on "guitar";
    # "A" (token 0, "a" by LOWER) on "A" (token 0).
    assert int(weights[4].argmax()) == 1
    assert int(weights[0].argmax()) == 0
