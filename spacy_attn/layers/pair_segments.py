"""Turn a batch of pair docs into padded segment tensors for a torch model."""

from typing import Callable, List, Tuple

import numpy
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d, Floats3d, Ints1d

from ..pairs import DEFAULT_PAIR_KEY, get_batch_bounds
from ._util import gather_segments, tok2vec_layer, vector_width

Segments = Tuple[Floats3d, Ints1d, Floats3d, Ints1d]


def pair_segments(
    tok2vec: Model[List[Doc], List[Floats2d]], *, pair_key: str = DEFAULT_PAIR_KEY
) -> Model[List[Doc], Segments]:
    """Run ``tok2vec`` over whole pair docs, then cut each doc's vectors into
    its two segments and pad them.

    The span key lives in ``model.attrs["pair_key"]``; the pair component sets
    it from its own ``pair_key`` setting so there is one source of truth.

    RETURNS (Model[List[Doc], Segments]): Output ``(A, A_lengths, B,
        B_lengths)`` with A (batch, La, width), B (batch, Lb, width) zero-padded
        and int32 lengths (batch,). The pair spans are validated before the
        tok2vec runs, so a doc without a pair fails with a ``PairError`` that
        names it.
    """
    return tok2vec_layer("pair_segments", forward, tok2vec, {"pair_key": pair_key})


def get_bounds(docs: List[Doc], pair_key: str) -> numpy.ndarray:
    """(n_docs, 4) int array of (start1, end1, start2, end2) token offsets."""
    return get_batch_bounds(docs, pair_key)


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Segments, Callable]:
    bounds = get_bounds(docs, model.attrs["pair_key"])
    vectors, bp_vectors = model.layers[0](docs, is_train)
    width = vector_width(model, vectors)
    # One vectorized gather per segment instead of a Python loop per doc.
    (A, B), (A_lengths, B_lengths), bp_segments = gather_segments(
        model.ops, vectors, [bounds[:, 0:2], bounds[:, 2:4]], width=width
    )

    def backprop(d_output: Segments) -> List[Doc]:
        dA, _, dB, _ = d_output
        # The two spans may overlap in a hand-made pair: gradients add up.
        return bp_vectors(bp_segments([dA, dB]))

    return (A, A_lengths, B, B_lengths), backprop
