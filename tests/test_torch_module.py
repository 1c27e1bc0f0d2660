"""The torch-only module: shapes and exact masking."""

import torch

from spacy_attn.models.decomposable_attention import (
    DecomposableAttention,
    masked_softmax,
)


def _inputs(seed=0, B=4, La=7, Lb=5, nI=6):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(B, La, nI, generator=g)
    Bm = torch.randn(B, Lb, nI, generator=g)
    la = torch.tensor([7, 3, 1, 0])
    lb = torch.tensor([5, 5, 2, 4])
    return A, la, Bm, lb


def test_shapes_and_padding_is_ignored():
    torch.manual_seed(0)
    for intra in (False, True):
        model = DecomposableAttention(
            6, 8, 3, dropout=0.0, intra_attention=intra, max_distance=2
        ).eval()
        A, la, B, lb = _inputs()
        out = model(A, la, B, lb)
        assert out.shape == (4, 3)
        # Garbage in the padding must not change anything.
        A2, B2 = A.clone(), B.clone()
        for i in range(4):
            A2[i, la[i] :] = 1000.0
            B2[i, lb[i] :] = -1000.0
        assert torch.equal(model(A2, la, B2, lb), out)
        # Extra padding columns must not change anything either.
        A3 = torch.cat([A, torch.randn(4, 9, 6)], dim=1)
        out3 = model(A3, la, B, lb)
        assert torch.allclose(out3, out, atol=1e-6)


def test_features_without_output_layer_and_lazy_input():
    model = DecomposableAttention(None, 8, None, dropout=0.0).eval()
    A, la, B, lb = _inputs()
    assert model(A, la, B, lb).shape == (4, 8)
    assert model.project.weight.shape == (8, 6)


def test_masked_softmax_rows():
    scores = torch.randn(2, 3, 4)
    mask = torch.tensor(
        [[True, True, False, False], [False, False, False, False]]
    ).unsqueeze(1)
    w = masked_softmax(scores, mask, dim=2)
    assert torch.allclose(w[0].sum(-1), torch.ones(3))
    assert torch.equal(w[0, :, 2:], torch.zeros(3, 2))
    assert torch.equal(w[1], torch.zeros(3, 4))  # all-masked row -> zeros, not NaN


def test_attention_weights():
    model = DecomposableAttention(6, 8, 3, dropout=0.0).eval()
    A, la, B, lb = _inputs()
    w = model.attention(A, la, B, lb)
    assert w.shape == (4, 7, 5)
    assert torch.allclose(w[0].sum(-1), torch.ones(7), atol=1e-6)
    assert torch.equal(w[1, 3:], torch.zeros(4, 5))


def test_parameter_count_matches_paper():
    """Paper setting (300d GloVe, hidden 200, 3 classes, no intra-attention):
    Parikh et al. report 380K parameters."""
    model = DecomposableAttention(300, 200, 3)
    n = sum(p.numel() for p in model.parameters())
    # projection 60,000 + F 80,400 + G 120,400 + H 120,400 + output 603
    assert n == 381_803
    intra = DecomposableAttention(300, 200, 3, intra_attention=True, max_distance=10)
    assert sum(p.numel() for p in intra.parameters()) > n
