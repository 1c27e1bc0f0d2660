"""Tensor helpers shared by the torch models: length masks, a masked
softmax that gives padded positions exactly zero weight, packing by
lengths read to the host once (no device sync per use on a GPU), and row
selection by the fastest backward of the device.

Plain PyTorch, like the rest of ``spacy_attn.models``; a module of its own so
that no model imports another model's module for them.
"""

from typing import Tuple

import torch

# Added to masked attention logits. Large enough that exp() underflows to
# exactly 0 in float32, so padded positions get exactly zero weight and a
# padded batch gives the same numbers as unpadded single examples; small
# enough not to overflow in float16.
MASK_VALUE = -1e4


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """Softmax over ``dim`` that gives exactly zero weight to masked positions.

    A row whose positions are all masked (an empty segment) gets all-zero
    weights instead of NaN, so its attended vector is zero.

    scores (Tensor): Attention logits.
    mask (Tensor): Bool tensor broadcastable to ``scores``; True = real token.
    """
    weights = torch.softmax(scores.masked_fill(~mask, MASK_VALUE), dim=dim)
    return weights * mask


def length_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B,) lengths -> (B, max_len) bool mask, True for real tokens."""
    positions = torch.arange(max_len, device=lengths.device)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)


def host_lengths_of(*lengths: torch.Tensor) -> Tuple[torch.Tensor, ...]:
    """The (B,) lengths on the CPU, read from the device in one copy.

    Why: packing (the LSTMs, the HMNs' real tokens) needs the lengths on the
    host, and each read of device values waits for the GPU's queue to drain;
    one read at the start of the forward pass replaces one per packing step.
    """
    return torch.stack(lengths).to("cpu").unbind(0)


def packed_positions(
    host_lengths: torch.Tensor, width: int, device: torch.device
) -> torch.Tensor:
    """(B,) host lengths -> (N,) int64 flat positions ``b * width + t`` of the
    real tokens (t < length) of a (B, width) batch, on ``device``.

    Indexing with these (``index_select``, ``index_copy``) instead of a
    boolean mask keeps the GPU's queue flowing: a boolean index needs its
    count of True values on the host, i.e. a device sync per use.
    """
    flat = length_mask(host_lengths, width).flatten().nonzero().squeeze(1)
    return flat.to(device, non_blocking=True)


def select_rows(X: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """(R, d), (N,) row numbers -> (N, d): ``X[index]``, by the operator whose
    backward is faster where it runs. On a CPU, ``index_select`` (with its
    backward, ``index_add``, a third of the time of advanced indexing and its
    accumulating ``index_put`` in the DCN's decoder); on CUDA advanced
    indexing, whose sorted, atomic-free backward is the one measured on GPUs
    (there many rows of the result come from one row of X).
    """
    if X.is_cuda:
        return X[index]
    return X.index_select(0, index)


__all__ = [
    "MASK_VALUE",
    "host_lengths_of",
    "length_mask",
    "masked_softmax",
    "packed_positions",
    "select_rows",
]
