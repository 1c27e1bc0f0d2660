"""Choosing a span-QA pipeline's "no answer" threshold (and, if asked, its
overlap weight) on held-out questions, and saving the pipeline with it:
``choose_and_save``, the call of ``spacy attn qa-threshold``."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

from ..file_safety import check_outputs
from ..usage import UsageError, require_file

# The official SQuAD 2.0 figures of a report, by their keys.
COLUMNS = {
    "exact": "EM",
    "f1": "F1",
    "HasAns_f1": "HasAns F1",
    "NoAns_f1": "NoAns F1",
}


@dataclass(frozen=True)
class ThresholdSettings:
    """How ``choose_and_save`` chooses (``choose_no_answer_threshold``'s
    options of the same names).

    component (Optional[str]): The span-QA component (None: the only one).
    limit (int): A seeded sample of this many questions (0: all).
    batch_size (int): Questions per batch.
    gpu_id (int): The GPU (-1: the CPU).
    max_has_answer_drop (Optional[float]): Keep HasAns F1 within this many
        points of always answering's (None: the official best F1).
    overlap_weights (Optional[Sequence[float]]): Also choose the overlap
        weight among these (None: keep the pipeline's).
    build_unanswerable (bool): Add an unanswerable copy of each answerable
        question.
    """

    component: Optional[str] = None
    limit: int = 0
    batch_size: int = 64
    gpu_id: int = -1
    max_has_answer_drop: Optional[float] = None
    overlap_weights: Optional[Sequence[float]] = None
    build_unanswerable: bool = False


def choose_and_save(
    model: Union[str, Path], data: Path, output: Path, settings: ThresholdSettings
) -> Dict[str, Any]:
    """Check the paths and settings, choose the threshold on ``data`` and
    save the pipeline with it to ``output``.

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): Held-out SQuAD 2.0-style JSON.
    output (Path): The directory to save the pipeline to.
    settings (ThresholdSettings): How to choose.
    RETURNS (Dict[str, Any]): The report of ``choose_no_answer_threshold``.
    RAISES (UsageError): For a missing DATA, an OUTPUT that is a file or a
        negative --max-has-answer-drop.
    RAISES (OutputPathError): If OUTPUT would overwrite MODEL or DATA.
    RAISES (CorpusFormatError): If DATA lacks answerable or unanswerable
        questions.
    """
    require_file(data, "DATA")
    # OUTPUT is written as a whole (nlp.to_disk): MODEL, or DATA inside it, is lost.
    check_outputs({"OUTPUT": output}, {"MODEL": model, "DATA": data})
    drop = settings.max_has_answer_drop
    if drop is not None and not drop >= 0:
        raise UsageError(f"--max-has-answer-drop is F1 points, 0 or more: {drop}")
    if output.exists() and not output.is_dir():
        raise UsageError(f"OUTPUT {output} is a file; pass a directory.")
    return choose_no_answer_threshold(
        model, data, output, component=settings.component, limit=settings.limit,
        batch_size=settings.batch_size, gpu_id=settings.gpu_id,
        max_has_answer_drop=drop, overlap_weights=settings.overlap_weights,
        build_unanswerable=settings.build_unanswerable,
    )  # fmt: skip


def choose_no_answer_threshold(
    model: Union[str, Path],
    data: Path,
    output: Optional[Path],
    *,
    component: Optional[str] = None,
    limit: int = 0,
    batch_size: int = 64,
    gpu_id: int = -1,
    max_has_answer_drop: Optional[float] = None,
    overlap_weights: Optional[Sequence[float]] = None,
    build_unanswerable: bool = False,
) -> Dict[str, Any]:
    """Choose the threshold on ``data`` and save the pipeline with it.

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): SQuAD 2.0-style JSON with answerable and unanswerable
        questions.
    output (Optional[Path]): Where to save the pipeline (None: not saved).
    component (Optional[str]): The span-QA component (default: the only one).
    limit (int): A seeded sample of this many questions (0: all).
    max_has_answer_drop (Optional[float]): If set, the best F1 among the
        thresholds that keep HasAns F1 within this many points (0-100) of
        always answering's (None: the official best-F1 threshold).
    overlap_weights (Optional[Sequence[float]]): If set, also choose the
        component's ``overlap_weight`` among them (``choose_overlap_weight``)
        and report it under ``many_contexts``.
    build_unanswerable (bool): Add an unanswerable copy of each answerable
        question, asked of another paragraph (``squad.negatives.with_unanswerable``).
    RETURNS (Dict[str, Any]): ``threshold``, ``max_has_answer_drop``,
        ``questions``, ``has_answer``, ``no_answer``, ``built`` (counts),
        ``model`` (the official SQuAD 2.0 figures at the threshold, 0-100)
        and ``baselines`` (``always_no_answer``, ``always_answers``).
    RAISES (CorpusFormatError): If ``data`` lacks answerable or unanswerable
        questions (a threshold chosen on it would mean nothing).
    RAISES (ComponentLookupError): If there is no span-QA component, or it cannot say "no answer".
    """
    from ..loading import load_pipeline
    from ..squad import load_squad_json
    from ..squad.negatives import with_unanswerable
    from . import no_answer_eval as ev

    nlp = load_pipeline(model, gpu_id=gpu_id)
    name, pipe = _no_answer_component(nlp, component, model)
    dataset = load_squad_json(data)
    if limit:
        dataset = ev.subset(dataset, limit)
    built = 0
    if build_unanswerable:
        dataset, counts = with_unanswerable(dataset)
        built = counts["unanswerable"]
    has_answer, no_answer = _answerable_counts(dataset, data)
    answers = ev.best_answers(nlp, dataset, batch_size=batch_size, component=name)
    threshold = ev.choose_threshold(
        dataset, answers, max_has_answer_drop=max_has_answer_drop
    )
    baselines = ev.trivial_baselines(dataset, answers)
    report: Dict[str, Any] = {
        "threshold": threshold,
        "max_has_answer_drop": max_has_answer_drop,
        "questions": has_answer + no_answer,
        "has_answer": has_answer,
        "no_answer": no_answer,
        "built": built,
        "model": _figures(ev.score_at(dataset, answers, threshold)),
        "baselines": {key: _figures(value) for key, value in baselines.items()},
    }
    # Before the overlap weight: the threshold decides which contexts answer.
    pipe.cfg["no_answer_threshold"] = threshold
    if overlap_weights:
        report["many_contexts"] = choose_overlap_weight(
            nlp, dataset, overlap_weights, batch_size=batch_size, component=name
        )
        pipe.cfg["overlap_weight"] = report["many_contexts"]["chosen"]
    if output is not None:
        nlp.to_disk(output)
        report["saved"] = str(output)
    return report


def choose_overlap_weight(
    nlp: Any,
    dataset: Dict[str, Any],
    weights: Sequence[float],
    *,
    n_questions: int = 500,
    batch_size: int = 64,
    component: Optional[str] = None,
) -> Dict[str, Any]:
    """The ``overlap_weight`` that ranks the right paragraph first most often
    (the first such in ``weights``' order) when each of ``n_questions``
    seeded answerable questions is asked of its paragraph and up to 9 other
    paragraphs of its article (``no_answer_eval.many_contexts_check``).

    RETURNS (Dict[str, Any]): ``chosen``, ``questions``, ``contexts`` (mean
        per question), and the right paragraph's share on top (0-100) per
        weight (``weights``, keyed as the weights print), for the reader's
        score alone (``reader``), word overlap alone (``word_overlap``) and
        ``chance``.
    """
    from .no_answer_eval import many_contexts_check

    many = many_contexts_check(
        nlp,
        dataset,
        n_questions=n_questions,
        n_contexts=10,
        batch_size=batch_size,
        component=component,
        overlap_weights=list(weights),
    )
    by_weight = {
        w: 100 * many["combined"]["weights"][f"{w:g}"]["top1_paragraph"]
        for w in weights
    }
    chosen = max(weights, key=lambda w: by_weight[w])  # the first of the best
    reader = many[many["combined"]["score"]]["top1_paragraph"]
    return {
        "chosen": chosen,
        "questions": many["questions"],
        "contexts": many["contexts_per_question"],
        "weights": {f"{w:g}": value for w, value in by_weight.items()},
        "reader": 100 * reader,
        "word_overlap": 100 * many["word_overlap"]["top1_paragraph"],
        "chance": 100 * many["chance"],
    }


def _no_answer_component(
    nlp: Any, component: Optional[str], model: Union[str, Path]
) -> "tuple[str, Any]":
    # The span-QA component (name, pipe), which must score "no answer".
    from ..pipeline.lookup import ComponentLookupError, find_component
    from ..pipeline.span_qa import SpanQA

    name, _ = find_component(nlp, component, tasks=("qa",), option="--component")
    pipe = nlp.get_pipe(name)
    assert isinstance(pipe, SpanQA)  # what find_component checked
    if not pipe.scores_no_answer:
        arch = nlp.config["components"][name]["model"].get("@architectures")
        raise ComponentLookupError(
            f'{model}: {name!r} ({arch}) always answers; it has no "no answer" '
            "score to put a threshold on. Train a model that scores it: "
            "python -m spacy attn init-config config.cfg --task qa --no-answer"
        )
    return name, pipe


def _figures(scores: Dict[str, Any]) -> Dict[str, float]:
    # HasAns / NoAns keys are absent from the official output where the data
    # has no such questions; _answerable_counts rules that out first.
    return {key: float(scores[key]) for key in COLUMNS}


def _answerable_counts(dataset: Dict[str, Any], data: Path) -> "tuple[int, int]":
    # The official metric's own split (HasAns / NoAns totals), so the counts
    # are those the scores are over; no model is run for it. Both kinds are
    # needed: a threshold chosen on one would mean nothing.
    from ..errors import CorpusFormatError
    from ..squad.no_answer_metric import squad2_evaluate
    from .questions import iter_questions

    empty = {qid: "" for qid, _, _ in iter_questions(dataset)}
    totals = squad2_evaluate(dataset, empty)
    has_answer = int(totals.get("HasAns_total", 0))
    no_answer = int(totals.get("NoAns_total", 0))
    if not has_answer or not no_answer:
        raise CorpusFormatError(
            f"{data}: {has_answer} answerable and {no_answer} unanswerable "
            "questions; choosing a threshold needs both (unanswerable: "
            '"is_impossible": true or no answers), in the mix the pipeline '
            "will meet. Only answerable ones (your own questions)? Add "
            "--build-unanswerable: each question is also asked of another "
            "paragraph."
        )
    return has_answer, no_answer


__all__ = [
    "COLUMNS",
    "ThresholdSettings",
    "choose_and_save",
    "choose_no_answer_threshold",
    "choose_overlap_weight",
]
