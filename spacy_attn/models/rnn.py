"""Masked (bi)LSTM over zero-padded batches: padded on CPU, packed on CUDA.

Why not ``pack_padded_sequence`` on CPU: with torch 2.x on CPU the backward
pass of an LSTM over a *packed* batch of long, mixed-length sequences is
pathologically slow (measured: batch 32 x up to 1,000 tokens, 100 -> 2x150:
forward 0.87 s, backward 95 s packed vs. 0.9 s padded). ``run_lstm_padded``
avoids packing: padding is harmless for the forward direction (padding comes
after the real tokens, and an LSTM is causal); for the backward direction each
row's real tokens are reversed in place, so the reverse LSTM also reads them
first. Outputs at padded positions are zeroed.

Why packed on CUDA: ``run_lstm_padded`` calls ``torch.lstm`` with a list of
per-direction weights, which cuDNN cannot use as they are: it warns "RNN
module weights are not part of single contiguous chunk of memory" and copies
(compacts) the weights on every call. ``run_lstm_packed`` runs the
``nn.LSTM`` module itself, whose weights live in one flat buffer, over a
packed batch, which cuDNN handles fast (forward and backward).

Both give the result of torch's packed computation (tested on CPU).

Why ``host_lengths``: on CUDA, every read of device lengths on the host
(``lengths.cpu()``) and every blocking copy to the device waits until the GPU
has run everything queued before it, so the CPU cannot queue the next
kernels meanwhile. A caller that already holds the lengths on the host passes
them, and the packed path then copies only its row order to the device,
without waiting (``non_blocking``).
"""

from typing import Optional, cast

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ._util import length_mask

__all__ = ["run_lstm", "run_lstm_padded", "run_lstm_packed", "reverse_index"]


def reverse_index(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B, L) gather index that reverses the first ``lengths[b]`` positions of
    each row and leaves the padding where it is."""
    positions = torch.arange(max_len, device=lengths.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1).to(positions.dtype)
    return torch.where(positions < lengths, lengths - 1 - positions, positions)


def _gather_time(X: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return X.gather(1, index.unsqueeze(-1).expand(-1, -1, X.shape[-1]))


def _check_lstm(lstm: nn.LSTM) -> None:
    if not lstm.batch_first or getattr(lstm, "proj_size", 0) != 0:
        raise ValueError(
            "run_lstm needs an nn.LSTM with batch_first=True and no proj_size"
        )


def run_lstm(
    lstm: nn.LSTM,
    X: torch.Tensor,
    lengths: torch.Tensor,
    *,
    host_lengths: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Run a (possibly bidirectional, multi-layer) ``nn.LSTM`` with
    ``batch_first=True`` over zero-padded rows, reading only the first
    ``lengths`` positions of each row. Uses the module's own parameters.

    CUDA tensors go through ``run_lstm_packed`` (cuDNN), all others through
    ``run_lstm_padded`` (fast CPU backward); see the module docstring.

    lstm (nn.LSTM): batch_first, no proj_size.
    X (Tensor): (B, L, nI) padded input.
    lengths (Tensor): (B,) int lengths (0 allowed: the row's output is zero).
    host_lengths (Optional[Tensor]): The same lengths on the CPU, if the
        caller has them (saves the packed path a device sync).
    RETURNS (Tensor): (B, L, n_directions * hidden), zero beyond each length.
    """
    if X.is_cuda:
        return run_lstm_packed(lstm, X, lengths, host_lengths=host_lengths)
    return run_lstm_padded(lstm, X, lengths)


