"""Turn a batch of pair docs into padded segment tensors for a torch model."""
from typing import Callable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d, Floats3d, Ints1d

from ..pairs import DEFAULT_SPAN_KEY, get_batch_bounds

Segments = Tuple[Floats3d, Ints1d, Floats3d, Ints1d]


def pair_segments(
    tok2vec: Model[List[Doc], List[Floats2d]], *, span_key: str = DEFAULT_SPAN_KEY
) -> Model[List[Doc], Segments]:
    """Run ``tok2vec`` over whole pair docs, then cut each doc's vectors into
    its two segments and pad them.

    The span key lives in ``model.attrs["span_key"]``; the pair component sets
    it from its own ``span_key`` setting so there is one source of truth.

    RETURNS (Model[List[Doc], Segments]): Output ``(A, A_lengths, B,
        B_lengths)`` with A (batch, La, width), B (batch, Lb, width) zero-padded
        and int32 lengths (batch,). The pair spans are validated before the
        tok2vec runs, so a doc without a pair fails with a ``PairError`` that
        names it.
    """
    return Model(
        "pair_segments",
        forward,
        init=init,
        layers=[tok2vec],
        dims={"nO": None},
        attrs={"span_key": span_key},
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    tok2vec = model.layers[0]
    tok2vec.initialize(X=X)
    if tok2vec.has_dim("nO"):
        model.set_dim("nO", tok2vec.get_dim("nO"))


def get_bounds(docs: List[Doc], span_key: str) -> numpy.ndarray:
    """(n_docs, 4) int array of (start1, end1, start2, end2) token offsets."""
    return get_batch_bounds(docs, span_key)


def _gather_index(bounds: numpy.ndarray, offsets: numpy.ndarray):
    """Index arrays that move one segment of every doc between the flat
    (all tokens of the batch) and the padded (batch, length) layout.

    RETURNS: (example, position, flat_row) int arrays, one entry per token
        of the segment, and the segment lengths. ``bounds`` is (n_docs, 2):
        the segment's start and end token in each doc.
    """
    starts = bounds[:, 0]
    lengths = bounds[:, 1] - starts
    example = numpy.repeat(numpy.arange(len(lengths), dtype="int32"), lengths)
    first_of = numpy.cumsum(lengths) - lengths
    position = numpy.arange(int(lengths.sum()), dtype="int32") - numpy.repeat(first_of, lengths)
    flat_row = offsets[example] + starts[example] + position
    return example, position, flat_row.astype("int32"), lengths


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Segments, Callable]:
    ops = model.ops
    bounds = get_bounds(docs, model.attrs["span_key"])
    vectors, bp_vectors = model.layers[0](docs, is_train)
    width = vectors[0].shape[1] if vectors else (model.get_dim("nO") if model.has_dim("nO") else 0)
    doc_lengths = numpy.asarray([len(v) for v in vectors], dtype="int32")
    offsets = numpy.cumsum(doc_lengths) - doc_lengths
    flat = ops.flatten(vectors) if vectors else ops.alloc2f(0, width)
    # One vectorized gather per segment instead of a Python loop per doc.
    index_a = _gather_index(bounds[:, 0:2], offsets)
    index_b = _gather_index(bounds[:, 2:4], offsets)
    padded = []
    for example, position, flat_row, lengths in (index_a, index_b):
        # At least one column so empty segments still give a valid tensor.
        X = ops.alloc3f(len(docs), max(int(lengths.max(initial=0)), 1), width)
        X[ops.asarray1i(example), ops.asarray1i(position)] = flat[ops.asarray1i(flat_row)]
        padded.append(X)
    output = (padded[0], ops.asarray1i(index_a[3]), padded[1], ops.asarray1i(index_b[3]))

    def backprop(d_output: Segments) -> List[Doc]:
        dA, _, dB, _ = d_output
        d_flat = ops.alloc2f(flat.shape[0], width)
        for dX, (example, position, flat_row, _) in ((dA, index_a), (dB, index_b)):
            if dX is not None and len(flat_row):
                # scatter_add: the two spans may overlap in a hand-made pair.
                ops.scatter_add(
                    d_flat,
                    ops.asarray1i(flat_row),
                    dX[ops.asarray1i(example), ops.asarray1i(position)],
                )
        return bp_vectors(ops.unflatten(d_flat, ops.asarray1i(doc_lengths)))

    return output, backprop
