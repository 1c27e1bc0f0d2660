"""Unanswerable questions built from answerable ones: each question asked of a
different paragraph of its own article (the standard SQuAD 1.1 -> 2.0-style
construction; easier than SQuAD 2.0's adversarially written questions)."""

import copy
import random
from typing import Any, Dict, List, Tuple


def add_unanswerable(
    articles: List[Dict[str, Any]], *, rate: float, seed: int
) -> Tuple[List[Dict[str, Any]], Dict[str, int]]:
    """A copy of SQuAD articles with unanswerable questions added (SQuAD 2.0
    layout: ``is_impossible`` on every question, ``answers: []`` on the new
    ones).

    Each answerable question is picked with probability ``rate`` (rate >= 1:
    every question, once) and asked of another paragraph of its article,
    drawn at random among those whose context does not contain any of its
    answer texts (case-insensitive), so the copy is really unanswerable from
    the text as far as a string test can tell. The copy's id is the
    question's id + ``"-neg"``; it is appended to the other paragraph's
    questions. Articles with one paragraph give none.

    articles (List[Dict[str, Any]]): SQuAD ``data`` articles (not modified).
    rate (float): Unanswerable questions per answerable question, 0-1.
    seed (int): Seed of the picks (``random.Random(f"{seed}:negatives")``).
    RETURNS (Tuple[List[Dict[str, Any]], Dict[str, int]]): The new articles
        and counts (``answerable``, ``unanswerable``, ``no_other_paragraph``).
    """
    rng = random.Random(f"{seed}:negatives")
    out = copy.deepcopy(articles)
    counts = {"answerable": 0, "unanswerable": 0, "no_other_paragraph": 0}
    for article in out:
        paragraphs = article["paragraphs"]
        lowered = [p["context"].lower() for p in paragraphs]
        new_qas: List[List[Dict[str, Any]]] = [[] for _ in paragraphs]
        for p_i, para in enumerate(paragraphs):
            for qa in para["qas"]:
                qa["is_impossible"] = not qa.get("answers")
                if qa["is_impossible"]:
                    continue
                counts["answerable"] += 1
                if rng.random() >= rate:
                    continue
                texts = [a["text"].lower() for a in qa["answers"]]
                others = [
                    j
                    for j in range(len(paragraphs))
                    if j != p_i and not any(t in lowered[j] for t in texts)
                ]
                if not others:
                    counts["no_other_paragraph"] += 1
                    continue
                target = rng.choice(others)
                new_qas[target].append(
                    {
                        "question": qa["question"],
                        "id": f"{qa['id']}-neg",
                        "answers": [],
                        "is_impossible": True,
                    }
                )
                counts["unanswerable"] += 1
        for para, extra in zip(paragraphs, new_qas):
            para["qas"].extend(extra)
    return out, counts
