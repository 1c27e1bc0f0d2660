"""The scorers of the spacy-attn components, registered for configs
(``[components.NAME.scorer]``) and as entry points.

* ``spacy-attn.pair_classifier_scorer.v1``: :func:`pair_classifier_score`,
  accuracy, macro / per-label / positive-class P/R/F and, for docs with a
  group id, MAP / MRR / P@1 of ``doc.cats`` (``attn_pair_classifier``);
* ``spacy-attn.pair_ranking_scorer.v1``: :func:`pair_ranking_score`, the same
  scores with ``pair_score`` = MAP, to select checkpoints on ranking;
* ``spacy-attn.doc_embedder_scorer.v1``: :func:`doc_embedder_score`, spaCy's
  textcat scores of ``doc.cats`` (``attn_doc_embedder``);
* ``spacy-attn.squad_scorer.v1``: :func:`squad_score`, the official SQuAD
  v1.1 Exact Match and F1 (``attn_span_qa``; the metric itself is in
  ``spacy_attn.squad.metric``).
* ``spacy-attn.squad2_scorer.v1``: :func:`squad2_score`, the official SQuAD
  2.0 metric (overall, HasAns, NoAns, best threshold) for span QA that may
  answer "no answer" (``spacy_attn.squad.no_answer_metric``).

A component's ``score`` passes its whole ``cfg`` (labels, threshold, ...) as
keyword arguments, so every scorer takes ``**kwargs`` and ignores the rest.
"""

from collections import defaultdict
from math import comb
from typing import Any, Callable, Dict, Hashable, Iterable, List, Optional, Tuple

from spacy.scorer import Scorer
from spacy.training import Example
from spacy.util import registry

from .pairs import GROUP_ID_KEY
from .squad.data import DEFAULT_ANSWERS_KEY
from .squad.metric import (
    exact_match_score,
    f1_score,
    gold_answer_texts,
    metric_max_over_ground_truths,
    predicted_answer_text,
)
from .squad.no_answer_metric import squad2_scores


@registry.scorers("spacy-attn.pair_classifier_scorer.v1")
def make_pair_classifier_scorer() -> Callable:
    """Registered scorer: accuracy (the metric of the NLI and paraphrase
    papers), macro precision / recall / F and per-label P/R/F."""
    return pair_classifier_score


@registry.scorers("spacy-attn.pair_ranking_scorer.v1")
def make_pair_ranking_scorer() -> Callable:
    """Registered scorer: the pair classifier's scores with ``pair_score`` =
    MAP over the docs' groups, so ``spacy train`` can select checkpoints on
    ranking (weight ``pair_score``); fails when no doc has a group id."""
    return pair_ranking_score


@registry.scorers("spacy-attn.doc_embedder_scorer.v1")
def make_doc_embedder_scorer() -> Callable:
    """Registered scorer: spaCy's textcat scores of ``doc.cats``
    (``cats_score``, ``cats_macro_f``, ``cats_macro_auc``, per-label P/R/F)."""
    return doc_embedder_score


@registry.scorers("spacy-attn.squad_scorer.v1")
def make_squad_scorer() -> Callable:
    """Registered scorer: official SQuAD v1.1 Exact Match and F1 (0-1 scale)."""
    return squad_score


def group_id(doc: Any) -> Optional[Hashable]:
    """The group (query) id of a pair doc, or None if it has none."""
    return doc.user_data.get(GROUP_ID_KEY)


@registry.scorers("spacy-attn.squad2_scorer.v1")
def make_squad2_scorer() -> Callable:
    """Registered scorer: the official SQuAD 2.0 metric (0-1 scale)."""
    return squad2_score


