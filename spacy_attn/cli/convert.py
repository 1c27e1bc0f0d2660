"""``spacy attn convert``: a pair corpus (jsonl / csv / tsv) as a DocBin of
pair docs for ``spacy train``."""

from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional

import typer
from spacy.language import Language
from typing_extensions import Annotated

from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import existing_file, fail, refuse_overwrite, user_errors
from .options import (
    Arg,
    DelimiterOpt,
    FormatOpt,
    GroupColOpt,
    IdColOpt,
    LabelColOpt,
    LabelMapOpt,
    Opt,
    PairKeyOpt,
    PositiveLabelOpt,
    QuotingOpt,
    TextColsOpt,
    pair_columns,
    parse_label_map,
)

if TYPE_CHECKING:
    from ..readers import Columns, ReadStats

FORMATS = ("auto", "jsonl", "csv", "tsv")


@attn_cli.command("convert", no_args_is_help=True)
def convert_cli(
    input_path: Annotated[
        Path,
        Arg(
            metavar="INPUT",
            help="Pair corpus: jsonl, csv or tsv, optionally gzipped",
            show_default=False,
        ),
    ],
    output_path: Annotated[
        Path,
        Arg(
            metavar="OUTPUT",
            help="DocBin (.spacy) of pair docs to write",
            show_default=False,
        ),
    ],
    lang: Annotated[
        str, Opt("--lang", help="Language of the blank pipeline that tokenizes")
    ] = "en",
    model: Annotated[
        Optional[str],
        Opt(
            "--model",
            help="Pipeline whose tokenizer to use instead of --lang (default: none)",
            show_default=False,
        ),
    ] = None,
    input_format: FormatOpt = "auto",
    delimiter: DelimiterOpt = None,
    quoting: QuotingOpt = "auto",
    text_cols: TextColsOpt = None,
    label_col: LabelColOpt = None,
    group_col: GroupColOpt = None,
    id_col: IdColOpt = None,
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: LabelMapOpt = None,
    positive_label: PositiveLabelOpt = None,
    limit: Annotated[
        int, Opt("--limit", help="Convert the first N pairs (0: all)")
    ] = 0,
) -> None:
    """Convert a pair corpus (jsonl / csv / tsv) to a DocBin of pair docs for
    `spacy train`; the group and row ids travel in each doc's user_data."""
    import spacy

    from ..loading import load_pipeline

    existing_file(input_path, "INPUT")
    refuse_overwrite({"OUTPUT": output_path}, {"INPUT": input_path, "--model": model})
    if input_format not in FORMATS:
        fail(f"--format: {input_format!r} is not one of {', '.join(FORMATS)}.")
    mapping = parse_label_map(label_map)
    columns = pair_columns(text_cols, label_col, group_col, id_col)
    with user_errors():
        if model is None:
            try:
                nlp = spacy.blank(lang)
            except ImportError:
                fail(f"--lang: {lang!r} is not a language spaCy knows.")
        else:
            nlp = load_pipeline(model)
        stats = convert_pairs(
            nlp,
            input_path,
            output_path,
            input_format=input_format,
            delimiter=delimiter,
            quoting=quoting,
            pair_key=pair_key,
            label_map=mapping,
            positive_label=positive_label,
            limit=limit,
            columns=columns,
        )
    typer.echo(f"Read {input_path}: {stats.describe()}")
    typer.echo(
        f"Wrote {stats.rows} pairs to {output_path} (skipped {stats.skipped_unlabelled} "
        f"unlabelled); labels: {stats.labels}"
    )


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
    from ..readers import pair_doc, read_pair_rows, write_docbin

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


__all__ = ["convert_cli", "convert_pairs"]
