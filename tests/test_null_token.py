"""The NULL token of spacy-attn.DecomposableAttention.v3 (Parikh et al. 2016):
a learned token before each text, so that a word can align to nothing."""

import numpy
import pytest
import spacy
import torch
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn import make_pair
from spacy_attn.layers.soft_alignment import NULL_TOKEN_LABEL, has_null_token
from spacy_attn.models.decomposable_attention import DecomposableAttention

from .util import make_examples, pair_config


def v3_config(*, null_token: bool = True, intra: bool = False) -> dict:
    config = pair_config("tok2vec", intra=intra)
    config["model"]["@architectures"] = "spacy-attn.DecomposableAttention.v3"
    config["model"]["null_token"] = null_token
    return config


def module_of(pipe) -> DecomposableAttention:
    return pipe.model.get_ref("attention").shims[0]._model


def train(nlp, examples, n_iter):
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    losses = []
    for _ in range(n_iter):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["attn_pair_classifier"])
    return losses


def predictions(nlp, pairs):
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    return numpy.asarray([[d.cats[k] for k in sorted(d.cats)] for d in nlp.pipe(docs)])


def batch(lengths_a, lengths_b, nI=8, fill=0.0):
    """Random token vectors with the given lengths; padding set to ``fill``."""
    gen = torch.Generator().manual_seed(1)
    la, lb = torch.tensor(lengths_a), torch.tensor(lengths_b)
    A = torch.randn(len(la), max(lengths_a), nI, generator=gen)
    B = torch.randn(len(lb), max(lengths_b), nI, generator=gen)
    for X, lengths in ((A, la), (B, lb)):
        for i, n in enumerate(lengths.tolist()):
            X[i, n:] = fill
    return A, la, B, lb


