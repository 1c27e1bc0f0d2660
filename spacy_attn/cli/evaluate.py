"""``spacy attn evaluate``: a pipeline's scores on a pair corpus, beside the
trivial baselines that it must beat (``spacy_attn.baselines``)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import typer
from typing_extensions import Annotated

from ..baselines import COLUMNS, baseline_failure, describe_lexical, score_table
from ..lexical import BM25_B, BM25_K1
from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import existing_file, fail, refuse_overwrite, user_errors
from .options import (
    Arg,
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
    PairKeyOpt,
    PositiveLabelOpt,
    QuotingOpt,
    TextColsOpt,
    pair_columns,
    parse_label_map,
)

if TYPE_CHECKING:
    from ..pipeline import PairClassifier
    from ..readers import Columns


EvalDataArg = Annotated[
    Path,
    Arg(
        metavar="DATA",
        help=(
            "Pair corpus: jsonl / csv / tsv (optionally .gz) or a .spacy DocBin "
            "of pair docs; for a span-QA pipeline, a SQuAD JSON (.json, .json.gz)"
        ),
        show_default=False,
    ),
]


EvalOutputOpt = Annotated[
    Optional[Path],
    Opt(
        "--output",
        help="Write the scores as JSON here (default: print only)",
        show_default=False,
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
    output: EvalOutputOpt = None,
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: LabelMapOpt = None,
    positive_label: PositiveLabelOpt = None,
    limit: Annotated[
        int, Opt("--limit", help="Evaluate on the first N pairs (0: all)")
    ] = 0,
    batch_size: Annotated[int, Opt("--batch-size", help="Pairs per batch")] = 256,
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
    baselines on the same data: the majority class and, for a binary task,
    word overlap, shared content words, IDF-weighted shared words and Okapi
    BM25; exits 1 when the model does not beat the strongest. A span-QA
    pipeline on a SQuAD JSON file (.json, .json.gz): the official EM / F1
    of its answers, "no answer" where its threshold says so, how often it
    refuses an answerable question, beside always-no-answer, always
    answering and the context's first words.
    """
    existing_file(data, "DATA")
    if idf_data is not None:
        existing_file(idf_data, "--idf-data")
    read = {"DATA": data, "MODEL": model, "--idf-data": idf_data}
    refuse_overwrite({"--output": output}, read)
    if is_squad_json(data):
        return evaluate_qa_cli(
            model, data, batch_size=batch_size, gpu_id=gpu_id,
            min_margin=min_margin, output=output, as_json=as_json, check=check,
        )  # fmt: skip
    mapping = parse_label_map(label_map)
    columns = pair_columns(text_cols, label_col, group_col, id_col)
    with user_errors():
        scores = evaluate_pairs(
            model,
            data,
            pair_key=pair_key,
            label_map=mapping,
            positive_label=positive_label,
            limit=limit,
            batch_size=batch_size,
            gpu_id=gpu_id,
            columns=columns,
            input_format=input_format,
            delimiter=delimiter,
            quoting=quoting,
            idf_data=idf_data,
            bm25_k1=bm25_k1,
            bm25_b=bm25_b,
        )
    report_pair_scores(
        scores, output=output, as_json=as_json, check=check, min_margin=min_margin
    )


def report_pair_scores(
    scores: Dict[str, Any],
    *,
    output: Optional[Path],
    as_json: bool,
    check: bool,
    min_margin: float,
) -> None:
    """``evaluate`` of a pair pipeline, once scored (``evaluate_pairs``):
    write, print and check the scores beside the baselines'."""
    text = json.dumps(scores, indent=2)
    write_scores(output, text)
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


def evaluate_pairs(
    model: Union[str, Path],
    data: Path,
    *,
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    batch_size: int = 256,
    gpu_id: int = -1,
    columns: Optional["Columns"] = None,
    input_format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    idf_data: Optional[Path] = None,
    bm25_k1: float = BM25_K1,
    bm25_b: float = BM25_B,
) -> Dict[str, Any]:
    """The scores of a pipeline on a pair corpus (``nlp.evaluate`` on the
    examples of spacy-attn.PairCorpus.v1, which keep each doc's pair).

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): A jsonl / csv / tsv pair corpus or a DocBin of pair docs.
    columns (Optional[Columns]): The columns of a row file (default: those
        the pipeline was trained with, else detected).
    input_format, delimiter, quoting: How a row file is read
        (``spacy_attn.readers.table_format``).
    positive_label (Optional[str]): The positive label of a binary task
        (default: the one the pair classifier learned in training, if any).
    idf_data (Optional[Path]): A pair corpus, read like ``data``, whose
        candidates give the lexical baselines' IDF (default: ``data``'s).
    bm25_k1, bm25_b (float): BM25's settings.
    RETURNS (Dict[str, Any]): The scores, as ``nlp.evaluate`` gives them,
        and those of ``spacy_attn.baselines.pair_baselines``.
    RAISES (CorpusFormatError): For a gold label the model does not know.
    """
    from ..baselines import pair_baselines
    from ..loading import load_pipeline
    from ..readers import Columns, PairCorpus
    from ..readers.columns import trained_columns

    nlp = load_pipeline(model, gpu_id=gpu_id)
    classifiers = check_pair_model(nlp, data, positive_label)
    trained = trained_columns(nlp.config)
    given = columns if columns is not None else Columns()
    # Those not given: as the pipeline's training files were read.
    columns, note = given.with_trained(trained, ("text_cols", "label_col", "group_col"))
    if label_map is None:  # as the pipeline's training files were read
        label_map = trained.get("label_map")
    read: Dict[str, Any] = dict(
        format=input_format, delimiter=delimiter, quoting=quoting,
        pair_key=pair_key, label_map=label_map, positive_label=positive_label,
        columns=columns,
    )  # fmt: skip
    corpus = PairCorpus(data, limit=limit, **read)
    known = [label for pipe in classifiers for label in pipe.labels]
    if known:
        corpus.check_labels(nlp, set(known))
    examples = list(corpus(nlp))
    positive = positive_label or next(
        (clf.positive_label for clf in classifiers if clf.positive_label), None
    )
    check_positives(data, examples, positive)
    scorer_cfg = {"positive_label": positive_label} if positive_label else None
    scores = nlp.evaluate(examples, batch_size=batch_size, scorer_cfg=scorer_cfg)
    if len(classifiers) == 1 and not classifiers[0].multi_label:
        clf = classifiers[0]  # IDF from DATA's candidates, or idf_data's
        idf_rows = PairCorpus(idf_data, **read)(nlp) if idf_data else examples
        baselines = pair_baselines(
            examples, idf_rows, labels=clf.labels, pair_key=clf.pair_key,
            positive_label=positive_label or clf.positive_label,
            idf_source=str(idf_data or data), k1=bm25_k1, b=bm25_b,
        )  # fmt: skip
        scores.update(baselines)
    if note:
        scores["note"] = note
    if corpus.stats is not None:
        scores["read"] = f"{data}: {corpus.stats.describe()}"
    return scores


