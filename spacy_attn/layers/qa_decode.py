"""Decoding the DCN's start / end logits into ranked answer spans per doc."""

from typing import List, Optional, Sequence, Tuple

import numpy
import torch
from thinc.api import Ops, get_array_module
from thinc.types import Floats3d

from ..models.coattention import no_answer_scores, top_spans
from .coattention import QAOutput
from .tensors import xp2torch

# One answer: (start token, end token exclusive, score), doc coordinates.
Answer = Tuple[int, int, float]


class DocAnswers(List[Answer]):
    """The ranked answers of one doc (a list of ``Answer``), with the doc's
    "no answer" probability when the model scores it.

    no_answer_score (Optional[float]): The probability of "no answer",
        normalized with the spans (spans + no answer sum to one); None for a
        model without "no answer" (``DynamicCoattention.v4``, ``no_answer`` off).
    log_norm (Optional[float]): The log of the doc's normalizer: a span's
        un-normalized logit (start + end logit) is log(score) + log_norm,
        which compares between contexts. None for a model without.
    """

    no_answer_score: Optional[float] = None
    log_norm: Optional[float] = None


def decode_answers(
    output: QAOutput, n_docs: int, *, max_answer_length: int, top_k: int
) -> List[List[Answer]]:
    """Ranked answer spans of every doc from the model's output.

    The span search runs where the logits are (GPU or CPU): every valid span
    of every window (start <= end, at most ``max_answer_length`` tokens,
    inside the window's real context) is scored, scores are normalized
    jointly over the windows of a doc (with each window's "no answer" logit,
    when the model has one), and only the ``top_k`` best spans of each window
    are copied to the host. There, the windows of a doc are merged: a span
    seen by several windows keeps its best score, and the ``top_k`` best
    remain, ties broken by position.

    output (QAOutput): The model's output; the last decoder iteration is read.
    n_docs (int): Number of docs in the batch (window doc ids are 0..n_docs-1).
    max_answer_length (int): Longest answer in tokens.
    top_k (int): Answers per doc.
    RETURNS (List[DocAnswers]): Per doc, up to ``top_k`` answers ``(start,
        end, score)`` as doc token offsets (end exclusive), best first, and
        the doc's ``no_answer_score`` (v2 models). A doc without a valid span
        (empty context) gets no answers.
    """
    windows = output.windows
    results: List[List[Answer]] = [DocAnswers() for _ in range(n_docs)]
    if not len(windows.doc):
        return results
    start = _last_iteration(output.start_logits)  # (W, m)
    end = _last_iteration(output.end_logits)  # (W, m)
    device = start.device
    lengths = torch.as_tensor(windows.length, dtype=torch.long, device=device)
    group = torch.as_tensor(windows.doc, dtype=torch.long, device=device)
    null = _null_logits(output)
    starts, ends, scores = top_spans(
        start,
        end,
        lengths,
        max_answer_length=max_answer_length,
        top_k=top_k,
        group=group,
        n_groups=n_docs,
        null_logits=null,
    )
    if null is not None:
        p_null, log_norm = no_answer_scores(
            start,
            end,
            lengths,
            null,
            max_answer_length=max_answer_length,
            group=group,
            n_groups=n_docs,
        )
        for answers, p, norm in zip(
            results, p_null.double().cpu().tolist(), log_norm.double().cpu().tolist()
        ):
            answers.no_answer_score = p  # type: ignore[attr-defined]
            answers.log_norm = norm  # type: ignore[attr-defined]
    # One small (3, W, k) device-to-host copy; float64 holds the positions
    # and the float32 scores exactly.
    found = torch.stack([starts.double(), ends.double(), scores.double()]).cpu().numpy()
    _merge_windows(found, windows, top_k, results)
    return results


