"""Answer questions with an ``attn_span_qa`` pipeline: (question, context)
string pairs in bulk, or one question over many contexts (top-k across them)."""

import math
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.util import minibatch

from .pairs import PairError, get_pair_bounds, make_pair
from .pipeline.lookup import find_component
from .pipeline.qa_no_answer import says_no_answer
from .pipeline.span_qa import SpanQA
from .squad.no_answer_metric import get_tokens


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
    score_threshold: Optional[float] = None,
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
    score_threshold (Optional[float]): Drop answers scoring below it (see
        ``context_answers``); not applied to ``as_docs``.
    YIELDS: Per pair, in input order, a list of up to ``top_k`` answers, best
        first: ``{"text", "score", "start_char", "end_char"}`` where
        ``context[start_char:end_char] == text`` in the ORIGINAL context string
        (surrounding whitespace included), and ``score`` is the component's
        span probability (see ``SpanQA``). An empty context gives ``[]``.
        A model that scores "no answer" (``DynamicCoattention.v4``) adds
        ``"no_answer": False`` and ``"no_answer_score"`` to each answer, and
        says "no answer" as the one entry ``{"text": "", "score":
        no_answer_score, "start_char": None, "end_char": None, "no_answer":
        True, "no_answer_score": no_answer_score}``, never a made-up span.
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
        yield context_answers(
            doc,
            context,
            pipe.pair_key,
            pipe.answers_key,
            score_threshold=score_threshold,
        )


def context_answers(
    doc: Doc,
    context: str,
    pair_key: str,
    answers_key: str,
    *,
    score_threshold: Optional[float] = None,
) -> List[Dict[str, Any]]:
    """The answers a span QA component put on a pair doc, as character
    offsets into ``context`` as given (before ``make_pair`` stripped it).

    doc (Doc): The annotated pair doc.
    context (str): The context text passed to ``make_pair``.
    pair_key (str): The pair's key in ``doc.spans``.
    answers_key (str): The answers' key in ``doc.spans``.
    score_threshold (Optional[float]): Drop answers whose score is below it.
        When a model that scores "no answer" keeps none, the result is its
        "no answer" entry (``no_answer_entry``); otherwise [].
    RETURNS (List[Dict[str, Any]]): ``{"text", "score", "start_char",
        "end_char"}`` per answer, best first (with ``"no_answer"`` and
        ``"no_answer_score"`` for a v2 model; "no answer" as one entry with
        ``"no_answer": True``, see ``answer_questions``).
    """
    group = doc.spans[answers_key] if answers_key in doc.spans else []
    if isinstance(group, SpanGroup) and group.attrs.get("no_answer"):
        return [no_answer_entry(group.attrs["no_answer_score"])]
    if not len(group):
        return []
    assert isinstance(group, SpanGroup)  # the [] fallback is empty
    no_answer = (
        {"no_answer": False, "no_answer_score": group.attrs["no_answer_score"]}
        if "no_answer_score" in group.attrs
        else {}
    )
    shift = context_shift(doc, context, pair_key)
    scores = group.attrs.get("scores", [None] * len(group))
    out = []
    for span, score in zip(group, scores):
        if score_threshold is not None and score < score_threshold:
            continue
        start, end = span.start_char + shift, span.end_char + shift
        out.append(
            {
                "text": context[start:end],
                "score": score,
                "start_char": start,
                "end_char": end,
                **no_answer,
            }
        )
    if not out and no_answer:
        return [no_answer_entry(group.attrs["no_answer_score"])]
    return out


def context_shift(doc: Doc, context: str, pair_key: str) -> int:
    """What to add to a doc character offset to get the offset in
    ``context`` as given to ``make_pair`` (which strips it)."""
    # make_pair strips the context, so its first character is doc character
    # ``segment.start_char``, which is context character ``lead``.
    _, _, context_start, context_end = get_pair_bounds(doc, pair_key)
    segment = doc[context_start:context_end]
    lead = len(context) - len(context.lstrip())
    return lead - segment.start_char


def no_answer_entry(score: float) -> Dict[str, Any]:
    """The answer entry that says "no answer", with its probability."""
    return {
        "text": "",
        "score": float(score),
        "start_char": None,
        "end_char": None,
        "no_answer": True,
        "no_answer_score": float(score),
    }


# How answers from different contexts are ranked: "probability", the span's
# probability within its context (spans + "no answer" sum to one per
# context, so a context that cannot answer gives low probabilities); "logit",
# the un-normalized span score start + end logit, the same scale in every
# context; "margin", the span's logit minus its context's "no answer" logit
# (how much more likely the span is than "no answer" there). Over ten SQuAD
# 2.0 dev paragraphs the margin put the right paragraph on top most often
# (benchmarks/results/squad2.md: 38.2% vs logit 35.2%, probability 22.6%),
# so it ranks by default for a model that scores "no answer".
SCORE_KINDS = ("probability", "logit", "margin")


