"""Evaluating span QA on SQuAD 2.0-style data: the official metric at a
"no answer" threshold and at the best one, the trivial baselines, choosing
the threshold on held-out data, and the many-contexts check."""

import math
import random
from typing import Any, Dict, List, Optional, Sequence, Union

from spacy.language import Language

from ..qa import pair_candidates, question_overlap
from ..squad.metric import exact_match_score, f1_score, metric_max_over_ground_truths
from ..squad.no_answer_metric import gold_texts, question_scores, squad2_evaluate
from .questions import iter_questions

Dataset = Union[Dict[str, Any], List[Dict[str, Any]]]


def subset(data: Dataset, limit: int, *, seed: int = 0) -> Dict[str, Any]:
    """A seeded sample of ``limit`` questions of a SQuAD JSON (all if 0), in
    the SQuAD layout (articles and paragraphs kept for the kept questions)."""
    ids = [qid for qid, _, _ in iter_questions(data)]
    if 0 < limit < len(ids):
        ids = random.Random(f"{seed}:squad2_subset").sample(ids, limit)
    return subset_by_ids(data, ids)


def subset_by_ids(data: Dataset, ids: Sequence[str]) -> Dict[str, Any]:
    """The questions of a SQuAD JSON whose ids are in ``ids``, in the SQuAD
    layout (file order)."""
    keep = set(ids)
    articles = data["data"] if isinstance(data, dict) else data
    out = []
    for article in articles:
        paragraphs = []
        for para in article["paragraphs"]:
            qas = [qa for qa in para["qas"] if qa["id"] in keep]
            if qas:
                paragraphs.append({**para, "qas": qas})
        if paragraphs:
            out.append({**article, "paragraphs": paragraphs})
    return {"version": "v2.0", "data": out}


def best_answers(
    nlp: Language,
    data: Dataset,
    *,
    batch_size: int = 64,
    component: Optional[str] = None,
) -> Dict[str, Dict[str, Any]]:
    """Each question's best span (never "no answer") and its "no answer"
    probability, the inputs of the official metric at any threshold.

    RETURNS (Dict[str, Dict[str, Any]]): Question id -> ``{"text",
        "probability", "logit", "no_answer_score"}`` ("" and None for a
        context without a span; ``no_answer_score`` 0.0 for a model without
        "no answer", the official default).
    """
    questions = list(iter_questions(data))
    found = pair_candidates(
        nlp,
        [(q, c) for _, q, c in questions],
        top_k=1,
        batch_size=batch_size,
        component=component,
    )
    out = {}
    for (qid, _, _), cand in zip(questions, found):
        best = cand["answers"][0] if cand["answers"] else {}
        p_null = cand["no_answer_score"]
        out[qid] = {
            "text": best.get("text", ""),
            "probability": best.get("probability"),
            "logit": best.get("logit"),
            "no_answer_score": 1.0 if not best else (p_null or 0.0),
        }
    return out


def score_at(
    data: Dataset, answers: Dict[str, Dict[str, Any]], threshold: float
) -> Dict[str, Any]:
    """The official SQuAD 2.0 figures of ``best_answers`` when "no answer" is
    said above ``threshold`` (and the best-threshold figures)."""
    preds = {qid: a["text"] for qid, a in answers.items()}
    na_probs = {qid: float(a["no_answer_score"]) for qid, a in answers.items()}
    return squad2_evaluate(data, preds, na_probs, na_prob_thresh=threshold)


def choose_threshold(
    data: Dataset,
    answers: Dict[str, Dict[str, Any]],
    *,
    max_has_answer_drop: Optional[float] = None,
) -> float:
    """The "no answer" threshold that maximizes the official F1 on ``data``
    (the official script's ``best_f1_thresh``): choose it on held-out data,
    never on the data the scores are reported for.

    data (Dataset): SQuAD 2.0-style JSON (or its ``"data"`` list).
    answers (Dict[str, Dict[str, Any]]): ``best_answers`` of ``data``.
    max_has_answer_drop (Optional[float]): If set, the best F1 among the
        thresholds whose HasAns F1 is at most this many points (0-100) below
        always answering's: a user who would rather keep answers than refuse
        unanswerable questions sets the trade-off (None: the official best).
    RETURNS (float): "No answer" is said where ``no_answer_score`` exceeds it.

    The official threshold is the ``no_answer_score`` of a question; the
    midpoint to the next higher score gives the same F1 on ``data`` and
    survives the rounding of a saved cfg."""
    if max_has_answer_drop is None:
        best = float(score_at(data, answers, 1.0)["best_f1_thresh"])
    else:
        best = _best_threshold_keeping_answers(data, answers, max_has_answer_drop)
    higher = [
        float(a["no_answer_score"])
        for a in answers.values()
        if float(a["no_answer_score"]) > best
    ]
    return (best + min(higher)) / 2 if higher else best