def _merge_windows(
    found: numpy.ndarray, windows, top_k: int, results: List[List[Answer]]
) -> None:
    """Merge the (3, W, k) per-window best spans into the ranked answers of
    each doc (appended to ``results``)."""
    starts, ends, scores = found[0].astype("int64"), found[1].astype("int64"), found[2]
    valid = starts >= 0
    offset = windows.start.astype("int64")[:, None]
    doc = numpy.broadcast_to(windows.doc.astype("int64")[:, None], starts.shape)[valid]
    span_start = (starts + offset)[valid]
    span_end = (ends + offset + 1)[valid]
    score = scores[valid]
    # Same span from several windows: keep its best score.
    order = numpy.lexsort((-score, span_end, span_start, doc))
    doc, span_start, span_end, score = (
        doc[order],
        span_start[order],
        span_end[order],
        score[order],
    )
    first = numpy.ones(len(doc), dtype=bool)
    first[1:] = (
        (doc[1:] != doc[:-1])
        | (span_start[1:] != span_start[:-1])
        | (span_end[1:] != span_end[:-1])
    )
    doc, span_start, span_end, score = (
        doc[first],
        span_start[first],
        span_end[first],
        score[first],
    )
    # Rank per doc: best score first, ties broken by position.
    order = numpy.lexsort((span_end, span_start, -score, doc))
    doc, span_start, span_end, score = (
        doc[order],
        span_start[order],
        span_end[order],
        score[order],
    )
    rank = numpy.arange(len(doc)) - numpy.searchsorted(doc, doc, side="left")
    keep = rank < top_k
    kept = zip(
        doc[keep].tolist(),
        span_start[keep].tolist(),
        span_end[keep].tolist(),
        score[keep].tolist(),
    )
    for i, s, e, sc in kept:
        results[i].append((s, e, sc))


def _null_logits(output: QAOutput) -> Optional[torch.Tensor]:
    """(W,) "no answer" logit (sentinel start + end, last iteration) of each
    window, on the logits' device; None for a v1 output."""
    if output.null_start is None or output.null_end is None:
        return None
    xp = get_array_module(output.null_start)
    null = xp.ascontiguousarray(
        output.null_start[:, -1:] + output.null_end[:, -1:]
    ).reshape(-1)
    if isinstance(null, numpy.ndarray):
        return torch.from_numpy(null)
    return xp2torch(null)


def _last_iteration(logits: Floats3d) -> torch.Tensor:
    """(W, T, m) xp logits -> (W, m) torch tensor of the last decoder
    iteration, on the same device (no copy through the host)."""
    xp = get_array_module(logits)
    last = xp.ascontiguousarray(logits[:, -1])
    if isinstance(last, numpy.ndarray):
        # Not xp2torch: with Thinc's GPU ops active it would move host
        # logits to the GPU; the search runs where the logits are.
        return torch.from_numpy(last)
    return xp2torch(last)  # cupy: zero-copy through DLPack


def boundary_probabilities(
    output: QAOutput, context_bounds: Sequence[Tuple[int, int]], ops: Ops
) -> List[numpy.ndarray]:
    """Start / end probabilities of each context token from the last decoder
    iteration, normalized over the whole context as in training (one softmax
    over every position of every window, and each window's sentinel when the
    model scores "no answer"; a token seen by two windows gets the sum).

    output (QAOutput): The model's output for a batch.
    context_bounds (Sequence[Tuple[int, int]]): Per doc, its context's
        (start, end) token offsets.
    ops (Ops): The model's ops (to copy the logits to the host).
    RETURNS (List[numpy.ndarray]): One float32 (2, n_context_tokens) array
        per doc (row 0 start, row 1 end). Without "no answer" each row sums
        to one; with it, to one minus the sentinel's probability.
    """
    to_numpy = ops.to_numpy
    logits = [
        to_numpy(output.start_logits)[:, -1].astype("float64"),
        to_numpy(output.end_logits)[:, -1].astype("float64"),
    ]
    nulls = (
        [
            to_numpy(output.null_start)[:, -1].astype("float64"),
            to_numpy(output.null_end)[:, -1].astype("float64"),
        ]
        if output.null_start is not None and output.null_end is not None
        else None
    )
    windows = output.windows
    results = []
    for i, (c_start, c_end) in enumerate(context_bounds):
        probs = numpy.zeros((2, c_end - c_start), dtype="float64")
        rows = numpy.flatnonzero(windows.doc == i)
        for k, row_logits in enumerate(logits):
            # One softmax over every real position of every window.
            parts = [row_logits[w, : int(windows.length[w])] for w in rows]
            flat = numpy.concatenate(parts) if parts else numpy.zeros(0)
            if nulls is not None:
                flat = numpy.concatenate([flat, nulls[k][rows]])
            if not len(flat):
                continue
            exp = numpy.exp(flat - flat.max())
            exp /= exp.sum()
            offset = 0
            for w, part in zip(rows, parts):
                begin = int(windows.start[w]) - c_start
                probs[k, begin : begin + len(part)] += exp[offset : offset + len(part)]
                offset += len(part)
        results.append(probs.astype("float32"))
    return results
