"""``spacy attn qa-threshold``: choose a span-QA pipeline's "no answer"
threshold on held-out questions and save the pipeline with it, beside the
trivial baselines it must beat."""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import fail, user_errors
from .options import GpuIdOpt, JsonOpt, ModelArg, Opt, argument, component_opt

HeldoutArg = Annotated[
    Path,
    argument(
        "DATA",
        "Held-out SQuAD 2.0-style JSON (optionally .gz): answerable and "
        "unanswerable questions (is_impossible, or no answers), not the "
        "test set",
    ),
]
OutputArg = Annotated[
    Path,
    argument("OUTPUT", "Directory to save the pipeline to, with the threshold"),
]
QAComponentOpt = Annotated[Optional[str], component_opt("Span-QA component")]
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
    """Choose the "no answer" threshold of a span-QA pipeline that scores "no answer"
    (spacy-attn.DynamicCoattention.v4 with no_answer) on held-out questions, as the
    official SQuAD 2.0 script's best-F1 threshold, and save the pipeline with it in
    OUTPUT (the component's no_answer_threshold): doc.spans and answer_questions
    then say "no answer" above it. Prints the official EM / F1, HasAns F1 and NoAns
    F1 at that threshold beside always-no-answer and always-answering (the best
    span); exits 1 when the model does not beat always-no-answer (OUTPUT is saved
    all the same, for a look). Choose it on questions the model was not trained on,
    and report test scores on others. With --max-has-answer-drop, the threshold is
    the best F1 among those that keep HasAns F1 within that many points of always
    answering. Without unanswerable questions in DATA (a user's own), pass
    --build-unanswerable. With --overlap-weights, it also chooses, on the same
    questions, how much a context's word overlap with the question adds to the
    ranking of answers from many contexts (the pipeline's overlap_weight, used by
    answer_question and spacy attn predict)."""
    from ..qa_eval.threshold import ThresholdSettings, choose_and_save

    settings = ThresholdSettings(
        component=component, limit=limit, batch_size=batch_size, gpu_id=gpu_id,
        max_has_answer_drop=max_has_answer_drop,
        overlap_weights=parse_weights(overlap_weights),
        build_unanswerable=build_unanswerable,
    )  # fmt: skip
    with user_errors():
        report = choose_and_save(model, data, output, settings)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        typer.echo("\n".join(report_lines(report)))
    failure = no_answer_failure(report, min_margin=min_margin)
    if check and failure:
        fail(failure)


def parse_weights(text: Optional[str]) -> Optional[List[float]]:
    """``--overlap-weights 0,0.5,1``: comma-separated weights, 0 or more
    (None: not given)."""
    if text is None:
        return None
    try:
        weights = [float(w) for w in text.split(",") if w.strip()]
    except ValueError:
        weights = []
    if not weights or any(not w >= 0 for w in weights):
        fail(f"--overlap-weights takes comma-separated numbers, 0 or more: {text!r}")
    return weights


def report_lines(report: Dict[str, Any]) -> List[str]:
    """The report as lines: the threshold, then a table of the model and the
    baselines (official SQuAD 2.0 figures, 0-100)."""
    from ..qa_eval.threshold import COLUMNS

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


__all__ = ["no_answer_failure", "qa_threshold_cli", "report_lines"]
