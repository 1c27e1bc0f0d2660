"""The pair convention shared by every pair component of spacy-attn.

A text pair is ONE ``Doc``: both texts tokenized by the pipeline's own
tokenizer and joined with a single space, with the two segments recorded as a
span group (default key ``"pair"``). Keeping a pair in one ``Doc`` means that
``DocBin`` corpora, ``Example`` objects, ``nlp.pipe``, ``spacy evaluate`` and
shared tok2vec / transformer layers all work unchanged.
"""
from typing import Iterable, Iterator, Optional, Sequence, Tuple, Union

import numpy
from spacy.attrs import IDX
from spacy.language import Language
from spacy.tokens import Doc, Span

DEFAULT_SPAN_KEY = "pair"
SEGMENT_LABELS = ("first", "second")


class PairError(ValueError):
    """Raised when a ``Doc`` does not carry a valid text pair."""


def _tokenizer(nlp_or_tokenizer):
    # Accept an nlp object (the common case) or a bare tokenizer callable.
    return getattr(nlp_or_tokenizer, "make_doc", nlp_or_tokenizer)


def make_pair(
    nlp: Union[Language, "callable"],
    first: str,
    second: str,
    *,
    span_key: str = DEFAULT_SPAN_KEY,
    labels: Tuple[str, str] = SEGMENT_LABELS,
) -> Doc:
    """Make one pair ``Doc`` from two strings.

    The texts are joined with one space and tokenized together. spaCy's
    tokenizer splits on spaces before anything else, so no token can cross the
    join and each token belongs to exactly one segment. Tokenizing once is
    several times faster than tokenizing twice and merging with
    ``Doc.from_docs``.

    nlp (Language): The pipeline whose tokenizer to use (or a tokenizer).
    first (str): The first text (premise, question, ...). May be empty.
        Leading and trailing whitespace is removed from both texts.
    second (str): The second text (hypothesis, context, ...). May be empty.
    span_key (str): The ``doc.spans`` key that records the two segments.
    labels (Tuple[str, str]): Labels of the two segment spans.
    RETURNS (Doc): The pair doc; ``doc.spans[span_key]`` holds the two segments.
    """
    if not isinstance(first, str) or not isinstance(second, str):
        raise TypeError(
            f"make_pair expects two strings, got {type(first).__name__} and "
            f"{type(second).__name__}."
        )
    make_doc = _tokenizer(nlp)
    # Surrounding whitespace would become whitespace tokens at the join,
    # landing in one segment or the other depending on the tokenizer, so
    # each text is stripped.
    first, second = first.strip(), second.strip()
    if first and second:
        doc = make_doc(first + " " + second)
        # Tokens starting before the join belong to the first text.
        boundary = int(numpy.searchsorted(doc.to_array(IDX), len(first)))
    elif first:
        doc = make_doc(first)
        boundary = len(doc)
    else:
        doc = make_doc(second)
        boundary = 0
    _set_segments(doc, boundary, span_key, labels)
    return doc


def _set_segments(doc: Doc, boundary: int, span_key: str, labels: Tuple[str, str]) -> None:
    """Store the segments [0, boundary) and [boundary, len(doc)).

    An empty segment is not stored as a span: spaCy cannot copy an empty
    span (``Doc.copy`` maps spans through character offsets and fails with
    E1052), and ``nlp.update`` copies every example. The group's
    ``attrs["empty"]`` ("first", "second" or "both") records it instead;
    ``get_pair_bounds`` reads both forms.
    """
    spans = []
    if boundary > 0:
        spans.append(Span(doc, 0, boundary, label=labels[0]))
    if boundary < len(doc):
        spans.append(Span(doc, boundary, len(doc), label=labels[1]))
    doc.spans[span_key] = spans
    if len(spans) < 2:
        empty = "both" if not spans else ("first" if boundary == 0 else "second")
        doc.spans[span_key].attrs["empty"] = empty


def make_pairs(
    nlp: Union[Language, "callable"],
    pairs: Iterable[Sequence[str]],
    *,
    span_key: str = DEFAULT_SPAN_KEY,
    labels: Tuple[str, str] = SEGMENT_LABELS,
) -> Iterator[Doc]:
    """Lazily make pair docs from an iterable of ``(first, second)`` strings,
    ready for ``nlp.pipe``.

    YIELDS (Doc): One pair doc per input pair.
    """
    for i, pair in enumerate(pairs):
        if isinstance(pair, str) or len(pair) != 2:
            raise PairError(
                f"make_pairs: item {i} is {pair!r}; each item must be a "
                f"(first, second) pair of strings."
            )
        yield make_pair(nlp, pair[0], pair[1], span_key=span_key, labels=labels)