@pytest.fixture(scope="module")
def trained(snli_rows):
    """A v3 model (NULL token on, its default) overfit on 12 SNLI pairs."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=v3_config())
    examples = make_examples(nlp, snli_rows[:12])
    return nlp, train(nlp, examples, n_iter=80)


def test_registry_resolves_v3_with_null_by_default():
    build = registry.architectures.get("spacy-attn.DecomposableAttention.v3")
    model = build(hidden_width=16, dropout=0.0)
    assert has_null_token(model)
    assert module_of_model(model).null.shape == (16,)
    plain = build(hidden_width=16, dropout=0.0, null_token=False)
    assert not has_null_token(plain)
    assert "null" not in dict(module_of_model(plain).named_parameters())
    for old in ("v1", "v2"):
        built = registry.architectures.get(f"spacy-attn.DecomposableAttention.{old}")()
        assert not has_null_token(built)


def test_v3_trains_from_its_name_alone(snli_rows):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(
        "attn_pair_classifier",
        config={"model": {"@architectures": "spacy-attn.DecomposableAttention.v3"}},
    )
    examples = make_examples(nlp, snli_rows[:4])
    optimizer = nlp.initialize(lambda: examples)
    before = module_of(pipe).null.detach().clone()
    nlp.update(examples, sgd=optimizer)
    assert not torch.equal(module_of(pipe).null, before)  # the NULL token learns


def module_of_model(model) -> DecomposableAttention:
    return model.get_ref("attention").shims[0]._model


@pytest.mark.parametrize("intra", [False, True])
def test_null_token_changes_output_and_gets_gradients(intra):
    """With the same weights otherwise (the NULL vector is drawn last), the
    NULL token changes the logits, and the loss reaches its vector."""
    torch.manual_seed(0)
    plain = DecomposableAttention(8, 6, 3, dropout=0.0, intra_attention=intra)
    torch.manual_seed(0)
    null = DecomposableAttention(
        8, 6, 3, dropout=0.0, intra_attention=intra, null_token=True
    )
    for name, value in plain.state_dict().items():
        assert torch.equal(value, null.state_dict()[name]), name
    A, la, B, lb = batch([4, 2], [3, 5])
    out = null(A, la, B, lb)
    assert not torch.allclose(plain(A, la, B, lb), out)
    out.logsumexp(-1).sum().backward()
    assert null.null.grad is not None
    assert torch.isfinite(null.null.grad).all() and null.null.grad.abs().sum() > 0


def test_null_token_init_follows_init_std():
    torch.manual_seed(0)
    paper = DecomposableAttention(8, 400, 3, init_std=0.01, null_token=True)
    assert paper.null.std().item() == pytest.approx(0.01, rel=0.2)
    default = DecomposableAttention(8, 400, 3, null_token=True)
    assert default.null.std().item() == pytest.approx(400**-0.5, rel=0.2)


def test_padding_is_still_masked():
    """What is in the padding does not matter, with the NULL token put
    before the real tokens; and a batch equals its examples one by one."""
    torch.manual_seed(0)
    module = DecomposableAttention(
        8, 6, 3, dropout=0.0, intra_attention=True, null_token=True
    )
    lengths_a, lengths_b = [4, 1, 2], [2, 5, 1]
    clean = module(*batch(lengths_a, lengths_b))
    noisy = module(*batch(lengths_a, lengths_b, fill=1e3))
    torch.testing.assert_close(clean, noisy)
    A, la, B, lb = batch(lengths_a, lengths_b)
    for i in range(3):
        one = module(
            A[i : i + 1, : la[i]], la[i : i + 1], B[i : i + 1, : lb[i]], lb[i : i + 1]
        )
        torch.testing.assert_close(one[0], clean[i], atol=1e-6, rtol=1e-5)
    weights = module.attention(*batch(lengths_a, lengths_b, fill=1e3))
    assert weights.shape == (3, 5, 6)
    for i, (n_a, n_b) in enumerate(zip(lengths_a, lengths_b)):
        rows = weights[i, : n_a + 1, : n_b + 1]
        torch.testing.assert_close(rows.sum(-1), torch.ones(n_a + 1))
        assert weights[i, n_a + 1 :].abs().sum() == 0  # padded rows
        assert weights[i, :, n_b + 1 :].abs().sum() == 0  # padded columns


def test_overfit_and_round_trip(trained, snli_rows):
    nlp, losses = trained
    assert losses[0] > 0.5
    assert losses[-1] < 0.05, losses[-5:]
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[:12]]
    pairs.append(("A dog runs.", "An animal moves."))
    before = predictions(nlp, pairs)
    copy = spacy.blank("en")
    copy.add_pipe("attn_pair_classifier", config=v3_config())
    copy.from_bytes(nlp.to_bytes())
    numpy.testing.assert_array_equal(predictions(copy, pairs), before)
    null = module_of(nlp.get_pipe("attn_pair_classifier")).null
    assert torch.equal(module_of(copy.get_pipe("attn_pair_classifier")).null, null)


def test_batch_equals_single(trained, snli_rows):
    nlp, _ = trained
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[12:28]]
    pairs.append(("Hi", "A much longer second text that pads the batch a lot more."))
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    batched = [d.cats for d in nlp.pipe([d.copy() for d in docs], batch_size=64)]
    for doc, cats in zip(docs, batched):
        single = nlp(doc.copy()).cats
        for label in cats:
            assert cats[label] == pytest.approx(single[label], abs=1e-5)


def test_alignment_includes_null_on_request(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("attn_pair_classifier")
    docs = [make_pair(nlp, "A man plays a guitar.", "A person makes music.")]
    (with_null,) = pipe.alignment(docs, include_null=True)
    (tokens,) = pipe.alignment(docs)
    assert NULL_TOKEN_LABEL == "NULL"
    assert with_null.shape == (7, 6)  # NULL + 6 premise tokens, NULL + 5
    numpy.testing.assert_allclose(with_null.sum(axis=1), 1.0, rtol=1e-5)
    numpy.testing.assert_array_equal(tokens, with_null[1:, 1:])
    # What a token's row lacks went to NULL.
    numpy.testing.assert_allclose(tokens.sum(axis=1), 1.0 - with_null[1:, 0], atol=1e-5)


def test_include_null_needs_a_null_token(snli_rows):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("attn_pair_classifier", config=v3_config(null_token=False))
    nlp.initialize(lambda: make_examples(nlp, snli_rows[:4]))
    docs = [make_pair(nlp, "A dog.", "A cat.")]
    assert pipe.alignment(docs)[0].shape == (3, 3)
    with pytest.raises(ValueError, match="include_null=True needs a model"):
        pipe.alignment(docs, include_null=True)


def test_empty_and_one_token_segments(trained):
    """Every token can align to NULL, so a token facing an empty text still
    has a full row (all on NULL); scores stay a distribution."""
    nlp, _ = trained
    pipe = nlp.get_pipe("attn_pair_classifier")
    cases = [("", "A person."), ("A man plays.", ""), ("", ""), ("Dogs", "Cats")]
    docs = [make_pair(nlp, a, b) for a, b in cases]
    for doc in nlp.pipe([d.copy() for d in docs]):
        values = numpy.asarray(list(doc.cats.values()))
        assert numpy.isfinite(values).all()
        assert values.sum() == pytest.approx(1.0, abs=1e-5)
    shapes = [(1, 4), (5, 1), (1, 1), (2, 2)]
    for matrix, shape in zip(pipe.alignment(docs, include_null=True), shapes):
        assert matrix.shape == shape
        numpy.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-5)
    second_empty = pipe.alignment(docs, include_null=True)[1]
    numpy.testing.assert_allclose(second_empty[:, 0], 1.0, rtol=1e-5)
    assert pipe.alignment(docs)[1].shape == (4, 0)


def test_alignment_picture_shows_the_null_token(trained):
    """render(style="alignment", pipe=...) of a v3 model draws the NULL token
    as its own first row and column; a model without one draws none."""
    from spacy_attn import render

    nlp, _ = trained
    pipe = nlp.get_pipe("attn_pair_classifier")
    doc = make_pair(nlp, "A man plays a guitar.", "A person makes music.")
    html = render(doc, style="alignment", pipe=pipe, page=False)
    assert html.count(f">{NULL_TOKEN_LABEL}<") == 2  # row header, column header
    labels = pipe.alignment_labels([doc], include_null=True)[0]
    assert labels[0][0] == labels[1][0] == NULL_TOKEN_LABEL
    assert len(labels[0]) == 7 and len(labels[1]) == 6
