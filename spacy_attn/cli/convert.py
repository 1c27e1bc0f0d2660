"""``spacy attn convert``: a pair corpus (jsonl / csv / tsv) as a DocBin of
pair docs for ``spacy train``."""

from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from ..pairs import DEFAULT_PAIR_KEY
from . import options as opt
from .app import attn_cli
from .errors import user_errors


@attn_cli.command("convert", no_args_is_help=True)
def convert_cli(
    input_path: Annotated[
        Path,
        opt.argument("INPUT", "Pair corpus: jsonl, csv or tsv, optionally gzipped"),
    ],
    output_path: Annotated[
        Path,
        opt.argument("OUTPUT", "DocBin (.spacy) of pair docs to write"),
    ],
    lang: Annotated[
        str, opt.Opt("--lang", help="Language of the blank pipeline that tokenizes")
    ] = "en",
    model: Annotated[
        Optional[str],
        opt.Opt(
            "--model",
            help="Pipeline whose tokenizer to use instead of --lang (default: none)",
            show_default=False,
        ),
    ] = None,
    input_format: opt.FormatOpt = "auto",
    delimiter: opt.DelimiterOpt = None,
    quoting: opt.QuotingOpt = "auto",
    text_cols: opt.TextColsOpt = None,
    label_col: opt.LabelColOpt = None,
    group_col: opt.GroupColOpt = None,
    id_col: opt.IdColOpt = None,
    pair_key: opt.PairKeyOpt = DEFAULT_PAIR_KEY,
    label_map: opt.LabelMapOpt = None,
    positive_label: opt.PositiveLabelOpt = None,
    limit: Annotated[
        int, opt.Opt("--limit", help="Convert the first N pairs (0: all)")
    ] = 0,
) -> None:
    """Convert a pair corpus (jsonl / csv / tsv) to a DocBin of pair docs for
    `spacy train`; the group and row ids travel in each doc's user_data."""
    from ..conversion import ConvertSettings, convert

    settings = ConvertSettings(
        lang=lang, model=model, input_format=input_format, delimiter=delimiter,
        quoting=quoting, pair_key=pair_key, positive_label=positive_label,
        columns=opt.pair_columns(text_cols, label_col, group_col, id_col),
        label_map=opt.parse_label_map(label_map), limit=limit,
    )  # fmt: skip
    with user_errors():
        stats = convert(input_path, output_path, settings)
    typer.echo(f"Read {input_path}: {stats.describe()}")
    typer.echo(
        f"Wrote {stats.rows} pairs to {output_path} (skipped {stats.skipped_unlabelled} "
        f"unlabelled); labels: {stats.labels}"
    )


__all__ = ["convert_cli"]
