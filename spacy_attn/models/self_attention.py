"""Self-attentive sentence embeddings (torch only, no spaCy).

* ``StructuredSelfAttention``: Lin et al. (2017), "A Structured Self-Attentive
  Sentence Embedding". A BiLSTM gives token states H (L x 2u); r attention
  hops A = softmax(W_s2 tanh(W_s1 H^T)) (r x L) pool them into the embedding
  matrix M = A H (r x 2u). The penalty ||A A^T - I||_F^2 pushes the hops to
  attend to different tokens.
* ``GeneralizedPooling``: Chen, Ling & Zhu (2018), "Enhancing Sentence
  Embedding with Generalized Pooling". Vector-based multi-head attention:
  head i scores every *dimension* of every token,
  A^i = softmax_t(W2^i ReLU(W1^i H^T + b1^i) + b2^i) (2u x L), and pools
  v^i = sum_t A^i[:, t] * h_t. Three optional disagreement penalties, each a
  hinge max(margin - ||X^i - X^j||^2, 0) over pairs of heads i < j, on the
  first-layer weights W1, on the attention matrices A and on the head
  outputs v.

Both return the same four tensors, so they are interchangeable:
``M`` (B, r, 2u) the embedding matrix (r = hops or heads), ``A`` (B, r, L)
per-hop token weights (rows sum to one over real tokens, exact zeros on
padding; for generalized pooling the mean over dimensions), ``H`` (B, L, 2u)
the BiLSTM states (zeros on padding) and ``penalty``, a scalar tensor with
the weighted penalty of the batch (already multiplied by its coefficients, so
a caller adds it to its loss as it is).
"""

import warnings
from typing import List, Optional, Tuple

import torch
from torch import nn

from ._util import length_mask, masked_softmax
from .rnn import run_lstm

Output = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]

REDUCTIONS = ("sum", "mean")


