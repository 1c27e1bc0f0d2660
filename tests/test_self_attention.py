"""Self-attention torch modules and their Thinc layers: shapes, masking,
penalties (checked numerically) and gradients reaching training."""

import numpy
import pytest
import spacy
import torch
from spacy.util import registry
from thinc.api import Config, fix_random_seed

from spacy_attn.layers.self_attention import (
    build_generalized_pooling,
    build_structured_self_attention,
    embedding_pool,
)
from spacy_attn.models.self_attention import (
    GeneralizedPooling,
    StructuredSelfAttention,
    frobenius_penalty,
    pairwise_hinge,
)

from .util import tok2vec_config


def _inputs(seed=0, B=3, L=6, nI=4, lengths=(6, 3, 1)):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(B, L, nI, generator=g, dtype=torch.float64)
    return X, torch.tensor(lengths)


def _modules():
    torch.manual_seed(0)
    return [
        StructuredSelfAttention(4, 5, 3, 2, penalty_coef=0.7).double(),
        GeneralizedPooling(
            4,
            5,
            3,
            3,
            param_penalty=0.5,
            attention_penalty=0.3,
            output_penalty=0.2,
            margin=2.0,
        ).double(),
    ]


@pytest.mark.parametrize("module", _modules(), ids=["structured", "generalized"])
def test_shapes_rows_sum_to_one_and_padding_is_zero(module):
    X, lengths = _inputs()
    M, A, H, penalty = module(X, lengths)
    r = A.shape[1]
    assert M.shape == (3, r, 10) and A.shape == (3, r, 6) and H.shape == (3, 6, 10)
    for i, n in enumerate(lengths.tolist()):
        numpy.testing.assert_allclose(
            A[i, :, :n].sum(-1).detach().numpy(), 1.0, rtol=1e-6
        )
        assert (A[i, :, n:] == 0).all()
        assert (H[i, n:] == 0).all()
    assert penalty.ndim == 0 and penalty.item() > 0


@pytest.mark.parametrize("module", _modules(), ids=["structured", "generalized"])
def test_padding_garbage_does_not_change_outputs(module):
    """Masking: values in the padding never leak into M, A, H or the penalty."""
    X, lengths = _inputs()
    garbage = X.clone()
    for i, n in enumerate(lengths.tolist()):
        garbage[i, n:] = 1e3
    out1, out2 = module(X, lengths), module(garbage, lengths)
    for a, b in zip(out1, out2):
        torch.testing.assert_close(a, b)


def test_empty_doc_gives_zeros_and_no_penalty():
    module = _modules()[0]
    X, _ = _inputs()
    M, A, H, penalty = module(X, torch.tensor([0, 0, 0]))
    assert (M == 0).all() and (A == 0).all() and (H == 0).all()
    assert penalty.item() == 0.0


def test_frobenius_penalty_by_hand():
    # Two hops on the same token: A A^T = [[1, 1], [1, 1]], minus I -> 2 ones.
    A = torch.tensor([[[1.0, 0.0], [1.0, 0.0]]])
    assert frobenius_penalty(A).item() == pytest.approx(2.0)
    # Two hops on different tokens: A A^T = I, no penalty.
    A = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    assert frobenius_penalty(A).item() == pytest.approx(0.0)


def test_pairwise_hinge_by_hand():
    X = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    # squared distances: (0,1) 1, (0,2) 9, (1,2) 10; margin 4 -> 3 + 0 + 0
    assert pairwise_hinge(X, 4.0).item() == pytest.approx(3.0)


