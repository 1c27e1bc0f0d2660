"""Helpers shared by the Thinc layers: cutting the token vectors of whole
docs into zero-padded segment tensors (and their gradients back).

The pair layers (``pair_segments``: one row per doc) and the DCN windows
(``coattention.qa_windows``: one row per question-context window, a doc's
question repeated in each) both run the tok2vec over whole docs, then gather
token ranges of every doc into padded ``(rows, length, width)`` tensors;
``separate_segments`` runs it over the segments as docs of their own. All
three are a ``tok2vec_layer``.
"""

from typing import (
    Any,
    Callable,
    Dict,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    cast,
)

import numpy
from spacy.tokens import Doc
from thinc.api import Model, Ops
from thinc.types import Floats2d, Floats3d, Ints1d

# A tok2vec's attr: False when its backprop ignores the gradient it is
# given (FrozenVectors without OOV buckets).
TAKES_GRADIENT = "takes_gradient"


def takes_gradient(tok2vec: Model) -> bool:
    """Whether the layers after ``tok2vec`` must compute the gradient of its
    output. Why ask: the DCN's inputs are 256 questions' token vectors, and
    on fixed GloVe vectors their gradient (through the input dropout, the
    window padding and a scatter back to the docs) is work for nothing.

    tok2vec (Model): The token encoder.
    RETURNS (bool): False only for a layer whose ``attrs["takes_gradient"]``
        is False; True for every other (a listener passes the gradient on
        to the component it listens to).
    """
    return tok2vec.attrs.get(TAKES_GRADIENT, True) is not False


class SegmentIndex(NamedTuple):
    """Where the tokens of one segment tensor come from, one entry per token.

    row: the row (first axis) of the padded tensor.
    position: the position (second axis) in that row.
    flat_row: the token's row in the flat (all tokens of the batch) vectors.
    lengths (n_rows,): the segment length of every row.
    """

    row: numpy.ndarray
    position: numpy.ndarray
    flat_row: numpy.ndarray
    lengths: numpy.ndarray


def segment_index(bounds: numpy.ndarray, offsets: numpy.ndarray) -> SegmentIndex:
    """Index arrays that move one segment of every row between the flat
    (all tokens of the batch) and the padded (rows, length) layout, without a
    Python loop over rows.

    bounds (numpy.ndarray): (n_rows, 2) start and end (exclusive) token of
        the segment, within the row's doc.
    offsets (numpy.ndarray): (n_rows,) flat index of the first token of the
        row's doc.
    RETURNS (SegmentIndex): int32 ``row``, ``position``, ``flat_row``, one
        entry per token of the segment, and the ``lengths`` per row.
    """
    starts = bounds[:, 0]
    lengths = bounds[:, 1] - starts
    row = numpy.repeat(numpy.arange(len(lengths), dtype="int32"), lengths)
    first_of = numpy.cumsum(lengths) - lengths
    position = numpy.arange(int(lengths.sum()), dtype="int32") - numpy.repeat(
        first_of, lengths
    )
    flat_row = offsets[row] + starts[row] + position
    return SegmentIndex(row, position, flat_row.astype("int32"), lengths)


