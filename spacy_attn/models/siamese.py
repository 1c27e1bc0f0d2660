"""Siamese pair encoder (torch only): one self-attentive encoder for both
texts of a pair, then a combination of the two embeddings (Lin et al. 2017,
section 4.3, their SNLI setup)."""

from typing import Optional, Tuple

import torch
from torch import nn

from .self_attention import SelfAttentionBase

COMBINATIONS = ("features", "multiplicative")


class SiameseSelfAttention(nn.Module):
    """Encode both segments with the same encoder and combine them.

    encoder (SelfAttentionBase): ``StructuredSelfAttention`` or
        ``GeneralizedPooling``; its output M is (B, r, 2u).
    nH (int): Width of the combined representation fed to the MLP.
    combination (str): "features": the two embeddings u, v (M flattened) give
        [u; v; u * v; |u - v|] projected to nH (the usual sentence-encoder NLI
        features). "multiplicative": the paper's gated interaction, each hop
        row projected by its own matrix, F_h = M_h W_fh, F_p = M_p W_fp
        (batched over the r rows), F_r = F_h * F_p, flattened.
    dropout (float): Dropout on the combined features.
    param_penalty_once (bool): Add the encoder's penalty on its parameters
        (generalized pooling's W1 penalty) once per batch. False
        (``spacy-attn.SiameseSelfAttention.v1``) adds it once per text, so
        it weighs twice what its coefficient says.

    forward(A, A_lengths, B, B_lengths): A (B, La, nI), B (B, Lb, nI) padded
        token vectors of the first and second text, lengths (B,)
        RETURNS (hidden (B, nH), penalty ()): the pair representation after
        one ReLU layer, and the encoder penalties of both texts summed.
    """

    def __init__(
        self,
        encoder: SelfAttentionBase,
        nH: int,
        *,
        n_rows: int,
        combination: str = "features",
        dropout: float = 0.0,
        param_penalty_once: bool = False,
    ) -> None:
        super().__init__()
        self.param_penalty_once = param_penalty_once
        if combination not in COMBINATIONS:
            raise ValueError(
                f"combination must be one of {COMBINATIONS}, got {combination!r}"
            )
        self.encoder = encoder
        self.combination = combination
        width = encoder.nO
        if combination == "features":
            self.combine = nn.Linear(4 * n_rows * width, nH)
        else:
            self.W_f1 = nn.Parameter(torch.empty(n_rows, width, width))
            self.W_f2 = nn.Parameter(torch.empty(n_rows, width, width))
            for W in (self.W_f1, self.W_f2):
                for i in range(n_rows):
                    nn.init.xavier_uniform_(W.data[i])
            self.combine = nn.Linear(n_rows * width, nH)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        A: torch.Tensor,
        A_lengths: torch.Tensor,
        B: torch.Tensor,
        B_lengths: torch.Tensor,
        reduction: Optional[str] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        # reduction: the encoder's penalty reduction for this call (None:
        # the encoder's own), see SelfAttentionBase.forward. The per-doc
        # penalties belong to each text; a penalty on the parameters belongs
        # to the batch, once (see param_penalty_once).
        M_a, _, _, penalty_a = self.encoder(A, A_lengths, reduction)
        M_b, _, _, penalty_b = self.encoder(
            B, B_lengths, reduction, batch_penalty=not self.param_penalty_once
        )
        if self.combination == "features":
            u, v = M_a.flatten(1), M_b.flatten(1)
            features = torch.cat([u, v, u * v, (u - v).abs()], dim=-1)
        else:
            F_a = torch.einsum("brd,rde->bre", M_a, self.W_f1)
            F_b = torch.einsum("brd,rde->bre", M_b, self.W_f2)
            features = (F_a * F_b).flatten(1)
        hidden = torch.relu(self.combine(self.dropout(features)))
        return hidden, penalty_a + penalty_b