def question_overlap(question: str, context: str) -> int:
    """How many of the question's distinct words the context contains
    (SQuAD-normalized: lowercase, no punctuation or articles; spaCy's English
    stop words left out). SQuAD-style questions reuse their paragraph's
    words, so it picks the right paragraph among ten of an article about as
    often as the DCN's scores do (benchmarks/results/squad2*.md): the trivial
    ranker of the many-contexts check, and the term ``overlap_weight`` adds
    to ``answer_question``'s ranking."""
    words = set(get_tokens(question)) - STOP_WORDS
    return len(words & set(get_tokens(context)))


def no_answer_margin(
    probability: float, no_answer_score: Optional[float]
) -> Optional[float]:
    """A span's logit minus its context's "no answer" logit: the log of
    their probabilities' ratio (one softmax holds both). None for a model
    without "no answer"."""
    if no_answer_score is None:
        return None
    return math.log(max(probability, 1e-45)) - math.log(max(no_answer_score, 1e-45))


def pair_candidates(
    nlp: Language,
    pairs: Sequence[Sequence[str]],
    *,
    top_k: int = 5,
    batch_size: int = 64,
    component: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """Each (question, context) pair's own ranked answers, before any "no
    answer" decision (a context whose "no answer" wins keeps its spans here).

    RETURNS (List[Dict[str, Any]]): Per pair, in order: ``{"answers": [...],
        "no_answer_score", "no_answer"}`` where each answer is ``{"text",
        "start_char", "end_char", "probability", "logit"}`` (char offsets into
        the context as given; ``probability`` the span's probability in its
        context, "no answer" included in the normalization; ``logit`` the
        un-normalized start + end logit), and ``no_answer`` is the
        component's decision (``no_answer_threshold``). ``logit`` and
        ``no_answer_score`` are None for a model without "no answer".
    """
    name, _ = find_component(nlp, component, tasks=("qa",))
    pipe = nlp.get_pipe(name)
    assert isinstance(pipe, SpanQA)  # what find_component checked
    out: List[Dict[str, Any]] = []
    for batch in minibatch(pairs, size=batch_size):
        docs = [make_pair(nlp, q, c, pair_key=pipe.pair_key) for q, c in batch]
        # Components before the QA one (e.g. a transformer) annotate first.
        for other, proc in nlp.pipeline:
            if other == name:
                break
            pipe_fn = getattr(proc, "pipe", None)
            docs = (
                list(pipe_fn(docs, batch_size=batch_size))
                if pipe_fn is not None
                else [proc(doc) for doc in docs]
            )
        for (_, context), doc, answers in zip(
            batch, docs, pipe.predict(docs, top_k=top_k)
        ):
            out.append(_candidates(doc, context, answers, pipe))
    return out


def _candidates(doc: Doc, context: str, answers: Any, pipe: SpanQA) -> Dict[str, Any]:
    shift = context_shift(doc, context, pipe.pair_key)
    p_null = getattr(answers, "no_answer_score", None)
    log_norm = getattr(answers, "log_norm", None)
    spans: List[Dict[str, Any]] = []
    for start, end, prob in answers:
        span = doc[start:end]
        s, e = span.start_char + shift, span.end_char + shift
        logit = math.log(max(prob, 1e-45)) + log_norm if log_norm is not None else None
        spans.append(
            {
                "text": context[s:e],
                "start_char": s,
                "end_char": e,
                "probability": float(prob),
                "logit": logit,
                "margin": no_answer_margin(float(prob), p_null),
            }
        )
    best: Optional[float] = spans[0]["probability"] if spans else None
    no_answer = p_null is not None and says_no_answer(
        p_null, best, pipe.no_answer_threshold
    )
    return {"answers": spans, "no_answer_score": p_null, "no_answer": no_answer}


def context_candidates(
    nlp: Language,
    question: str,
    contexts: Sequence[str],
    *,
    top_k: int = 5,
    batch_size: int = 64,
    component: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """``pair_candidates`` of one question over many contexts; each answer
    also holds ``"context"``, the index of its context."""
    out = pair_candidates(
        nlp,
        [(question, c) for c in contexts],
        top_k=top_k,
        batch_size=batch_size,
        component=component,
    )
    for i, ctx in enumerate(out):
        for answer in ctx["answers"]:
            answer["context"] = i
    return out


def answer_question(
    nlp: Language,
    question: str,
    contexts: Sequence[str],
    *,
    top_k: int = 5,
    score: Optional[str] = None,
    score_threshold: Optional[float] = None,
    overlap_weight: Optional[float] = None,
    batch_size: int = 64,
    component: Optional[str] = None,
) -> Dict[str, Any]:
    """Answer one question from many contexts (e.g. the paragraphs of a
    manual): the ``top_k`` answers across all contexts, best first.

    Contexts whose "no answer" wins (the component's ``no_answer_threshold``
    rule) give no answers; neither do answers scoring below
    ``score_threshold``. When none is left the result says "no answer".

    nlp (Language): A pipeline with an ``attn_span_qa`` component.
    question (str): The question.
    contexts (Sequence[str]): The contexts.
    top_k (int): Answers returned (and read per context).
    score (Optional[str]): The ranking score, one of ``SCORE_KINDS``:
        "probability" (per-context probability with "no answer" in the
        normalization), "logit" (un-normalized start + end logit) or
        "margin" (logit minus the context's "no answer" logit); the last two
        need a model that scores "no answer" (v2, v3). None: "margin" for
        such a model (it ranks best, see ``SCORE_KINDS``), else
        "probability".
    score_threshold (Optional[float]): Drop answers whose ``score`` is lower.
    overlap_weight (Optional[float]): Rank by ``score`` plus this times the
        context's ``question_overlap`` (the answers' ``"score"`` and the
        ``score_threshold`` stay the reader's own). None: the component's
        ``overlap_weight`` (saved with the pipeline; 0.0 unless set, e.g. by
        ``spacy attn qa-threshold --overlap-weights``).
    batch_size (int): Contexts per model batch.
    component (Optional[str]): The QA component's name, if several.
    RETURNS (Dict[str, Any]): ``{"answers": [...], "no_answer": bool,
        "no_answer_score": float or None}``: each answer as in
        ``context_candidates`` plus ``"score"``, ``"overlap"`` (its
        context's ``question_overlap``) and its context's
        ``"no_answer_score"``; the overall ``no_answer_score`` is the lowest
        of the contexts' (the question is unanswerable only if no context
        answers it); None for a model without "no answer".
    RAISES (ValueError): For an unknown ``score`` or "logit" with a v1 model.
    """
    if score is not None and score not in SCORE_KINDS:
        raise ValueError(f"score must be one of {SCORE_KINDS}, got {score!r}.")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}.")
    if overlap_weight is None:
        name, _ = find_component(nlp, component, tasks=("qa",))
        pipe = nlp.get_pipe(name)
        assert isinstance(pipe, SpanQA)  # the "qa" task's component
        overlap_weight = pipe.overlap_weight
    per_context = context_candidates(
        nlp, question, contexts, top_k=top_k, batch_size=batch_size, component=component
    )
    if score is None:
        # A model that scores "no answer" gives every context its score.
        scored = any(c["no_answer_score"] is not None for c in per_context)
        score = "margin" if scored else "probability"
    answers = _scored_answers(question, contexts, per_context, score, score_threshold)
    answers.sort(
        key=lambda a: (
            -(a["score"] + overlap_weight * a["overlap"]),
            a["context"],
            a["start_char"],
        )
    )
    nulls = [
        c["no_answer_score"] for c in per_context if c["no_answer_score"] is not None
    ]
    return {
        "answers": answers[:top_k],
        "no_answer": not answers,
        "no_answer_score": min(nulls) if nulls else None,
    }


def _scored_answers(
    question: str,
    contexts: Sequence[str],
    per_context: List[Dict[str, Any]],
    score: str,
    score_threshold: Optional[float],
) -> List[Dict[str, Any]]:
    # The answers of the contexts that answer, at or above the threshold,
    # each with its ``score`` and its context's word overlap and "no answer"
    # score (answer_question ranks them).
    answers = []
    for i, ctx in enumerate(per_context):
        if ctx["no_answer"]:
            continue
        overlap = question_overlap(question, contexts[i])
        for answer in ctx["answers"]:
            if answer[score] is None:
                raise ValueError(
                    f"score={score!r} needs a model that scores 'no answer' "
                    "(spacy-attn.DynamicCoattention.v4 with no_answer = true); "
                    "use 'probability'."
                )
            if score_threshold is not None and answer[score] < score_threshold:
                continue
            answers.append(
                {
                    **answer,
                    "score": answer[score],
                    "overlap": overlap,
                    "no_answer_score": ctx["no_answer_score"],
                }
            )
    return answers


__all__ = [
    "SCORE_KINDS",
    "answer_question",
    "answer_questions",
    "context_answers",
    "context_candidates",
    "context_shift",
    "no_answer_entry",
    "no_answer_margin",
    "pair_candidates",
    "question_overlap",
]