def _best_threshold_keeping_answers(
    data: Dataset, answers: Dict[str, Dict[str, Any]], max_drop: float
) -> float:
    # One pass over the questions by rising "no answer" score: at threshold
    # t the questions scored <= t are answered with their best span, the
    # others get "no answer" (the official rule), so HasAns and overall F1
    # are running sums. Ties move together: a threshold cannot split them.
    if not max_drop >= 0:
        raise ValueError(f"max_has_answer_drop must be 0 or more, not {max_drop}")
    golds = gold_texts(data)
    # The official split: a question with gold texts is answerable.
    has_answer = {qid: bool(texts) for qid, texts in golds.items()}
    span_f1 = {
        qid: question_scores(texts, answers[qid]["text"])[1]
        for qid, texts in golds.items()
    }
    n_has = sum(has_answer.values())
    if not n_has:
        raise ValueError("No answerable question: HasAns F1 is undefined.")
    forced = sum(span_f1[q] for q in golds if has_answer[q]) / n_has
    floor = forced - max_drop / 100.0
    scores = {qid: float(answers[qid]["no_answer_score"]) for qid in golds}
    order = sorted(golds, key=lambda q: scores[q])
    # Below every score: "no answer" everywhere (HasAns 0: feasible only if
    # the allowed drop covers all of it).
    has_sum = 0.0
    total = float(len(golds) - n_has)
    best_t: Optional[float] = min(scores.values()) - 1.0 if 0.0 >= floor else None
    best_total = total if best_t is not None else -math.inf
    for i, qid in enumerate(order):
        if has_answer[qid]:
            has_sum += span_f1[qid]
            total += span_f1[qid]
        else:
            # Answering an unanswerable question: its 1 becomes the span's 0
            # (a no-span "answer" is "" and still right).
            total += -1.0 if answers[qid]["text"] else 0.0
        if i + 1 < len(order) and scores[order[i + 1]] == scores[qid]:
            continue
        if has_sum / n_has >= floor - 1e-12 and total > best_total:
            best_t, best_total = scores[qid], total
    assert best_t is not None  # answering everything meets any floor
    return best_t


def trivial_baselines(
    data: Dataset, answers: Dict[str, Dict[str, Any]]
) -> Dict[str, Dict[str, Any]]:
    """The official figures of "always no answer" and of always answering
    with the model's best span (a SQuAD 1.1-style reader)."""
    articles = data["data"] if isinstance(data, dict) else data
    empty = {qid: "" for qid, _, _ in iter_questions(articles)}
    return {
        "always_no_answer": squad2_evaluate(articles, empty),
        "always_answers": score_at(data, answers, math.inf),
    }


def many_contexts_check(
    nlp: Language,
    data: Dataset,
    *,
    n_questions: int = 500,
    n_contexts: int = 10,
    seed: int = 0,
    batch_size: int = 64,
    component: Optional[str] = None,
    overlap_weights: Sequence[float] = (),
) -> Dict[str, Any]:
    """For answerable questions: their own paragraph plus ``n_contexts - 1``
    other paragraphs of the same article (seeded; from the whole file when
    the article has fewer, as in files of one-paragraph articles such as
    forum posts); how often the top answer across the contexts comes from
    the right paragraph, per ranking score.

    Scores: ``probability`` (span probability within its context, "no
    answer" in the normalization), ``logit`` (un-normalized start + end
    logit) and ``margin`` (logit minus the context's "no answer" logit,
    log(probability / no_answer_score)); a model without "no answer" has
    ``probability`` only.

    Contexts tied at the top share the top-1 place (``1 / k`` each). The
    trivial baselines beside the scores: chance and word overlap
    (``spacy_attn.qa.question_overlap``: the context with the most of the question's words).
    For each of ``overlap_weights`` (w), also the reader's default score
    (the margin, or the probability for a model without "no answer") plus
    w times the context's word overlap.

    RETURNS (Dict[str, Any]): ``questions``, ``contexts_per_question`` (mean),
        ``chance`` (mean 1 / contexts), ``word_overlap`` (``{"top1_paragraph"}``)
        and per score ``{"top1_paragraph", "top1_exact", "top1_f1"}``
        (fractions; exact / F1 of the top answer against the gold answers);
        with weights, ``combined`` (``{"score": kind, "weights": {w: {...}}}``,
        w formatted with ``:g``).
    """
    articles = data["data"] if isinstance(data, dict) else data
    rng = random.Random(f"{seed}:many_contexts")
    # Sorted once: the pool of a question whose article is too short.
    everything = sorted({p["context"] for a in articles for p in a["paragraphs"]})
    items = []
    for article in articles:
        contexts = [p["context"] for p in article["paragraphs"]]
        for p_i, para in enumerate(article["paragraphs"]):
            for qa in para["qas"]:
                if qa["answers"]:
                    items.append((qa, contexts, p_i))
    if 0 < n_questions < len(items):
        items = rng.sample(items, n_questions)
    groups = []
    for qa, contexts, own in items:
        if len(contexts) >= n_contexts:
            others = [contexts[j] for j in range(len(contexts)) if j != own]
        else:  # too few of its own: other paragraphs of the file
            others = [c for c in everything if c != contexts[own]]
        picked = rng.sample(others, min(n_contexts - 1, len(others)))
        groups.append((qa, [contexts[own]] + picked))
    pairs = [(qa["question"], c) for qa, ctxs in groups for c in ctxs]
    found = pair_candidates(
        nlp, pairs, top_k=1, batch_size=batch_size, component=component
    )
    return _rank_summary(groups, found, overlap_weights)