def run_lstm_padded(
    lstm: nn.LSTM, X: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """``run_lstm`` without packed sequences (the CPU path): ``torch.lstm``
    per layer and direction over the padded rows, the reverse direction over
    rows whose real tokens are reversed in place.

    Arguments and result as ``run_lstm``'s, without ``host_lengths``:
    nothing is packed.
    """
    _check_lstm(lstm)
    B, L, _ = X.shape
    mask = length_mask(lengths, L).unsqueeze(-1).to(X.dtype)
    index = reverse_index(lengths, L) if lstm.bidirectional else None
    # Only a bidirectional LSTM runs the reverse direction, so index is set there.
    rev_index = cast(torch.Tensor, index)
    out = X
    for layer in range(lstm.num_layers):
        if layer > 0 and lstm.dropout and lstm.training:
            out = nn.functional.dropout(out, lstm.dropout, training=True)
        directions = []
        for reverse in [False, True] if lstm.bidirectional else [False]:
            suffix = f"_l{layer}" + ("_reverse" if reverse else "")
            params = [
                getattr(lstm, f"weight_ih{suffix}"),
                getattr(lstm, f"weight_hh{suffix}"),
            ]
            if lstm.bias:
                params += [
                    getattr(lstm, f"bias_ih{suffix}"),
                    getattr(lstm, f"bias_hh{suffix}"),
                ]
            inputs = _gather_time(out, rev_index) if reverse else out
            h0 = inputs.new_zeros(1, B, lstm.hidden_size)
            Y = torch.lstm(
                inputs, (h0, h0), params, lstm.bias, 1, 0.0, lstm.training, False, True
            )[0]
            directions.append(_gather_time(Y, rev_index) if reverse else Y)
        out = torch.cat(directions, dim=-1) * mask
    return out


def run_lstm_packed(
    lstm: nn.LSTM,
    X: torch.Tensor,
    lengths: torch.Tensor,
    *,
    host_lengths: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """``run_lstm`` with the ``nn.LSTM`` module over a packed batch (the CUDA
    path; it runs on any device, so its results are tested on CPU).

    Packing needs the lengths on the host (cuDNN takes host-side batch
    sizes): without ``host_lengths``, one device-to-host copy per call. The
    rows are sorted by length on the host and their order goes to the device
    without waiting, instead of ``pack_padded_sequence(enforce_sorted=False)``
    and ``pad_packed_sequence``, which copy the order to the device and back
    with a device sync each.

    Arguments and result as ``run_lstm``'s.
    """
    _check_lstm(lstm)
    B, L, _ = X.shape
    width = lstm.hidden_size * (2 if lstm.bidirectional else 1)
    if B == 0 or L == 0:
        # Nothing to read; still connected to X so a backward pass runs.
        return X.new_zeros(B, L, width) + X.sum() * 0
    _ensure_flat_weights(lstm)
    if host_lengths is None:
        host_lengths = lengths.detach().to("cpu")
    # pack_padded_sequence refuses empty rows: they read one (padding) step
    # and are zeroed by the mask below, which also stops their gradient.
    host = host_lengths.to(torch.int64).clamp(min=1)
    order = torch.argsort(host, descending=True, stable=True)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(B)
    index = torch.stack([order, inverse]).to(X.device, non_blocking=True)
    packed = pack_padded_sequence(
        X.index_select(0, index[0]), host[order], batch_first=True
    )
    Y, _ = pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=L)
    Y = Y.index_select(0, index[1])
    return Y.masked_fill(~length_mask(lengths, L).unsqueeze(-1), 0.0)


def _ensure_flat_weights(lstm: nn.LSTM) -> None:
    """Put the CUDA weights of ``lstm`` back into one flat cuDNN buffer when
    they are not (cheap check, no device sync).

    ``module.to("cuda")`` flattens them, but Thinc's own ``PyTorchShim``
    assigns every parameter a new tensor (``param.data = xp2torch(...)``)
    after each optimizer step, which makes each weight its own storage again.
    This package's layers update in place
    (``spacy_attn.layers.torch_wrapper``), so the buffer stays flat; the check
    remains for a module trained through another wrapper. Without it, cuDNN
    would warn and compact the weights on every call. (``flatten_parameters``
    itself always copies, so it must not run on every call.)
    """
    weights = list(lstm.parameters())
    if not weights or not weights[0].is_cuda:
        return
    storage = weights[0].untyped_storage()
    total = sum(w.numel() * w.element_size() for w in weights)
    ptr = storage.data_ptr()
    if storage.nbytes() >= total and all(
        w.untyped_storage().data_ptr() == ptr for w in weights
    ):
        return
    lstm.flatten_parameters()
