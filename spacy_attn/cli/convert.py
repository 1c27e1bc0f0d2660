"""``spacy attn convert``: a pair corpus (jsonl / tsv) as a DocBin of pair
docs for ``spacy train``."""

from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional

import typer
from spacy.language import Language
from typing_extensions import Annotated

from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import existing_file, fail, user_errors
from .options import (
    Arg,
    LabelMapOpt,
    Opt,
    PairKeyOpt,
    PositiveLabelOpt,
    parse_label_map,
)

if TYPE_CHECKING:
    from ..readers import ReadStats

FORMATS = ("auto", "jsonl", "tsv")


@attn_cli.command("convert", no_args_is_help=True)
def convert_cli(
    input_path: Annotated[
        Path,
        Arg(
            metavar="INPUT",
            help="Pair corpus: jsonl or tsv, optionally gzipped",
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
    input_format: Annotated[
        str, Opt("--format", help="Input format: auto, jsonl or tsv")
    ] = "auto",
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: LabelMapOpt = None,
    positive_label: PositiveLabelOpt = None,
    limit: Annotated[
        int, Opt("--limit", help="Convert the first N pairs (0: all)")
    ] = 0,
) -> None:
    """Convert a pair corpus (jsonl / tsv) to a DocBin of pair docs for
    `spacy train`."""
    import spacy

    from ..loading import load_pipeline

    existing_file(input_path, "INPUT")
    if input_format not in FORMATS:
        fail(f"--format: {input_format!r} is not one of {', '.join(FORMATS)}.")
    mapping = parse_label_map(label_map)
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
            pair_key=pair_key,
            label_map=mapping,
            positive_label=positive_label,
            limit=limit,
        )
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
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
) -> "ReadStats":
    """Write the labelled rows of a pair corpus as pair docs (tokenized by
    ``nlp``) to a DocBin.

    RETURNS (ReadStats): The rows written, the unlabelled rows skipped and
        the labels.
    """
    from spacy.tokens import DocBin

    from ..pairs import make_pair
    from ..readers import cats_for, read_pair_rows

    rows, stats = read_pair_rows(
        input_path, format=input_format, label_map=label_map, limit=limit
    )
    docbin = DocBin(store_user_data=True)
    for row in rows:
        doc = make_pair(nlp, row.first, row.second, pair_key=pair_key)
        assert row.label is not None  # read_pair_rows skips unlabelled rows
        doc.cats = cats_for(row.label, positive_label)
        docbin.add(doc)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output_path)
    return stats


__all__ = ["convert_cli", "convert_pairs"]
