"""``spacy attn qa-threshold``: choose a span-QA pipeline's "no answer"
threshold on held-out questions and save the pipeline with it, beside the
trivial baselines it must beat."""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import existing_file, fail, refuse_overwrite, user_errors
from .options import Arg, GpuIdOpt, JsonOpt, ModelArg, Opt

# The official SQuAD 2.0 figures in the table, by their keys.
COLUMNS = {
    "exact": "EM",
    "f1": "F1",
    "HasAns_f1": "HasAns F1",
    "NoAns_f1": "NoAns F1",
}


HeldoutArg = Annotated[
    Path,
    Arg(
        metavar="DATA",
        help=(
            "Held-out SQuAD 2.0-style JSON (optionally .gz): answerable and "
            "unanswerable questions (is_impossible, or no answers), not the "
            "test set"
        ),
        show_default=False,
    ),
]
OutputArg = Annotated[
    Path,
    Arg(
        metavar="OUTPUT",
        help="Directory to save the pipeline to, with the threshold",
        show_default=False,
    ),
]
QAComponentOpt = Annotated[
    Optional[str],
    Opt(
        "--component",
        help="Span-QA component (default: the only one)",
        show_default=False,
    ),
]
CheckOpt = Annotated[
    bool,
    Opt(
        "--check/--no-check",
        help="Exit 1 when the model does not beat always-no-answer",
    ),
]
MaxDropOpt = Annotated[
    Optional[float],
    Opt(
        "--max-has-answer-drop",
        help=(
            "Keep answers: the best F1 among thresholds whose HasAns F1 is at "
            "most this many points below always answering's (default: the "
            "official best F1, whatever it costs answerable questions)"
        ),
        show_default=False,
    ),
]
OverlapWeightsOpt = Annotated[
    Optional[str],
    Opt(
        "--overlap-weights",
        help=(
            "Also choose the pipeline's overlap_weight among these "
            "comma-separated values (e.g. 0,0.5,1,2): the one that puts the "
            "right paragraph on top most often when each answerable question "
            "is asked of its paragraph and 9 others of its article, or of "
            "the file when the article has fewer (default: "
            "keep the pipeline's)"
        ),
        show_default=False,
    ),
]
BuildOpt = Annotated[
    bool,
    Opt(
        "--build-unanswerable",
        help=(
            "DATA holds answerable questions only (your own): add, for each, "
            "the question asked of another paragraph (of its article, else "
            "of the file) that does not hold its answer, the unanswerable "
            "questions the threshold is chosen against"
        ),
    ),
]
MinMarginOpt = Annotated[
    float,
    Opt(
        "--min-margin",
        help="How many F1 points (0-100) it must beat always-no-answer by",
    ),
]


@attn_cli.command("qa-threshold", no_args_is_help=True)
def qa_threshold_cli(
    model: ModelArg,
    data: HeldoutArg,
    output: OutputArg,
    component: QAComponentOpt = None,
    limit: Annotated[
        int, Opt("--limit", help="Use a seeded sample of N questions (0: all)")
    ] = 0,
    batch_size: Annotated[int, Opt("--batch-size", help="Questions per batch")] = 64,
    gpu_id: GpuIdOpt = -1,
    as_json: JsonOpt = False,
    check: CheckOpt = True,
    min_margin: MinMarginOpt = 0.0,
    max_has_answer_drop: MaxDropOpt = None,
    overlap_weights: OverlapWeightsOpt = None,
    build_unanswerable: BuildOpt = False,
) -> None:
    """Choose the "no answer" threshold of a span-QA pipeline that scores "no
    answer" (spacy-attn.DynamicCoattention.v3) on held-out questions, as the
    official SQuAD 2.0 script's best-F1 threshold, and save the pipeline with
    it in OUTPUT (the component's no_answer_threshold): doc.spans and
    answer_questions then say "no answer" above it. Prints the official EM /
    F1, HasAns F1 and NoAns F1 at that threshold beside always-no-answer and
    always-answering (the best span); exits 1 when the model does not beat
    always-no-answer (OUTPUT is saved all the same, for a look). Choose it on
    questions the model was not trained on, and report test scores on
    others. With --max-has-answer-drop, the threshold is the best F1 among
    those that keep HasAns F1 within that many points of always answering.
    Without unanswerable questions in DATA (a user's own), pass
    --build-unanswerable. With --overlap-weights, it also chooses, on the
    same questions, how much a context's word overlap with the question adds
    to the ranking of answers from many contexts (the pipeline's
    overlap_weight, used by answer_question and spacy attn predict)."""
    existing_file(data, "DATA")
    # OUTPUT is written as a whole (nlp.to_disk): MODEL, or DATA inside it, is lost.
    refuse_overwrite({"OUTPUT": output}, {"MODEL": model, "DATA": data})
    if max_has_answer_drop is not None and not max_has_answer_drop >= 0:
        fail(f"--max-has-answer-drop is F1 points, 0 or more: {max_has_answer_drop}")
    if output.exists() and not output.is_dir():
        fail(f"OUTPUT {output} is a file; pass a directory.")
    weights = None
    if overlap_weights is not None:
        weights = parse_weights(overlap_weights)
        if weights is None:
            fail(
                f"--overlap-weights takes comma-separated numbers, 0 or more: "
                f"{overlap_weights!r}"
            )
    with user_errors():
        report = choose_no_answer_threshold(
            model,
            data,
            output,
            component=component,
            limit=limit,
            batch_size=batch_size,
            gpu_id=gpu_id,
            max_has_answer_drop=max_has_answer_drop,
            overlap_weights=weights,
            build_unanswerable=build_unanswerable,
        )
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        typer.echo("\n".join(report_lines(report)))
    failure = no_answer_failure(report, min_margin=min_margin)
    if check and failure:
        fail(failure)


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
    from ..qa_eval import no_answer_eval as ev
    from ..squad import load_squad_json
    from ..squad.negatives import with_unanswerable

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


