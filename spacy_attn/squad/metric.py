"""The official SQuAD v1.1 metric (``evaluate-v1.1.py``), unchanged in
behaviour, and the answer texts of QA docs that it compares.

Answers are normalized (lower case, punctuation and the articles a/an/the
removed, whitespace collapsed); Exact Match and token F1 are the maximum over
the gold answers of a question, averaged over questions. The registered
pipeline scorer built on it, ``spacy-attn.squad_scorer.v1``, lives with the
other scorers in ``spacy_attn.scorers``.
"""

import re
import string
import sys
from collections import Counter
from typing import Any, Callable, Dict, List, Sequence, Union

from spacy.tokens import Doc

from .data import DEFAULT_ANSWERS_KEY


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace
    (the official SQuAD v1.1 normalization)."""

    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def f1_score(prediction: str, ground_truth: str) -> float:
    """Token-level F1 of two answers after normalization (official)."""
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    """Whether two answers are equal after normalization (official)."""
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(
    metric_fn: Callable, prediction: str, ground_truths: Sequence[str]
) -> float:
    """The best score of ``prediction`` against any gold answer (official)."""
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def squad_evaluate(
    dataset: Union[Dict[str, Any], List[Dict[str, Any]]], predictions: Dict[str, str]
) -> Dict[str, float]:
    """The official ``evaluate-v1.1.py`` ``evaluate(dataset, predictions)``.

    dataset: The loaded SQuAD JSON, or its ``"data"`` list (what the official
        script passes).
    predictions (Dict[str, str]): Question id -> predicted answer text.
        Unanswered questions score 0 (a message goes to stderr, as in the
        official script).
    RETURNS (Dict[str, float]): ``exact_match`` and ``f1`` on the 0-100 scale.
    """
    articles = dataset["data"] if isinstance(dataset, dict) else dataset
    f1 = exact_match = total = 0.0
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    print(
                        f"Unanswered question {qa['id']} will receive score 0.",
                        file=sys.stderr,
                    )
                    continue
                ground_truths = [x["text"] for x in qa["answers"]]
                prediction = predictions[qa["id"]]
                exact_match += metric_max_over_ground_truths(
                    exact_match_score, prediction, ground_truths
                )
                f1 += metric_max_over_ground_truths(f1_score, prediction, ground_truths)
    exact_match = 100.0 * exact_match / total
    f1 = 100.0 * f1 / total
    return {"exact_match": exact_match, "f1": f1}


def gold_answer_texts(doc: Doc, answers_key: str = DEFAULT_ANSWERS_KEY) -> List[str]:
    """All gold answer strings of a reference QA doc: ``attrs["texts"]``, or
    the texts of the gold spans when the attr is missing."""
    if answers_key not in doc.spans:
        return []
    group = doc.spans[answers_key]
    texts = group.attrs.get("texts")
    if texts is None:
        texts = [span.text for span in group]
    return list(texts)


def predicted_answer_text(doc: Doc, answers_key: str = DEFAULT_ANSWERS_KEY) -> str:
    """The best predicted answer (the first span of ``doc.spans[answers_key]``),
    or "" when there is none."""
    if answers_key not in doc.spans or len(doc.spans[answers_key]) == 0:
        return ""
    return doc.spans[answers_key][0].text