def _rank_summary(
    groups: Sequence, found: List[Dict[str, Any]], overlap_weights: Sequence[float]
) -> Dict[str, Any]:
    kinds = ["probability", "logit", "margin"]
    tallies = {k: _new_tally() for k in kinds}
    combined = {w: _new_tally() for w in overlap_weights}
    available = {k: False for k in kinds}
    offset = 0
    n_ctx = 0
    chance = 0.0
    overlap = 0.0
    for qa, ctxs in groups:
        cands = found[offset : offset + len(ctxs)]
        offset += len(ctxs)
        n_ctx += len(ctxs)
        chance += 1 / len(ctxs)
        gold = [a["text"] for a in qa["answers"]]
        counts = [question_overlap(qa["question"], c) for c in ctxs]
        # The question's own paragraph is ctxs[0].
        overlap += top1_share(counts).get(0, 0.0)
        values = {}
        for kind in kinds:
            values[kind] = [
                _score(c["answers"][0], c["no_answer_score"], kind)
                if c["answers"]
                else None
                for c in cands
            ]
            if any(v is not None for v in values[kind]):
                available[kind] = True
                _tally(tallies[kind], top1_share(values[kind]), cands, gold)
        base = values["margin"] if available["margin"] else values["probability"]
        for w in overlap_weights:
            if any(v is not None for v in base):
                mixed = [None if v is None else v + w * c for v, c in zip(base, counts)]
                _tally(combined[w], top1_share(mixed), cands, gold)
    n = len(groups)
    res: Dict[str, Any] = {
        "questions": n,
        "contexts_per_question": n_ctx / n if n else 0.0,
        "chance": chance / n if n else 0.0,
        "word_overlap": {"top1_paragraph": overlap / n if n else 0.0},
        **{
            k: {m: v / n for m, v in t.items()}
            for k, t in tallies.items()
            if available[k]
        },
    }
    if overlap_weights:
        res["combined"] = {
            "score": "margin" if available["margin"] else "probability",
            "weights": {
                f"{w:g}": {m: v / n for m, v in t.items()} for w, t in combined.items()
            },
        }
    return res


def _new_tally() -> Dict[str, float]:
    return {"top1_paragraph": 0.0, "top1_exact": 0.0, "top1_f1": 0.0}


def _tally(
    tally: Dict[str, float],
    share: Dict[int, float],
    cands: Sequence[Dict[str, Any]],
    gold: List[str],
) -> None:
    """Add one question's top-1 outcome (shared among tied contexts)."""
    tally["top1_paragraph"] += share.get(0, 0.0)
    for i, weight in share.items():
        text = cands[i]["answers"][0]["text"]
        tally["top1_exact"] += weight * metric_max_over_ground_truths(
            exact_match_score, text, gold
        )
        tally["top1_f1"] += weight * metric_max_over_ground_truths(f1_score, text, gold)


def top1_share(values: Sequence[Optional[float]]) -> Dict[int, float]:
    """Each context's share of the top-1 place: ``1 / k`` for each of the
    ``k`` contexts tied at the highest score (None: no candidate). Why: the
    own paragraph comes first, so breaking ties by position would credit a
    model whose scores do not differ (or the overlap counts, which often tie)
    with the right paragraph."""
    best = max(v for v in values if v is not None)
    tied = [i for i, v in enumerate(values) if v is not None and v == best]
    return {i: 1 / len(tied) for i in tied}


def _score(best: Dict[str, Any], p_null: Optional[float], kind: str) -> Optional[float]:
    if kind == "probability":
        return best["probability"]
    if best["logit"] is None or p_null is None:
        return None
    if kind == "logit":
        return best["logit"]
    return best["margin"]


__all__ = [
    "best_answers",
    "subset_by_ids",
    "choose_threshold",
    "many_contexts_check",
    "score_at",
    "subset",
    "top1_share",
    "trivial_baselines",
]
