"""The official SQuAD 2.0 metric (``evaluate-v2.0.py``): EM / F1 overall,
on answerable (HasAns) and unanswerable (NoAns) questions, and at the best
no-answer threshold. Predictions are texts, "" meaning "no answer"."""

import collections
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

# The v2.0 script normalizes answers with the same steps as v1.1.
from .metric import normalize_answer


def get_tokens(s: str) -> List[str]:
    return normalize_answer(s).split() if s else []


def compute_exact(a_gold: str, a_pred: str) -> int:
    """1 if the normalized answers are equal (official)."""
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold: str, a_pred: str) -> float:
    """Token F1; when either answer is empty (no answer), 1 if both are
    (official)."""
    gold_toks = get_tokens(a_gold)
    pred_toks = get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return float(gold_toks == pred_toks)
    if num_same == 0:
        return 0.0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def gold_answers_v2(texts: Sequence[str]) -> List[str]:
    """The gold answers the official script compares against: the texts that
    are not empty after normalization, or [""] for an unanswerable question."""
    golds = [t for t in texts if normalize_answer(t)]
    return golds or [""]


def question_scores(gold_texts: Sequence[str], prediction: str) -> Tuple[int, float]:
    """(exact, f1) of one question: the max over its gold answers."""
    golds = gold_answers_v2(gold_texts)
    return (
        max(compute_exact(a, prediction) for a in golds),
        max(compute_f1(a, prediction) for a in golds),
    )


def _apply_threshold(
    scores: Mapping[str, float],
    na_probs: Mapping[str, float],
    has_ans: Mapping[str, bool],
    threshold: float,
) -> Dict[str, float]:
    out = {}
    for qid, s in scores.items():
        if na_probs[qid] > threshold:
            out[qid] = float(not has_ans[qid])
        else:
            out[qid] = s
    return out


def _find_best_thresh(
    preds: Mapping[str, str],
    scores: Mapping[str, float],
    na_probs: Mapping[str, float],
    has_ans: Mapping[str, bool],
) -> Tuple[float, float]:
    num_no_ans = sum(1 for k in has_ans if not has_ans[k])
    cur_score: float = num_no_ans
    best_score: float = num_no_ans
    best_thresh = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        diff: float
        if has_ans[qid]:
            diff = scores[qid]
        else:
            diff = -1 if preds[qid] else 0
        cur_score += diff
        if cur_score > best_score:
            best_score = cur_score
            best_thresh = na_probs[qid]
    return 100.0 * best_score / len(scores), best_thresh


def squad2_evaluate(
    dataset: Union[Dict[str, Any], List[Dict[str, Any]]],
    predictions: Mapping[str, str],
    na_probs: Optional[Mapping[str, float]] = None,
    *,
    na_prob_thresh: float = 1.0,
) -> Dict[str, Any]:
    """The official ``evaluate-v2.0.py`` (its ``main`` without the plots).

    dataset: The loaded SQuAD 2.0 JSON or its ``"data"`` list.
    predictions (Mapping[str, str]): Question id -> answer text ("" = no
        answer). Every question must have one (as the official script asks).
    na_probs (Optional[Mapping[str, float]]): Question id -> probability of
        "no answer"; None: 0 for every question (the official default).
    na_prob_thresh (float): Predict "no answer" where ``na_probs`` exceeds
        this (official default 1.0: never).
    RETURNS (Dict[str, Any]): The official keys on the 0-100 scale:
        ``exact``, ``f1``, ``total``, ``HasAns_*``, ``NoAns_*``,
        ``best_exact`` / ``best_exact_thresh``, ``best_f1`` / ``best_f1_thresh``.
    RAISES (KeyError): If a question has no prediction.
    """
    golds = gold_texts(dataset)
    return squad2_scores(golds, predictions, na_probs, na_prob_thresh=na_prob_thresh)


def gold_texts(
    dataset: Union[Dict[str, Any], List[Dict[str, Any]]],
) -> Dict[str, List[str]]:
    """Question id -> its gold answer texts ([] for an unanswerable one) of a
    SQuAD 2.0 JSON or its ``"data"`` list, in file order."""
    articles = dataset["data"] if isinstance(dataset, dict) else dataset
    golds: Dict[str, List[str]] = {}
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                golds[qa["id"]] = [a["text"] for a in qa["answers"]]
    return golds


def squad2_scores(
    golds: Mapping[str, Sequence[str]],
    predictions: Mapping[str, str],
    na_probs: Optional[Mapping[str, float]] = None,
    *,
    na_prob_thresh: float = 1.0,
) -> Dict[str, Any]:
    """``squad2_evaluate`` from question id -> gold answer texts ([] for an
    unanswerable question)."""
    missing = [qid for qid in golds if qid not in predictions]
    if missing:
        raise KeyError(
            f"{len(missing)} question(s) have no prediction, e.g. {missing[0]!r}."
        )
    if na_probs is None:
        na_probs = {qid: 0.0 for qid in golds}
    has_ans = {qid: bool(texts) for qid, texts in golds.items()}
    exact_raw, f1_raw = {}, {}
    for qid, texts in golds.items():
        exact_raw[qid], f1_raw[qid] = question_scores(texts, predictions[qid])
    exact = _apply_threshold(exact_raw, na_probs, has_ans, na_prob_thresh)
    f1 = _apply_threshold(f1_raw, na_probs, has_ans, na_prob_thresh)
    out: Dict[str, Any] = _totals(exact, f1, list(golds))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [q for q in golds if has_ans[q] is wanted]
        if qids:
            part = _totals(exact, f1, qids)
            for key, value in part.items():
                out[f"{prefix}_{key}"] = value
    best_exact, exact_thresh = _find_best_thresh(
        predictions, exact_raw, na_probs, has_ans
    )
    best_f1, f1_thresh = _find_best_thresh(predictions, f1_raw, na_probs, has_ans)
    out.update(
        best_exact=best_exact,
        best_exact_thresh=exact_thresh,
        best_f1=best_f1,
        best_f1_thresh=f1_thresh,
    )
    return out


def _totals(
    exact: Mapping[str, float], f1: Mapping[str, float], qids: Sequence[str]
) -> Dict[str, Any]:
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact[q] for q in qids) / total if total else 0.0,
        "f1": 100.0 * sum(f1[q] for q in qids) / total if total else 0.0,
        "total": total,
    }
