"""Split SQuAD 2.0 dev by article, to train on adversarial unanswerables.

    python scripts/squad2_dev_split.py corpus/squad2 corpus/squad2_adv

The built unanswerables of ``scripts/squad2_splits.py`` (a question asked of
another paragraph) are easier than SQuAD 2.0's, which were written to look
answerable; SQuAD 2.0 train is not in the data mirror. This script asks
whether seeing SQuAD 2.0's own kind of unanswerable question helps, by
splitting SQuAD 2.0 dev (``SPLITS/test.json``) by article:

* articles at odd positions (B): ``test.json``, the test set of the
  experiment (17 articles);
* articles at even positions (A): every fourth of them (A2) is
  ``heldout.json``, for checkpoint selection and the "no answer" threshold;
  the others (A1) go into ``train_mix.json`` three times (question ids and
  titles suffixed ``__0``, ``__1``, ``__2``) beside a seeded sample of
  ``--built`` questions of the built training file (``SPLITS/train.json``).

The output is a splits folder for ``benchmarks/squad2_eval.py`` (its
manifest describes the protocol for the results table). Scores on B are not
comparable with the official dev figures (half of the articles); compare
models on B with each other and with always-no-answer.
"""

import argparse
import json
import random
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from squad2_splits import question_counts

from spacy_attn.qa_eval.no_answer_eval import subset_by_ids

Article = Dict[str, Any]


def questions(articles: List[Article]) -> List[Dict[str, Any]]:
    return [q for a in articles for p in a["paragraphs"] for q in p["qas"]]


def copy_of(article: Article, k: int) -> Article:
    """The article with its title and question ids suffixed ``__k``."""
    return {
        **article,
        "title": f"{article['title']}__{k}",
        "paragraphs": [
            {**p, "qas": [{**q, "id": f"{q['id']}__{k}"} for q in p["qas"]]}
            for p in article["paragraphs"]
        ],
    }


def split(
    dev: List[Article], train: List[Article], *, built: int, copies: int, seed: int
) -> Tuple[List[Article], List[Article], List[Article], List[Article]]:
    """(A1, A2, B, mix) as described in the module docstring."""
    part_a = [a for i, a in enumerate(dev) if i % 2 == 0]
    part_b = [a for i, a in enumerate(dev) if i % 2 == 1]
    a2 = part_a[::4]
    a1 = [a for i, a in enumerate(part_a) if i % 4 != 0]
    ids = [q["id"] for q in questions(train)]
    sample = set(random.Random(seed).sample(ids, built)) if built else set()
    mix = subset_by_ids(train, list(sample))["data"]
    for k in range(copies):
        mix += [copy_of(a, k) for a in a1]
    return a1, a2, part_b, mix


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("splits", type=Path, help="scripts/squad2_splits.py's output")
    p.add_argument("output", type=Path)
    p.add_argument("--built", type=int, default=16000)
    p.add_argument("--copies", type=int, default=3)
    p.add_argument("--seed", type=int, default=5)
    args = p.parse_args(argv)
    dev = json.loads((args.splits / "test.json").read_text(encoding="utf8"))["data"]
    train = json.loads((args.splits / "train.json").read_text(encoding="utf8"))
    a1, a2, part_b, mix = split(
        dev, train["data"], built=args.built, copies=args.copies, seed=args.seed
    )
    args.output.mkdir(parents=True, exist_ok=True)
    files = {"heldout.json": a2, "test.json": part_b, "train_mix.json": mix}
    for name, articles in files.items():
        with open(args.output / name, "w", encoding="utf8") as f:
            json.dump({"version": "v2.0", "data": articles}, f)
    source = json.loads((args.splits / "manifest.json").read_text(encoding="utf8"))
    manifest = {
        "protocol": "squad2-dev-split",
        "train_source": source.get("train_source"),
        # What benchmarks/squad2_eval.py's table says of the data.
        "title": "Span QA with 'no answer', trained on SQuAD 2.0's own "
        "unanswerables: half of SQuAD 2.0 dev (split by article)",
        "data": f"{len(a1)} SQuAD 2.0 dev articles ({args.copies} copies) "
        f"and {args.built:,} questions of the built training file (SQuAD v1.1 "
        "train with built unanswerables) for training "
        "(scripts/squad2_dev_split.py); tested on the other "
        f"{len(part_b)} articles of SQuAD 2.0 dev (odd positions): scores "
        "not comparable with the full dev set's",
        "heldout": f"{len(a2)} other SQuAD 2.0 dev articles, never trained on",
        "seed": args.seed,
        "built": args.built,
        "copies": args.copies,
        "A1": [a["title"] for a in a1],
        "A2": [a["title"] for a in a2],
        "B": [a["title"] for a in part_b],
        "counts": {
            "A1": question_counts(a1),
            "heldout": question_counts(a2),
            "test": question_counts(part_b),
            "train_mix": question_counts(mix),
        },
    }
    (args.output / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest["counts"]))


if __name__ == "__main__":
    main()
