"""``spacy attn evaluate``: a pipeline's scores on a pair corpus, beside the
trivial baselines that it must beat (``spacy_attn.baselines``)."""

import json
from pathlib import Path
from typing import Any, Dict, Optional

import typer
from typing_extensions import Annotated

from ..baselines import COLUMNS, baseline_failure, describe_lexical, score_table
from ..lexical import BM25_B, BM25_K1
from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import fail, user_errors
from .options import (
    Bm25BOpt,
    Bm25K1Opt,
    DelimiterOpt,
    FormatOpt,
    GpuIdOpt,
    GroupColOpt,
    IdColOpt,
    JsonOpt,
    LabelColOpt,
    LabelMapOpt,
    ModelArg,
    Opt,
    PairBatchSizeOpt,
    PairKeyOpt,
    PositiveLabelOpt,
    QuotingOpt,
    TextColsOpt,
    argument,
    json_output_opt,
    pair_columns,
    parse_label_map,
)

EvalDataArg = Annotated[
    Path,
    argument(
        "DATA",
        "Pair corpus: jsonl / csv / tsv (optionally .gz) or a .spacy DocBin "
        "of pair docs; for a span-QA pipeline, a SQuAD JSON (.json, .json.gz); "
        "for a text classifier, jsonl with text and label or a .spacy DocBin",
    ),
]


IdfDataOpt = Annotated[
    Optional[Path],
    Opt(
        "--idf-data",
        help=(
            "Pair corpus (e.g. the training file, read like DATA) whose distinct "
            "second texts give the lexical baselines' IDF and BM25's mean length "
            "(default: DATA's)"
        ),
        show_default=False,
    ),
]


@attn_cli.command("evaluate", no_args_is_help=True)
def evaluate_cli(
    model: ModelArg,
    data: EvalDataArg,
    output: Annotated[Optional[Path], json_output_opt("Write the scores")] = None,
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: LabelMapOpt = None,
    positive_label: PositiveLabelOpt = None,
    limit: Annotated[
        int,
        Opt(
            "--limit", help="Evaluate on the first N pairs, texts or questions (0: all)"
        ),
    ] = 0,
    batch_size: PairBatchSizeOpt = 256,
    gpu_id: GpuIdOpt = -1,
    text_cols: TextColsOpt = None,
    label_col: LabelColOpt = None,
    group_col: GroupColOpt = None,
    id_col: IdColOpt = None,
    input_format: FormatOpt = "auto",
    delimiter: DelimiterOpt = None,
    quoting: QuotingOpt = "auto",
    as_json: JsonOpt = False,
    check: Annotated[
        bool,
        Opt(
            "--check/--no-check",
            help="Exit 1 when the model does not beat the baselines",
        ),
    ] = True,
    min_margin: Annotated[
        float,
        Opt("--min-margin", help="How far (0-1) the model must beat the baselines"),
    ] = 0.0,
    idf_data: IdfDataOpt = None,
    bm25_k1: Bm25K1Opt = BM25_K1,
    bm25_b: Bm25BOpt = BM25_B,
) -> None:
    """Evaluate a pipeline on a pair corpus, like `spacy evaluate` but keeping
    each doc's pair (read with spacy-attn.PairCorpus.v2). Prints accuracy,
    macro-F, the positive class's P/R/F (with a positive label) and MAP, MRR
    and P@1 (with --group-col, or docs with group ids) beside trivial
    baselines on the same data: the majority class, word overlap, shared
    content words, IDF-weighted shared words and Okapi BM25 (each at its best
    threshold or cuts on this data); exits 1 when the model does not beat
    the strongest. A text classifier (textcat, attn_doc_embedder) on labelled
    texts: accuracy and macro-F beside the majority class. A span-QA
    pipeline on a SQuAD JSON file (.json, .json.gz): the official EM / F1
    of its answers, "no answer" where its threshold says so, how often it
    refuses an answerable question, beside always-no-answer, always
    answering and the context's first words. An option that the data's kind
    of evaluation does not read (e.g. --positive-label for a text classifier,
    --label-map for a SQuAD file) is refused, not ignored.
    """
    from ..evaluation import EvaluateSettings, evaluate, is_squad_json

    settings = EvaluateSettings(
        output=output, pair_key=pair_key, label_map=parse_label_map(label_map),
        positive_label=positive_label, limit=limit, batch_size=batch_size,
        gpu_id=gpu_id, columns=pair_columns(text_cols, label_col, group_col, id_col, kind=None),
        input_format=input_format, delimiter=delimiter, quoting=quoting,
        idf_data=idf_data, bm25_k1=bm25_k1, bm25_b=bm25_b,
    )  # fmt: skip
    with user_errors():
        scores = evaluate(model, data, settings)
    report = report_qa_scores if is_squad_json(data) else report_pair_scores
    report(scores, as_json=as_json, check=check, min_margin=min_margin)


def report_pair_scores(
    scores: Dict[str, Any], *, as_json: bool, check: bool, min_margin: float
) -> None:
    """``evaluate`` of a pair pipeline, once scored (``evaluate_pairs``):
    print and check the scores beside the baselines'."""
    text = json.dumps(scores, indent=2)
    baselines = scores.get("baselines", {})
    print_notes(scores)
    if as_json:
        typer.echo(text)
    else:
        keys = [k for k in COLUMNS if scores.get(k) is not None]
        typer.echo("\n".join(score_table({"model": scores, **baselines}, keys)))
    failure = baseline_failure(scores, baselines, min_margin=min_margin)
    if check and failure:
        fail(failure)


def report_qa_scores(
    report: Dict[str, Any], *, as_json: bool, check: bool, min_margin: float
) -> None:
    """``evaluate`` of a span-QA pipeline on a SQuAD file, once scored
    (``evaluate_qa_file``): print and check (as for pairs; ``min_margin``
    0-1, in F1 / 100)."""
    from ..qa_eval.pipeline_eval import qa_failure, qa_report_lines

    text = json.dumps(report, indent=2)
    # On stderr, as a pair corpus's "Read ..." line: stdout may be the JSON.
    typer.echo(
        f"Scored {report['questions']:,} questions ({report['has_answer']:,} "
        f"answerable, {report['no_answer']:,} unanswerable).",
        err=True,
    )
    typer.echo(text if as_json else "\n".join(qa_report_lines(report)))
    failure = qa_failure(report, min_margin=100 * min_margin)
    if check and failure:
        fail(failure)


def print_notes(scores: Dict[str, Any]) -> None:
    """On stderr: the lines read, a note on the columns, how the lexical
    baselines were computed, and how many groups MAP averages over (stdout
    may be the scores' JSON)."""
    if scores.get("read"):
        typer.echo(f"Read {scores['read']}", err=True)
    if scores.get("note"):
        typer.echo(f"Note: {scores['note']}", err=True)
    if scores.get("lexical_baselines"):
        typer.echo(describe_lexical(scores["lexical_baselines"]), err=True)
    if scores.get("pair_map_groups") is not None:
        typer.echo(
            f"MAP, MRR and P@1 over {scores['pair_map_groups']:,} groups "
            f"({scores['pair_map_groups_without_positive']:,} without a positive "
            f"pair left out).",
            err=True,
        )


__all__ = ["evaluate_cli", "report_pair_scores", "report_qa_scores"]
