"""A text classifier's scores on labelled texts beside the majority class:
``evaluate_texts``, what ``spacy attn evaluate`` runs for a pipeline whose
one exclusive text classifier is spaCy's ``textcat`` or ``attn_doc_embedder``
(``spacy_attn.evaluation``)."""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from spacy.language import Language

from .usage import UsageError

if TYPE_CHECKING:
    from .readers import Columns


def text_classifiers(nlp: Language) -> List[Any]:
    """The components of a pipeline without a pair classifier that classify
    whole docs: spaCy's ``textcat`` and ``textcat_multilabel``, and
    ``attn_doc_embedder`` where it sets ``doc.cats``."""
    from spacy.pipeline import TextCategorizer

    from .pipeline import DocEmbedder, PairClassifier

    pipes = [pipe for _, pipe in nlp.pipeline]
    if any(isinstance(pipe, PairClassifier) for pipe in pipes):
        return []
    return [
        pipe
        for pipe in pipes
        if isinstance(pipe, TextCategorizer)
        or (isinstance(pipe, DocEmbedder) and pipe.cfg.get("set_cats", True))
    ]


def text_corpus(
    nlp: Language,
    data: Path,
    columns: Optional["Columns"],
    *,
    label_map: Optional[Dict[str, str]],
    limit: int,
    input_format: str,
    delimiter: Optional[str],
    quoting: str,
) -> Tuple[Any, Optional[str]]:
    """The ``TextCatCorpus`` (v2's reading) of a text classifier's
    evaluation file, read and checked: the columns and the label map not
    given are those its training files were read with
    (``trained_columns``), the others detected. With it, a note when the
    text column named is not the one the pipeline was trained on.

    RAISES (UsageError): For a group or id column, which texts do not have.
    RAISES (CorpusFormatError): For more than one text column or a bad row.
    """
    from .readers import Columns, TextCatCorpus
    from .readers.columns import trained_columns

    given = columns if columns is not None else Columns(kind=None)
    if given.group_col is not None or given.id_col is not None:
        raise UsageError(
            "--group-col / --id-col: not read when evaluating a text classifier; "
            "leave them out."
        )
    trained = trained_columns(nlp.config)
    named, note = given.with_trained(trained, ("text_cols", "label_col"))
    if label_map is None:
        label_map = trained.get("label_map")
    # Without the model's labels, so that a label it does not know is read
    # and named by the caller; the others are then 0.0 in the gold cats.
    corpus = TextCatCorpus(
        data, label_map=label_map, limit=limit, format=input_format,
        delimiter=delimiter, quoting=quoting, columns=named.for_kind("doc"),
    )  # fmt: skip
    corpus.check()
    return corpus, note


def evaluate_texts(
    nlp: Language,
    data: Path,
    *,
    label_map: Optional[Dict[str, str]] = None,
    limit: int = 0,
    batch_size: int = 256,
    columns: Optional["Columns"] = None,
    input_format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
) -> Dict[str, Any]:
    """The scores of a pipeline's one exclusive text classifier on labelled
    texts, beside the majority class: spaCy's ``cats_*`` scores (those of
    ``spacy evaluate``), ``cats_acc`` (how often the top label is the gold
    one) and ``baselines`` (``MAJORITY``: always the most frequent gold
    label, scored the same way).

    nlp (Language): The pipeline (``text_classifiers`` finds one).
    data (Path): jsonl, csv or tsv (.gz) with a text and a label column, or
        a DocBin whose docs have gold ``cats`` (``spacy-attn.TextCatCorpus.v2``).
    label_map (Optional[Dict[str, str]]): Raw label -> label (None: as the
        pipeline's training files were read).
    limit (int): Evaluate on the first N texts (0: all).
    batch_size (int): Texts per batch.
    columns (Optional[Columns]): The text and label columns (None: those the
        pipeline was trained with, else detected).
    input_format, delimiter, quoting: How a row file is read.
    RETURNS (Dict[str, Any]): The scores.
    RAISES (CorpusFormatError): For several or multi-label classifiers, no
        labelled text, or a gold label the model does not know.
    RAISES (UsageError): For a group or id column.
    """
    from spacy.pipeline import MultiLabel_TextCategorizer
    from spacy.scorer import Scorer
    from spacy.training import Example

    from .baselines import MAJORITY
    from .errors import CorpusFormatError

    pipes = text_classifiers(nlp)
    labels = list(pipes[0].labels)
    # spaCy's multi-label textcat subclasses its exclusive one.
    multi = isinstance(pipes[0], MultiLabel_TextCategorizer) or bool(
        getattr(pipes[0], "multi_label", False)
    )
    if len(pipes) > 1 or multi:
        raise CorpusFormatError(
            f"{data}: spacy attn evaluate scores one exclusive text classifier "
            f"(the pipeline has {[p.name for p in pipes]}, multi-label: {multi}); "
            f"use python -m spacy evaluate for this pipeline."
        )
    corpus, note = text_corpus(
        nlp, data, columns, label_map=label_map, limit=limit,
        input_format=input_format, delimiter=delimiter, quoting=quoting,
    )  # fmt: skip
    examples = list(corpus(nlp))
    for eg in examples:
        eg.reference.cats = {label: 0.0 for label in labels} | eg.reference.cats
    golds = [
        next((k for k, v in eg.reference.cats.items() if v == 1.0), None)
        for eg in examples
    ]
    unknown = sorted({str(g) for g in golds if g not in labels})
    if not examples or unknown:
        raise CorpusFormatError(
            f"{data}: {len(examples)} labelled texts; labels the model does not "
            f"know: {unknown} (it knows {labels}; rename them with --label-map)."
        )
    docs = nlp.pipe((eg.predicted for eg in examples), batch_size=batch_size)
    scored = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
    scores: Dict[str, Any] = Scorer(nlp).score(scored)
    top = [max(labels, key=lambda k: eg.predicted.cats[k]) for eg in scored]
    known = [str(g) for g in golds]  # all of labels, checked above
    scores["cats_acc"] = sum(t == g for t, g in zip(top, known)) / len(known)
    scores["baselines"] = {MAJORITY: majority_text_scores(scored, known, labels)}
    if note:
        scores["note"] = note
    return scores


def majority_text_scores(
    scored: List[Any], golds: List[str], labels: List[str]
) -> Dict[str, float]:
    """Accuracy and spaCy's macro-F of always the most frequent of ``golds``
    on the examples ``scored`` (their references), as ``evaluate_texts``
    scores the model."""
    from spacy.scorer import Scorer
    from spacy.training import Example

    from .baselines import majority_baseline

    base = majority_baseline({g: golds.count(g) for g in set(golds)})
    always = [Example(eg.predicted.copy(), eg.reference) for eg in scored]
    for eg in always:
        eg.predicted.cats = {label: float(label == base["label"]) for label in labels}
    majority = Scorer.score_cats(always, "cats", labels=labels, multi_label=False)
    return {"cats_acc": base["acc"], "cats_macro_f": majority["cats_macro_f"]}


__all__ = ["evaluate_texts", "majority_text_scores", "text_classifiers", "text_corpus"]
