"""Thinc builder for the Dynamic Coattention Network span-QA model.

Defaults: the architecture defaults to the paper's settings (Xiong et al.
2017: hidden width 200, maxout pool size 16, 4 decoder iterations, dropout
0.3); ``attn_span_qa``'s factory config is a small CPU setting (hidden width
96, pool size 4, dropout 0.2). Left out, ``tok2vec`` is a new small trainable
``spacy.Tok2Vec.v2`` that needs no vectors (``spacy_attn.layers.defaults``;
the paper's fixed GloVe vectors are ``spacy-attn.FrozenVectors.v1``). See
docs/configs.md, "Defaults".
"""

from typing import Callable, List, NamedTuple, Optional, Tuple, Union, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import (
    ArgsKwargs,
    Model,
    PyTorchShim,
    get_array_module,
)
from thinc.types import Floats2d, Floats3d, Ints1d

from ..models.coattention import DynamicCoattention
from ..pairs import DEFAULT_PAIR_KEY
from ._util import gather_segments, takes_gradient, tok2vec_layer, vector_width
from .decomposable_attention import convert_segment_inputs
from .defaults import build_default_tok2vec
from .pair_segments import get_bounds
from .tensors import torch2xp, xp2torch  # not Thinc's: no deprecated DLPack calls
from .torch_wrapper import wrap_torch_module

QAInput = Tuple[Floats3d, Ints1d, Floats3d, Ints1d]
# Gradients of the logits: (d_start, d_end), and with "no answer" scoring
# also (d_null_start, d_null_end).
QAGradient = Union[
    Tuple[Floats3d, Floats3d], Tuple[Floats3d, Floats3d, Floats2d, Floats2d]
]


class QAWindows(NamedTuple):
    """Where each model row (a question-context window) comes from.

    doc (n_windows,): index of the doc in the batch.
    start (n_windows,): token index, in the doc, of the window's first
        context token.
    length (n_windows,): number of context tokens in the window.
    """

    doc: numpy.ndarray
    start: numpy.ndarray
    length: numpy.ndarray


class QAOutput(NamedTuple):
    """Output of every ``spacy-attn.DynamicCoattention`` version.

    start_logits, end_logits (n_windows, T, max_length): per decoder
        iteration in training (T = max_iterations), the final iteration only
        at inference (T = 1). Column j is context token ``windows.start + j``.
    windows (QAWindows): Where each row comes from (host arrays).
    iterations (n_windows,): Decoder iterations run per row, on the model's
        device (not copied to the host: nothing in training needs it).
    null_start, null_end (n_windows, T): the start / end logits of each
        window's sentinel, "no answer" (a model built with ``no_answer``);
        None for one without.
    """

    start_logits: Floats3d
    end_logits: Floats3d
    windows: QAWindows
    iterations: Ints1d
    null_start: Optional[Floats2d] = None
    null_end: Optional[Floats2d] = None

    @property
    def has_null(self) -> bool:
        """RETURNS (bool): Whether the model scores "no answer"."""
        return self.null_start is not None


@registry.architectures("spacy-attn.DynamicCoattention.v4")
def build_dynamic_coattention_v4(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    no_answer: bool = False,
    hidden_width: int = 200,
    pool_size: int = 16,
    max_iterations: int = 4,
    dropout: float = 0.3,
    window: int = 400,
    stride: int = 200,
    input_width: Optional[int] = None,
    mixed_precision: bool = False,
) -> Model[List[Doc], QAOutput]:
    """Dynamic Coattention Network (Xiong et al. 2017) over question-context
    pair docs (first segment = question, second = context).

    tok2vec (Optional[Model[List[Doc], List[Floats2d]]]): Token vectors for
        whole pair docs: ``spacy-attn.FrozenVectors.v1`` (fixed GloVe, the
        paper's setting), ``spacy.Tok2Vec.v2`` or a spacy-transformers
        listener. None (the default): a new small trainable tok2vec that
        needs no vectors.
    no_answer (bool): Also score "no answer" (SQuAD 2.0-style data): the
        context sentinel is kept as a position of the coattention encoding
        and the decoder may point start and end at it; its logits come out
        as ``QAOutput.null_start`` / ``null_end``, the span logits as without
        it. The decoder's running start / end estimate stays on context
        tokens, so every iteration refines a span while "no answer" is
        scored at each (docs/span_qa.md). False (the default) is the paper's
        model, which answers every question.
    hidden_width (int): Hidden width l of the LSTMs and HMNs (200 in the paper).
    pool_size (int): Maxout pool size of the HMNs (16 in the paper).
    max_iterations (int): Dynamic decoder iterations (4 in the paper).
    dropout (float): Dropout in the torch module.
    window (int): Contexts longer than this many tokens are split into
        overlapping windows, each scored with the full question.
    stride (int): Step between the first tokens of consecutive windows
        (overlap = window - stride); 0 < stride <= window. The last window
        ends at the end of the context.
    input_width (Optional[int]): Width of the token vectors, when the tok2vec
        cannot tell before initialization (FrozenVectors: the vectors'
        width, e.g. 100 for glove.6B.100d). With a width, the vectors go
        straight into the encoder LSTM as in the paper; with none, a learned
        linear projection to ``hidden_width`` is inferred lazily.
    mixed_precision (bool): Run the torch module under autocast (GPU).
    RETURNS (Model[List[Doc], QAOutput]): Start / end logits per window.

    One version for both tasks: ``no_answer = false`` builds the model of
    v1, ``no_answer = true`` that of v3 (both in ``spacy_attn.legacy``), and
    their weights load into it.
    """
    return dynamic_coattention_model(
        tok2vec,
        no_answer=no_answer,
        token_estimate=no_answer,
        hidden_width=hidden_width,
        pool_size=pool_size,
        max_iterations=max_iterations,
        dropout=dropout,
        window=window,
        stride=stride,
        input_width=input_width,
        mixed_precision=mixed_precision,
    )


