"""The "no answer" decision of span QA: the rule that turns a model's
no-answer probability and its best span into "no answer" or an answer."""

from typing import Any, Dict, Optional, Sequence, Tuple


def says_no_answer(
    no_answer_score: float, best_score: Optional[float], threshold: Optional[float]
) -> bool:
    """Whether to answer "no answer".

    no_answer_score (float): The probability of "no answer".
    best_score (Optional[float]): The best span's probability (None: no
        valid span, e.g. an empty context).
    threshold (Optional[float]): "No answer" when its probability exceeds
        this (the official SQuAD 2.0 rule on ``na_prob``); None: when it is
        at least the best span's.
    RETURNS (bool): True for "no answer".
    """
    if best_score is None:
        return True
    if threshold is None:
        return no_answer_score >= best_score
    return no_answer_score > threshold


def no_answer_attrs(
    answers: Sequence[Tuple[int, int, float]], threshold: Optional[float]
) -> Dict[str, Any]:
    """The span group attrs that state "no answer": ``no_answer_score`` and
    ``no_answer`` (whether it won), or {} for a model that does not score it
    (``answers`` without a ``no_answer_score``).

    answers (Sequence[Tuple[int, int, float]]): A doc's ranked answers, a
        ``DocAnswers`` from ``SpanQA.predict``.
    threshold (Optional[float]): See ``says_no_answer``.
    """
    score = getattr(answers, "no_answer_score", None)
    if score is None:
        return {}
    best = answers[0][2] if len(answers) else None
    return {
        "no_answer_score": float(score),
        "no_answer": says_no_answer(score, best, threshold),
    }
