"""A pair corpus (jsonl / csv / tsv) as a DocBin of pair docs for ``spacy
train``: ``convert``, the call of ``spacy attn convert``."""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional

from spacy.language import Language

from .file_safety import check_outputs
from .pairs import DEFAULT_PAIR_KEY
from .usage import UsageError, require_file

if TYPE_CHECKING:
    from .readers import Columns, ReadStats

FORMATS = ("auto", "jsonl", "csv", "tsv")


@dataclass(frozen=True)
class ConvertSettings:
    """How ``convert`` tokenizes and reads the corpus: the tokenizer
    (``lang``, ``model``), then ``convert_pairs``'s options of the same names.

    lang (str): The language of the blank pipeline that tokenizes.
    model (Optional[str]): A pipeline whose tokenizer to use instead.
    input_format, delimiter, quoting: How the file is read
        (``spacy_attn.readers.table_format``).
    columns (Optional[Columns]): The columns (None: detected).
    pair_key (str): The name of the pair in the docs.
    label_map (Optional[Dict[str, str]]): Raw label -> label.
    positive_label (Optional[str]): A binary task's positive label.
    limit (int): Convert the first N pairs (0: all).
    """

    lang: str = "en"
    model: Optional[str] = None
    input_format: str = "auto"
    delimiter: Optional[str] = None
    quoting: str = "auto"
    columns: Optional["Columns"] = None
    pair_key: str = DEFAULT_PAIR_KEY
    label_map: Optional[Dict[str, str]] = None
    positive_label: Optional[str] = None
    limit: int = 0


def convert(
    input_path: Path, output_path: Path, settings: ConvertSettings
) -> "ReadStats":
    """Check the paths and settings, make the tokenizer and write the
    labelled rows of ``input_path`` as pair docs to ``output_path``
    (``convert_pairs``).

    input_path (Path): The pair corpus: jsonl, csv or tsv, optionally gzipped.
    output_path (Path): The DocBin (.spacy) to write.
    settings (ConvertSettings): How to tokenize and read.
    RETURNS (ReadStats): The rows written, the unlabelled rows skipped and
        the labels.
    RAISES (UsageError): For a missing INPUT, an unknown format or language.
    RAISES (OutputPathError): If OUTPUT is INPUT or in the --model directory.
    """
    import spacy

    from .loading import load_pipeline

    require_file(input_path, "INPUT")
    check_outputs(
        {"OUTPUT": output_path}, {"INPUT": input_path, "--model": settings.model}
    )
    if settings.input_format not in FORMATS:
        raise UsageError(
            f"--format: {settings.input_format!r} is not one of {', '.join(FORMATS)}."
        )
    if settings.model is None:
        try:
            nlp = spacy.blank(settings.lang)
        except ImportError as err:
            raise UsageError(
                f"--lang: {settings.lang!r} is not a language spaCy knows."
            ) from err
    else:
        nlp = load_pipeline(settings.model)
    tokenizer = ("lang", "model")
    options = {k: v for k, v in vars(settings).items() if k not in tokenizer}
    return convert_pairs(nlp, input_path, output_path, **options)


def convert_pairs(
    nlp: Language,
    input_path: Path,
    output_path: Path,
    *,
    input_format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    columns: Optional["Columns"] = None,
) -> "ReadStats":
    """Write the labelled rows of a pair corpus as pair docs (tokenized by
    ``nlp``) to a DocBin, each with its group and row id in ``user_data``.

    columns (Optional[Columns]): The columns (default: detected).

    RETURNS (ReadStats): The rows written, the unlabelled rows skipped and
        the labels.
    """
    from .readers import pair_doc, read_pair_rows, write_docbin

    rows, stats = read_pair_rows(
        input_path,
        format=input_format,
        delimiter=delimiter,
        quoting=quoting,
        label_map=label_map,
        limit=limit,
        columns=columns,
        positive_label=positive_label,
    )
    write_docbin(
        (
            pair_doc(nlp, row, pair_key=pair_key, positive_label=positive_label)
            for row in rows
        ),
        output_path,
    )
    return stats


__all__ = ["FORMATS", "ConvertSettings", "convert", "convert_pairs"]
