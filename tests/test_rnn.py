"""models/rnn.py: the padded (CPU) and packed (CUDA) LSTM paths give the
same results as torch's packed sequences, values and gradients."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from spacy_attn.models.decomposable_attention import length_mask
from spacy_attn.models.rnn import run_lstm, run_lstm_packed, run_lstm_padded

LENGTHS = torch.tensor([7, 3, 0, 1])


def _reference(lstm, X, lengths):
    packed = pack_padded_sequence(
        X, lengths.clamp(min=1), batch_first=True, enforce_sorted=False
    )
    expected, _ = pad_packed_sequence(
        lstm(packed)[0], batch_first=True, total_length=X.shape[1]
    )
    return expected * length_mask(lengths, X.shape[1]).unsqueeze(-1)


def _lstm(layers, bidirectional):
    torch.manual_seed(0)
    return torch.nn.LSTM(
        5, 4, num_layers=layers, batch_first=True, bidirectional=bidirectional
    ).double()


@pytest.mark.parametrize(
    "layers,bidirectional", [(1, True), (2, True), (1, False), (2, False)]
)
@pytest.mark.parametrize(
    "run", [run_lstm_padded, run_lstm_packed], ids=["padded", "packed"]
)
def test_paths_equal_packed_reference(run, layers, bidirectional):
    """Both paths (the CUDA one, run_lstm_packed, is run here on CPU) equal
    torch's packed computation, and so each other: values and gradients of
    inputs and weights. Empty rows and padding give zeros, padding gets no
    gradient."""
    lstm = _lstm(layers, bidirectional)
    X = torch.randn(4, 7, 5, dtype=torch.float64)
    X[1, 3:] = 100.0  # garbage in the padding changes nothing
    X_ref = X.clone().requires_grad_(True)
    X_run = X.clone().requires_grad_(True)
    expected = _reference(lstm, X_ref, LENGTHS)
    got = run(lstm, X_run, LENGTHS)
    torch.testing.assert_close(got, expected)
    assert (got[2] == 0).all() and (got[1, 3:] == 0).all()
    weights = torch.randn_like(expected)
    grads_ref = torch.autograd.grad(
        (expected * weights).sum(), [X_ref, *lstm.parameters()]
    )
    grads_run = torch.autograd.grad((got * weights).sum(), [X_run, *lstm.parameters()])
    for g_run, g_ref in zip(grads_run, grads_ref):
        torch.testing.assert_close(g_run, g_ref)
    assert (grads_run[0][2] == 0).all() and (grads_run[0][1, 3:] == 0).all()


def test_run_lstm_uses_padded_path_on_cpu():
    lstm = _lstm(1, True)
    X = torch.randn(4, 7, 5, dtype=torch.float64)
    assert torch.equal(run_lstm(lstm, X, LENGTHS), run_lstm_padded(lstm, X, LENGTHS))


def test_packed_empty_batch():
    lstm = _lstm(1, True)
    assert run_lstm_packed(
        lstm,
        torch.zeros(0, 3, 5, dtype=torch.float64),
        torch.zeros(0, dtype=torch.long),
    ).shape == (0, 3, 8)
    assert run_lstm_packed(
        lstm,
        torch.zeros(2, 0, 5, dtype=torch.float64),
        torch.zeros(2, dtype=torch.long),
    ).shape == (2, 0, 8)


def test_bad_lstm_is_an_error():
    lstm = torch.nn.LSTM(5, 4)  # not batch_first
    for run in (run_lstm_padded, run_lstm_packed):
        with pytest.raises(ValueError, match="batch_first"):
            run(lstm, torch.zeros(1, 2, 5), torch.tensor([2]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_path_keeps_cudnn_weights_flat():
    """After Thinc-style weight replacement (``param.data = new tensor``, as
    PyTorchShim.finish_update does) the weights are re-flattened once, so
    cuDNN never warns about non-contiguous weights, and results match the
    CPU path."""
    import warnings

    lstm = _lstm(2, True).float()
    X = torch.randn(4, 7, 5)
    expected = run_lstm_padded(lstm, X, LENGTHS)
    lstm = lstm.cuda()
    for p in lstm.parameters():
        p.data = p.data.clone()  # each weight its own storage again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            got = run_lstm(lstm, X.cuda(), LENGTHS.cuda())
    torch.testing.assert_close(got.cpu(), expected, atol=1e-5, rtol=1e-4)


def test_packed_path_packs_by_host_lengths(monkeypatch):
    """With ``host_lengths`` the packed path takes the lengths it packs by
    from the host copy (on CUDA, reading device lengths waits for the GPU),
    and gives the same result as without it."""
    import spacy_attn.models.rnn as rnn

    seen = []
    pack = rnn.pack_padded_sequence

    def spy(X, lengths, **kwargs):
        seen.append(lengths.tolist())
        return pack(X, lengths, **kwargs)

    lstm = _lstm(1, True)
    X = torch.randn(4, 7, 5, dtype=torch.float64)
    expected = run_lstm_packed(lstm, X, LENGTHS)
    monkeypatch.setattr(rnn, "pack_padded_sequence", spy)
    # Device lengths are only used for the output mask here: all 7 keeps
    # every packed output, so only the host lengths can zero the padding.
    got = run_lstm_packed(lstm, X, torch.full((4,), 7), host_lengths=LENGTHS)
    assert seen == [[7, 3, 1, 1]]  # sorted, an empty row reads one step
    torch.testing.assert_close(got[[0, 1, 3]], expected[[0, 1, 3]])
