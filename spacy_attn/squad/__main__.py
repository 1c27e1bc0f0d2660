"""``python -m spacy_attn.squad DATASET.json[.gz] PREDICTIONS.json``: the
command line of the official ``evaluate-v1.1.py`` (prints the JSON scores)."""

import argparse
import json
from typing import List, Optional

from .data import load_squad_json
from .metric import squad_evaluate


def main(argv: Optional[List[str]] = None) -> None:
    """Print the official SQuAD v1.1 Exact Match and F1 (0-100) of a
    predictions file ``{question id: answer text}`` as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m spacy_attn.squad",
        description="Evaluation for SQuAD 1.1 (official metric)",
    )
    parser.add_argument(
        "dataset_file", help="Dataset file (SQuAD JSON, optionally .gz)"
    )
    parser.add_argument("prediction_file", help="Prediction file ({id: answer text})")
    args = parser.parse_args(argv)
    dataset = load_squad_json(args.dataset_file)
    with open(args.prediction_file, encoding="utf8") as f:
        predictions = json.load(f)
    print(json.dumps(squad_evaluate(dataset["data"], predictions)))


if __name__ == "__main__":
    main()