def set_pair(
    doc: Doc,
    boundary: int,
    *,
    span_key: str = DEFAULT_SPAN_KEY,
    labels: Tuple[str, str] = SEGMENT_LABELS,
) -> Doc:
    """Mark an existing doc as a pair: tokens ``[0, boundary)`` are the first
    segment and ``[boundary, len(doc))`` the second.
    """
    if not 0 <= boundary <= len(doc):
        raise PairError(
            f"set_pair: boundary {boundary} is outside the doc (0..{len(doc)})."
        )
    _set_segments(doc, boundary, span_key, labels)
    return doc


def _describe(doc: Doc, index: Optional[int]) -> Tuple[str, str]:
    # Only built on the error path: doc.text walks every token.
    where = f"doc {index} " if index is not None else "doc "
    text = doc.text
    return where, text[:60] + ("..." if len(text) > 60 else "")


def get_pair_bounds(
    doc: Doc, span_key: str = DEFAULT_SPAN_KEY, *, index: Optional[int] = None
) -> Tuple[int, int, int, int]:
    """Return the token offsets ``(start1, end1, start2, end2)`` of a pair doc.

    RAISES (PairError): If the doc has no span group ``span_key`` or it does
        not hold exactly two spans. The message names the doc (its position in
        the batch, when given, and the start of its text) and how to fix it.
    """
    if span_key not in doc.spans:
        where, snippet = _describe(doc, index)
        keys = list(doc.spans.keys())
        raise PairError(
            f"{where}({snippet!r}) has no text pair: doc.spans[{span_key!r}] is "
            f"missing (span groups present: {keys}). Make pair docs with "
            f"spacy_attn.make_pair(nlp, first, second) or "
            f"spacy_attn.set_pair(doc, boundary), or read corpora with "
            f"spacy-attn.PairCorpus.v1; if your docs use another key, set the "
            f"component's span_key."
        )
    group = doc.spans[span_key]
    empty = group.attrs.get("empty")
    if len(group) == 2 and empty is None:
        first, second = group[0], group[1]
        return first.start, first.end, second.start, second.end
    # An empty segment is recorded in attrs rather than as a span.
    if empty == "both" and len(group) == 0:
        return 0, 0, 0, 0
    if empty == "first" and len(group) == 1:
        return group[0].start, group[0].start, group[0].start, group[0].end
    if empty == "second" and len(group) == 1:
        return group[0].start, group[0].end, group[0].end, group[0].end
    where, snippet = _describe(doc, index)
    raise PairError(
        f"{where}({snippet!r}) has {len(group)} span(s) in "
        f"doc.spans[{span_key!r}]; a pair needs exactly 2 (first, second)."
    )


def align_pair_to_predicted(example, span_key: str = DEFAULT_SPAN_KEY) -> None:
    """Give an ``Example``'s predicted doc the pair spans of its reference doc,
    if it lacks them.

    spaCy's ``Corpus`` re-tokenizes the reference text into a fresh predicted
    doc without span groups. The pair is input structure rather than an
    annotation to predict, so aligning it from the reference leaks no gold.

    RAISES (PairError): If the spans do not align with the predicted tokens.
    """
    if span_key in example.predicted.spans or span_key not in example.reference.spans:
        return
    spans = example.reference.spans[span_key]
    aligned = example.get_aligned_spans_y2x(spans, allow_overlap=True)
    if len(aligned) != len(spans):
        raise PairError(
            f"{example.reference.text[:60]!r}: the pair spans of the reference doc "
            f"do not align with the predicted doc's tokens."
        )
    example.predicted.spans[span_key] = aligned
    # The marker of an empty segment travels with the spans.
    example.predicted.spans[span_key].attrs.update(spans.attrs)


def get_pair_texts(doc: Doc, span_key: str = DEFAULT_SPAN_KEY) -> Tuple[str, str]:
    """Return the two segment texts of a pair doc."""
    s1, e1, s2, e2 = get_pair_bounds(doc, span_key)
    return doc[s1:e1].text, doc[s2:e2].text


__all__ = [
    "DEFAULT_SPAN_KEY",
    "PairError",
    "make_pair",
    "make_pairs",
    "set_pair",
    "get_pair_bounds",
    "get_pair_texts",
    "align_pair_to_predicted",
]
