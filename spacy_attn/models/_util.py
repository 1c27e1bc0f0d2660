"""Tensor helpers shared by the torch models: length masks and a masked
softmax that gives padded positions exactly zero weight.

Plain PyTorch, like the rest of ``spacy_attn.models``; a module of its own so
that no model imports another model's module for them.
"""

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


__all__ = ["MASK_VALUE", "length_mask", "masked_softmax"]