@pytest.mark.parametrize("module", _modules(), ids=["structured", "generalized"])
def test_penalty_gradient_matches_finite_differences(module):
    """torch.autograd.gradcheck of the penalty w.r.t. the inputs and every
    parameter, in float64."""
    X, lengths = _inputs(lengths=(6, 3, 2))
    X.requires_grad_(True)
    names, params = zip(*[(n, p) for n, p in module.named_parameters()])

    def penalty(X, *values):
        # A functional call, so gradcheck can perturb the parameters too.
        return torch.func.functional_call(
            module, dict(zip(names, values)), (X, lengths)
        )[3]

    assert torch.autograd.gradcheck(penalty, (X, *params), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("kind", ["structured", "generalized"])
def test_thinc_backprop_adds_penalty_gradient(kind):
    """With a zero gradient on M, the Thinc layer's backward pass still gives
    the parameters d(penalty): compare with central finite differences of the
    penalty the layer reports (float32, as the layer runs; the float64 check
    of the torch module is above)."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    docs = [nlp("a short doc"), nlp("another slightly longer doc here"), nlp("x")]
    t2v = registry.resolve(Config({"t": tok2vec_config(width=8)}))["t"]
    if kind == "structured":
        model = build_structured_self_attention(
            t2v, hidden_width=3, attention_width=4, hops=2, penalty_coef=1.5
        )
    else:
        model = build_generalized_pooling(
            t2v,
            hidden_width=3,
            attention_width=4,
            heads=2,
            param_penalty=0.5,
            attention_penalty=1.0,
            output_penalty=1.0,
            # Far above every distance here: each hinge stays on its linear
            # side, so a finite difference never straddles its kink (at 5.0
            # one did, for one seed).
            penalty_margin=50.0,
        )
    model.initialize(X=docs)
    layer = model.get_ref("self_attention")
    torch_module = layer.shims[0]._model

    def run_penalty():
        model.begin_update(docs)  # forward in training mode records the penalty
        return float(layer.attrs["penalty"])

    (M, A, H, lengths), backprop = model.begin_update(docs)
    for p in torch_module.parameters():
        p.grad = None
    backprop((model.ops.alloc3f(*M.shape), None, None, None))
    name, param = next(
        (n, p) for n, p in torch_module.named_parameters() if n.startswith("W")
    )
    analytic = param.grad.detach().clone().numpy().ravel()
    numeric = numpy.zeros_like(analytic)
    flat = param.data.view(-1)
    eps = 1e-2  # float32: a larger step keeps rounding error small
    for j in range(len(flat)):
        old = flat[j].item()
        flat[j] = old + eps
        up = run_penalty()
        flat[j] = old - eps
        down = run_penalty()
        flat[j] = old
        numeric[j] = (up - down) / (2 * eps)
    assert numpy.abs(analytic).max() > 1e-4, "the penalty gave no gradient"
    numpy.testing.assert_allclose(analytic, numeric, rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("pooling", ["flatten", "mean", "max"])
def test_embedding_pool_backprop(pooling):
    """The pooling layers' backward pass is the gradient of their forward."""
    pool = embedding_pool(pooling)
    rng = numpy.random.default_rng(0)
    M = rng.normal(size=(2, 3, 4)).astype("float32")
    Y, backprop = pool((M, None, None, None), is_train=True)
    dY = rng.normal(size=Y.shape).astype("float32")
    dM = backprop(dY)[0]
    # Directional derivative check: <dY, f(M + eps D) - f(M - eps D)> / 2eps.
    D = rng.normal(size=M.shape).astype("float32")
    eps = 1e-3
    Yp = pool.predict((M + eps * D, None, None, None))
    Ym = pool.predict((M - eps * D, None, None, None))
    numeric = float((dY * (Yp - Ym)).sum() / (2 * eps))
    assert float((dM * D).sum()) == pytest.approx(numeric, rel=1e-2)


def test_bad_settings_raise():
    with pytest.raises(ValueError, match="pooling must be one of"):
        embedding_pool("median")
    with pytest.raises(ValueError, match="reduction must be one of"):
        StructuredSelfAttention(4, 2, 2, 2, reduction="avg")


def test_lazy_width_state_dict_round_trip():
    """nI=None builds the LSTM on the first batch; loading a state dict into
    a fresh lazy module builds it from the stored shapes."""
    torch.manual_seed(0)
    module = StructuredSelfAttention(None, 5, 3, 2)
    X, lengths = _inputs()
    out = module(X.float(), lengths)
    fresh = StructuredSelfAttention(None, 5, 3, 2)
    fresh.load_state_dict(module.state_dict())
    torch.testing.assert_close(fresh(X.float(), lengths)[0], out[0])


@pytest.mark.parametrize("layers,bidirectional", [(1, True), (2, True), (1, False)])
def test_run_lstm_equals_packed_lstm(layers, bidirectional):
    """The unpacked masked LSTM gives what torch's packed sequences give."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from spacy_attn.models.decomposable_attention import length_mask
    from spacy_attn.models.rnn import run_lstm

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(
        5, 4, num_layers=layers, batch_first=True, bidirectional=bidirectional
    ).double()
    X = torch.randn(4, 7, 5, dtype=torch.float64)
    lengths = torch.tensor([7, 3, 0, 1])
    packed = pack_padded_sequence(
        X, lengths.clamp(min=1), batch_first=True, enforce_sorted=False
    )
    expected, _ = pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=7)
    expected = expected * length_mask(lengths, 7).unsqueeze(-1)
    torch.testing.assert_close(run_lstm(lstm, X, lengths), expected)


@pytest.mark.parametrize("module", _modules(), ids=["structured", "generalized"])
def test_chunked_forward_equals_one_by_one(module):
    """Batches larger than the chunk size run in length-sorted chunks (memory
    and speed); every row and the penalty equal what unchunked runs give."""
    module.chunk_size, module.chunk_tokens = 4, 20  # both limits are hit
    torch.manual_seed(0)
    lengths = torch.tensor([9, 1, 0, 5, 2, 8, 3, 7, 6, 4, 2])
    X = torch.randn(len(lengths), 9, 4, dtype=torch.float64)
    M, A, H, penalty = module(X, lengths)
    module.chunk_size, module.chunk_tokens = 100, 10**9
    M2, A2, H2, penalty2 = module(X, lengths)
    for a, b in ((M, M2), (A, A2), (H, H2), (penalty, penalty2)):
        torch.testing.assert_close(a, b)
    for i, n in enumerate(lengths.tolist()):
        alone = module(X[i : i + 1, : max(n, 1)], lengths[i : i + 1])
        torch.testing.assert_close(M[i], alone[0][0])
        torch.testing.assert_close(A[i, :, : max(n, 1)], alone[1][0])
        assert (H[i, n:] == 0).all() and (A[i, :, n:] == 0).all()


def test_generalized_pooling_long_doc_and_large_batch_memory():
    """Generalized pooling keeps (docs, heads, L, 2u) attention tensors:
    a 5,000-token doc, and a 200-doc batch with one long doc, stay within a
    bounded memory growth (chunks of 32 length-sorted docs)."""
    import resource

    torch.manual_seed(0)
    module = GeneralizedPooling(8, 16, 16, 4, attention_penalty=0.1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with torch.no_grad():
        M, A, H, _ = module(torch.randn(1, 5000, 8), torch.tensor([5000]))
        lengths = torch.full((200,), 20)
        lengths[0] = 3000
        module(torch.randn(200, 3000, 8), lengths)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert A.shape == (1, 4, 5000) and torch.allclose(A.sum(-1), torch.ones(1, 4))
    # Unchunked this grows by ~3 GiB; in 16k-token chunks by ~0.2 GiB.
    assert grown_mib < 600, grown_mib
