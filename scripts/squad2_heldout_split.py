"""Split the built held-out articles in two: a "no answer" test on the data the
model was trained for.

    python scripts/squad2_heldout_split.py corpus/squad2 corpus/squad2_built

``scripts/squad2_splits.py`` holds out whole SQuAD v1.1 train articles
(``SPLITS/heldout.json``), half of their questions made unanswerable the
standard way (asked of another paragraph of the same article). This script
splits those articles by position: even ones become ``OUTPUT/heldout.json``
(where ``benchmarks/squad2_eval.py`` chooses the "no answer" threshold),
odd ones ``OUTPUT/test.json`` (where it reports), so the threshold is never
chosen on the reported questions. These unanswerable questions are built,
hence easier than SQuAD 2.0 dev's adversarial ones: the scores say what the
model does on the kind of data it was trained on, not on SQuAD 2.0.

``--dev`` splits SQuAD 2.0 dev (``SPLITS/test.json``) the same way instead
(odd articles: the same test half as ``scripts/squad2_dev_split.py``), for a
model never trained on any of it: the threshold is then chosen on SQuAD 2.0's
own adversarial unanswerables (the even articles) and reported on the others.
"""

import argparse
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from squad2_splits import question_counts

Article = Dict[str, Any]


def split(articles: List[Article]) -> Tuple[List[Article], List[Article]]:
    """(articles at even positions, articles at odd positions)."""
    return articles[0::2], articles[1::2]


def built_manifest(heldout: List[Article], test: List[Article]) -> Dict[str, str]:
    """What benchmarks/squad2_eval.py's table says of the built split."""
    return {
        "title": "Span QA with 'no answer' on held-out articles with BUILT "
        "unanswerable questions",
        "data": f"tested on {len(test)} held-out SQuAD v1.1 train articles "
        "(odd positions of heldout.json, never trained on), each question "
        "answerable or BUILT unanswerable (asked of another paragraph of its "
        "article, the kind of negative the model was trained on): easier than "
        "SQuAD 2.0 dev's adversarial ones (scripts/squad2_heldout_split.py)",
        "heldout": f"{len(heldout)} other held-out articles (even positions)",
    }


def dev_manifest(heldout: List[Article], test: List[Article]) -> Dict[str, str]:
    """What benchmarks/squad2_eval.py's table says of the SQuAD 2.0 dev halves."""
    return {
        "title": "Span QA with 'no answer' on half of SQuAD 2.0 dev, its "
        "threshold chosen on the other half",
        "data": f"tested on {len(test)} SQuAD 2.0 dev articles (odd "
        "positions, adversarial unanswerables; scripts/squad2_heldout_split.py "
        "--dev), none of SQuAD 2.0 dev trained on: scores not comparable with "
        "the full dev set's",
        "heldout": f"the {len(heldout)} other SQuAD 2.0 dev articles (even "
        "positions), never trained on",
    }


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("splits", type=Path, help="scripts/squad2_splits.py's output")
    p.add_argument("output", type=Path)
    p.add_argument(
        "--dev",
        action="store_true",
        help="split SQuAD 2.0 dev (SPLITS/test.json) instead of heldout.json",
    )
    args = p.parse_args(argv)
    source_file = "test.json" if args.dev else "heldout.json"
    text = (args.splits / source_file).read_text(encoding="utf8")
    heldout, test = split(json.loads(text)["data"])
    if not heldout or not test:
        raise SystemExit(f"Error: {source_file} needs at least two articles to split")
    args.output.mkdir(parents=True, exist_ok=True)
    for name, articles in {"heldout.json": heldout, "test.json": test}.items():
        with open(args.output / name, "w", encoding="utf8") as f:
            json.dump({"version": "v2.0", "data": articles}, f)
    source = json.loads((args.splits / "manifest.json").read_text(encoding="utf8"))
    described = (dev_manifest if args.dev else built_manifest)(heldout, test)
    manifest = {
        "protocol": "squad2-dev-halves" if args.dev else "squad2-built-heldout-split",
        "train_source": source.get("train_source"),
        **described,
        "heldout_titles": [a["title"] for a in heldout],
        "test_titles": [a["title"] for a in test],
        "counts": {"heldout": question_counts(heldout), "test": question_counts(test)},
    }
    (args.output / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest["counts"]))


if __name__ == "__main__":
    main()
