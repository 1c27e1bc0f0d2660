"""Scoring a QA pipeline on a SQuAD-format file with the official metric,
beside a trivial baseline.

``spacy evaluate`` scores the gold-aligned ``Example``s of a corpus; a user
comparing with published SQuAD numbers needs the official protocol instead:
answer every question from its raw strings (our tokenization included) and
compare the answer *text* with all gold texts (``evaluate-v1.1.py``). The
baseline answers every question with the first words of its context: it
costs nothing, and a model that does not clearly beat it has learned nothing
useful (a check the project's workflow makes before packaging). The
stronger trivial baseline is word overlap (``overlap_baseline``): the span
nearest the question's rare words.
"""

import time
from typing import Any, Dict, List, Optional, Union, cast

from spacy.language import Language

from ..qa import answer_questions
from ..squad.metric import squad_evaluate
from .overlap_baseline import overlap_predictions
from .questions import iter_questions

BASELINE_WORDS = 3
"""Words of the context the trivial baseline answers with (about the median
SQuAD answer length)."""


def baseline_predictions(
    data: Union[Dict[str, Any], List[Dict[str, Any]]],
    *,
    n_words: int = BASELINE_WORDS,
) -> Dict[str, str]:
    """The trivial baseline: the first ``n_words`` whitespace-separated words
    of each question's context.

    RETURNS (Dict[str, str]): Question id -> answer text.
    """
    return {
        qid: " ".join(context.split()[:n_words])
        for qid, _, context in iter_questions(data)
    }


def evaluate_squad(
    nlp: Language,
    data: Union[Dict[str, Any], List[Dict[str, Any]]],
    *,
    batch_size: int = 64,
    limit: int = 0,
    component: Optional[str] = None,
) -> Dict[str, Any]:
    """Answer every question of a SQuAD JSON with ``nlp`` and score the
    answers with the official metric, beside the trivial baseline on the
    same questions.

    nlp (Language): A pipeline with an ``attn_span_qa`` component.
    data: The loaded SQuAD JSON (``spacy_attn.squad.load_squad_json``) or
        its ``"data"`` list.
    batch_size (int): Docs per ``nlp.pipe`` batch.
    limit (int): Score only the first ``limit`` questions (0 = all).
    component (Optional[str]): The QA component's name, if several.
    RETURNS (Dict[str, Any]): ``exact_match`` and ``f1`` (0-100),
        ``baseline`` (the same for the first words of the context),
        ``word_overlap`` (the same for the word-overlap baseline), ``questions``,
        ``seconds`` and ``questions_per_s`` (answering, tokenization
        included) and ``predictions`` (question id -> answer text).
    """
    rows = list(iter_questions(data))
    if limit:
        rows = rows[:limit]
    keep = {qid for qid, _, _ in rows}
    articles = data["data"] if isinstance(data, dict) else data
    # The official metric counts every question of the dataset it is given,
    # so a limited run scores a dataset of those questions only.
    scored = [
        {
            **article,
            "paragraphs": [
                {**p, "qas": [qa for qa in p["qas"] if qa["id"] in keep]}
                for p in article["paragraphs"]
            ],
        }
        for article in articles
    ]
    start = time.perf_counter()
    answers = answer_questions(
        nlp,
        ((question, context) for _, question, context in rows),
        top_k=1,
        batch_size=batch_size,
        component=component,
    )
    predictions: Dict[str, str] = {}
    for (qid, _, _), found in zip(rows, answers):
        # Without as_docs, answer_questions yields the answer dicts.
        best = cast(List[Dict[str, Any]], found)
        predictions[qid] = best[0]["text"] if best else ""
    seconds = time.perf_counter() - start
    return {
        **squad_evaluate(scored, predictions),
        "baseline": squad_evaluate(scored, baseline_predictions(scored)),
        "word_overlap": squad_evaluate(scored, overlap_predictions(scored)),
        "questions": len(rows),
        "seconds": round(seconds, 2),
        "questions_per_s": round(len(rows) / seconds, 2) if seconds else None,
        "predictions": predictions,
    }


__all__ = [
    "BASELINE_WORDS",
    "baseline_predictions",
    "evaluate_squad",
]
