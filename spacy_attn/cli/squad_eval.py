"""``spacy attn squad-eval``: the official SQuAD 1.1 metric, with the command
line of ``evaluate-v1.1.py``."""

import json
from pathlib import Path
from typing import Any

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import existing_file, fail, user_errors
from .options import Arg


@attn_cli.command("squad-eval", no_args_is_help=True)
def squad_eval_cli(
    dataset_file: Annotated[
        Path,
        Arg(
            metavar="DATASET",
            help="SQuAD 1.1 dataset (JSON, optionally .gz)",
            show_default=False,
        ),
    ],
    prediction_file: Annotated[
        Path,
        Arg(
            metavar="PREDICTIONS",
            help="Predictions: JSON {question id: answer text}",
            show_default=False,
        ),
    ],
) -> None:
    """Exact Match and F1 (0-100) of SQuAD 1.1 predictions with the official
    metric (the command line of evaluate-v1.1.py); prints the JSON scores."""
    from ..squad import load_squad_json, squad_evaluate

    existing_file(dataset_file, "DATASET")
    existing_file(prediction_file, "PREDICTIONS")
    with user_errors():
        dataset = load_squad_json(dataset_file)
        try:
            predictions: Any = json.loads(prediction_file.read_text(encoding="utf8"))
        except ValueError as err:
            fail(f"{prediction_file}: invalid JSON ({err})")
    if not isinstance(predictions, dict):
        fail(f"{prediction_file}: expected a JSON object {{question id: answer text}}.")
    typer.echo(json.dumps(squad_evaluate(dataset["data"], predictions)))


__all__ = ["squad_eval_cli"]