class BiLSTM(nn.Module):
    """Bidirectional LSTM over padded sequences; padding never reaches a real
    token and its output is exactly zero.

    nI (Optional[int]): Input width. None builds the LSTM on the first forward
        pass, when the width of the token vectors is known (a vectors table
        or a transformer listener may not know it when the model is built).
        Loading a state dict also builds it, from the stored weight shapes.
    nH (int): Hidden units per direction (u in Lin et al.).
    depth (int): Number of stacked BiLSTM layers.
    dropout (float): Dropout on the LSTM inputs.

    forward(X, lengths): X (B, L, nI) float, lengths (B,) int
        RETURNS (B, L, 2 nH) float.
    """

    def __init__(
        self, nI: Optional[int], nH: int, *, depth: int = 1, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.nH = nH
        self.depth = depth
        self.dropout = nn.Dropout(dropout)
        self.lstm: Optional[nn.LSTM] = None
        if nI is not None:
            self._build(nI)
        self._register_load_state_dict_pre_hook(self._build_before_load)

    def _build(self, nI: int, device: Optional[torch.device] = None) -> None:
        self.lstm = nn.LSTM(
            nI, self.nH, num_layers=self.depth, batch_first=True, bidirectional=True
        ).to(device)

    def _build_before_load(self, state_dict, prefix, *args, **kwargs) -> None:
        key = prefix + "lstm.weight_ih_l0"
        if self.lstm is None and key in state_dict:
            self._build(state_dict[key].shape[1], device=state_dict[key].device)

    def forward(self, X: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if self.lstm is None:
            self._build(X.shape[-1], device=X.device)
        # Masked and padded on the CPU, packed for cuDNN on CUDA: see models/rnn.py.
        assert self.lstm is not None  # built just above
        return run_lstm(self.lstm, self.dropout(X), lengths)


class SelfAttentionBase(nn.Module):
    """Shared parts: the BiLSTM, the penalty reduction and its validation."""

    n_rows: int  # rows of the attention matrix: set by the subclass (hops or heads)

    def __init__(
        self, nI: Optional[int], nH: int, *, depth: int, dropout: float, reduction: str
    ) -> None:
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(
                f"reduction must be one of {REDUCTIONS}, got {reduction!r}"
            )
        self.nO = 2 * nH
        self.encoder = BiLSTM(nI, nH, depth=depth, dropout=dropout)
        # "sum" matches losses summed over the batch (spaCy's textcat), "mean"
        # losses averaged over it (the pair classifier): either way the ratio
        # of penalty to classification loss is the paper's.
        self.reduction = reduction

        # Larger batches run in length-sorted chunks (see forward).
        self.chunk_size = 32
        self.chunk_tokens = 16384

    def _chunks(self, lengths: torch.Tensor):
        """Index tensors of length-sorted (longest first) chunks of docs."""
        order = torch.argsort(lengths, descending=True).tolist()
        sizes = lengths.tolist()
        chunks: List[List[int]] = []
        current: List[int] = []
        for i in order:
            width = max(sizes[current[0]] if current else sizes[i], 1)
            if current and (
                len(current) == self.chunk_size
                or (len(current) + 1) * width > self.chunk_tokens
            ):
                chunks.append(current)
                current = []
            current.append(i)
        if current:
            chunks.append(current)
        return [torch.tensor(c, device=lengths.device) for c in chunks]

    def _encode(self, X: torch.Tensor, lengths: torch.Tensor):
        """RETURNS (M, A, H, per-doc penalty (B,))."""
        raise NotImplementedError

    def _batch_penalty(self, X: torch.Tensor) -> Optional[torch.Tensor]:
        """A penalty on the parameters only (not per doc), or None."""
        return None

    def forward(
        self,
        X: torch.Tensor,
        lengths: torch.Tensor,
        reduction: Optional[str] = None,
        *,
        batch_penalty: bool = True,
    ) -> Output:
        # reduction: this call's penalty reduction, else the module's. The
        # Thinc layer passes its attrs["penalty_reduction"] here, so the
        # component that owns the loss sets it without touching the module.
        # batch_penalty: include the penalty on the parameters
        # (``_batch_penalty``). A caller that encodes several batches for one
        # loss (the siamese model: both texts of a pair) includes it once.
        if reduction is None:
            reduction = self.reduction
        elif reduction not in REDUCTIONS:
            raise ValueError(
                f"reduction must be one of {REDUCTIONS}, got {reduction!r}"
            )
        B, L, _ = X.shape
        real = (lengths > 0).to(X.dtype)
        if B <= self.chunk_size and B * L <= self.chunk_tokens:
            M, A, H, per_doc = self._encode(X, lengths)
        else:
            # nlp.pipe hands over up to 1,000 docs: run length-sorted chunks,
            # each padded to its own longest doc only and holding at most
            # chunk_size docs and chunk_tokens padded tokens, so one long
            # review neither makes every row longer nor multiplies the memory
            # of the (chunk, r, L, ...) attention tensors by the batch size.
            M = X.new_zeros(B, self.n_rows, self.nO)
            A = X.new_zeros(B, self.n_rows, L)
            H = X.new_zeros(B, L, self.nO)
            per_doc = X.new_zeros(B)
            for chunk in self._chunks(lengths):
                width = max(int(lengths[chunk[0]]), 1)  # longest first
                m, a, h, p = self._encode(X[chunk, :width], lengths[chunk])
                M[chunk], A[chunk, :, :width], H[chunk, :width], per_doc[chunk] = (
                    m,
                    a,
                    h,
                    p,
                )
        penalty = (per_doc * real).sum()
        n_docs = real.sum()
        if reduction == "mean":
            penalty = penalty / n_docs.clamp(min=1)
        # A per-batch parameter penalty scales with the docs under "sum", so
        # its weight relative to a summed loss doesn't depend on batch size.
        param_penalty = self._batch_penalty(X) if batch_penalty else None
        if param_penalty is not None:
            penalty = penalty + param_penalty * (n_docs if reduction == "sum" else 1.0)
        return M, A, H, penalty


class StructuredSelfAttention(SelfAttentionBase):
    """Lin et al. (2017): BiLSTM + r-hop self-attention + ||AA^T - I||_F^2.

    nI (Optional[int]): Input width (None: inferred on the first batch).
    nH (int): LSTM hidden units per direction (u; 300 in the paper).
    nA (int): Attention hidden width (d_a; 350 for Yelp/Age, 150 for SNLI).
    hops (int): Number of attention hops (r; 30 in the paper).
    penalty_coef (float): Coefficient of the penalty (1.0 in the paper; 0 off).
    depth (int): BiLSTM layers.
    dropout (float): Dropout on the BiLSTM input.
    reduction (str): "sum" or "mean" of the per-doc penalty over the batch.

    forward(X, lengths): X (B, L, nI), lengths (B,)
        RETURNS (M (B, r, 2u), A (B, r, L), H (B, L, 2u), penalty ()).
    """

    def __init__(
        self,
        nI: Optional[int],
        nH: int = 300,
        nA: int = 350,
        hops: int = 30,
        *,
        penalty_coef: float = 1.0,
        depth: int = 1,
        dropout: float = 0.0,
        reduction: str = "sum",
    ) -> None:
        super().__init__(nI, nH, depth=depth, dropout=dropout, reduction=reduction)
        self.hops = self.n_rows = hops
        self.penalty_coef = penalty_coef
        self.W_s1 = nn.Linear(2 * nH, nA, bias=False)
        self.W_s2 = nn.Linear(nA, hops, bias=False)

    def _encode(self, X: torch.Tensor, lengths: torch.Tensor):
        H = self.encoder(X, lengths)  # (B, L, 2u)
        mask = length_mask(lengths, X.shape[1])  # (B, L)
        scores = self.W_s2(torch.tanh(self.W_s1(H))).transpose(1, 2)  # (B, r, L)
        A = masked_softmax(scores, mask.unsqueeze(1), dim=2)
        M = torch.bmm(A, H)  # (B, r, 2u)
        per_doc = (
            self.penalty_coef * frobenius_penalty(A)
            if self.penalty_coef
            else A.new_zeros(len(A))
        )
        return M, A, H, per_doc


def frobenius_penalty(A: torch.Tensor) -> torch.Tensor:
    """||A A^T - I||_F^2 per example: A (B, r, L) -> (B,)."""
    eye = torch.eye(A.shape[1], dtype=A.dtype, device=A.device)
    return ((torch.bmm(A, A.transpose(1, 2)) - eye) ** 2).sum(dim=(1, 2))


def pairwise_hinge(X: torch.Tensor, margin: float) -> torch.Tensor:
    """sum over head pairs i < j of max(margin - ||X_i - X_j||^2, 0).

    X (..., I, D): one flattened item per head. RETURNS (...): per leading index.
    """
    diff = X.unsqueeze(-2) - X.unsqueeze(-3)  # (..., I, I, D)
    dist = (diff**2).sum(-1)
    n = X.shape[-2]
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool, device=X.device), diagonal=1)
    return torch.relu(margin - dist[..., upper]).sum(-1)


