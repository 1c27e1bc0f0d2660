"""The pair convention shared by every pair component of spacy-attn.

A text pair is ONE ``Doc``: both texts tokenized by the pipeline's own
tokenizer and joined with a single space. Keeping a pair in one ``Doc`` means
that ``DocBin`` corpora, ``Example`` objects, ``nlp.pipe``, ``spacy evaluate``
and shared tok2vec / transformer layers all work unchanged.

Where the two texts meet is stored as one plain int, the index of the first
token of the second text, in ``doc.user_data`` under a string key
(``"spacy_attn.pair"`` for the default name ``"pair"``). Why not a span group
(the storage of spacy-attn 0.1): ``nlp.update`` copies every predicted doc
(``Language._copy_examples`` -> ``Doc.copy``), and ``Doc.copy`` rebuilds
each span of a span group through ``Doc.char_span`` — 6 µs per pair on a
2-core CPU, 30% of spaCy's whole per-doc training cost. ``Doc.copy`` copies
``user_data`` with ``copy.deepcopy``, for which an int under a *string* key
is an atom (a tuple key, as ``Doc._`` extensions use, costs 2 µs more).
``user_data`` survives ``Doc.copy``, pickling (``nlp.pipe(n_process=...)``),
``Doc.to_bytes`` and ``DocBin(store_user_data=True)``; no parser, senter or
transformer touches it. Docs of the old format (a span group with two spans)
are still read.
"""

import warnings
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence, Tuple, Union

import numpy
from spacy.attrs import IDX
from spacy.language import Language
from spacy.tokens import Doc, Span

DEFAULT_PAIR_KEY = "pair"
# The file for spaCy's --code that makes its Corpus keep pairs (named in errors).
_CARRY_PAIRS_CODE = Path(__file__).with_name("carry_pairs.py")
SEGMENT_LABELS = ("first", "second")
_DATA_PREFIX = "spacy_attn."
# The ``doc.user_data`` keys of a pair's place in its file, set by the pair
# readers from their group and id columns (``group_col``, ``id_col``) and
# kept by DocBin(store_user_data=True): the group (query) id that ranking
# metrics group candidates by, and the row id. Values are strings. The ":"
# keeps them apart from the pair boundaries (``_DATA_PREFIX + pair_key``).
GROUP_ID_KEY = "spacy_attn:group_id"
ROW_ID_KEY = "spacy_attn:row_id"


class PairError(ValueError):
    """Raised when a ``Doc`` does not carry a valid text pair."""


def pair_data_key(pair_key: str = DEFAULT_PAIR_KEY) -> str:
    """The ``doc.user_data`` key that holds the boundary of the pair named
    ``pair_key`` (``"spacy_attn.pair"`` by default).

    pair_key (str): The name of the pair (the components' ``pair_key``).
    RETURNS (str): The key.
    """
    return _DATA_PREFIX + pair_key


OLD_PAIR_KEY_SETTING = "span_key"
"""What the pair classifier and the readers called ``pair_key`` before the
rename (spacy-attn 0.1.0 was unreleased): still accepted from configs of
pipelines trained before it, with a ``DeprecationWarning``."""


def renamed_pair_key(pair_key: str, span_key: Optional[str], where: str) -> str:
    """The pair's key from a component's or reader's settings, where a config
    written before the rename may still set ``span_key``. The one place that
    accepts the old name: it warns and uses the old setting's value.

    pair_key (str): The ``pair_key`` setting (filled with its default when a
        config has only the old name).
    span_key (Optional[str]): The old setting; None when not set.
    where (str): The component or reader, for the messages.
    RETURNS (str): The pair's key.
    RAISES (ValueError): If both names are set, to different keys.
    """
    if span_key is None:
        return pair_key
    if pair_key not in (DEFAULT_PAIR_KEY, span_key):
        raise ValueError(
            f"{where}: both pair_key = {pair_key!r} and its old name span_key = "
            f"{span_key!r} are set; keep only pair_key."
        )
    warnings.warn(
        f"{where}: the setting span_key is now called pair_key; rename it in the "
        f"config (pair_key = {span_key!r}). The old name will stop working.",
        DeprecationWarning,
        stacklevel=3,
    )
    return span_key


