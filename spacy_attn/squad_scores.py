"""``squad_scores``, the call of ``spacy attn squad-eval``: the official SQuAD
1.1 metric of a predictions file, as ``evaluate-v1.1.py`` computes it."""

import json
from pathlib import Path
from typing import Any, Dict, Union

from .squad import load_squad_json, squad_evaluate
from .usage import UsageError, require_file


def squad_scores(
    dataset_file: Union[str, Path], prediction_file: Union[str, Path]
) -> Dict[str, float]:
    """Exact Match and F1 (0-100) of the predictions of a SQuAD 1.1 dataset.

    dataset_file (Union[str, Path]): The dataset (JSON, optionally .gz).
    prediction_file (Union[str, Path]): JSON {question id: answer text}.
    RETURNS (Dict[str, float]): {"exact_match": ..., "f1": ...}.
    RAISES (UsageError): For a missing file, or predictions that are not a
        JSON object.
    RAISES (CorpusFormatError): For a dataset that is not SQuAD JSON.
    """
    prediction_file = Path(prediction_file)
    require_file(dataset_file, "DATASET")
    require_file(prediction_file, "PREDICTIONS")
    dataset = load_squad_json(dataset_file)
    try:
        predictions: Any = json.loads(prediction_file.read_text(encoding="utf8"))
    except ValueError as err:
        raise UsageError(f"{prediction_file}: invalid JSON ({err})") from None
    if not isinstance(predictions, dict):
        raise UsageError(
            f"{prediction_file}: expected a JSON object {{question id: answer text}}."
        )
    return squad_evaluate(dataset["data"], predictions)


__all__ = ["squad_scores"]
