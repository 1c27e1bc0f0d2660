"""Exact-match token ids of pair docs (``spacy-attn.DecomposableAttention.v4``)."""

from typing import Callable, List, Tuple, cast

import numpy
from spacy.attrs import IDS
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats3d, Ints1d, Ints2d

from ..pairs import get_batch_bounds
from .pair_segments import Segments

# The segments, then the token ids of the first and of the second text.
MatchSegments = Tuple[Floats3d, Ints1d, Floats3d, Ints1d, Ints2d, Ints2d]

# Padding ids: different from every real id and from each other, so that a
# padded position never matches anything.
PAD_FIRST = -1
PAD_SECOND = -2


def token_match_ids(
    docs: List[Doc], pair_key: str, *, attr: str = "LOWER"
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Integer ids of the tokens of each pair's two texts: two tokens get the
    same id when their ``attr`` (e.g. ``LOWER``: the lower-case form) is the
    same, within this batch.

    docs (List[Doc]): Pair docs.
    pair_key (str): The name of the pair.
    attr (str): A token attribute name spaCy's ``Doc.to_array`` knows.
    RETURNS (Tuple[numpy.ndarray, numpy.ndarray]): int32 (n_docs, La) and
        (n_docs, Lb), La / Lb the longest first / second text (at least 1,
        as ``pair_segments`` pads), padded with -1 and -2.
    RAISES (ValueError): For an attribute spaCy does not know.
    """
    attr = _checked_attr(attr)
    bounds = get_batch_bounds(docs, pair_key)
    values = [doc.to_array([attr]).reshape(-1) for doc in docs]
    flat = numpy.concatenate(values) if values else numpy.zeros(0, dtype="uint64")
    # Dense small ids instead of the 64-bit hashes, which do not fit the
    # int32 arrays Thinc and torch share.
    _, dense = numpy.unique(flat, return_inverse=True)
    dense = dense.reshape(-1).astype("int32")
    offsets = numpy.cumsum([0] + [len(v) for v in values])
    out = []
    for (first, last), pad in (((0, 1), PAD_FIRST), ((2, 3), PAD_SECOND)):
        lengths = bounds[:, last] - bounds[:, first]
        ids = numpy.full((len(docs), max(int(lengths.max(initial=0)), 1)), pad, "int32")
        for i, (start, n) in enumerate(zip(bounds[:, first], lengths)):
            ids[i, :n] = dense[offsets[i] + start : offsets[i] + start + n]
        out.append(ids)
    return out[0], out[1]


def _checked_attr(attr: str) -> str:
    """The upper-case attribute name; a clear error for an unknown one."""
    if not isinstance(attr, str) or attr.upper() not in IDS:
        raise ValueError(
            f"match_attr must be a token attribute such as 'LOWER', 'ORTH', "
            f"'NORM' or 'LEMMA', got {attr!r}."
        )
    return attr.upper()


def with_exact_match(
    segments: Model[List[Doc], Segments], *, attr: str = "LOWER"
) -> Model[List[Doc], MatchSegments]:
    """Add the exact-match token ids (``token_match_ids``) to the output of
    a segments layer (``pair_segments`` or ``separate_segments``), whose
    ``attrs["pair_key"]`` names the pair. Gradients go back to the segments
    layer; the ids have none.

    RETURNS (Model[List[Doc], MatchSegments]): ``(A, A_lengths, B, B_lengths,
        A_ids, B_ids)``.
    """
    return Model(
        "with_exact_match",
        _forward,
        init=_init,
        layers=[segments],
        attrs={"match_attr": _checked_attr(attr)},
    )


def _init(model: Model, X=None, Y=None) -> None:
    model.layers[0].initialize(X=X)


def _forward(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[MatchSegments, Callable]:
    segments = model.layers[0]
    (A, lengths_a, B, lengths_b), backprop_segments = segments(docs, is_train)
    ids_a, ids_b = token_match_ids(
        docs, segments.attrs["pair_key"], attr=model.attrs["match_attr"]
    )
    ops = model.ops
    output = (
        A,
        lengths_a,
        B,
        lengths_b,
        ops.asarray2i(cast(Ints2d, ids_a)),
        ops.asarray2i(cast(Ints2d, ids_b)),
    )

    def backprop(d_output: MatchSegments) -> List[Doc]:
        return backprop_segments(d_output[:4])

    return output, backprop


__all__ = ["MatchSegments", "token_match_ids", "with_exact_match"]