class GeneralizedPooling(SelfAttentionBase):
    """Chen, Ling & Zhu (2018): vector-based multi-head attention pooling.

    nI (Optional[int]): Input width (None: inferred on the first batch).
    nH (int): LSTM hidden units per direction (u).
    nA (int): Hidden width of each head's two-layer attention network (d_a).
    heads (int): Number of heads (I).
    param_penalty (float): Coefficient of the disagreement penalty on the
        heads' first-layer weights W1 (0 = off).
    attention_penalty (float): ... on the heads' attention matrices A.
    output_penalty (float): ... on the heads' pooled vectors v.
    margin (float): The hinge margin (lambda) shared by the three penalties.
    depth, dropout, reduction: as in ``StructuredSelfAttention``. The
        parameter penalty does not depend on the docs; with "sum" it is
        multiplied by the number of (non-empty) docs so its weight relative
        to a summed loss does not change with the batch size.

    forward(X, lengths): X (B, L, nI), lengths (B,)
        RETURNS (M (B, I, 2u), A (B, I, L) attention averaged over the 2u
        dimensions, H (B, L, 2u), penalty ()).
    """

    def __init__(
        self,
        nI: Optional[int],
        nH: int = 300,
        nA: int = 600,
        heads: int = 5,
        *,
        param_penalty: float = 0.0,
        attention_penalty: float = 0.0,
        output_penalty: float = 0.0,
        margin: float = 1.0,
        depth: int = 1,
        dropout: float = 0.0,
        reduction: str = "sum",
    ) -> None:
        super().__init__(nI, nH, depth=depth, dropout=dropout, reduction=reduction)
        self.heads = self.n_rows = heads
        self.param_penalty = param_penalty
        self.attention_penalty = attention_penalty
        self.output_penalty = output_penalty
        self.margin = margin
        d = 2 * nH
        # All heads' weights stacked, so one einsum runs every head.
        self.W1 = nn.Parameter(torch.empty(heads, nA, d))
        self.b1 = nn.Parameter(torch.zeros(heads, nA))
        self.W2 = nn.Parameter(torch.empty(heads, d, nA))
        self.b2 = nn.Parameter(torch.zeros(heads, d))
        for W in (self.W1, self.W2):
            for i in range(heads):
                nn.init.xavier_uniform_(W.data[i])

    def _encode(self, X: torch.Tensor, lengths: torch.Tensor):
        H = self.encoder(X, lengths)  # (B, L, d)
        mask = length_mask(lengths, X.shape[1])  # (B, L)
        hidden = torch.relu(
            torch.einsum("bld,iad->bila", H, self.W1) + self.b1[None, :, None]
        )
        scores = (
            torch.einsum("bila,ida->bild", hidden, self.W2) + self.b2[None, :, None]
        )
        # Softmax over tokens, separately for every head and dimension.
        A = masked_softmax(scores, mask[:, None, :, None], dim=2)  # (B, I, L, d)
        M = (A * H.unsqueeze(1)).sum(dim=2)  # (B, I, d)
        per_doc = H.new_zeros(len(H))
        if self.attention_penalty:
            per_doc = per_doc + self.attention_penalty * pairwise_hinge(
                A.flatten(2), self.margin
            )
        if self.output_penalty:
            per_doc = per_doc + self.output_penalty * pairwise_hinge(M, self.margin)
        return M, A.mean(dim=3), H, per_doc

    def _batch_penalty(self, X: torch.Tensor) -> Optional[torch.Tensor]:
        if not self.param_penalty:
            return None
        return self.param_penalty * pairwise_hinge(self.W1.flatten(1), self.margin)


def build_encoder(kind: str, nI: Optional[int], **kwargs) -> SelfAttentionBase:
    """Build ``StructuredSelfAttention`` ("structured") or
    ``GeneralizedPooling`` ("generalized") from keyword settings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "structured":
            return StructuredSelfAttention(nI, **kwargs)
        if kind == "generalized":
            return GeneralizedPooling(nI, **kwargs)
    raise ValueError(f"Unknown self-attention encoder {kind!r}")
