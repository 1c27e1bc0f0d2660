"""Answer (question, context) string pairs in bulk with an ``attn_span_qa`` pipeline."""

from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from spacy.language import Language
from spacy.tokens import Doc, SpanGroup

from .pairs import PairError, get_pair_bounds, make_pair
from .pipeline.lookup import find_component
from .pipeline.span_qa import SpanQA


def _pairs_to_docs(
    nlp: Language, pairs: Iterable[Sequence[str]], pair_key: str, kept: List
):
    for i, pair in enumerate(pairs):
        if isinstance(pair, str) or len(pair) != 2:
            raise PairError(
                f"answer_questions: item {i} is {pair!r}; each item must be a "
                f"(question, context) pair of strings."
            )
        question, context = pair
        kept.append(context)
        yield make_pair(nlp, question, context, pair_key=pair_key)


def answer_questions(
    nlp: Language,
    pairs: Iterable[Sequence[str]],
    *,
    top_k: Optional[int] = None,
    batch_size: int = 64,
    component: Optional[str] = None,
    as_docs: bool = False,
) -> Iterator[Union[List[Dict[str, Any]], Doc]]:
    """Answer many questions, each about its own context.

    nlp (Language): A pipeline with an ``attn_span_qa`` component.
    pairs (Iterable[Sequence[str]]): ``(question, context)`` string pairs;
        consumed lazily.
    top_k (Optional[int]): Answers per question; None uses the component's
        ``top_k``. Passed to the component for this call only: its ``cfg``
        is never changed, so other users of the pipeline (or another
        ``answer_questions`` generator) are not affected.
    batch_size (int): Docs per ``nlp.pipe`` batch.
    component (Optional[str]): Name of the QA component, if the pipeline has
        several.
    as_docs (bool): Yield the annotated pair docs instead of dicts.
    YIELDS: Per pair, in input order, a list of up to ``top_k`` answers, best
        first: ``{"text", "score", "start_char", "end_char"}`` where
        ``context[start_char:end_char] == text`` in the ORIGINAL context string
        (surrounding whitespace included), and ``score`` is the component's
        span probability (see ``SpanQA``). An empty context gives ``[]``.
        With ``as_docs``, the docs (answers in ``doc.spans[answers_key]``).
    """
    # RAISES ComponentLookupError (a ValueError) naming the components.
    name, _ = find_component(nlp, component, tasks=("qa",))
    pipe = nlp.get_pipe(name)
    assert isinstance(pipe, SpanQA)  # what find_component checked
    if top_k is not None and top_k < 1:
        raise ValueError(f"answer_questions: top_k must be >= 1, got {top_k}.")
    contexts: List[str] = []
    # Not pipe.cfg["top_k"] = top_k: this is a generator, so a changed cfg
    # would leak into every other use of the pipeline until it is exhausted.
    component_cfg = {pipe.name: {"top_k": top_k}} if top_k is not None else None
    docs = nlp.pipe(
        _pairs_to_docs(nlp, pairs, pipe.pair_key, contexts),
        batch_size=batch_size,
        component_cfg=component_cfg,
    )
    for i, doc in enumerate(docs):
        context = contexts[i]
        if as_docs:
            yield doc
            continue
        yield context_answers(doc, context, pipe.pair_key, pipe.answers_key)


def context_answers(
    doc: Doc, context: str, pair_key: str, answers_key: str
) -> List[Dict[str, Any]]:
    """The answers a span QA component put on a pair doc, as character
    offsets into ``context`` as given (before ``make_pair`` stripped it).

    doc (Doc): The annotated pair doc.
    context (str): The context text passed to ``make_pair``.
    pair_key (str): The pair's key in ``doc.spans``.
    answers_key (str): The answers' key in ``doc.spans``.
    RETURNS (List[Dict[str, Any]]): ``{"text", "score", "start_char",
        "end_char"}`` per answer, best first.
    """
    group = doc.spans[answers_key] if answers_key in doc.spans else []
    if not len(group):
        return []
    assert isinstance(group, SpanGroup)  # the [] fallback is empty
    # make_pair strips the context, so its first character is doc character
    # ``segment.start_char``, which is context character ``lead``.
    _, _, context_start, context_end = get_pair_bounds(doc, pair_key)
    segment = doc[context_start:context_end]
    lead = len(context) - len(context.lstrip())
    shift = lead - segment.start_char
    scores = group.attrs.get("scores", [None] * len(group))
    out = []
    for span, score in zip(group, scores):
        start, end = span.start_char + shift, span.end_char + shift
        out.append(
            {
                "text": context[start:end],
                "score": score,
                "start_char": start,
                "end_char": end,
            }
        )
    return out


__all__ = ["answer_questions", "context_answers"]
