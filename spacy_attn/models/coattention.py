"""The Dynamic Coattention Network of Xiong, Zhong & Socher (2017), in plain PyTorch.

"Dynamic Coattention Networks for Question Answering", ICLR 2017.
Shared LSTM encoder with sentinels, coattention encoder (affinity matrix,
attention both ways, fusion BiLSTM) and the dynamic pointing decoder with
highway maxout networks (HMN).

Like ``decomposable_attention.py`` this module knows nothing about spaCy or
Thinc: it maps padded question / context tensors to start and end logits, and
``top_spans`` turns those into ranked answer spans.

Shapes: B = batch size (one row per question-context *window*), n / m =
padded question / context lengths, nI = input token-vector width, l = hidden
width (200 in the paper), p = maxout pool size (16 in the paper),
T = number of decoder iterations.
"""

import warnings
from typing import Optional, Tuple

import torch
from torch import nn

from ._util import (
    MASK_VALUE,
    host_lengths_of,
    length_mask,
    masked_softmax,
    packed_positions,
    select_rows,
)
from .rnn import run_lstm

__all__ = [
    "DynamicCoattention",
    "HighwayMaxout",
    "no_answer_scores",
    "span_logits",
    "top_spans",
]


def _run_lstm(
    lstm: nn.LSTM, X: torch.Tensor, lengths: torch.Tensor, host_lengths: torch.Tensor
) -> torch.Tensor:
    """Run ``lstm`` over zero-padded (B, L, d) rows, reading only the first
    ``lengths`` positions of each; outputs beyond a row's length (and all
    outputs of an empty row) are zero, so padding never reaches a real
    position. ``spacy_attn.models.rnn.run_lstm`` gives the result of packed
    sequences: padded on CPU (torch's CPU backward over packed batches is
    slow), packed through cuDNN with the module's flat weights on CUDA.
    ``host_lengths``: the same lengths on the CPU.
    """
    return run_lstm(lstm, X, lengths, host_lengths=host_lengths)


