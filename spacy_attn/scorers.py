"""The scorers of the spacy-attn components, registered for configs
(``[components.NAME.scorer]``) and as entry points.

* ``spacy-attn.pair_classifier_scorer.v1``: :func:`pair_classifier_score`,
  accuracy and macro / per-label P/R/F of ``doc.cats`` (``attn_pair_classifier``);
* ``spacy-attn.doc_embedder_scorer.v1``: :func:`doc_embedder_score`, spaCy's
  textcat scores of ``doc.cats`` (``attn_doc_embedder``);
* ``spacy-attn.squad_scorer.v1``: :func:`squad_score`, the official SQuAD
  v1.1 Exact Match and F1 (``attn_span_qa``; the metric itself is in
  ``spacy_attn.squad.metric``).
* ``spacy-attn.squad2_scorer.v1``: :func:`squad2_score`, the official SQuAD
  2.0 metric (overall, HasAns, NoAns, best threshold) for span QA that may
  answer "no answer" (``spacy_attn.squad.metric2``).

A component's ``score`` passes its whole ``cfg`` (labels, threshold, ...) as
keyword arguments, so every scorer takes ``**kwargs`` and ignores the rest.
"""

from typing import Any, Callable, Dict, Iterable, Optional

from spacy.scorer import Scorer
from spacy.training import Example
from spacy.util import registry

from .squad.data import DEFAULT_ANSWERS_KEY
from .squad.metric import (
    exact_match_score,
    f1_score,
    gold_answer_texts,
    metric_max_over_ground_truths,
    predicted_answer_text,
)
from .squad.metric2 import squad2_scores


@registry.scorers("spacy-attn.pair_classifier_scorer.v1")
def make_pair_classifier_scorer() -> Callable:
    """Registered scorer: accuracy (the metric of the NLI and paraphrase
    papers), macro precision / recall / F and per-label P/R/F."""
    return pair_classifier_score


@registry.scorers("spacy-attn.doc_embedder_scorer.v1")
def make_doc_embedder_scorer() -> Callable:
    """Registered scorer: spaCy's textcat scores of ``doc.cats``
    (``cats_score``, ``cats_macro_f``, ``cats_macro_auc``, per-label P/R/F)."""
    return doc_embedder_score


@registry.scorers("spacy-attn.squad_scorer.v1")
def make_squad_scorer() -> Callable:
    """Registered scorer: official SQuAD v1.1 Exact Match and F1 (0-1 scale)."""
    return squad_score


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
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score pair classification.

    Exclusive classes: the predicted class is the highest-scoring label and
    accuracy is the share of examples whose gold class it is (examples with no
    gold class are skipped). Multi-label: each label is a binary decision at
    ``threshold``; accuracy is the share of correct decisions.

    RETURNS (Dict[str, Any]): ``pair_acc``, ``pair_macro_p``, ``pair_macro_r``,
        ``pair_macro_f`` and ``pair_f_per_type`` ({label: {"p", "r", "f"}}).
    """
    labels = list(labels)
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
        prec = tp[label] / (tp[label] + fp[label]) if tp[label] + fp[label] else 0.0
        r = tp[label] / (tp[label] + fn[label]) if tp[label] + fn[label] else 0.0
        f = 2 * prec * r / (prec + r) if prec + r else 0.0
        per_type[label] = {"p": prec, "r": r, "f": f}
    n = max(len(labels), 1)
    return {
        "pair_acc": correct / total if total else None,
        "pair_macro_p": sum(v["p"] for v in per_type.values()) / n if total else None,
        "pair_macro_r": sum(v["r"] for v in per_type.values()) / n if total else None,
        "pair_macro_f": sum(v["f"] for v in per_type.values()) / n if total else None,
        "pair_f_per_type": per_type,
    }


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
    "doc_embedder_score",
    "make_doc_embedder_scorer",
    "make_pair_classifier_scorer",
    "make_squad2_scorer",
    "make_squad_scorer",
    "pair_classifier_score",
    "squad2_score",
    "squad_score",
]
