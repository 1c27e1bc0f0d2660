"""The shared gather / pad / scatter of segment tensors (spacy_attn.layers._util),
against a per-row loop."""

import numpy
import pytest
from thinc.api import NumpyOps

from spacy_attn.layers._util import gather_segments, segment_index


def _reference(vectors, segments, row_doc, width):
    """Per-row loop: the padded tensors, and the vectors' gradient for given
    padded gradients (summed where tokens are used more than once)."""
    padded = []
    for bounds in segments:
        longest = max([e - s for s, e in bounds.tolist()] + [1])
        X = numpy.zeros((len(row_doc), longest, width), dtype="float32")
        for r, (s, e) in enumerate(bounds.tolist()):
            X[r, : e - s] = vectors[row_doc[r]][s:e]
        padded.append(X)

    def backprop(d_padded):
        d_vectors = [numpy.zeros_like(v) for v in vectors]
        for dX, bounds in zip(d_padded, segments):
            if dX is None:
                continue
            for r, (s, e) in enumerate(bounds.tolist()):
                d_vectors[row_doc[r]][s:e] += dX[r, : e - s]
        return d_vectors

    return padded, backprop


@pytest.mark.parametrize("windows", [False, True])
def test_gather_segments_equals_loop(windows):
    rng = numpy.random.default_rng(0)
    ops = NumpyOps()
    width = 3
    vectors = [rng.normal(size=(n, width)).astype("float32") for n in (5, 0, 7, 2)]
    if windows:
        # Rows from docs 0, 0, 2, 2, 2, 3 (a question repeated per window,
        # overlapping context windows).
        row_doc = numpy.asarray([0, 0, 2, 2, 2, 3], dtype="int32")
        segments = [
            numpy.asarray([[0, 2], [0, 2], [0, 1], [0, 1], [0, 1], [0, 0]]),
            numpy.asarray([[2, 4], [3, 5], [1, 5], [3, 7], [4, 7], [1, 2]]),
        ]
    else:
        row_doc = None
        # Second segment overlaps the first in doc 2; doc 1 is empty.
        segments = [
            numpy.asarray([[0, 2], [0, 0], [0, 4], [0, 1]]),
            numpy.asarray([[2, 5], [0, 0], [3, 7], [1, 2]]),
        ]
    padded, lengths, backprop = gather_segments(
        ops, vectors, segments, width=width, row_doc=row_doc
    )
    rows = numpy.arange(len(vectors)) if row_doc is None else row_doc
    expected, expected_backprop = _reference(vectors, segments, rows, width)
    for X, E, L, bounds in zip(padded, expected, lengths, segments):
        assert X.shape == E.shape
        numpy.testing.assert_array_equal(X, E)
        assert (
            L.dtype == numpy.int32
            and L.tolist() == (bounds[:, 1] - bounds[:, 0]).tolist()
        )
    d_padded = [rng.normal(size=X.shape).astype("float32") for X in padded]
    for grads in (d_padded, [d_padded[0], None]):
        got = backprop(grads)
        for g, e in zip(got, expected_backprop(grads)):
            numpy.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
    if not windows:
        # The overlapping token of doc 2 (token 3) gets both gradients.
        d = backprop([numpy.ones_like(padded[0]), numpy.ones_like(padded[1])])[2]
        assert d[3].tolist() == [2.0] * width and d[0].tolist() == [1.0] * width


def test_gather_segments_empty_batch():
    ops = NumpyOps()
    no_rows = numpy.zeros((0, 2), dtype="int32")
    padded, lengths, backprop = gather_segments(ops, [], [no_rows, no_rows], width=4)
    assert [X.shape for X in padded] == [(0, 1, 4), (0, 1, 4)]
    assert [L.shape for L in lengths] == [(0,), (0,)]
    assert backprop(padded) == []
    padded, _, _ = gather_segments(
        ops, [], [no_rows], width=4, row_doc=numpy.zeros(0, dtype="int32")
    )
    assert padded[0].shape == (0, 1, 4)


def test_segment_index():
    index = segment_index(
        numpy.asarray([[1, 3], [0, 0], [2, 5]]), numpy.asarray([0, 4, 4])
    )
    assert index.row.tolist() == [0, 0, 2, 2, 2]
    assert index.position.tolist() == [0, 1, 0, 1, 2]
    assert index.flat_row.tolist() == [1, 2, 6, 7, 8]
    assert index.lengths.tolist() == [2, 0, 3]