def _tokenizer(nlp_or_tokenizer):
    # Accept an nlp object (the common case) or a bare tokenizer callable.
    return getattr(nlp_or_tokenizer, "make_doc", nlp_or_tokenizer)


def make_pair(
    nlp: Union[Language, Callable[[str], Doc]],
    first: str,
    second: str,
    *,
    pair_key: str = DEFAULT_PAIR_KEY,
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
    pair_key (str): The name of the pair (see ``pair_data_key``).
    RETURNS (Doc): The pair doc; ``get_pair_spans(doc)`` gives the segments.
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
    doc.user_data[pair_data_key(pair_key)] = boundary
    return doc


def make_pairs(
    nlp: Union[Language, Callable[[str], Doc]],
    pairs: Iterable[Sequence[str]],
    *,
    pair_key: str = DEFAULT_PAIR_KEY,
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
        yield make_pair(nlp, pair[0], pair[1], pair_key=pair_key)


def set_pair(doc: Doc, boundary: int, *, pair_key: str = DEFAULT_PAIR_KEY) -> Doc:
    """Mark an existing doc as a pair: tokens ``[0, boundary)`` are the first
    segment and ``[boundary, len(doc))`` the second.

    doc (Doc): The doc, modified in place.
    boundary (int): The first token of the second text.
    pair_key (str): The name of the pair.
    RETURNS (Doc): The doc.
    RAISES (PairError): If ``boundary`` is outside ``0..len(doc)``.
    """
    if isinstance(boundary, bool) or not isinstance(boundary, (int, numpy.integer)):
        raise PairError(f"set_pair: boundary must be an int, got {boundary!r}.")
    if not 0 <= boundary <= len(doc):
        raise PairError(
            f"set_pair: boundary {boundary} is outside the doc (0..{len(doc)})."
        )
    doc.user_data[pair_data_key(pair_key)] = int(boundary)
    return doc


def has_pair(doc: Doc, pair_key: str = DEFAULT_PAIR_KEY) -> bool:
    """RETURNS (bool): Whether ``doc`` carries a pair named ``pair_key``
    (in either storage format)."""
    return pair_data_key(pair_key) in doc.user_data or pair_key in doc.spans


def _describe(doc: Doc, index: Optional[int]) -> Tuple[str, str]:
    # Only built on the error path: doc.text walks every token.
    where = f"doc {index} " if index is not None else "doc "
    text = doc.text
    return where, text[:60] + ("..." if len(text) > 60 else "")


def _missing_pair_error(doc: Doc, pair_key: str, index: Optional[int]) -> PairError:
    where, snippet = _describe(doc, index)
    return PairError(
        f"{where}({snippet!r}) has no text pair: doc.user_data"
        f"[{pair_data_key(pair_key)!r}] is missing (pair '{pair_key}'). Make pair "
        f"docs with spacy_attn.make_pair(nlp, first, second) or "
        f"spacy_attn.set_pair(doc, boundary), or read corpora with "
        f"spacy-attn.PairCorpus.v1. Docs read from a DocBin keep the pair only "
        f"if it was written with DocBin(store_user_data=True). If your docs use "
        f"another pair name, set the component's pair_key. `spacy evaluate` "
        f"re-tokenizes its corpus and drops the pair unless the pipeline's config "
        f"sets [nlp] after_pipeline_creation = "
        f'{{"@callbacks":"spacy-attn.carry_pairs.v1"}}: for other pipelines add '
        f"`--code {_CARRY_PAIRS_CODE}` to it. (`spacy benchmark speed` rebuilds "
        f"docs from text: use `python -m spacy_attn benchmark-speed`.)"
    )


def _legacy_bounds(
    doc: Doc, pair_key: str, index: Optional[int]
) -> Tuple[int, int, int, int]:
    """Bounds from the span-group storage of spacy-attn 0.1 (still read)."""
    group = doc.spans[pair_key]
    empty = group.attrs.get("empty")
    if len(group) == 2 and empty is None:
        first, second = group[0], group[1]
        return first.start, first.end, second.start, second.end
    # An empty segment was recorded in attrs rather than as a span.
    if empty == "both" and len(group) == 0:
        return 0, 0, 0, 0
    if empty == "first" and len(group) == 1:
        return group[0].start, group[0].start, group[0].start, group[0].end
    if empty == "second" and len(group) == 1:
        return group[0].start, group[0].end, group[0].end, group[0].end
    where, snippet = _describe(doc, index)
    raise PairError(
        f"{where}({snippet!r}) has {len(group)} span(s) in "
        f"doc.spans[{pair_key!r}]; a pair needs exactly 2 (first, second)."
    )


def get_pair_bounds(
    doc: Doc, pair_key: str = DEFAULT_PAIR_KEY, *, index: Optional[int] = None
) -> Tuple[int, int, int, int]:
    """Return the token offsets ``(start1, end1, start2, end2)`` of a pair doc.

    doc (Doc): A pair doc.
    pair_key (str): The name of the pair.
    index (Optional[int]): The doc's position in its batch, for the error.
    RETURNS (Tuple[int, int, int, int]): The two segments' token offsets.
    RAISES (PairError): If the doc carries no valid pair. The message names
        the doc (its position in the batch, when given, and the start of its
        text) and how to fix it.
    """
    boundary = doc.user_data.get(_DATA_PREFIX + pair_key)
    if boundary is not None:
        n = len(doc)
        if not 0 <= boundary <= n:
            where, snippet = _describe(doc, index)
            raise PairError(
                f"{where}({snippet!r}) has pair boundary {boundary}, outside the "
                f"doc (0..{n}): was it retokenized after the pair was made? Call "
                f"spacy_attn.set_pair(doc, boundary) again."
            )
        return 0, boundary, boundary, n
    if pair_key in doc.spans:
        return _legacy_bounds(doc, pair_key, index)
    raise _missing_pair_error(doc, pair_key, index)


def get_batch_bounds(
    docs: Sequence[Doc], pair_key: str = DEFAULT_PAIR_KEY
) -> numpy.ndarray:
    """The pair bounds of a batch, as the model layers need them.

    docs (Sequence[Doc]): Pair docs.
    pair_key (str): The name of the pair.
    RETURNS (numpy.ndarray): (n_docs, 4) int32 ``(start1, end1, start2, end2)``.
    RAISES (PairError): For the first doc without a valid pair (named).
    """
    key = _DATA_PREFIX + pair_key
    out = numpy.empty((len(docs), 4), dtype="int32")
    for i, doc in enumerate(docs):
        boundary = doc.user_data.get(key)
        n = len(doc)
        # The fast path is one dict lookup per doc; anything else (old
        # format, bad boundary, no pair) goes through get_pair_bounds.
        if boundary is not None and 0 <= boundary <= n:
            out[i] = (0, boundary, boundary, n)
        else:
            out[i] = get_pair_bounds(doc, pair_key, index=i)
    return out


def get_pair_spans(doc: Doc, pair_key: str = DEFAULT_PAIR_KEY) -> Tuple[Span, Span]:
    """The two segments of a pair doc as spans (labels "first", "second").

    RETURNS (Tuple[Span, Span]): The first and the second text.
    """
    s1, e1, s2, e2 = get_pair_bounds(doc, pair_key)
    return (
        Span(doc, s1, e1, label=SEGMENT_LABELS[0]),
        Span(doc, s2, e2, label=SEGMENT_LABELS[1]),
    )


def get_pair_texts(doc: Doc, pair_key: str = DEFAULT_PAIR_KEY) -> Tuple[str, str]:
    """Return the two segment texts of a pair doc."""
    s1, e1, s2, e2 = get_pair_bounds(doc, pair_key)
    return doc[s1:e1].text, doc[s2:e2].text


def upgrade_pair(doc: Doc, pair_key: str = DEFAULT_PAIR_KEY) -> Doc:
    """Move a pair stored in the old format (span group ``doc.spans[pair_key]``
    of two adjacent spans covering the doc) to the current one, in place.
    Docs already in the current format, or whose old spans do not cover the
    doc as two adjacent segments, are left as they are (still readable).

    RETURNS (Doc): The doc.
    """
    if pair_data_key(pair_key) in doc.user_data or pair_key not in doc.spans:
        return doc
    s1, e1, s2, e2 = _legacy_bounds(doc, pair_key, None)
    if s1 == 0 and e1 == s2 and e2 == len(doc):
        doc.user_data[pair_data_key(pair_key)] = e1
        del doc.spans[pair_key]
    return doc


def align_pair_to_predicted(example, pair_key: str = DEFAULT_PAIR_KEY) -> None:
    """Give an ``Example``'s predicted doc the pair of its reference doc, if
    it lacks it.

    spaCy's ``Corpus`` re-tokenizes the reference text into a fresh predicted
    doc without ``user_data`` or span groups. The pair is input structure
    rather than an annotation to predict, so aligning it from the reference
    leaks no gold.

    RAISES (PairError): If the boundary falls inside a predicted token.
    """
    predicted, reference = example.predicted, example.reference
    if has_pair(predicted, pair_key) or not has_pair(reference, pair_key):
        return
    s1, e1, s2, e2 = get_pair_bounds(reference, pair_key)
    if not (s1 == 0 and e1 == s2 and e2 == len(reference)):
        _align_legacy_spans(example, pair_key)
        return
    if len(predicted) == len(reference) and predicted.text == reference.text:
        # Same text, same tokenizer: the token offsets carry over as they are.
        predicted.user_data[pair_data_key(pair_key)] = e1
        return
    char = reference[e1].idx if e1 < len(reference) else len(reference.text)
    starts = predicted.to_array(IDX)
    boundary = int(numpy.searchsorted(starts, char))
    if (
        boundary < len(predicted)
        and starts[boundary] != char
        or (
            boundary == len(predicted) and len(predicted) and char < len(predicted.text)
        )
    ):
        raise PairError(
            f"{reference.text[:60]!r}: the pair boundary of the reference doc "
            f"(character {char}) falls inside a token of the predicted doc."
        )
    predicted.user_data[pair_data_key(pair_key)] = boundary


def _align_legacy_spans(example, pair_key: str) -> None:
    # Old-format pairs with arbitrary (e.g. overlapping) spans: align them as
    # spans, as spacy-attn 0.1 did.
    spans = example.reference.spans[pair_key]
    aligned = example.get_aligned_spans_y2x(spans, allow_overlap=True)
    if len(aligned) != len(spans):
        raise PairError(
            f"{example.reference.text[:60]!r}: the pair spans of the reference doc "
            f"do not align with the predicted doc's tokens."
        )
    example.predicted.spans[pair_key] = aligned
    example.predicted.spans[pair_key].attrs.update(spans.attrs)


__all__ = [
    "DEFAULT_PAIR_KEY",
    "GROUP_ID_KEY",
    "ROW_ID_KEY",
    "OLD_PAIR_KEY_SETTING",
    "renamed_pair_key",
    "PairError",
    "make_pair",
    "make_pairs",
    "set_pair",
    "has_pair",
    "get_pair_bounds",
    "get_batch_bounds",
    "get_pair_spans",
    "get_pair_texts",
    "pair_data_key",
    "upgrade_pair",
    "align_pair_to_predicted",
]