def parse_weights(text: str) -> Optional[List[float]]:
    """Comma-separated weights, 0 or more; None when ``text`` holds none or
    a value that is not such a number."""
    try:
        weights = [float(w) for w in text.split(",") if w.strip()]
    except ValueError:
        return None
    if not weights or any(not w >= 0 for w in weights):
        return None
    return weights


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
    from ..qa_eval.no_answer_eval import many_contexts_check

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


def report_lines(report: Dict[str, Any]) -> List[str]:
    """The report as lines: the threshold, then a table of the model and the
    baselines (official SQuAD 2.0 figures, 0-100)."""
    drop = report.get("max_has_answer_drop")
    rule = (
        f"the best F1 with HasAns F1 at most {drop:g} points below always answering's"
        if drop is not None
        else "the best F1"
    )
    lines = [
        f"No-answer threshold {report['threshold']:.4f} ({rule}), chosen on "
        f"{report['questions']} questions ({report['has_answer']} answerable, "
        f"{report['no_answer']} unanswerable"
        + (f", {report['built']} of them built" if report.get("built") else "")
        + ")."
    ]
    rows = {"model": report["model"]}
    rows.update(
        {name.replace("_", " "): scores for name, scores in report["baselines"].items()}
    )
    lines.append(f"{'':>18} " + " ".join(f"{c:>9}" for c in COLUMNS.values()))
    for name, scores in rows.items():
        cells = " ".join(f"{scores[k]:9.1f}" for k in COLUMNS)
        lines.append(f"{name:>18} {cells}")
    many = report.get("many_contexts")
    if many:
        chosen = f"{many['chosen']:g}"
        tried = ", ".join(f"{w}: {v:.1f}%" for w, v in many["weights"].items())
        lines.append(
            f"Overlap weight {chosen}: asked of their paragraph and others of "
            f"its article, or of the file ({many['contexts']:.1f} on average), "
            f"{many['questions']} answerable questions get the top answer from "
            f"their own paragraph {many['weights'][chosen]:.1f}% of the time "
            f"(by weight {tried}; word overlap alone {many['word_overlap']:.1f}%, "
            f"chance {many['chance']:.1f}%)."
        )
    if "saved" in report:
        lines.append(f"Saved the pipeline with the threshold to {report['saved']}.")
    return lines


def no_answer_failure(
    report: Dict[str, Any], *, min_margin: float = 0.0
) -> Optional[str]:
    """One line saying the model does not beat always-no-answer on F1 by more
    than ``min_margin`` points (None when it does)."""
    f1 = report["model"]["f1"]
    base = report["baselines"]["always_no_answer"]["f1"]
    if f1 > base + min_margin:
        return None
    margin = f" by more than {min_margin:.1f}" if min_margin else ""
    return (
        f"The model does not beat always-no-answer{margin} on this data (F1 "
        f'{f1:.1f} vs {base:.1f}): its best threshold says "no answer" to '
        "(nearly) every question; it has not learned when there is an answer."
    )


def _figures(scores: Dict[str, Any]) -> Dict[str, float]:
    # HasAns / NoAns keys are absent from the official output where the data
    # has no such questions; _answerable_counts rules that out first.
    return {key: float(scores[key]) for key in COLUMNS}


def _answerable_counts(dataset: Dict[str, Any], data: Path) -> "tuple[int, int]":
    # The official metric's own split (HasAns / NoAns totals), so the counts
    # are those the scores are over; no model is run for it. Both kinds are
    # needed: a threshold chosen on one would mean nothing.
    from ..errors import CorpusFormatError
    from ..qa_eval.evaluate import iter_questions
    from ..squad.no_answer_metric import squad2_evaluate

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
    "choose_no_answer_threshold",
    "no_answer_failure",
    "qa_threshold_cli",
    "report_lines",
]
