"""Aligning SQuAD answers (text + character offset) to tokens of a pair doc.

Per annotation, the outcome is counted in :class:`SquadStats`:

* ``exact``: the text is at ``answer_start`` and its boundaries are token
  boundaries;
* ``expanded``: the text is at ``answer_start`` but a boundary falls inside a
  token ("$5" in "$5m"); the span grows to the covering tokens;
* ``relocated``: the text is not at ``answer_start`` but occurs within
  ``relocate_window`` characters of it (the 10 nyt_bigbench answers whose
  stored offset is off by one, after BIG-bench stripped a leading "," or ".");
  the nearest occurrence is used, expanded to tokens if needed;
* ``unaligned``: anything else (text not found near the offset, empty or
  whitespace-only text). The string is still kept in ``attrs["texts"]``.
"""

from typing import Callable, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup

from ..pairs import DEFAULT_PAIR_KEY, get_pair_bounds, make_pair
from .data import ANSWER_LABEL, DEFAULT_ANSWERS_KEY, SquadQuestion, SquadStats


def context_offset(question: str, context: str) -> int:
    """Doc character offset of context character 0 in ``make_pair(nlp,
    question, context)``, which may be negative when the context has leading
    whitespace: ``make_pair`` strips both texts and joins them with one space,
    so context char ``c`` is doc char ``context_offset + c``.
    """
    q, ctx = question.strip(), context.strip()
    lead = len(context) - len(context.lstrip())
    base = len(q) + 1 if q and ctx else 0
    return base - lead


def _trim(context: str, start: int, end: int) -> Tuple[int, int]:
    # Whitespace at the ends of an answer is not part of any token.
    while start < end and context[start].isspace():
        start += 1
    while end > start and context[end - 1].isspace():
        end -= 1
    return start, end


def find_near(context: str, text: str, start: int, window: int) -> Optional[int]:
    """The occurrence of ``text`` in ``context`` nearest to ``start``, within
    ``window`` characters either side of the stated answer (how a stated
    offset that is a little off is relocated; the HF peer benchmark relocates
    answers the same way).

    context (str): The context.
    text (str): The answer text.
    start (int): The stated character offset.
    window (int): How far from ``start`` to look.
    RETURNS (Optional[int]): The nearest offset, or None if there is none.
    """
    best = None
    lo = max(0, start - window)
    hi = min(len(context), start + len(text) + window)
    i = context.find(text, lo, hi)
    while i != -1:
        if best is None or abs(i - start) < abs(best - start):
            best = i
        i = context.find(text, i + 1, hi)
    return best


def align_answer(
    doc: Doc,
    context: str,
    offset: int,
    text: str,
    answer_start: int,
    *,
    segment: Span,
    relocate_window: int = 50,
) -> Tuple[Optional[Span], str]:
    """Align one gold answer to tokens of a pair doc.

    doc (Doc): The pair doc.
    context (str): The context as stored in the file (unstripped).
    offset (int): ``context_offset(question, context)``.
    text (str): The gold answer text.
    answer_start (int): Its stored character offset in ``context``.
    segment (Span): The context segment; answers never leave it.
    relocate_window (int): How far (characters) to look for a text that is not
        at its stored offset.
    RETURNS (Tuple[Optional[Span], str]): The span (label "answer") or None,
        and the status: "exact", "expanded", "relocated" or "unaligned".
    """
    if not text.strip():
        return None, "unaligned"
    if context[answer_start : answer_start + len(text)] == text and answer_start >= 0:
        start, status = answer_start, "exact"
    else:
        found = find_near(context, text, answer_start, relocate_window)
        if found is None:
            return None, "unaligned"
        start, status = found, "relocated"
    c0, c1 = _trim(context, start, start + len(text))
    d0, d1 = c0 + offset, c1 + offset
    if d0 < segment.start_char or d1 > segment.end_char:
        return None, "unaligned"
    span = doc.char_span(d0, d1, label=ANSWER_LABEL)
    if span is None:
        span = doc.char_span(d0, d1, label=ANSWER_LABEL, alignment_mode="expand")
        if span is None:
            return None, "unaligned"
        if status == "exact":
            status = "expanded"
    if span.start < segment.start or span.end > segment.end or len(span) == 0:
        return None, "unaligned"
    return span, status


def make_qa_doc(
    nlp: Union[Language, Callable],
    question: SquadQuestion,
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
    stats: Optional[SquadStats] = None,
    relocate_window: int = 50,
) -> Doc:
    """Make the gold (reference) pair doc of one question: the pair spans
    under ``pair_key`` and the aligned gold answers under ``answers_key``,
    with ``attrs["texts"]`` (all gold strings) and ``attrs["id"]``.
    """
    doc = make_pair(nlp, question.question, question.context, pair_key=pair_key)
    _, _, context_start, context_end = get_pair_bounds(doc, pair_key)
    segment = doc[context_start:context_end]
    offset = context_offset(question.question, question.context)
    spans = []
    for text, answer_start in question.answers:
        span, status = align_answer(
            doc,
            question.context,
            offset,
            text,
            answer_start,
            segment=segment,
            relocate_window=relocate_window,
        )
        if span is not None:
            spans.append(span)
        if stats is not None:
            stats.add(status)
            if status == "unaligned" and len(stats.unaligned_examples) < 20:
                stats.unaligned_examples.append(
                    f"{question.id}: {text!r}@{answer_start}"
                )
    if stats is not None:
        stats.questions += 1
        if not question.answers:
            stats.unanswerable += 1
        elif not spans:
            stats.questions_unaligned += 1
    group = SpanGroup(doc, name=answers_key, spans=spans)
    group.attrs["texts"] = [text for text, _ in question.answers]
    group.attrs["id"] = question.id
    doc.spans[answers_key] = group
    return doc
