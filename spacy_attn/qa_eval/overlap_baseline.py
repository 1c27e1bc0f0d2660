"""The word-overlap baseline of span QA: the sliding window of Richardson et
al. (2013), as the SQuAD paper (Rajpurkar et al. 2016) uses it, without a
parser.

Every short span of the context that shares no word with the question is a
candidate answer. Its score sums the question's content words in the
context, each weighted by its inverse count there, ``log(1 + 1 / count)``,
and divided by ``(1 + distance) ** decay``, its distance in tokens from the
span. Rare question words near a span make it likely. The best-scoring span
is the answer, the earliest on a tie.

The settings were chosen on 6,536 SQuAD v1.1 *train* questions (40 seeded
articles; the official dev set played no part): spans of up to 5 tokens
and a decay of 0.25 gave the best F1 there (``benchmarks/squad_baselines.py``
and its results, official dev and SQuADShifts included). The SQuAD paper's
sliding window, with a parser's constituents as candidates, scored 20.2 on
dev.

It reads no training data and learns nothing. A reader that does not clearly
beat it has learned little beyond matching the question's words, which is
what the first words of the context (the other trivial baseline) cannot
show.
"""

import math
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from spacy.lang.en import English
from spacy.tokens import Doc

from ..lexical import is_content_word
from .questions import iter_questions

OVERLAP_DECAY = 0.25
"""How fast a question word's weight falls with its distance from a span."""
OVERLAP_MAX_LENGTH = 5
"""The longest candidate span, in tokens."""


def overlap_predictions(
    data: Union[Dict[str, Any], List[Dict[str, Any]]],
    *,
    decay: float = OVERLAP_DECAY,
    max_length: int = OVERLAP_MAX_LENGTH,
) -> Dict[str, str]:
    """The word-overlap baseline's answer to every question of a SQuAD JSON.

    data: The loaded SQuAD JSON or its ``"data"`` list.
    decay (float): A question word counts ``1 / (1 + distance) ** decay`` of
        its weight.
    max_length (int): The longest candidate span, in tokens.
    RETURNS (Dict[str, str]): Question id -> answer text (a substring of the
        context; "" for a context without a candidate).
    """
    if decay < 0:
        raise ValueError(f"decay must be >= 0, not {decay}")
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1, not {max_length}")
    tokenizer = English().tokenizer
    # Each context once: a SQuAD paragraph has about five questions.
    contexts: Dict[str, Doc] = {}
    answers: Dict[str, str] = {}
    for qid, question, context in iter_questions(data):
        if context not in contexts:
            contexts[context] = tokenizer(context)
        doc = contexts[context]
        best = best_span(doc, _words(tokenizer(question)), decay, max_length)
        answers[qid] = doc[best[0] : best[1]].text if best else ""
    return answers


def best_span(
    doc: Doc, question: Iterable[str], decay: float, max_length: int
) -> Optional[Tuple[int, int]]:
    """The ``(start, end)`` token offsets of the best candidate span of
    ``doc`` for the ``question``'s words (None without a candidate)."""
    words = _words(doc)
    # The question's content words: its punctuation ("?", ",") neither
    # weighs nor keeps a span from holding it.
    asked = {w for w in question if is_content_word(w)}
    counts = Counter(words)
    # Where the question's words are in the context, and their weights.
    found = [
        (i, math.log(1 + 1 / counts[w])) for i, w in enumerate(words) if w in asked
    ]
    n = len(words)
    best: Optional[Tuple[int, int]] = None
    best_score = -1.0
    for start in range(n):
        for end in range(start + 1, min(n, start + max_length) + 1):
            if words[end - 1] in asked:
                break  # longer spans hold this question word too
            # An answer starts and ends with a content word: not with
            # punctuation or "the", "of", "and".
            if not is_content_word(words[start]) or not is_content_word(words[end - 1]):
                continue
            score = 0.0
            for i, weight in found:
                distance = start - i if i < start else i - end + 1
                score += weight / (1 + distance) ** decay
            if score > best_score:
                best, best_score = (start, end), score
    return best


def _words(doc: Doc) -> List[str]:
    return [t.lower_ for t in doc]