def dynamic_coattention_model(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]],
    *,
    no_answer: bool,
    token_estimate: bool = False,
    hidden_width: int,
    pool_size: int,
    max_iterations: int,
    dropout: float,
    window: int,
    stride: int,
    input_width: Optional[int],
    mixed_precision: bool,
) -> Model[List[Doc], QAOutput]:
    """The model of every ``spacy-attn.DynamicCoattention`` version: the
    arguments are v4's; ``token_estimate`` keeps the decoder's estimate on
    context tokens with ``no_answer`` (v3 and v4; v2 let it rest on the
    sentinel).

    RETURNS (Model[List[Doc], QAOutput]): Start / end logits per window.
    """
    if window < 1 or not 0 < stride <= window:
        raise ValueError(
            f"DynamicCoattention: need window >= 1 and 0 < stride <= window, "
            f"got window={window}, stride={stride}."
        )
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    nI = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") is True else input_width
    module = DynamicCoattention(
        nI,
        hidden_width,
        pool_size=pool_size,
        max_iterations=max_iterations,
        dropout=dropout,
        no_answer=no_answer,
        token_estimate=token_estimate,
    )
    torch_layer = wrap_torch_module(
        module,
        # Same padded (question, context) layout as the pair segments.
        convert_inputs=convert_segment_inputs,
        convert_outputs=convert_null_outputs if no_answer else convert_qa_outputs,
        mixed_precision=mixed_precision,
    )
    # On fixed vectors (the paper's setting) the token vectors need no
    # gradient: the torch module skips it, and the windows their scatter.
    torch_layer.attrs["input_gradient"] = takes_gradient(tok2vec)
    segments = qa_windows(
        tok2vec, pair_key=DEFAULT_PAIR_KEY, window=window, stride=stride
    )
    model: Model[List[Doc], QAOutput] = Model(
        "dynamic_coattention",
        forward,
        init=init,
        layers=[segments, torch_layer],
        attrs={"input_width": nI, "no_answer": no_answer},
    )
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("segments", segments)
    model.set_ref("coattention", torch_layer)
    return model


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    segments = model.layers[0]
    segments.initialize(X=X)
    expected = model.attrs["input_width"]
    if expected is not None and segments.has_dim("nO") is True:
        width = segments.get_dim("nO")
        if width != expected:
            raise ValueError(
                f"spacy-attn.DynamicCoattention was built for {expected}-d "
                f"token vectors (input_width), but the tok2vec gives {width}-d "
                f"vectors. Set input_width = {width} (or null for a learned "
                f"projection)."
            )
    # A lazy input projection (unknown tok2vec width) materializes on the
    # first batch; the shim hands parameters to the optimizer per update, so
    # nothing needs to run here (a transformer listener could not run yet).


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[QAOutput, Callable]:
    segments, torch_layer = model.layers
    (inputs, windows), bp_inputs = segments(docs, is_train)
    # (start, end, iterations), plus (null_start, null_end) with no_answer.
    outputs, bp_torch = torch_layer(inputs, is_train)
    start, end, iterations = outputs[:3]

    def backprop(d_output: QAGradient) -> List[Doc]:
        return bp_inputs(bp_torch(d_output))

    return QAOutput(start, end, windows, iterations, *outputs[3:]), backprop


def convert_qa_outputs(model: Model, X_Ytorch, is_train: bool):
    """(start, end, iterations) torch -> xp; the backward pass takes
    (d_start, d_end) only (iterations is an integer output)."""
    device = cast(PyTorchShim, model.shims[0]).device
    _, (start, end, iterations) = X_Ytorch
    Y = (torch2xp(start), torch2xp(end), torch2xp(iterations))

    def reverse(dY: Tuple[Floats3d, Floats3d]) -> ArgsKwargs:
        d_start, d_end = dY
        grads = (xp2torch(d_start, device=device), xp2torch(d_end, device=device))
        return ArgsKwargs(args=((start, end),), kwargs={"grad_tensors": grads})

    return Y, reverse


