"""``spacy attn evaluate``: a pipeline's scores on a pair corpus."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

import typer
from typing_extensions import Annotated

from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import existing_file, user_errors
from .options import (
    GpuIdOpt,
    GroupColOpt,
    IdColOpt,
    LabelColOpt,
    LabelMapOpt,
    ModelArg,
    Opt,
    PairDataArg,
    PairKeyOpt,
    PositiveLabelOpt,
    TextColsOpt,
    pair_columns,
    parse_label_map,
)

if TYPE_CHECKING:
    from ..readers import PairColumns


@attn_cli.command("evaluate", no_args_is_help=True)
def evaluate_cli(
    model: ModelArg,
    data: PairDataArg,
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Write the scores as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
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
) -> None:
    """Evaluate a pipeline on a pair corpus, like `spacy evaluate` but keeping
    each doc's pair (read with spacy-attn.PairCorpus.v1); prints the scores
    as JSON.
    """
    existing_file(data, "DATA")
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
        )
    text = json.dumps(scores, indent=2)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf8")
    typer.echo(text)


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
    columns: Optional["PairColumns"] = None,
) -> Dict[str, Any]:
    """The scores of a pipeline on a pair corpus (``nlp.evaluate`` on the
    examples of spacy-attn.PairCorpus.v1, which keep each doc's pair).

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): A jsonl / csv / tsv pair corpus or a DocBin of pair docs.
    columns (Optional[PairColumns]): The columns of a row file (default:
        detected).
    RETURNS (Dict[str, Any]): The scores, as ``nlp.evaluate`` gives them.
    RAISES (CorpusFormatError): For a gold label the model does not know.
    """
    from ..loading import load_pipeline
    from ..pipeline.pair_classifier import PairClassifier
    from ..readers import PairCorpus

    nlp = load_pipeline(model, gpu_id=gpu_id)
    corpus = PairCorpus(
        data,
        pair_key=pair_key,
        label_map=label_map,
        positive_label=positive_label,
        limit=limit,
        columns=columns,
    )
    known = [
        label
        for _, pipe in nlp.pipeline
        if isinstance(pipe, PairClassifier)
        for label in pipe.labels
    ]
    if known:
        corpus.check_labels(nlp, set(known))
    return nlp.evaluate(list(corpus(nlp)), batch_size=batch_size)


__all__ = ["evaluate_cli", "evaluate_pairs"]
