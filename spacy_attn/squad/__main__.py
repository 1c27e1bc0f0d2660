"""``python -m spacy_attn.squad DATASET.json[.gz] PREDICTIONS.json``: the
command line of the official ``evaluate-v1.1.py``, an alias of ``python -m
spacy attn squad-eval`` (see ``spacy_attn.cli``)."""

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> None:
    """Print the official SQuAD v1.1 Exact Match and F1 (0-100) of a
    predictions file ``{question id: answer text}`` as JSON."""
    from spacy_attn.cli import main as attn_main

    args = sys.argv[1:] if argv is None else argv
    attn_main(["squad-eval", *args], prog_name="python -m spacy_attn.squad")


if __name__ == "__main__":
    main()