def check_pair_model(
    nlp: Any, data: Path, positive_label: Optional[str]
) -> List["PairClassifier"]:
    """The pipeline's pair classifiers, checked: rows of pairs are refused
    for a span-QA pipeline, a positive label for a multi-class classifier
    (``spacy_attn.readers.task_input``).

    RAISES (CorpusFormatError): Saying what the model expects.
    """
    from ..pipeline import PairClassifier, SpanQA
    from ..readers.task_input import check_positive_label, pair_rows_for_qa

    classifiers = [pipe for _, pipe in nlp.pipeline if isinstance(pipe, PairClassifier)]
    qa = [name for name, pipe in nlp.pipeline if isinstance(pipe, SpanQA)]
    if not classifiers and qa:
        raise pair_rows_for_qa(data, qa[0])
    for pipe in classifiers:
        check_positive_label(positive_label, pipe.labels, component=pipe.name)
    return classifiers


def is_squad_json(data: Path) -> bool:
    """A SQuAD-format file (QA), not a pair corpus: ``.json`` or ``.json.gz``."""
    name = data.name.lower()
    return name.endswith(".json") or name.endswith(".json.gz")


def evaluate_qa_file(
    model: Union[str, Path], data: Path, *, batch_size: int = 64, gpu_id: int = -1
) -> Dict[str, Any]:
    """``qa_eval.pipeline_eval.evaluate_qa`` of a pipeline on a SQuAD file."""
    from ..loading import load_pipeline
    from ..pipeline.lookup import ComponentLookupError
    from ..qa_eval.pipeline_eval import evaluate_qa
    from ..squad import load_squad_json

    nlp = load_pipeline(model, gpu_id=gpu_id)
    dataset = load_squad_json(data)
    try:
        return evaluate_qa(nlp, dataset, batch_size=min(batch_size, 64))
    except ComponentLookupError as err:
        fail(
            f"DATA {data}: a .json file is read as SQuAD questions, for a span-QA "
            f"pipeline. {err} A pair corpus is jsonl, csv, tsv or .spacy."
        )


def evaluate_qa_cli(
    model: Union[str, Path],
    data: Path,
    *,
    batch_size: int,
    gpu_id: int,
    min_margin: float,
    output: Optional[Path],
    as_json: bool,
    check: bool,
) -> None:
    """``evaluate`` of a span-QA pipeline on a SQuAD file: score, write,
    print and check (as for pairs; ``min_margin`` 0-1, in F1 / 100)."""
    from ..qa_eval.pipeline_eval import qa_failure, qa_report_lines

    with user_errors():
        report = evaluate_qa_file(model, data, batch_size=batch_size, gpu_id=gpu_id)
    text = json.dumps(report, indent=2)
    write_scores(output, text)
    typer.echo(text if as_json else "\n".join(qa_report_lines(report)))
    failure = qa_failure(report, min_margin=100 * min_margin)
    if check and failure:
        fail(failure)


def write_scores(output: Optional[Path], text: str) -> None:
    """Write the scores' JSON to ``output`` (None: nowhere); the command
    checked that it is none of its inputs (``refuse_overwrite``)."""
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf8")


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


def check_positives(data: Path, examples: List[Any], positive: Optional[str]) -> None:
    """Fail when a binary task's evaluation file has no positive row.

    RAISES (CorpusFormatError): Naming the file, the label and the fix.
    """
    from ..errors import CorpusFormatError

    if positive is None or any(
        eg.reference.cats.get(positive) == 1.0 for eg in examples
    ):
        return
    raise CorpusFormatError(
        f"{data}: no row has the positive label {positive!r}, so the positive "
        f"class's P / R / F and the ranking scores (MAP, MRR, P@1) mean "
        f"nothing; evaluate on a file with positives (or name the label column "
        f"with --label-col, the labels with --label-map)."
    )


__all__ = ["evaluate_cli", "evaluate_pairs"]