def pair_classifier_score(
    examples: Iterable[Example],
    *,
    labels: Iterable[str] = (),
    multi_label: bool = False,
    threshold: float = 0.5,
    positive_label: Optional[str] = None,
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score pair classification.

    Exclusive classes: the predicted class is the highest-scoring label and
    accuracy is the share of examples whose gold class it is (examples with no
    gold class are skipped). Multi-label: each label is a binary decision at
    ``threshold``; accuracy is the share of correct decisions. With a
    ``positive_label``, its P/R/F are reported alone and, when the docs carry
    a group id (``GROUP_ID_KEY``), the pairs ranked per group by the positive
    label's score give MAP, MRR and P@1.

    RETURNS (Dict[str, Any]): ``pair_acc``, ``pair_macro_p``, ``pair_macro_r``,
        ``pair_macro_f``, ``pair_f_per_type`` ({label: {"p", "r", "f"}}),
        ``pair_pos_p``, ``pair_pos_r``, ``pair_pos_f`` (None without a
        positive label), ``pair_map``, ``pair_mrr``, ``pair_p_at_1`` (None
        without groups), ``pair_map_groups`` and
        ``pair_map_groups_without_positive`` (the groups ranked, and those left
        out), ``pair_score``, the checkpoint-selection score: positive-class F
        with a positive label, accuracy otherwise; and ``cats_score``,
        ``cats_score_desc``, ``cats_f_per_type`` (``with_spacy_keys``).
    """
    examples = list(examples)
    labels = list(labels)
    correct, total, per_type = _label_counts(
        examples, labels, multi_label=multi_label, threshold=threshold
    )
    n = max(len(labels), 1)
    scores: Dict[str, Any] = {
        "pair_acc": correct / total if total else None,
        "pair_macro_p": sum(v["p"] for v in per_type.values()) / n if total else None,
        "pair_macro_r": sum(v["r"] for v in per_type.values()) / n if total else None,
        "pair_macro_f": sum(v["f"] for v in per_type.values()) / n if total else None,
        "pair_f_per_type": per_type,
    }
    positive = per_type.get(positive_label) if total and positive_label else None
    for key in ("p", "r", "f"):
        scores[f"pair_pos_{key}"] = positive[key] if positive else None
    ranked = _ranking_items(examples, positive_label) if positive else []
    ranking = ranking_scores(ranked)
    scores["pair_map"] = ranking["map"]
    scores["pair_mrr"] = ranking["mrr"]
    scores["pair_p_at_1"] = ranking["p_at_1"]
    # How many groups MAP averages over, and how many it left out.
    scores["pair_map_groups"] = ranking["n_groups"] if ranked else None
    scores["pair_map_groups_without_positive"] = (
        ranking["n_groups_without_positive"] if ranked else None
    )
    scores["pair_score"] = scores["pair_pos_f"] if positive else scores["pair_acc"]
    return with_spacy_keys(scores, "positive F" if positive else "accuracy")


def with_spacy_keys(scores: Dict[str, Any], desc: str) -> Dict[str, Any]:
    """The pair scores also under the keys ``spacy evaluate`` prints
    (``cats_score`` with ``cats_score_desc``, and ``cats_f_per_type``), so
    that spaCy's own command shows them; ``spacy train`` reads only the
    ``pair_*`` keys its score weights name. A pipeline that also has spaCy's
    ``textcat`` reports that component's ``cats_*`` under the same keys:
    read the ``pair_*`` ones there."""
    scores["cats_score"] = scores["pair_score"]
    scores["cats_score_desc"] = f"pair {desc}"
    scores["cats_f_per_type"] = scores["pair_f_per_type"]
    return scores


def pair_ranking_score(
    examples: Iterable[Example],
    *,
    positive_label: Optional[str] = None,
    **kwargs: Any,
) -> Dict[str, Any]:
    """``pair_classifier_score`` with ``pair_score`` = MAP (``pair_map``).

    RAISES (ValueError): Without a positive label, or if no example with a
        positive pair has a group id: MAP is then undefined, and selecting
        checkpoints on it would silently select nothing.
    """
    scores = pair_classifier_score(examples, positive_label=positive_label, **kwargs)
    if scores["pair_map"] is None and scores["pair_acc"] is not None:
        raise ValueError(
            "spacy-attn.pair_ranking_scorer.v1 needs a positive label "
            f"(found {positive_label!r}) and docs with a group id "
            f"(doc.user_data[{GROUP_ID_KEY!r}]) that have at least one positive "
            "pair: read the corpus with its group column, or use "
            "spacy-attn.pair_classifier_scorer.v1."
        )
    scores["pair_score"] = scores["pair_map"]
    return with_spacy_keys(scores, "MAP")


def _label_counts(
    examples: List[Example],
    labels: List[str],
    *,
    multi_label: bool,
    threshold: float,
) -> Tuple[int, int, Dict[str, Dict[str, float]]]:
    """Correct and total decisions, and per-label P/R/F."""
    tp = dict.fromkeys(labels, 0)
    fp = dict.fromkeys(labels, 0)
    fn = dict.fromkeys(labels, 0)
    correct = total = 0
    for eg in examples:
        gold, pred = eg.reference.cats, eg.predicted.cats
        if multi_label:
            for label in labels:
                if label not in gold:
                    continue
                g = gold[label] >= 0.5
                p = pred.get(label, 0.0) >= threshold
                correct += int(g == p)
                total += 1
                tp[label] += int(g and p)
                fp[label] += int(p and not g)
                fn[label] += int(g and not p)
        else:
            gold_labels = [label for label, value in gold.items() if value == 1.0]
            if not gold_labels:
                continue
            g_label = gold_labels[0]
            p_label = (
                max(labels, key=lambda label: pred.get(label, float("-inf")))
                if labels
                else None
            )
            total += 1
            if p_label == g_label:
                correct += 1
                tp[g_label] = tp.get(g_label, 0) + 1
            else:
                fn[g_label] = fn.get(g_label, 0) + 1
                if p_label is not None:
                    fp[p_label] += 1
    per_type = {}
    for label in labels:
        per_type[label] = prf(tp[label], fp[label], fn[label])
    return correct, total, per_type


def prf(tp: int, fp: int, fn: int) -> Dict[str, float]:
    """Precision, recall and F1 (0 where undefined) of a confusion count."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}


def _ranking_items(
    examples: List[Example], positive_label: Optional[str]
) -> List[Tuple[Hashable, float, bool]]:
    """(group id, positive label's score, gold is positive) of each example
    with a group id and a gold positive-label value."""
    items = []
    for eg in examples:
        group = group_id(eg.reference)
        if group is None:
            group = group_id(eg.predicted)
        gold = eg.reference.cats
        if group is None or positive_label is None or not gold:
            continue
        score = eg.predicted.cats.get(positive_label, 0.0)
        items.append((group, float(score), gold.get(positive_label, 0.0) == 1.0))
    return items


def ranking_scores(
    items: Iterable[Tuple[Hashable, float, bool]],
) -> Dict[str, Optional[float]]:
    """MAP, MRR and precision at 1 of scored items ranked within their group.

    Each group's items are ranked by score, highest first. Items with equal
    scores are in no order, so each metric is its expected value over the
    orders of the tied items (``expected_group_metrics``): a constant score
    earns what a random ranking earns, and a lexical score with many ties
    (shared word counts) gets neither the best nor the worst case. Groups
    without a positive item are skipped, as in answer-sentence-selection
    benchmarks (no ranking of them is right).

    items (Iterable[Tuple[Hashable, float, bool]]): (group id, score, is
        positive) per item.
    RETURNS (Dict[str, Optional[float]]): ``map``, ``mrr``, ``p_at_1`` (None
        if no group has a positive item), ``n_groups``, the groups scored, and
        ``n_groups_without_positive``, the groups skipped.
    """
    groups: Dict[Hashable, List[Tuple[float, bool]]] = defaultdict(list)
    for group, score, positive in items:
        groups[group].append((score, positive))
    ap = rr = p1 = 0.0
    n = 0
    for pairs in groups.values():
        if not any(positive for _, positive in pairs):
            continue
        n += 1
        group_ap, group_rr, group_p1 = expected_group_metrics(pairs)
        ap += group_ap
        rr += group_rr
        p1 += group_p1
    return {
        "map": ap / n if n else None,
        "mrr": rr / n if n else None,
        "p_at_1": p1 / n if n else None,
        "n_groups": n,
        "n_groups_without_positive": len(groups) - n,
    }


def expected_group_metrics(
    pairs: List[Tuple[float, bool]],
) -> Tuple[float, float, float]:
    """Average precision, reciprocal rank and precision at 1 of one group's
    (score, is positive) items, each the exact expectation over the random
    orders of tied scores (McSherry and Najork 2008). The group must hold a
    positive item.

    A block of n tied items holding k positives, after s items of which P
    are positive: a positive lands at each of the block's ranks s + j with
    probability 1/n, with (k - 1)(j - 1)/(n - 1) other positives of the
    block above it on average; its precision's expectation is linear in
    that count, so the block adds k/n * sum_j (P + 1 + (k-1)(j-1)/(n-1)) /
    (s + j) to the sum of precisions. The first positive of the first block
    that holds one is at the block's rank r with probability
    C(n - r, k - 1) / C(n, k).
    """
    blocks: Dict[float, List[int]] = {}
    for score, positive in pairs:
        block = blocks.setdefault(score, [0, 0])
        block[0] += 1
        block[1] += int(positive)
    total = sum(k for _, k in blocks.values())
    precisions = 0.0
    rr: Optional[float] = None
    p1 = 0.0
    before = hits = 0
    for score in sorted(blocks, reverse=True):
        size, k = blocks[score]
        if k:
            spread = (k - 1) / (size - 1) if size > 1 else 0.0
            precisions += (k / size) * sum(
                (hits + 1 + spread * (j - 1)) / (before + j) for j in range(1, size + 1)
            )
            if rr is None:
                ways = comb(size, k)
                rr = sum(
                    comb(size - r, k - 1) / ways / (before + r)
                    for r in range(1, size - k + 2)
                )
        if before == 0:
            p1 = k / size
        before += size
        hits += k
    return precisions / total, rr or 0.0, p1


def best_threshold(
    scores: Iterable[float], golds: Iterable[bool]
) -> Tuple[Optional[float], float]:
    """The decision threshold that maximizes the positive class's F1 when
    "positive" means score >= threshold.

    The threshold is halfway between the lowest score predicted positive and
    the next lower score (so that it generalizes to scores in between).

    scores (Iterable[float]): The positive class's score per item.
    golds (Iterable[bool]): Whether each item is positive.
    RETURNS (Tuple[Optional[float], float]): The threshold (None when no item
        is positive) and its F1.
    """
    pairs = sorted(zip(scores, golds), key=lambda x: -x[0])
    n_pos = sum(1 for _, g in pairs if g)
    if not n_pos:
        return None, 0.0
    best_t, best_f = None, -1.0
    tp = fp = 0
    for i, (score, gold) in enumerate(pairs):
        tp += int(gold)
        fp += int(not gold)
        if i + 1 < len(pairs) and pairs[i + 1][0] == score:
            continue  # equal scores fall on the same side of any threshold
        f = prf(tp, fp, n_pos - tp)["f"]
        if f > best_f:
            lower = pairs[i + 1][0] if i + 1 < len(pairs) else score
            best_t, best_f = (score + lower) / 2, f
    return best_t, best_f


def doc_embedder_score(
    examples: Iterable[Example],
    *,
    labels: Iterable[str] = (),
    multi_label: bool = False,
    threshold: float = 0.5,
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score ``doc.cats`` with ``spacy.scorer.Scorer.score_cats`` (the scores
    spaCy's own textcat reports, so the two compare directly)."""
    return Scorer.score_cats(
        examples,
        "cats",
        labels=list(labels),
        multi_label=multi_label,
        threshold=threshold,
        positive_label=None,
    )


def squad_score(
    examples: Iterable[Example],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    **kwargs: Any,
) -> Dict[str, Optional[float]]:
    """Score predicted answers with the official SQuAD v1.1 metric.

    The prediction of an example is the text of the first span of
    ``eg.predicted.spans[answers_key]`` ("" if none); the gold answers are
    ``eg.reference.spans[answers_key].attrs["texts"]``. Examples without any
    gold answer are skipped (the official metric is undefined for them).

    answers_key (str): ``doc.spans`` key of the answers.
    kwargs: Ignored (a component passes its whole cfg).
    RETURNS (Dict[str, Optional[float]]): ``qa_exact_match`` and ``qa_f1`` on
        the 0-1 scale (None without gold), and ``qa_n``, the number of
        questions scored.
    """
    em = f1 = 0.0
    n = 0
    for eg in examples:
        gold = gold_answer_texts(eg.reference, answers_key)
        if not gold:
            continue
        prediction = predicted_answer_text(eg.predicted, answers_key)
        em += metric_max_over_ground_truths(exact_match_score, prediction, gold)
        f1 += metric_max_over_ground_truths(f1_score, prediction, gold)
        n += 1
    return {
        "qa_exact_match": em / n if n else None,
        "qa_f1": f1 / n if n else None,
        "qa_n": n,
    }


def squad2_score(
    examples: Iterable[Example],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    **kwargs: Any,
) -> Dict[str, Optional[float]]:
    """Score predicted answers with the official SQuAD 2.0 metric.

    The prediction of an example is the text of the first span of
    ``eg.predicted.spans[answers_key]``, "" (no answer) when the group is
    empty; its "no answer" probability is the group's
    ``attrs["no_answer_score"]`` (0 if absent). Gold answers are
    ``eg.reference.spans[answers_key].attrs["texts"]``, [] for an
    unanswerable question. The question id is the gold group's
    ``attrs["id"]`` (the example's index when missing).

    answers_key (str): ``doc.spans`` key of the answers.
    kwargs: Ignored (a component passes its whole cfg).
    RETURNS (Dict[str, Optional[float]]): on the 0-1 scale, ``qa_exact_match``
        and ``qa_f1`` (the predictions as made), ``qa_has_ans_f1``,
        ``qa_no_ans_f1`` and ``qa_best_f1`` (at the best "no answer"
        threshold over these predictions) with ``qa_best_f1_thresh``, and
        ``qa_n``; None without examples.
    """
    golds: Dict[str, Any] = {}
    preds: Dict[str, str] = {}
    na_probs: Dict[str, float] = {}
    for i, eg in enumerate(examples):
        ref = eg.reference
        group = ref.spans[answers_key] if answers_key in ref.spans else None
        qid = str(group.attrs.get("id", i)) if group is not None else str(i)
        golds[qid] = gold_answer_texts(ref, answers_key)
        preds[qid] = predicted_answer_text(eg.predicted, answers_key)
        pred_group = eg.predicted.spans.get(answers_key)
        score = (
            pred_group.attrs.get("no_answer_score") if pred_group is not None else None
        )
        na_probs[qid] = float(score) if score is not None else 0.0
    if not golds:
        keys = ("exact_match", "f1", "has_ans_f1", "no_ans_f1", "best_f1")
        return {**{f"qa_{k}": None for k in keys}, "qa_n": 0}
    s = squad2_scores(golds, preds, na_probs)
    return {
        "qa_exact_match": s["exact"] / 100,
        "qa_f1": s["f1"] / 100,
        "qa_has_ans_f1": s["HasAns_f1"] / 100 if "HasAns_f1" in s else None,
        "qa_no_ans_f1": s["NoAns_f1"] / 100 if "NoAns_f1" in s else None,
        "qa_best_f1": s["best_f1"] / 100,
        "qa_best_f1_thresh": s["best_f1_thresh"],
        "qa_n": s["total"],
    }


__all__ = [
    "best_threshold",
    "doc_embedder_score",
    "group_id",
    "make_pair_ranking_scorer",
    "pair_ranking_score",
    "prf",
    "ranking_scores",
    "expected_group_metrics",
    "make_doc_embedder_scorer",
    "make_pair_classifier_scorer",
    "make_squad2_scorer",
    "make_squad_scorer",
    "pair_classifier_score",
    "squad2_score",
    "squad_score",
]
