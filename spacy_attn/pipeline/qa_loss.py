"""The span-QA training loss: cumulative cross-entropy over decoder iterations,
normalized jointly over the windows of a context (and "no answer", if scored)."""

from typing import Any, List, Optional, Tuple

import numpy
from thinc.api import get_array_module
from thinc.types import Floats2d

from ..layers.coattention import QAGradient, QAOutput

# The target of a question whose context does not hold its answer: start and
# end at the sentinel ("no answer"). Only for models that score it.
NO_ANSWER: Tuple[int, int] = (-1, -1)
Gold = Optional[Tuple[int, int]]


def qa_loss_and_gradient(
    output: QAOutput, gold: List[Gold]
) -> Tuple[Any, Optional[QAGradient]]:
    """Cumulative softmax cross-entropy over decoder iterations (paper
    section 2.3): the sum over iterations of CE(start) + CE(end),
    averaged over the examples with a target.

    The softmax of a context runs over the positions of ALL its windows
    (one window for most contexts, which is exactly the paper's loss), and
    over each window's sentinel when the model scores "no answer". The gold
    start (end) is every window position holding the gold start (end) token
    in a window that contains the whole gold span, or every window's
    sentinel for ``NO_ANSWER``; the loss is minus the log of their summed
    probability. Training all windows of a context jointly teaches windows
    without the answer to score low, so their spans can be compared with the
    other windows' at inference. Examples without a target (None) get no
    gradient.

    Runs with the logits' array module (GPU or CPU); only small integer
    index arrays go host -> device and nothing comes back (the loss stays a
    device scalar). Float64 logits are computed in float64, others float32.

    output (QAOutput): The model's training output.
    gold (List[Optional[Tuple[int, int]]]): Per doc, the target (start,
        end exclusive) in doc tokens, ``NO_ANSWER``, or None.
    RETURNS (Tuple[Any, Optional[QAGradient]]): The loss (a 0-d array on the
        logits' device, or 0.0 when no window holds a target) and the float32
        gradients (d_start, d_end) of the logits, with (d_null_start,
        d_null_end) for a model that scores "no answer"; or None.
    """
    has_null = output.has_null
    targets = _window_targets(output, gold, has_null)
    if targets is None:
        return 0.0, None
    rows, t_start, t_end, has_target, grid, win_run, first_rows = targets
    n_examples = float(has_target.sum())
    doc = output.windows.doc.astype("int64")
    # -- device --------------------------------------------------------
    xp = get_array_module(output.start_logits)
    dtype = "float64" if output.start_logits.dtype == numpy.float64 else "float32"
    rows_d = xp.asarray(rows)
    win_run_d = xp.asarray(win_run)
    grid_d = xp.asarray(grid)
    first_rows_d = xp.asarray(first_rows)
    # Windows of docs without a target get no gradient; 1 / n_examples
    # folded in.
    scale = xp.asarray(has_target[doc] / n_examples, dtype=dtype)[:, None, None]
    loss = xp.zeros((), dtype=dtype)
    grads = []
    for logits, null, t in (
        (output.start_logits, output.null_start, t_start),
        (output.end_logits, output.null_end, t_end),
    ):
        logits = xp.asarray(logits, dtype=dtype)  # (W, T, L)
        if has_null:
            # Column 0: the sentinel, "no answer".
            null_col = xp.asarray(null, dtype=dtype)[:, :, None]
            logits = xp.concatenate([null_col, logits], axis=2)
        t_d = xp.asarray(t)
        # log-softmax over every position of every window of a doc;
        # padded logits are -1e4, so their probability is exactly 0.
        row_max = logits.max(axis=2)  # (W, T)
        doc_max = _run_max(row_max, grid_d)[win_run_d]  # (W, T)
        exp = xp.exp(logits - doc_max[:, :, None])
        doc_sum = _run_sum(exp.sum(axis=2), grid_d)[win_run_d]  # (W, T)
        probs = exp / doc_sum[:, :, None]  # (W, T, L)
        # Probability of the gold position in each window with a target.
        gold_p = xp.zeros(probs.shape[:2], dtype=dtype)  # (W, T)
        gold_p[rows_d] = probs[rows_d, :, t_d]
        marginal = _run_sum(gold_p, grid_d)[win_run_d]  # (W, T)
        loss = loss - xp.log(marginal[first_rows_d] + 1e-12).sum() / n_examples
        # d(-log sum_gold p)/d logits = p - p * [gold] / sum_gold p.
        posterior = gold_p[rows_d] / xp.maximum(marginal[rows_d], 1e-30)  # (R, T)
        probs[rows_d, :, t_d] -= posterior
        grads.append(xp.asarray(probs * scale, dtype="float32"))
    return loss, (_split_null(grads[0], grads[1]) if has_null else (grads[0], grads[1]))