def _gather_rows(U: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """(B, m, d), (B,) positions -> (B, d): row ``index[b]`` of each U[b]."""
    B, m = U.shape[0], U.shape[1]
    rows = torch.arange(B, device=U.device) * m + index
    return select_rows(U.reshape(B * m, U.shape[2]), rows)


class HighwayMaxout(nn.Module):
    """Highway maxout network scoring every context position (paper eq. 9-12).

    r = tanh(W_D [h; u_s; u_e]); m1_t = max(W1 [u_t; r] + b1);
    m2_t = max(W2 m1_t + b2); score_t = max(W3 [m1_t; m2_t] + b3).

    ``W1 [u_t; r]`` is split into ``W1u u_t + W1r r``: the ``u_t`` half does
    not depend on the decoder iteration, so ``precompute`` evaluates it once
    per batch instead of once per iteration (the single biggest saving of the
    decoder).
    """

    def __init__(self, hidden: int, pool_size: int, dropout: float) -> None:
        super().__init__()
        self.hidden = hidden
        self.pool_size = pool_size
        self.W_D = nn.Linear(5 * hidden, hidden, bias=False)
        self.W1_u = nn.Linear(2 * hidden, pool_size * hidden)  # holds b1
        self.W1_r = nn.Linear(hidden, pool_size * hidden, bias=False)
        self.W2 = nn.Linear(hidden, pool_size * hidden)
        self.W3 = nn.Linear(2 * hidden, pool_size)
        self.dropout = nn.Dropout(dropout)

    def precompute(self, u: torch.Tensor) -> torch.Tensor:
        """Packed (N, 2l) context encodings -> (N, p*l) iteration-independent part."""
        return self.W1_u(u)

    def _maxout(self, X: torch.Tensor) -> torch.Tensor:
        # (N, l*p) -> (N, l): p consecutive features form one maxout unit.
        return X.view(X.shape[0], self.hidden, self.pool_size).max(dim=-1).values

    def forward(
        self,
        pre: torch.Tensor,
        example: torch.Tensor,
        h: torch.Tensor,
        u_s: torch.Tensor,
        u_e: torch.Tensor,
    ) -> torch.Tensor:
        """pre (N, p*l) from ``precompute``, example (N,) row of each token,
        h (B, l), u_s and u_e (B, 2l) -> (N,) scores of the packed tokens."""
        r = torch.tanh(self.W_D(torch.cat([h, u_s, u_e], dim=-1)))  # (B, l)
        # Added to in place: the selected (N, p*l) rows are a new tensor that
        # autograd does not keep, and a third tensor of that size would be one
        # more allocation.
        m1 = self._maxout(select_rows(self.W1_r(r), example).add_(pre))  # (N, l)
        m2 = self._maxout(self.W2(self.dropout(m1)))  # (N, l)
        return self.W3(torch.cat([m1, m2], dim=-1)).max(dim=-1).values  # (N,)


class DynamicCoattention(nn.Module):
    """Dynamic Coattention Network: question + context -> start / end logits.

    nI (Optional[int]): Width of the input token vectors. The paper feeds
        them straight into the encoder LSTM. None (width unknown when the
        model is built, e.g. a transformer listener) adds a learned linear
        projection to ``hidden`` whose input width is inferred from the first
        batch (``nn.LazyLinear``).
    hidden (int): Hidden width l of every LSTM and HMN (200 in the paper).
    pool_size (int): Maxout pool size p (16 in the paper).
    max_iterations (int): Decoder iterations (4 in the paper). Training
        always runs all of them (the loss sums over iterations); inference
        stops a row as soon as its start and end stop changing.
    dropout (float): Dropout on the input vectors, the coattention encoding
        U and inside the HMNs.
    no_answer (bool): Keep the context sentinel as position 0 of U and score
        it like a token: pointing start and end at it means "no answer"
        (``spacy-attn.DynamicCoattention.v2``-``v4``). False is the paper's
        model.
    token_estimate (bool): With ``no_answer``: the decoder's running
        estimate (the start / end whose encodings feed the next iteration,
        and on which inference stops) is the best context token, never the
        sentinel, so every iteration refines a span; the sentinel is still
        scored at every iteration (``spacy-attn.DynamicCoattention.v3``, v4).
        False: the argmax over all positions, sentinel included (v2).

    forward(Q, Q_lengths, D, D_lengths):
        Q (B, n, nI) float, Q_lengths (B,) int, D (B, m, nI), D_lengths (B,)
        RETURNS start_logits (B, T, m'), end_logits (B, T, m') and iterations
        (B,) int, with m' = m, or m + 1 with ``no_answer`` (column 0 the
        sentinel, column j + 1 context token j). In training mode
        T = max_iterations (one slice per decoder iteration, for the
        cumulative loss); in eval mode T = 1, the logits of the iteration at
        which each row stopped. Padded context positions get
        the logit -1e4 (probability exactly 0 after a softmax).
    """

    def __init__(
        self,
        nI: Optional[int],
        hidden: int = 200,
        *,
        pool_size: int = 16,
        max_iterations: int = 4,
        dropout: float = 0.3,
        no_answer: bool = False,
        token_estimate: bool = False,
    ) -> None:
        super().__init__()
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}.")
        if pool_size < 1 or hidden < 1:
            raise ValueError(
                f"hidden ({hidden}) and pool_size ({pool_size}) must be >= 1."
            )
        self.hidden = hidden
        self.max_iterations = max_iterations
        self.no_answer = no_answer
        self.token_estimate = no_answer and token_estimate
        self.project: Optional[nn.LazyLinear]
        if nI is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # LazyLinear's "new feature" note
                self.project = nn.LazyLinear(hidden)
            enc_in = hidden
        else:
            self.project = None
            enc_in = nI
        self.input_dropout = nn.Dropout(dropout)
        # One encoder for question and document (paper section 2.1).
        self.encoder = nn.LSTM(enc_in, hidden, batch_first=True)
        # Sentinels let a word attend to "nothing" in the other text.
        self.sentinel_q = nn.Parameter(torch.empty(hidden).uniform_(-0.1, 0.1))
        self.sentinel_d = nn.Parameter(torch.empty(hidden).uniform_(-0.1, 0.1))
        self.question_proj = nn.Linear(hidden, hidden)
        self.fusion = nn.LSTM(3 * hidden, hidden, batch_first=True, bidirectional=True)
        self.u_dropout = nn.Dropout(dropout)
        self.decoder = nn.LSTMCell(4 * hidden, hidden)
        self.hmn_start = HighwayMaxout(hidden, pool_size, dropout)
        self.hmn_end = HighwayMaxout(hidden, pool_size, dropout)

    # -- encoder ---------------------------------------------------------

    def encode(
        self,
        Q: torch.Tensor,
        Q_lengths: torch.Tensor,
        D: torch.Tensor,
        D_lengths: torch.Tensor,
        *,
        host_lengths: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
    ) -> torch.Tensor:
        """Coattention encoding U (B, m, 2l), zero at padded positions; with
        ``no_answer``, (B, m + 1, 2l) with the sentinel's encoding first.
        ``host_lengths``: (Q_lengths, D_lengths) on the CPU, if the caller has
        them (read from the device here otherwise)."""
        B, n, m = Q.shape[0], Q.shape[1], D.shape[1]
        if host_lengths is None:
            host_q, host_d = host_lengths_of(Q_lengths, D_lengths)
        else:
            host_q, host_d = host_lengths
        L = max(n, m)
        if self.project is not None:
            Q, D = self.project(Q), self.project(D)
        # Encode question and context in ONE packed LSTM call over 2B rows.
        X = Q.new_zeros(2 * B, L, Q.shape[-1])
        X[:B, :n] = Q
        X[B:, :m] = D
        lengths = torch.cat([Q_lengths, D_lengths])
        X = self.input_dropout(X)
        H = _run_lstm(self.encoder, X, lengths, torch.cat([host_q, host_d]))
        Qe, De = H[:B, :n], H[B:, :m]  # (B, n, l), (B, m, l)
        # Sentinels at position 0; real tokens at 1..len. A sentinel is always real.
        ones = torch.ones(B, 1, dtype=torch.bool, device=Q.device)
        mask_q = torch.cat([ones, length_mask(Q_lengths, n)], dim=1)  # (B, n+1)
        mask_d = torch.cat([ones, length_mask(D_lengths, m)], dim=1)  # (B, m+1)
        Qe = torch.cat([self.sentinel_q.expand(B, 1, -1), Qe], dim=1)
        De = torch.cat([self.sentinel_d.expand(B, 1, -1), De], dim=1)
        # Q = tanh(W Q' + b), zeroed again at padding (tanh(b) != 0).
        Qp = torch.tanh(self.question_proj(Qe)) * mask_q.unsqueeze(-1).to(Qe.dtype)
        # Affinity L = D^T Q: (B, m+1, n+1).
        aff = torch.bmm(De, Qp.transpose(1, 2))
        # A^Q: for each question word, weights over the context (dim 1).
        A_Q = masked_softmax(aff, mask_d.unsqueeze(2), dim=1)  # (B, m+1, n+1)
        # A^D: for each context word, weights over the question (dim 2).
        A_D = masked_softmax(aff, mask_q.unsqueeze(1), dim=2)  # (B, m+1, n+1)
        C_Q = torch.bmm(A_Q.transpose(1, 2), De)  # (B, n+1, l)
        C_D = torch.bmm(A_D, torch.cat([Qp, C_Q], dim=-1))  # (B, m+1, 2l)
        fused = torch.cat([De, C_D], dim=-1)  # (B, m+1, 3l)
        if self.no_answer:
            # The sentinel stays as a position the decoder can point at.
            return _run_lstm(self.fusion, fused, D_lengths + 1, host_d + 1)
        # Fusion BiLSTM over the real context words (sentinel dropped): U.
        return _run_lstm(self.fusion, fused[:, 1:], D_lengths, host_d)

    # -- decoder ---------------------------------------------------------

    def forward(
        self,
        Q: torch.Tensor,
        Q_lengths: torch.Tensor,
        D: torch.Tensor,
        D_lengths: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        Q_lengths = Q_lengths.long()
        D_lengths = D_lengths.long()
        host_q, host_d = host_lengths_of(Q_lengths, D_lengths)
        U = self.encode(Q, Q_lengths, D, D_lengths, host_lengths=(host_q, host_d))
        U = self.u_dropout(U)  # (B, m', 2l)
        B, m = U.shape[0], U.shape[1]
        offset = int(self.no_answer)  # the sentinel's column, if scored
        lengths = D_lengths + offset
        # The HMNs score real context tokens only ("packed", (N, .)).
        positions = packed_positions(host_d + offset, m, U.device)  # (N,)
        u = U.flatten(0, 1).index_select(0, positions)  # (N, 2l)
        example = torch.div(positions, m, rounding_mode="floor")
        pre_s = self.hmn_start.precompute(u)
        pre_e = self.hmn_end.precompute(u)

        def scores(hmn, pre, h, u_s, u_e):
            out = U.new_full((B * m,), MASK_VALUE)
            found = hmn(pre, example, h, u_s, u_e)
            return out.index_copy(0, positions, found).view(B, m)

        # First and last context token (the sentinel for an empty context).
        s = torch.clamp(D_lengths, max=offset)
        e = (lengths - 1).clamp(min=0)
        h = U.new_zeros(B, self.hidden)
        c = U.new_zeros(B, self.hidden)
        all_s, all_e = [], []
        final_s = U.new_full((B, m), MASK_VALUE)
        final_e = U.new_full((B, m), MASK_VALUE)
        iterations = torch.zeros(B, dtype=torch.long, device=U.device)
        active = torch.ones(B, dtype=torch.bool, device=U.device)
        for _ in range(self.max_iterations):
            u_s, u_e = _gather_rows(U, s), _gather_rows(U, e)
            h, c = self.decoder(torch.cat([u_s, u_e], dim=-1), (h, c))
            # Both HMNs read the previous estimate (paper eq. 6-8).
            alpha = scores(self.hmn_start, pre_s, h, u_s, u_e)
            beta = scores(self.hmn_end, pre_e, h, u_s, u_e)
            new_s, new_e = (
                self._estimate(alpha, D_lengths),
                self._estimate(beta, D_lengths),
            )
            if self.training:
                all_s.append(alpha)
                all_e.append(beta)
                iterations += 1
                s, e = new_s, new_e
                continue
            # Inference: rows that stopped keep the logits of their last
            # iteration, so a row's result never depends on its batch.
            keep = active.unsqueeze(1)
            final_s = torch.where(keep, alpha, final_s)
            final_e = torch.where(keep, beta, final_e)
            iterations += active.long()
            changed = (new_s != s) | (new_e != e)
            s = torch.where(active, new_s, s)
            e = torch.where(active, new_e, e)
            active = active & changed
            if not bool(active.any()):
                break
        if self.training:
            return torch.stack(all_s, dim=1), torch.stack(all_e, dim=1), iterations
        return final_s.unsqueeze(1), final_e.unsqueeze(1), iterations

    def _estimate(self, logits: torch.Tensor, D_lengths: torch.Tensor) -> torch.Tensor:
        """(B, m') logits -> (B,) the decoder's next start or end estimate."""
        if not self.token_estimate or logits.shape[1] < 2:
            return logits.argmax(dim=1)
        # Why: with the sentinel as a candidate, a model unsure whether
        # there is an answer puts its estimate on the sentinel, and the next
        # iteration reads the sentinel's encoding instead of a span's: the
        # dynamic pointing stops refining spans. The best token keeps it on
        # one (an empty context keeps the sentinel).
        best_token = logits[:, 1:].argmax(dim=1) + 1
        return torch.where(D_lengths > 0, best_token, torch.zeros_like(best_token))


def span_logits(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    lengths: torch.Tensor,
    *,
    max_answer_length: int,
) -> torch.Tensor:
    """Scores of every valid span, in a band layout.

    start_logits, end_logits (B, m); lengths (B,) real context lengths.
    RETURNS (B, m, K), K = min(max_answer_length, m): entry [b, i, k] is
        start_logits[b, i] + end_logits[b, i + k], the log of
        p_start(i) * p_end(i + k) up to a per-row constant, for the span from
        token i to token i + k (inclusive). Invalid spans (past the real
        context) are -inf; start <= end and the length limit hold by
        construction.
    """
    B, m = start_logits.shape
    if max_answer_length < 1:
        raise ValueError(f"max_answer_length must be >= 1, got {max_answer_length}.")
    K = max(min(max_answer_length, m), 1)
    device = start_logits.device
    start_logits, end_logits = start_logits.float(), end_logits.float()
    # end logits shifted by k: column k holds end_logits(i + k).
    padded_e = torch.cat([end_logits, end_logits.new_zeros(B, K)], dim=1)
    ends_at = torch.arange(m, device=device).unsqueeze(1) + torch.arange(
        K, device=device
    )
    band = start_logits.unsqueeze(2) + padded_e[:, ends_at]  # (B, m, K)
    valid = ends_at.unsqueeze(0) < lengths.long().view(B, 1, 1)
    return band.masked_fill(~valid, float("-inf"))


def _group_sum(values: torch.Tensor, group: torch.Tensor, n: int) -> torch.Tensor:
    """(B,) finite values, (B,) group ids in 0..n-1 -> (n,) sums per group.

    A one-hot (n, B) product rather than ``index_add_``: on CUDA that adds
    with atomics in no fixed order, so the same weights could score a
    multi-window context differently from one run to the next.
    """
    onehot = group.view(1, -1) == torch.arange(n, device=group.device).view(-1, 1)
    return onehot.to(values.dtype) @ values


def _group_logsumexp(
    row_lse: torch.Tensor, group: torch.Tensor, n: int
) -> torch.Tensor:
    """(B,) per-row log-sum-exp, (B,) group ids in 0..n-1 -> (B,) log-sum-exp
    over each row's group."""
    finite = torch.isfinite(row_lse)
    shift = row_lse.new_full((n,), float("-inf")).scatter_reduce(
        0, group, row_lse, reduce="amax", include_self=True
    )
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
    summed = _group_sum(
        torch.where(
            finite, torch.exp(row_lse - shift[group]), torch.zeros_like(row_lse)
        ),
        group,
        n,
    )
    return (shift + torch.log(summed))[group]


def top_spans(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    lengths: torch.Tensor,
    *,
    max_answer_length: int,
    top_k: int,
    group: Optional[torch.Tensor] = None,
    n_groups: Optional[int] = None,
    null_logits: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``top_k`` most probable valid spans of every row.

    The score of a span (i, j) is exp(start_logit(i) + end_logit(j)) divided
    by the sum of the same over every valid span (start <= end, at most
    ``max_answer_length`` tokens, inside the real context) of every row of
    its ``group``. For a row alone (the default: each row its own group) this
    is p_start(i) * p_end(j) renormalized over the valid spans, so a row's
    scores sum to one. Grouping the windows of one long context normalizes
    their spans jointly, so scores are comparable across the windows.

    group (Optional[Tensor]): (B,) int group id per row (ids 0..G-1).
    n_groups (Optional[int]): G, when the caller knows it. None reads it from
        ``group`` (a device-to-host sync on CUDA).
    null_logits (Optional[Tensor]): (B,) the "no answer" logit of each row
        (start + end logit of the sentinel); it joins the normalization as
        one more outcome, so spans and "no answer" sum to one per group
        (``no_answer_scores`` gives its share).
    RETURNS starts (B, k), ends (B, k) (inclusive token positions) and
        scores (B, k), best first; k = min(top_k, number of band cells).
        Slots without a valid span (short or empty contexts) have score 0
        and start = end = -1; valid spans always rank above them.
    """
    band = span_logits(
        start_logits, end_logits, lengths, max_answer_length=max_answer_length
    )
    B, m, K = band.shape
    norm = _span_norm(band, group, n_groups, null_logits)
    k = max(min(top_k, m * K), 0)
    ranked, flat = band.reshape(B, m * K).topk(k, dim=1)
    valid = torch.isfinite(ranked)
    scores = torch.where(
        valid, torch.exp(ranked - norm.unsqueeze(1)), torch.zeros_like(ranked)
    )
    starts = torch.div(flat, K, rounding_mode="floor")
    ends = starts + flat % K
    starts = torch.where(valid, starts, torch.full_like(starts, -1))
    ends = torch.where(valid, ends, torch.full_like(ends, -1))
    return starts, ends, scores


def _span_norm(
    band: torch.Tensor,
    group: Optional[torch.Tensor],
    n_groups: Optional[int],
    null_logits: Optional[torch.Tensor],
) -> torch.Tensor:
    """(B, m, K) band -> (B,) log of each row's group normalizer: every valid
    span of every row of the group (and each row's null logit, if given)."""
    B = band.shape[0]
    if group is None:
        group, n_groups = torch.arange(B, device=band.device), B
    elif n_groups is None:
        n_groups = int(group.max().item()) + 1 if len(group) else 0
    row_lse = band.reshape(B, -1).logsumexp(dim=1)
    if null_logits is not None:
        row_lse = torch.logaddexp(row_lse, null_logits.float())
    return _group_logsumexp(row_lse, group.long(), n_groups)


def no_answer_scores(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    lengths: torch.Tensor,
    null_logits: torch.Tensor,
    *,
    max_answer_length: int,
    group: torch.Tensor,
    n_groups: int,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The probability of "no answer" of each group, normalized like the
    spans of ``top_spans(..., null_logits=...)``: the summed
    exp(null logit) of the group's rows over the group's normalizer.

    start_logits, end_logits (B, m); lengths (B,); null_logits (B,); group
        (B,) ids in 0..n_groups-1.
    RETURNS (Tuple[Tensor, Tensor]): (n_groups,) "no answer" probabilities
        and (n_groups,) log normalizers (a span's logit start + end is
        log(score) + the normalizer: comparable between contexts).
    """
    band = span_logits(
        start_logits, end_logits, lengths, max_answer_length=max_answer_length
    )
    norm = _span_norm(band, group, n_groups, null_logits)  # (B,)
    group = group.long()
    doc_norm = norm.new_zeros(n_groups).index_copy_(0, group, norm)
    share = torch.exp(null_logits.float() - norm)
    p_null = _group_sum(share, group, n_groups)
    return p_null, doc_norm