def convert_null_outputs(model: Model, X_Ytorch, is_train: bool):
    """With ``no_answer``: (start, end, iterations) torch, column 0 the
    sentinel -> xp (start, end, iterations, null_start, null_end) with the
    sentinel's column split off; the backward pass takes the four logit
    gradients."""
    device = cast(PyTorchShim, model.shims[0]).device
    _, (start, end, iterations) = X_Ytorch
    xp_start, xp_end = torch2xp(start), torch2xp(end)
    xp = get_array_module(xp_start)
    Y = (
        xp.ascontiguousarray(xp_start[:, :, 1:]),
        xp.ascontiguousarray(xp_end[:, :, 1:]),
        torch2xp(iterations),
        xp.ascontiguousarray(xp_start[:, :, 0]),
        xp.ascontiguousarray(xp_end[:, :, 0]),
    )

    def reverse(dY: Tuple[Floats3d, Floats3d, Floats2d, Floats2d]) -> ArgsKwargs:
        d_start, d_end, d_null_start, d_null_end = dY
        grads = tuple(
            xp2torch(
                xp.concatenate([xp.expand_dims(d_null, 2), d_span], axis=2),
                device=device,
            )
            for d_span, d_null in ((d_start, d_null_start), (d_end, d_null_end))
        )
        return ArgsKwargs(args=((start, end),), kwargs={"grad_tensors": grads})

    return Y, reverse


# -- windows -------------------------------------------------------------


def qa_windows(
    tok2vec: Model[List[Doc], List[Floats2d]],
    *,
    pair_key: str = DEFAULT_PAIR_KEY,
    window: int = 400,
    stride: int = 200,
) -> Model[List[Doc], Tuple[QAInput, QAWindows]]:
    """Run ``tok2vec`` over whole pair docs, then cut each context into
    windows and pair every window with its question.

    The tok2vec sees whole docs (a transformer listener must receive exactly
    the docs its transformer saw); windows are made from its output, so a
    question is repeated once per window of its context and overlapping
    windows share token vectors (their gradients are summed).

    RETURNS: ``((Q, Q_lengths, D, D_lengths), windows)`` with Q
        (n_windows, n, width) and D (n_windows, m, width) zero-padded, int32
        lengths, and ``QAWindows``. Every doc gets at least one window (an
        empty context gives one empty window).
    """
    attrs = {"pair_key": pair_key, "window": window, "stride": stride}
    return tok2vec_layer("qa_windows", windows_forward, tok2vec, attrs)


def window_starts(length: int, window: int, stride: int) -> List[int]:
    """Offsets of the windows covering ``length`` context tokens: every
    ``stride`` tokens, the last one aligned to the end of the context."""
    if length <= window:
        return [0]
    starts = list(range(0, length - window, stride))
    starts.append(length - window)
    return starts


def make_windows(bounds: numpy.ndarray, window: int, stride: int) -> QAWindows:
    """Windows of a batch from its (n_docs, 4) pair bounds."""
    doc, start, length = [], [], []
    for i, (_, _, s2, e2) in enumerate(bounds.tolist()):
        n = e2 - s2
        for offset in window_starts(n, window, stride):
            doc.append(i)
            start.append(s2 + offset)
            length.append(min(window, n - offset))
    return QAWindows(
        numpy.asarray(doc, dtype="int32"),
        numpy.asarray(start, dtype="int32"),
        numpy.asarray(length, dtype="int32"),
    )


def windows_forward(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[Tuple[QAInput, QAWindows], Callable]:
    bounds = get_bounds(docs, model.attrs["pair_key"])
    windows = make_windows(bounds, model.attrs["window"], model.attrs["stride"])
    vectors, bp_vectors = model.layers[0](docs, is_train)
    width = vector_width(model, vectors)
    # Per-window (start, end) bounds of its question and of its context
    # slice, gathered from the flat token vectors in one vectorized step each.
    q_bounds = bounds[windows.doc][:, 0:2]
    d_bounds = numpy.stack([windows.start, windows.start + windows.length], axis=1)
    (Q, D), (Q_lengths, D_lengths), bp_segments = gather_segments(
        model.ops, vectors, [q_bounds, d_bounds], width=width, row_doc=windows.doc
    )

    def backprop(d_inputs: QAInput) -> List[Doc]:
        dQ, _, dD, _ = d_inputs
        if dQ is None and dD is None and not takes_gradient(model.layers[0]):
            # Nothing would learn from the zeros a scatter would send back.
            return []
        # A question feeds every window of its context and windows overlap,
        # so gradients of a token add up.
        return bp_vectors(bp_segments([dQ, dD]))

    return ((Q, Q_lengths, D, D_lengths), windows), backprop
