"""Ranking and binary metrics of scored candidates grouped by query (MAP,
MRR, P@1, positive-class P/R/F, a dev-tuned threshold) and the word-overlap
baseline score, for the answer-sentence-selection benchmark."""

import re
from typing import Dict, Hashable, List, Sequence, Tuple

from spacy_attn.scorers import prf

_WORD = re.compile(r"\w+")


def groups(keys: Sequence[Hashable]) -> List[List[int]]:
    """Row indices grouped by key, groups in first-seen order, rows in order."""
    out: Dict[Hashable, List[int]] = {}
    for i, key in enumerate(keys):
        out.setdefault(key, []).append(i)
    return list(out.values())


def ranked(scores: Sequence[float], rows: Sequence[int]) -> List[int]:
    """``rows`` by descending score; ties keep row order (the earlier row
    first), so a tied ranking is deterministic."""
    return sorted(rows, key=lambda i: (-scores[i], i))


def ranking_metrics(
    keys: Sequence[Hashable], golds: Sequence[bool], scores: Sequence[float]
) -> Dict[str, float]:
    """MAP, MRR and P@1 over the queries (``keys``) that have at least one
    positive; ``n_queries`` says how many.

    keys: The query of each row. golds: Whether each row is relevant.
    scores: Higher = more relevant.
    """
    aps, rrs, p1s = [], [], []
    for rows in groups(keys):
        order = ranked(scores, rows)
        hits = [golds[i] for i in order]
        if not any(hits):
            continue
        found, precisions = 0, []
        for rank, hit in enumerate(hits, 1):
            if hit:
                found += 1
                precisions.append(found / rank)
        aps.append(sum(precisions) / found)
        rrs.append(1.0 / (hits.index(True) + 1))
        p1s.append(float(hits[0]))
    n = len(aps)
    return {
        "map": sum(aps) / n if n else 0.0,
        "mrr": sum(rrs) / n if n else 0.0,
        "p_at_1": sum(p1s) / n if n else 0.0,
        "n_queries": n,
    }


def positive_prf(golds: Sequence[bool], preds: Sequence[bool]) -> Dict[str, float]:
    """Precision, recall and F1 of the positive class."""
    tp = sum(g and p for g, p in zip(golds, preds))
    fp = sum(p and not g for g, p in zip(golds, preds))
    fn = sum(g and not p for g, p in zip(golds, preds))
    return prf(tp, fp, fn)


def best_threshold(golds: Sequence[bool], scores: Sequence[float]) -> float:
    """The score threshold (predict positive when ``score >= t``) with the
    best positive-class F1 on these rows; of equal F1s the highest ``t``."""
    best: Tuple[float, float] = (-1.0, 0.0)
    for t in sorted(set(scores), reverse=True):
        f = positive_prf(golds, [s >= t for s in scores])["f"]
        if f > best[0]:
            best = (f, t)
    return best[1]


def content_tokens(text: str, stop_words: frozenset) -> set:
    """The lower-cased word tokens (``\\w+``) of ``text`` that are not stop words."""
    return {t for t in _WORD.findall(text.lower()) if t not in stop_words}


def word_overlap(question: str, sentence: str, stop_words: frozenset) -> float:
    """How many distinct content tokens the two texts share."""
    return float(
        len(content_tokens(question, stop_words) & content_tokens(sentence, stop_words))
    )
