"""Encode the two texts of each pair doc on their own.

``pair_segments`` runs the token encoder over whole pair docs: with a
contextual backbone (a CNN tok2vec, a transformer) each text's vectors then
depend on the other text. That is a feature for the Decomposable Attention,
but Lin et al.'s siamese setting encodes each sentence without seeing the
other; this layer gives the same padded output as ``pair_segments`` with
each segment encoded as a doc of its own.
"""

from typing import Callable, List, Tuple, cast

import numpy
from spacy.attrs import NORM
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d, Ints2d

from ..pairs import DEFAULT_PAIR_KEY, get_batch_bounds
from ._util import gather_segments, tok2vec_layer, vector_width
from .pair_segments import Segments

ENCODINGS = ("joint", "separate")


def separate_segments(
    tok2vec: Model[List[Doc], List[Floats2d]], *, pair_key: str = DEFAULT_PAIR_KEY
) -> Model[List[Doc], Segments]:
    """Cut each pair doc into its two segments, each a doc of its own
    (``segment_docs``), run ``tok2vec`` over all of them at once and pad.

    tok2vec (Model[List[Doc], List[Floats2d]]): An encoder that runs on any
        docs it is given: not a listener, which can only read what its
        upstream component computed for the whole pair docs.
    pair_key (str): The pair's key; the pair component sets
        ``model.attrs["pair_key"]`` from its own setting, as for
        ``pair_segments``.
    RETURNS (Model[List[Doc], Segments]): ``(A, A_lengths, B, B_lengths)``,
        the same layout as ``pair_segments``.
    """
    return tok2vec_layer("separate_segments", forward, tok2vec, {"pair_key": pair_key})


def is_listener(model: Model) -> bool:
    """Whether ``model`` contains a listener (``spacy.Tok2VecListener.v1``,
    ``spacy-transformers.TransformerListener.v1``): its output is whatever
    the upstream component computed for the docs of the batch."""
    return any("listener" in node.name for node in model.walk())


# Token annotations beyond the tokenizer's that an encoder could read; a pair
# doc that has any is cut with Span.as_doc, which copies them all.
_ANNOTATIONS = ("TAG", "POS", "MORPH", "LEMMA", "DEP", "ENT_IOB")


def segment_docs(
    doc: Doc, start1: int, end1: int, start2: int, end2: int
) -> Tuple[Doc, Doc]:
    """The two segments of a pair doc as docs of their own, with the same
    words, whitespace and token norms (and other annotations, if any)."""
    if any(doc.has_annotation(attr) for attr in _ANNOTATIONS):
        return doc[start1:end1].as_doc(), doc[start2:end2].as_doc()
    # About 8x faster than Span.as_doc: a tokenized doc only needs its words,
    # spaces and the norms that tokenizer exceptions set ("n't" -> "not").
    norms = doc.to_array([NORM])
    out = []
    for start, end in ((start1, end1), (start2, end2)):
        tokens = doc[start:end]
        new = Doc(
            doc.vocab,
            words=[t.text for t in tokens],
            spaces=[bool(t.whitespace_) for t in tokens],
        )
        if end > start:
            new.from_array([NORM], cast(Ints2d, norms[start:end].reshape(-1, 1)))
        out.append(new)
    return out[0], out[1]


def _pad(ops, vectors: List[Floats2d], width: int):
    # Each segment is a whole doc of its own: gather it from token 0 to its end.
    lengths = numpy.asarray([len(v) for v in vectors], dtype="int32")
    bounds = numpy.stack([numpy.zeros_like(lengths), lengths], axis=1)
    (X,), (X_lengths,), backprop = gather_segments(ops, vectors, [bounds], width=width)
    return X, X_lengths, backprop


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Segments, Callable]:
    ops = model.ops
    bounds = get_batch_bounds(docs, model.attrs["pair_key"])
    n = len(docs)
    firsts, seconds = [], []
    for doc, b in zip(docs, bounds):
        first, second = segment_docs(doc, int(b[0]), int(b[1]), int(b[2]), int(b[3]))
        firsts.append(first)
        seconds.append(second)
    segment_docs_ = firsts + seconds
    vectors, bp_vectors = model.layers[0](segment_docs_, is_train)
    width = vector_width(model, vectors)
    A, lengths_a, bp_a = _pad(ops, vectors[:n], width)
    B, lengths_b, bp_b = _pad(ops, vectors[n:], width)
    output = (A, lengths_a, B, lengths_b)

    def backprop(d_output: Segments) -> List[Doc]:
        dA, _, dB, _ = d_output
        bp_vectors(bp_a([dA]) + bp_b([dB]))
        return []

    return output, backprop
