"""The Decomposable Attention model of Parikh et al. (2016), in plain PyTorch.

"A Decomposable Attention Model for Natural Language Inference", EMNLP 2016.
Attend, compare, aggregate, with optional intra-sentence attention.

This module knows nothing about spaCy or Thinc, so it can be trained with a
bare PyTorch loop (see ``benchmarks/speed.py``) and wrapped by Thinc's
``PyTorchWrapper`` (see ``spacy_attn.layers.decomposable_attention``).

Shapes: B = batch size, La / Lb = padded lengths of the two segments,
nI = input token-vector width, nH = hidden width.
"""

import warnings
from typing import Optional, Tuple

import torch
from torch import nn

# Shared by all models; still importable from here.
from ._util import length_mask, masked_softmax


class FeedForward(nn.Module):
    """Two ReLU layers with dropout on their inputs, the F, G and H networks
    of the paper.

    Input (..., nI) -> output (..., nO).
    """

    def __init__(self, nI: int, nO: int, dropout: float) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Dropout(dropout),
            nn.Linear(nI, nO),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(nO, nO),
            nn.ReLU(),
        )

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.layers(X)


def _pad(X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Packed (N, d) rows -> zero-padded (B, L, d), N = mask.sum()."""
    out = X.new_zeros(mask.shape[0], mask.shape[1], X.shape[-1])
    out[mask] = X
    return out


def _prepend(
    X: torch.Tensor, mask: torch.Tensor, token: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Packed (N, d) rows with prefix mask (B, L) -> the same with ``token``
    (d,) put before each example's first row: (N + B, d) and (B, L + 1)."""
    padded = _pad(X, mask)
    first = token.to(padded.dtype).expand(mask.shape[0], 1, -1)
    new_mask = torch.cat([mask.new_ones(mask.shape[0], 1), mask], dim=1)
    return torch.cat([first, padded], dim=1)[new_mask], new_mask


def _segment_sum(X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Packed (N, d) rows -> (B, d) sums per example; zero for empty ones."""
    # Padded sum, not index_add_: CUDA's index_add_ accumulates with atomics
    # in no fixed order, so the same weights gave predictions differing by
    # ~3e-8 between two runs on a GPU (the device check's reload test).
    return _pad(X, mask).sum(dim=1)


class IntraAttention(nn.Module):
    """Intra-sentence attention (paper section 3.4).

    f_ij = F_intra(a_i) . F_intra(a_j); the self-aligned vector
    a'_i = sum_j softmax_j(f_ij + d_{i-j}) a_j, where d is a learned bias per
    signed distance, and all distances beyond ``max_distance`` share one
    bias. Output is [a_i; a'_i].

    far_bias (bool): True (the paper): one more bias, shared by every
        distance beyond ``max_distance`` in either direction, so distances
        +-max_distance keep their own. False (``DecomposableAttention.v1``):
        distances are clamped to +-max_distance, so distance max_distance
        shares its bias with everything beyond it on its side.

    Input (N, nH) packed real tokens and mask (B, L) -> output (N, 2 * nH).
    """

    def __init__(
        self, nH: int, dropout: float, max_distance: int, *, far_bias: bool = False
    ) -> None:
        super().__init__()
        self.max_distance = max_distance
        self.far_bias = far_bias
        self.F_intra = FeedForward(nH, nH, dropout)
        # One bias per signed distance in [-max_distance, max_distance], and
        # with far_bias one more (the last) for all distances beyond.
        self.distance_bias = nn.Parameter(
            torch.zeros(2 * max_distance + 1 + int(far_bias))
        )

    def bias_index(self, L: int, device=None) -> torch.Tensor:
        """(L, L) index into ``distance_bias`` for positions i (row), j."""
        positions = torch.arange(L, device=device)
        distance = positions.unsqueeze(1) - positions.unsqueeze(0)
        index = (
            distance.clamp(-self.max_distance, self.max_distance) + self.max_distance
        )
        if self.far_bias:
            far = distance.abs() > self.max_distance
            index = index.masked_fill(far, 2 * self.max_distance + 1)
        return index

    def forward(self, X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        L = mask.shape[1]
        FX = _pad(self.F_intra(X), mask)  # (B, L, nH)
        scores = torch.bmm(FX, FX.transpose(1, 2))
        scores = scores + self.distance_bias[self.bias_index(L, device=X.device)]
        weights = masked_softmax(scores, mask.unsqueeze(1), dim=2)
        aligned = torch.bmm(weights, _pad(X, mask))[mask]
        return torch.cat([X, aligned], dim=-1)


class _NormalLazyLinear(nn.LazyLinear):
    """``nn.LazyLinear`` whose weight is drawn from N(0, init_std^2) (bias
    zero) when the input width becomes known. Loading a state dict
    materializes the weight without calling ``reset_parameters``, so loaded
    weights are never overwritten."""

    def __init__(self, out_features: int, *, bias: bool, init_std: float) -> None:
        self.init_std = init_std
        super().__init__(out_features, bias=bias)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            _normal_init(self, self.init_std)


def _normal_init(module: nn.Linear, std: float) -> None:
    nn.init.normal_(module.weight, 0.0, std)
    if module.bias is not None:
        nn.init.zeros_(module.bias)


# The number of sentence-level overlap measures ``lexical_features`` returns.
N_LEXICAL = 7
# The measures reach the output layer centred and scaled, (x - 0.5) * 10: a
# new output layer fine-tuned with Adam moves each weight by about the learn
# rate per step, too little in 1,500 steps to give inputs that vary by a few
# tenths a say in the logits (MRPC: unscaled, ROC AUC 0.753-0.781; scaled,
# 0.773-0.798; docs/pair_classifier.md, "Lexical features").
LEXICAL_SCALE = 10.0


def lexical_features(
    same: torch.Tensor, A_lengths: torch.Tensor, B_lengths: torch.Tensor
) -> torch.Tensor:
    """Sentence-level overlap of two texts from their exact-match matrix:
    the share of each text's tokens that occur in the other, the share of
    its token bigrams that occur in the other, the smaller of each two, and
    the shorter text's length over the longer's. Word overlap alone ranks
    paraphrases (MRPC) as well as a fine-tuned DA does; given to the output
    layer as they are, these need not be re-learnt from a few thousand
    sums over tokens.

    same (B, La, Lb) bool: token i of the first text has the form of token j
        of the second (False on padding and on NULL tokens, which is all the
        positions beyond the lengths and, with a NULL token, row / column 0).
    A_lengths (B,), B_lengths (B,) int: the real tokens of each text.
    RETURNS (B, N_LEXICAL) float in [0, 1]; zeros for an empty text.
    """
    same = same.bool()
    n_a = A_lengths.to(torch.float32).clamp(min=1.0)
    n_b = B_lengths.to(torch.float32).clamp(min=1.0)
    words_a = same.any(dim=2).sum(dim=1) / n_a
    words_b = same.any(dim=1).sum(dim=1) / n_b
    # Token i, i+1 of the first text match tokens j, j+1 of the second.
    bigrams = same[:, :-1, :-1] & same[:, 1:, 1:]
    bigrams_a = bigrams.any(dim=2).sum(dim=1) / (n_a - 1.0).clamp(min=1.0)
    bigrams_b = bigrams.any(dim=1).sum(dim=1) / (n_b - 1.0).clamp(min=1.0)
    ratio = torch.minimum(n_a, n_b) / torch.maximum(n_a, n_b)
    empty = (A_lengths == 0) | (B_lengths == 0)
    ratio = torch.where(empty, torch.zeros_like(ratio), ratio)
    return torch.stack(
        [
            words_a,
            words_b,
            torch.minimum(words_a, words_b),
            bigrams_a,
            bigrams_b,
            torch.minimum(bigrams_a, bigrams_b),
            ratio,
        ],
        dim=1,
    )


class DecomposableAttention(nn.Module):
    """Decomposable Attention for text pairs.

    nI (Optional[int]): Width of the input token vectors. None infers it from
        the first batch (``nn.LazyLinear``), which lets the width of a
        spacy-transformers listener or a vectors table be unknown when the
        model is built.
    nH (int): Hidden width (200 in the paper).
    nO (Optional[int]): Number of output classes. None returns the hidden
        pair representation (B, nH) instead of logits, for callers that add
        their own output layer.
    dropout (float): Dropout on the inputs of every feed-forward layer.
    intra_attention (bool): Use intra-sentence attention.
    max_distance (int): Distance cap of the intra-attention bias.
    far_bias (bool): One intra-attention bias shared by all distances beyond
        ``max_distance`` (the paper); False clamps them onto +-max_distance
        (``spacy-attn.DecomposableAttention.v1``). See ``IntraAttention``.
    init_std (Optional[float]): Draw every weight of the projection and of
        F, G, H (and F_intra) from N(0, init_std^2), biases zero: the paper
        used 0.01. None keeps PyTorch's default (Kaiming-uniform) init.
    null_token (bool): Put a learned "NULL" token before each text (the
        paper's, as its replications read it), so that a token of one text
        can align to nothing in the other. It is a trained vector of width
        nH standing for the projected NULL word, drawn from N(0, init_std^2)
        (N(0, 1/nH) when init_std is None), and is a token like any other
        from there on: it attends, is attended to (intra-attention too), and
        its comparison vector is summed with the words'. False: real tokens
        only (v1, v2).
    exact_match (bool): Beyond the paper: tell the model which tokens are
        identical across the two texts (DrQA's exact-match feature, Chen et
        al. 2017). A learned scalar ``match_bias`` is added to the attention
        logit e_ij of every identical pair, and the compare network G gets
        one more input per token, 1.0 when its form occurs in the other
        text. Soft alignment over fixed vectors does not find exact matches
        on its own (docs/pair_classifier.md, "Exact match"); the caller
        passes integer token ids (equal ids = the same form).
    lexical_features (bool): Beyond the paper: append ``N_LEXICAL`` sentence
        -level overlap measures of the two texts (``lexical_features``),
        centred and scaled by ``LEXICAL_SCALE``, to the pair representation
        the output layer reads. They hold no weights; the token ids are
        needed as for ``exact_match``.

    forward(A, A_lengths, B, B_lengths, A_ids=None, B_ids=None):
        A (B, La, nI) float, A_lengths (B,) int, B (B, Lb, nI), B_lengths (B,);
        with ``exact_match`` or ``lexical_features``, A_ids (B, La) and B_ids
        (B, Lb) int token ids (padding never compared: only positions within
        the lengths count).
        RETURNS (B, nO) logits, or (B, nH) features when nO is None
        ((B, nH + N_LEXICAL) with ``lexical_features``).
    """

    def __init__(
        self,
        nI: Optional[int],
        nH: int = 200,
        nO: Optional[int] = None,
        *,
        dropout: float = 0.2,
        intra_attention: bool = False,
        max_distance: int = 10,
        far_bias: bool = False,
        init_std: Optional[float] = None,
        null_token: bool = False,
        exact_match: bool = False,
        lexical_features: bool = False,
    ) -> None:
        super().__init__()
        self.nH = nH
        self.lexical_features = lexical_features
        self.intra_attention = intra_attention
        self.null: Optional[nn.Parameter] = None
        # The paper projects the (fixed) word vectors to the hidden width
        # before attending; this is the only trained map on the raw vectors.
        self.project: nn.Linear  # nn.LazyLinear is a subclass
        self.intra: Optional[IntraAttention]
        if nI is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # LazyLinear's "new feature" note
                if init_std is None:
                    self.project = nn.LazyLinear(nH, bias=False)
                else:
                    self.project = _NormalLazyLinear(nH, bias=False, init_std=init_std)
        else:
            self.project = nn.Linear(nI, nH, bias=False)
        if intra_attention:
            self.intra = IntraAttention(nH, dropout, max_distance, far_bias=far_bias)
            nA = 2 * nH
        else:
            self.intra = None
            nA = nH
        self.F = FeedForward(nA, nH, dropout)
        # With exact_match, G also reads the token's "has a match" flag.
        self.G = FeedForward(2 * nA + int(exact_match), nH, dropout)
        self.H = FeedForward(2 * nH, nH, dropout)
        nP = nH + N_LEXICAL * int(lexical_features)
        self.output = nn.Linear(nP, nO) if nO is not None else None
        if init_std is not None:
            # A lazy projection is drawn when its width is known (see
            # _NormalLazyLinear); every other linear map now.
            for layer in self.modules():
                if type(layer) is nn.Linear:
                    _normal_init(layer, init_std)
        if null_token:
            # Drawn last, so that the other weights are those of the same
            # seed without it.
            std = init_std if init_std is not None else nH**-0.5
            self.null = nn.Parameter(torch.randn(nH) * std)
        self.match_bias: Optional[nn.Parameter] = None
        if exact_match:
            # Starts at 1: an identical pair gets e (about 2.7) times the
            # attention of an unrelated one before any training, so the first
            # steps already see the matches; training may scale it either way.
            # Shape (1,), not a 0-d scalar: Thinc's optimizers take len().
            self.match_bias = nn.Parameter(torch.ones(1))

    @property
    def null_token(self) -> bool:
        """Whether each text starts with the learned NULL token."""
        return self.null is not None

    @property
    def exact_match(self) -> bool:
        """Whether the model reads the exact-match signal (token ids)."""
        return self.match_bias is not None

    def _same(self, A_ids, mask_a, B_ids, mask_b) -> torch.Tensor:
        """(B, La, Lb) bool: True where token i of A and token j of B have
        the same id, both within their lengths; the NULL tokens (when there)
        match nothing. Masks are those of the real tokens."""
        if A_ids is None or B_ids is None:
            raise ValueError(
                "This DecomposableAttention has exact_match=True or "
                "lexical_features=True: pass the token ids A_ids and B_ids."
            )
        La, Lb = mask_a.shape[1], mask_b.shape[1]
        same = A_ids[:, :La].unsqueeze(2) == B_ids[:, :Lb].unsqueeze(1)
        same = same & mask_a.unsqueeze(2) & mask_b.unsqueeze(1)
        if self.null is not None:
            same = nn.functional.pad(same, (1, 0, 1, 0))
        return same

    def _attend(self, A, A_lengths, B, B_lengths, A_ids=None, B_ids=None):
        """Project (and self-align) the tokens and score every pair of them:
        e_ij = F(a_i) . F(b_j) (+ match_bias for identical tokens with
        ``exact_match``). With ``null_token`` each text starts with the
        NULL token, so its length and La, Lb below are one more.

        RETURNS: a (Na, nA) and b (Nb, nA) packed token vectors, their masks
            (B, La) and (B, Lb), the attention logits e (B, La, Lb) and the
            exact-match matrix (B, La, Lb), or None without ``exact_match``.
        """
        mask_a = length_mask(A_lengths, A.shape[1])  # (B, La)
        mask_b = length_mask(B_lengths, B.shape[1])  # (B, Lb)
        same = None
        if self.match_bias is not None or self.lexical_features:
            same = self._same(A_ids, mask_a, B_ids, mask_b).to(A.dtype)
        a = self.project(A[mask_a])  # (Na, nH)
        b = self.project(B[mask_b])  # (Nb, nH)
        if self.null is not None:
            a, mask_a = _prepend(a, mask_a, self.null)
            b, mask_b = _prepend(b, mask_b, self.null)
        if self.intra is not None:
            a = self.intra(a, mask_a)  # (Na, 2 nH)
            b = self.intra(b, mask_b)
        e = torch.bmm(_pad(self.F(a), mask_a), _pad(self.F(b), mask_b).transpose(1, 2))
        if same is not None and self.match_bias is not None:
            e = e + self.match_bias * same.to(e.dtype)
        return a, mask_a, b, mask_b, e, same

    def forward(
        self,
        A: torch.Tensor,
        A_lengths: torch.Tensor,
        B: torch.Tensor,
        B_lengths: torch.Tensor,
        A_ids: Optional[torch.Tensor] = None,
        B_ids: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        # The per-token networks (projection, F, G) dominate the cost, so they
        # run on the real tokens only ("packed", shape (N, d)); only the
        # attention matrices use the padded (batch, length, d) layout. Padded
        # positions therefore cost nothing and cannot leak into the result.
        a, mask_a, b, mask_b, e, same = self._attend(
            A, A_lengths, B, B_lengths, A_ids, B_ids
        )
        beta = torch.bmm(masked_softmax(e, mask_b.unsqueeze(1), dim=2), _pad(b, mask_b))
        alpha = torch.bmm(
            masked_softmax(e, mask_a.unsqueeze(2), dim=1).transpose(1, 2),
            _pad(a, mask_a),
        )
        # Compare, then aggregate by summing over each example's tokens.
        compare_a = [a, beta[mask_a]]
        compare_b = [b, alpha[mask_b]]
        if same is not None and self.match_bias is not None:
            # Whether each token's form occurs anywhere in the other text.
            compare_a.append(same.amax(dim=2)[mask_a].unsqueeze(-1).to(a.dtype))
            compare_b.append(same.amax(dim=1)[mask_b].unsqueeze(-1).to(b.dtype))
        v1 = self.G(torch.cat(compare_a, dim=-1))  # (Na, nH)
        v2 = self.G(torch.cat(compare_b, dim=-1))  # (Nb, nH)
        v1 = _segment_sum(v1, mask_a)  # (B, nH)
        v2 = _segment_sum(v2, mask_b)
        hidden = self.H(torch.cat([v1, v2], dim=-1))
        if self.lexical_features and same is not None:
            lexical = lexical_features(same, A_lengths, B_lengths).to(hidden.dtype)
            lexical = (lexical - 0.5) * LEXICAL_SCALE
            hidden = torch.cat([hidden, lexical], dim=-1)
        if self.output is None:
            return hidden
        return self.output(hidden)

    def attention(self, *inputs: Optional[torch.Tensor]) -> torch.Tensor:
        """The soft alignment weights of the first segment over the second,
        (B, La, Lb), rows summing to one over the second segment's tokens
        (for inspection). With ``null_token`` both texts start with the NULL
        token: (B, La + 1, Lb + 1), row and column 0 the NULL token's.

        inputs: ``forward``'s (A, A_lengths, B, B_lengths, and A_ids, B_ids
            with ``exact_match``).
        """
        _, mask_a, _, mask_b, e, _ = self._attend(*inputs)
        weights = masked_softmax(e, mask_b.unsqueeze(1), dim=2)
        return weights * mask_a.unsqueeze(2)