def _split_null(d_start: Any, d_end: Any) -> QAGradient:
    """(W, T, 1 + L) gradients, column 0 the sentinel -> (d_start, d_end,
    d_null_start, d_null_end)."""
    xp = get_array_module(d_start)
    return (
        xp.ascontiguousarray(d_start[:, :, 1:]),
        xp.ascontiguousarray(d_end[:, :, 1:]),
        xp.ascontiguousarray(d_start[:, :, 0]),
        xp.ascontiguousarray(d_end[:, :, 0]),
    )


def _window_targets(output: QAOutput, gold: List[Gold], has_null: bool):
    """Host side of the loss: the windows holding a target, their target
    columns and the window groups (small integer arrays), or None when no
    window holds a target."""
    windows = output.windows
    doc = windows.doc.astype("int64")
    n_windows = len(doc)
    gold_start = numpy.full(len(gold), -1, dtype="int64")
    gold_end = numpy.full(len(gold), -1, dtype="int64")
    is_null = numpy.zeros(len(gold), dtype=bool)
    for i, g in enumerate(gold):
        if g is None:
            continue
        if g == NO_ANSWER:
            if not has_null:
                raise ValueError(
                    "A no-answer target needs a model that scores 'no answer' "
                    "(spacy-attn.DynamicCoattention.v4 with no_answer = true)."
                )
            is_null[i] = True
        else:
            gold_start[i], gold_end[i] = g
    w_start = windows.start.astype("int64")
    w_end = w_start + windows.length.astype("int64")
    g_start, g_end = gold_start[doc], gold_end[doc]
    inside = (g_start >= 0) & (w_start <= g_start) & (g_end <= w_end)
    # A no-answer target is the sentinel of every window of its context.
    inside |= is_null[doc]
    rows = numpy.flatnonzero(inside)  # windows holding a target
    if not len(rows):
        return None
    has_target = numpy.zeros(len(gold), dtype=bool)
    has_target[doc[rows]] = True
    offset = int(has_null)  # span columns shift right of the sentinel
    null_row = is_null[doc[rows]]
    t_start = numpy.where(null_row, 0, g_start[rows] - w_start[rows] + offset)
    t_end = numpy.where(null_row, 0, g_end[rows] - 1 - w_start[rows] + offset)
    # The windows of a doc are contiguous (made doc by doc): group runs.
    new_run = numpy.r_[True, doc[1:] != doc[:-1]]
    firsts = numpy.flatnonzero(new_run)
    run_lengths = numpy.diff(numpy.r_[firsts, n_windows])
    win_run = numpy.cumsum(new_run) - 1  # (W,) run of each window
    # (runs, longest run) window index per run; padding points at row W.
    slots = numpy.arange(run_lengths.max())
    grid = numpy.where(slots < run_lengths[:, None], firsts[:, None] + slots, n_windows)
    first_rows = firsts[has_target[doc[firsts]]]  # one row per example
    return rows, t_start, t_end, has_target, grid, win_run, first_rows


def _run_max(X: Floats2d, grid: Any) -> Floats2d:
    """(W, T) window rows -> (runs, T) max over each run's windows.

    grid (runs, G): window indices of each run, padded with W (a row of
    -inf). A dense gather instead of a segment reduction: Thinc's segment
    ops check their lengths on the host, which would sync a GPU step.
    """
    xp = get_array_module(X)
    padded = xp.concatenate([X, xp.full((1, X.shape[1]), -xp.inf, dtype=X.dtype)])
    return padded[grid].max(axis=1)


def _run_sum(X: Floats2d, grid: Any) -> Floats2d:
    """(W, T) window rows -> (runs, T) sum over each run's windows (grid as
    for ``_run_max``, padded with a row of zeros)."""
    xp = get_array_module(X)
    padded = xp.concatenate([X, xp.zeros((1, X.shape[1]), dtype=X.dtype)])
    return padded[grid].sum(axis=1)