def gather_segments(
    ops: Ops,
    vectors: List[Floats2d],
    segments: Sequence[numpy.ndarray],
    *,
    width: int,
    row_doc: Optional[numpy.ndarray] = None,
) -> Tuple[
    List[Floats3d],
    List[Ints1d],
    Callable[[Sequence[Optional[Floats3d]]], List[Floats2d]],
]:
    """Gather token ranges of docs into zero-padded segment tensors.

    ops (Ops): The ops of the calling layer.
    vectors (List[Floats2d]): Token vectors per doc, (n_tokens, width) each.
    segments (Sequence[numpy.ndarray]): One (n_rows, 2) int array per output
        tensor: the start and end (exclusive) token of each row's segment,
        within the row's doc.
    width (int): The vector width (used when there are no docs).
    row_doc (Optional[numpy.ndarray]): (n_rows,) the doc of each row; None
        when row i is doc i.
    RETURNS: The padded tensors, (n_rows, max(1, longest segment), width)
        each (at least one column, so that empty segments still give a valid
        tensor), their int32 segment lengths, and a backprop callback that
        takes the gradients of the padded tensors (None for one without) and
        returns the gradients of ``vectors``. Gradients of a token used by
        several rows or segments (overlapping spans, a question repeated in
        every window of its context) are summed.
    """
    doc_lengths = numpy.asarray([len(v) for v in vectors], dtype="int32")
    doc_offsets = numpy.cumsum(doc_lengths) - doc_lengths
    if row_doc is None:
        n_rows = len(vectors)
        offsets = doc_offsets
    else:
        n_rows = len(row_doc)
        offsets = (
            doc_offsets[row_doc] if len(vectors) else numpy.zeros(0, dtype="int32")
        )
    flat = ops.flatten(vectors) if vectors else ops.alloc2f(0, width)
    indices = [segment_index(bounds, offsets) for bounds in segments]
    padded = []
    for index in indices:
        X = ops.alloc3f(n_rows, max(int(index.lengths.max(initial=0)), 1), width)
        # The int32 numpy index arrays are Ints1d to Thinc (casts); Thinc's
        # array types do not model fancy indexing (the ignore).
        row = ops.asarray1i(cast(Ints1d, index.row))
        position = ops.asarray1i(cast(Ints1d, index.position))
        X[row, position] = flat[ops.asarray1i(cast(Ints1d, index.flat_row))]  # type: ignore[index]
        padded.append(X)
    lengths = [ops.asarray1i(cast(Ints1d, index.lengths)) for index in indices]

    def backprop(d_padded: Sequence[Optional[Floats3d]]) -> List[Floats2d]:
        d_flat = ops.alloc2f(flat.shape[0], width)
        for dX, index in zip(d_padded, indices):
            if dX is not None and len(index.flat_row):
                # scatter_add, not assignment: a token may feed several rows.
                ops.scatter_add(
                    d_flat,
                    ops.asarray1i(cast(Ints1d, index.flat_row)),
                    dX[
                        ops.asarray1i(cast(Ints1d, index.row)),
                        ops.asarray1i(cast(Ints1d, index.position)),
                    ],
                )
        return ops.unflatten(d_flat, ops.asarray1i(cast(Ints1d, doc_lengths)))

    return padded, lengths, backprop


def tok2vec_layer(
    name: str,
    forward: Callable,
    tok2vec: Model[List[Doc], List[Floats2d]],
    attrs: Dict[str, Any],
) -> Model:
    """A layer whose ``forward`` runs ``tok2vec`` (its only sublayer) over
    docs and cuts the vectors into segment tensors; its width "nO" is the
    tok2vec's, once known (``tok2vec_init``; ``vector_width``).

    name (str): The layer's name.
    forward (Callable): Its forward function.
    tok2vec (Model[List[Doc], List[Floats2d]]): The token encoder.
    attrs (Dict[str, Any]): The layer's attrs (its settings).
    RETURNS (Model): The layer.
    """
    return Model(
        name,
        forward,
        init=tok2vec_init,
        layers=[tok2vec],
        dims={"nO": None},
        attrs=attrs,
    )


def tok2vec_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    """Initialize a ``tok2vec_layer``: the tok2vec on the sample docs as they
    are (pair docs are good samples for it), then the layer's width."""
    tok2vec = model.layers[0]
    tok2vec.initialize(X=X)
    if tok2vec.has_dim("nO") is True:
        model.set_dim("nO", tok2vec.get_dim("nO"))


def vector_width(model: Model, vectors: List[Floats2d]) -> int:
    """The width of a ``tok2vec_layer``'s token vectors: that of the first
    doc's, else (an empty batch) the layer's "nO" if known, else 0."""
    if vectors:
        return vectors[0].shape[1]
    return model.get_dim("nO") if model.has_dim("nO") else 0


__all__ = [
    "TAKES_GRADIENT",
    "SegmentIndex",
    "gather_segments",
    "segment_index",
    "takes_gradient",
    "tok2vec_init",
    "tok2vec_layer",
    "vector_width",
]
