"""Unanswerable questions built from answerable ones: each question asked of a
different paragraph of its own article (the standard SQuAD 1.1 -> 2.0-style
construction; easier than SQuAD 2.0's adversarially written questions)."""

import copy
import random
from typing import Any, Dict, List, Optional, Tuple


def add_unanswerable(
    articles: List[Dict[str, Any]],
    *,
    rate: float,
    seed: int,
    file_fallback: bool = False,
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
    questions. Articles with one paragraph give none, unless
    ``file_fallback``: then (and wherever no paragraph of the article will
    do) the other paragraph is drawn from the whole file, as a user's own
    file often holds one paragraph per "article".

    articles (List[Dict[str, Any]]): SQuAD ``data`` articles (not modified).
    rate (float): Unanswerable questions per answerable question, 0-1.
    seed (int): Seed of the picks (``random.Random(f"{seed}:negatives")``).
    file_fallback (bool): Draw from the file's paragraphs where the
        article has none that will do.
    RETURNS (Tuple[List[Dict[str, Any]], Dict[str, int]]): The new articles
        and counts (``answerable``, ``unanswerable``, ``no_other_paragraph``).
    """
    rng = random.Random(f"{seed}:negatives")
    out = copy.deepcopy(articles)
    lowered = [[p["context"].lower() for p in a["paragraphs"]] for a in out]
    # Every paragraph as (article, paragraph), for the file-wide fallback.
    everywhere = [(a, j) for a, texts in enumerate(lowered) for j in range(len(texts))]
    new_qas: Dict[Tuple[int, int], List[Dict[str, Any]]] = {}
    counts = {"answerable": 0, "unanswerable": 0, "no_other_paragraph": 0}
    for a_i, article in enumerate(out):
        for p_i, para in enumerate(article["paragraphs"]):
            for qa in para["qas"]:
                qa["is_impossible"] = not qa.get("answers")
                if qa["is_impossible"]:
                    continue
                counts["answerable"] += 1
                if rng.random() >= rate:
                    continue
                texts = [a["text"].lower() for a in qa["answers"]]
                others = [
                    (a_i, j)
                    for j, context in enumerate(lowered[a_i])
                    if j != p_i and not any(t in context for t in texts)
                ]
                if others:
                    target: Optional[Tuple[int, int]] = rng.choice(others)
                elif file_fallback:
                    target = _draw_elsewhere(
                        rng, everywhere, lowered, (a_i, p_i), texts
                    )
                else:
                    target = None
                if target is None:
                    counts["no_other_paragraph"] += 1
                    continue
                new_qas.setdefault(target, []).append(
                    {
                        "question": qa["question"],
                        "id": f"{qa['id']}-neg",
                        "answers": [],
                        "is_impossible": True,
                    }
                )
                counts["unanswerable"] += 1
    for (a_i, p_i), extra in new_qas.items():
        out[a_i]["paragraphs"][p_i]["qas"].extend(extra)
    return out, counts


def with_unanswerable(
    dataset: Dict[str, Any], *, rate: float = 1.0, seed: int = 0
) -> Tuple[Dict[str, Any], Dict[str, int]]:
    """A loaded SQuAD JSON with unanswerable questions built into it: a
    user's file of answerable questions, each also asked (with probability
    ``rate``) of another paragraph that does not hold its answer, of its
    article or else of the file (``add_unanswerable`` with
    ``file_fallback``). What ``qa-threshold --build-unanswerable`` and
    ``spacy-attn.SquadCorpus.v3`` and ``v4`` read.

    RETURNS (Tuple[Dict[str, Any], Dict[str, int]]): The new dataset (the
        input is not modified) and ``add_unanswerable``'s counts.
    """
    articles, counts = add_unanswerable(
        dataset["data"], rate=rate, seed=seed, file_fallback=True
    )
    return {**dataset, "data": articles}, counts


def _draw_elsewhere(
    rng: random.Random,
    everywhere: List[Tuple[int, int]],
    lowered: List[List[str]],
    own: Tuple[int, int],
    texts: List[str],
    tries: int = 100,
) -> Optional[Tuple[int, int]]:
    # A paragraph of the file that is not the question's and holds none of
    # its answers; drawn (not filtered) so a big file costs no scan per
    # question. None when ``tries`` draws find none.
    for _ in range(tries if len(everywhere) > 1 else 0):
        a_i, p_i = rng.choice(everywhere)
        if (a_i, p_i) != own and not any(t in lowered[a_i][p_i] for t in texts):
            return a_i, p_i
    return None
