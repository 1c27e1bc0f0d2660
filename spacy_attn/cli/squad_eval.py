"""``spacy attn squad-eval``: the official SQuAD 1.1 metric, with the command
line of ``evaluate-v1.1.py`` (``spacy_attn.squad_scores.squad_scores``)."""

import json
from pathlib import Path

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import user_errors
from .options import argument


@attn_cli.command("squad-eval", no_args_is_help=True)
def squad_eval_cli(
    dataset_file: Annotated[
        Path,
        argument("DATASET", "SQuAD 1.1 dataset (JSON, optionally .gz)"),
    ],
    prediction_file: Annotated[
        Path,
        argument("PREDICTIONS", "Predictions: JSON {question id: answer text}"),
    ],
) -> None:
    """Exact Match and F1 (0-100) of SQuAD 1.1 predictions with the official
    metric (the command line of evaluate-v1.1.py); prints the JSON scores."""
    from ..squad_scores import squad_scores

    with user_errors():
        scores = squad_scores(dataset_file, prediction_file)
    typer.echo(json.dumps(scores))


__all__ = ["squad_eval_cli"]
