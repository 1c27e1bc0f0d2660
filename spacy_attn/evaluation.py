"""A pipeline's scores on a pair corpus beside the trivial baselines it
must beat (``spacy_attn.baselines``), a text classifier's on labelled texts
beside the majority class, or a span-QA pipeline's on SQuAD questions
(``spacy_attn.qa_eval``): ``evaluate``, the call of ``spacy attn
evaluate``."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

from spacy.language import Language

from .evaluation_texts import evaluate_texts, text_classifiers
from .file_safety import check_outputs
from .lexical import BM25_B, BM25_K1
from .pairs import DEFAULT_PAIR_KEY
from .usage import UsageError, require_file

if TYPE_CHECKING:
    from .pipeline import PairClassifier
    from .readers import Columns


@dataclass(frozen=True)
class EvaluateSettings:
    """How ``evaluate`` reads the data and scores the pipeline: where the
    scores go (``output``), then ``evaluate_pairs``'s options of the same names.

    output (Optional[Path]): Write the scores as JSON here (None: nowhere).
    pair_key (str): The name of the pair in the docs.
    label_map (Optional[Dict[str, str]]): Raw label -> label (None: as the
        pipeline's training files were read).
    positive_label (Optional[str]): A binary task's positive label.
    limit (int): Evaluate on the first N pairs (0: all).
    batch_size (int): Pairs per batch (QA: at most 64 questions).
    gpu_id (int): The GPU (-1: the CPU).
    columns (Optional[Columns]): The columns of a row file (None: those the
        pipeline was trained with, else detected).
    input_format, delimiter, quoting: How a row file is read.
    idf_data (Optional[Path]): A pair corpus whose candidates give the
        lexical baselines' IDF (None: the data's).
    bm25_k1, bm25_b (float): BM25's settings.
    """

    output: Optional[Path] = None
    pair_key: str = DEFAULT_PAIR_KEY
    label_map: Optional[Dict[str, str]] = None
    positive_label: Optional[str] = None
    limit: int = 0
    batch_size: int = 256
    gpu_id: int = -1
    columns: Optional["Columns"] = None
    input_format: str = "auto"
    delimiter: Optional[str] = None
    quoting: str = "auto"
    idf_data: Optional[Path] = None
    bm25_k1: float = BM25_K1
    bm25_b: float = BM25_B


# Each setting beside ``output`` as the command's user knows it; ``evaluate``
# refuses one that the data's kind of evaluation would silently ignore.
OPTION_NAMES = {
    "pair_key": "--pair-key",
    "label_map": "--label-map",
    "positive_label": "--positive-label",
    "limit": "--limit",
    "batch_size": "--batch-size",
    "gpu_id": "--gpu-id",
    "columns": "--text-cols / --label-col / --group-col / --id-col",
    "input_format": "--format",
    "delimiter": "--delimiter",
    "quoting": "--quoting",
    "idf_data": "--idf-data",
    "bm25_k1": "--bm25-k1",
    "bm25_b": "--bm25-b",
}
QA_OPTIONS = ("limit", "batch_size", "gpu_id")
TEXT_OPTIONS = (
    "label_map", "limit", "batch_size", "gpu_id", "columns", "input_format",
    "delimiter", "quoting",
)  # fmt: skip


def check_options(
    settings: EvaluateSettings, used: Sequence[str], *, what: str
) -> None:
    """Refuse the settings that an evaluation does not read: one that differs
    from its default and is not in ``used``. Ignoring it would score other
    data than the user asked for (``--limit`` on a SQuAD file) or hide a
    mistaken model or file (``--positive-label`` on a text classifier).

    settings (EvaluateSettings): The settings given.
    used (Sequence[str]): The names of the fields this evaluation reads.
    what (str): The evaluation, for the message ("a SQuAD JSON file").
    RAISES (UsageError): Naming the options, if any is set and not read.
    """
    default = EvaluateSettings()

    def given(name: str) -> bool:
        value = getattr(settings, name)
        if name == "columns" and value is not None:
            return bool(value.settings())  # Columns naming none is the default
        return bool(value != getattr(default, name))

    unread = [
        flag for name, flag in OPTION_NAMES.items() if name not in used and given(name)
    ]
    if unread:
        read = ", ".join(OPTION_NAMES[name] for name in used)
        raise UsageError(
            f"{', '.join(unread)}: not read when evaluating {what}, which reads "
            f"only {read} of these options; leave them out."
        )


def evaluate(
    model: Union[str, Path], data: Path, settings: EvaluateSettings
) -> Dict[str, Any]:
    """Score a pipeline on ``data`` and write the scores to
    ``settings.output``: a pair corpus with ``evaluate_pairs``, a SQuAD JSON
    file (``is_squad_json``) with ``evaluate_qa_file``, and the texts of a
    pipeline that classifies whole docs (``text_classifiers``) with
    ``evaluate_texts``.

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): A pair corpus (jsonl / csv / tsv, DocBin) or SQuAD JSON.
    settings (EvaluateSettings): How to read and score.
    RETURNS (Dict[str, Any]): The scores (``evaluate_pairs``) or the QA
        report (``qa_eval.pipeline_eval.evaluate_qa``).
    RAISES (UsageError): If DATA or --idf-data is not a file, or an option
        is set that this kind of evaluation does not read (``check_options``).
    RAISES (OutputPathError): If the output is one of the inputs.
    RAISES (CorpusFormatError): For data the pipeline cannot be scored on.
    """
    require_file(data, "DATA")
    if settings.idf_data is not None:
        require_file(settings.idf_data, "--idf-data")
    read = {"DATA": data, "MODEL": model, "--idf-data": settings.idf_data}
    check_outputs({"--output": settings.output}, read)
    if is_squad_json(data):
        check_options(settings, QA_OPTIONS, what="a SQuAD JSON file")
        scores = evaluate_qa_file(
            model, data, limit=settings.limit, batch_size=settings.batch_size,
            gpu_id=settings.gpu_id,
        )  # fmt: skip
    else:
        from .loading import load_pipeline

        nlp = load_pipeline(model, gpu_id=settings.gpu_id)
        if text_classifiers(nlp):
            check_options(settings, TEXT_OPTIONS, what="a text classifier")
            scores = evaluate_texts(
                nlp, data, label_map=settings.label_map, limit=settings.limit,
                batch_size=settings.batch_size, columns=settings.columns,
                input_format=settings.input_format, delimiter=settings.delimiter,
                quoting=settings.quoting,
            )  # fmt: skip
        else:
            options = {k: v for k, v in vars(settings).items() if k != "output"}
            scores = evaluate_pairs(nlp, data, **options)
    if settings.output:
        settings.output.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(scores, indent=2)
        settings.output.write_text(text + "\n", encoding="utf8")
    return scores


def evaluate_pairs(
    model: Union[str, Path, "Language"],
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

    model (Union[str, Path, Language]): A pipeline directory or package
        name, or the pipeline.
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
    from .baselines import pair_baselines
    from .loading import load_pipeline
    from .readers import Columns, PairCorpus
    from .readers.columns import trained_columns

    nlp = model if isinstance(model, Language) else load_pipeline(model, gpu_id=gpu_id)
    classifiers = check_pair_model(nlp, data, positive_label)
    trained = trained_columns(nlp.config)
    given = (columns if columns is not None else Columns()).for_kind("pair")
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
    from .pipeline import PairClassifier, SpanQA
    from .readers.task_input import check_positive_label, pair_rows_for_qa

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
    model: Union[str, Path],
    data: Path,
    *,
    limit: int = 0,
    batch_size: int = 64,
    gpu_id: int = -1,
) -> Dict[str, Any]:
    """``qa_eval.pipeline_eval.evaluate_qa`` of a pipeline on a SQuAD file.

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): SQuAD JSON (``.json``, ``.json.gz``).
    limit (int): Score the first N questions in file order (0: all).
    batch_size (int): Questions per batch (at most 64).
    gpu_id (int): The GPU (-1: the CPU).
    RETURNS (Dict[str, Any]): The report of ``evaluate_qa``.
    RAISES (UsageError): If the pipeline has no span-QA component.
    """
    from .loading import load_pipeline
    from .pipeline.lookup import ComponentLookupError
    from .qa_eval.no_answer_eval import subset_by_ids
    from .qa_eval.pipeline_eval import evaluate_qa
    from .qa_eval.questions import iter_questions
    from .squad import load_squad_json

    nlp = load_pipeline(model, gpu_id=gpu_id)
    dataset = load_squad_json(data)
    if limit > 0:
        ids = [qid for qid, _, _ in iter_questions(dataset)][:limit]
        dataset = subset_by_ids(dataset, ids)
    try:
        return evaluate_qa(nlp, dataset, batch_size=min(batch_size, 64))
    except ComponentLookupError as err:
        raise UsageError(
            f"DATA {data}: a .json file is read as SQuAD questions, for a span-QA "
            f"pipeline. {err} A pair corpus is jsonl, csv, tsv or .spacy."
        ) from err


def check_positives(data: Path, examples: List[Any], positive: Optional[str]) -> None:
    """Fail when a binary task's evaluation file has no positive row.

    RAISES (CorpusFormatError): Naming the file, the label and the fix.
    """
    from .errors import CorpusFormatError

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


__all__ = [
    "EvaluateSettings",
    "check_pair_model",
    "evaluate",
    "evaluate_pairs",
    "evaluate_qa_file",
    "check_options",
    "is_squad_json",
]
