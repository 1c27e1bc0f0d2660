"""The questions of a loaded SQuAD JSON as plain strings: what every
evaluation of this package answers and scores, and what the trivial
baselines read."""

from typing import Any, Dict, Iterator, List, Tuple, Union


def iter_questions(
    data: Union[Dict[str, Any], List[Dict[str, Any]]],
) -> Iterator[Tuple[str, str, str]]:
    """``(id, question, context)`` of every question of a SQuAD JSON
    (the loaded file or its ``"data"`` list), in file order."""
    articles = data["data"] if isinstance(data, dict) else data
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield qa["id"], qa["question"], paragraph["context"]


__all__ = ["iter_questions"]
