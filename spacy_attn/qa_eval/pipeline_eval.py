"""A span-QA pipeline scored as it will answer: its own "no answer"
decisions (its saved threshold), with the official SQuAD 2.0 metric, beside
the trivial baselines, and how often it refuses a question that has an
answer (what a user of their own documents, whose questions all have one,
sees first)."""

from typing import Any, Dict, List, Optional

from spacy.language import Language

from ..qa import pair_candidates
from ..squad.no_answer_metric import gold_texts, squad2_scores
from .evaluate import baseline_predictions
from .no_answer_eval import Dataset
from .overlap_baseline import overlap_predictions
from .questions import iter_questions

FIGURES = ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact", "NoAns_f1")


def evaluate_qa(
    nlp: Language,
    data: Dataset,
    *,
    batch_size: int = 64,
    component: Optional[str] = None,
) -> Dict[str, Any]:
    """Answer every question of a SQuAD (1.1 or 2.0) JSON with ``nlp``, "no
    answer" where the component decides so, and score the answers with the
    official SQuAD 2.0 metric (on answerable-only data its EM / F1 are SQuAD
    1.1's, a refusal scoring 0).

    nlp (Language): A pipeline with an ``attn_span_qa`` component.
    data (Dataset): The loaded SQuAD JSON or its ``"data"`` list.
    RETURNS (Dict[str, Any]): ``questions``, ``has_answer``, ``no_answer``
        (counts), ``scores_no_answer`` (whether the model can refuse),
        ``threshold`` (the component's, None: its null rule or a
        model that always answers), ``refused_answerable`` and
        ``refused_unanswerable`` (0-100: the questions of each kind answered
        "no answer"; None without such questions), ``model`` (official figures,
        0-100) and ``baselines``: ``always_no_answer``, ``always_answers``
        (the model's best span everywhere), ``first_words`` (the
        context's first 3 words) and ``word_overlap`` (the span nearest the
        question's rare words, ``overlap_baseline``), the same figures.
    """
    from ..pipeline.lookup import find_component
    from ..pipeline.span_qa import SpanQA

    name, _ = find_component(nlp, component, tasks=("qa",), option="--component")
    questions = list(iter_questions(data))
    found = pair_candidates(
        nlp, [(q, c) for _, q, c in questions], top_k=1, batch_size=batch_size,
        component=name,
    )  # fmt: skip
    golds = gold_texts(data)
    decided: Dict[str, str] = {}
    forced: Dict[str, str] = {}
    for (qid, _, _), cand in zip(questions, found):
        best = cand["answers"][0]["text"] if cand["answers"] else ""
        forced[qid] = best
        decided[qid] = "" if cand["no_answer"] else best
    answerable = [qid for qid, texts in golds.items() if texts]
    unanswerable = [qid for qid, texts in golds.items() if not texts]
    baselines = {
        "always_no_answer": {qid: "" for qid in golds},
        "always_answers": forced,
        "first_words": baseline_predictions(data),
        "word_overlap": overlap_predictions(data),
    }
    pipe = nlp.get_pipe(name)
    assert isinstance(pipe, SpanQA)  # what find_component checked
    return {
        "questions": len(golds),
        "scores_no_answer": pipe.scores_no_answer,
        "has_answer": len(answerable),
        "no_answer": len(golds) - len(answerable),
        "threshold": pipe.cfg.get("no_answer_threshold"),
        "refused_answerable": _refused(answerable, decided),
        "refused_unanswerable": _refused(unanswerable, decided),
        "model": _figures(golds, decided),
        "baselines": {k: _figures(golds, p) for k, p in baselines.items()},
    }


def _refused(qids: List[str], decided: Dict[str, str]) -> Optional[float]:
    # The share (0-100) of ``qids`` answered "no answer" (None: no question).
    if not qids:
        return None
    return 100.0 * sum(1 for qid in qids if not decided[qid]) / len(qids)


def _figures(
    golds: Dict[str, List[str]], predictions: Dict[str, str]
) -> Dict[str, float]:
    scores = squad2_scores(golds, predictions)
    return {key: float(scores[key]) for key in FIGURES if key in scores}


def qa_failure(report: Dict[str, Any], *, min_margin: float = 0.0) -> Optional[str]:
    """One line naming the trivial baseline whose F1 the model does not beat
    by more than ``min_margin`` points (None when it beats them all)."""
    f1 = report["model"]["f1"]
    for name in ("always_no_answer", "first_words", "word_overlap"):
        base = report["baselines"][name]["f1"]
        if not f1 > base + min_margin:
            return (
                f"The model does not beat {name.replace('_', ' ')} on F1 "
                f"({f1:.1f} vs {base:.1f})."
            )
    return None


def qa_report_lines(report: Dict[str, Any]) -> List[str]:
    """The report as a table (official figures, 0-100) and a line on
    refusals."""
    columns = {
        "exact": "EM",
        "f1": "F1",
        "HasAns_f1": "HasAns F1",
        "NoAns_f1": "NoAns F1",
    }
    rows = {"model": report["model"]}
    rows.update({k.replace("_", " "): v for k, v in report["baselines"].items()})
    keys = [k for k in columns if k in report["model"]]
    lines = [f"{'':>18} " + " ".join(f"{columns[k]:>9}" for k in keys)]
    for name, scores in rows.items():
        lines.append(f"{name:>18} " + " ".join(f"{scores[k]:9.1f}" for k in keys))
    threshold = report["threshold"]
    rule = "its null rule" if threshold is None else f"threshold {threshold:.4f}"
    if report["refused_answerable"] is not None and report["scores_no_answer"]:
        lines.append(
            f'"No answer" ({rule}) to {report["refused_answerable"]:.1f}% of the '
            f"{report['has_answer']} answerable questions ({report['no_answer']} "
            "unanswerable)."
        )
    return lines


__all__ = ["FIGURES", "evaluate_qa", "qa_failure", "qa_report_lines"]
