"""SQuAD 2.0-style splits for span QA that may answer "no answer".

    python scripts/squad2_splits.py corpus/squad2 --mirror ../shared/data

SQuAD 2.0 train is not available here (see the data mirror's README), so
the training unanswerables are built the standard way from SQuAD v1.1 train:
a question asked of a different paragraph of its own article
(``spacy_attn.squad.negatives``). They are EASIER than SQuAD 2.0's, whose
unanswerable questions were written adversarially to look answerable.

* ``train.json``: SQuAD v1.1 train (the official file under --assets, else
  the mirror's rebuild) minus the held-out articles, with an unanswerable
  copy of a ``--negative-rate`` share of its questions (default 0.5: a third
  of the questions are unanswerable, as in SQuAD 2.0 train).
* ``heldout.json``: the held-out articles (the same 5% as
  ``scripts/squad_splits.py``'s dev: seed 0, 23 of 442), with an
  unanswerable copy of every question (``--heldout-negative-rate 1``: half
  unanswerable, as in SQuAD 2.0 dev). Used for checkpoint selection and for
  choosing the "no answer" threshold; never for the reported scores.
* ``test.json``: SQuAD 2.0 dev (the mirror's rebuild: 11,873 questions,
  5,945 unanswerable), scored with the official SQuAD 2.0 metric.
* ``manifest.json``: sources and sha256, seed, rates, counts, held-out titles.
"""

import argparse
import gzip
import json
import math
import random
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from data_mirror import DataError, Mirror, sha256

from spacy_attn.squad import load_squad_json
from spacy_attn.squad.negatives import add_unanswerable

TRAIN_MIRROR = "squad/train-v1.1.rebuilt.json.gz"
TRAIN_ASSET = "squad/train-v1.1.json"
DEV2_MIRROR = "squad2/dev-v2.0.rebuilt.json.gz"


def write_json(data: Dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf8") as f:
        json.dump(data, f, ensure_ascii=False)


def held_out_split(
    articles: List[Dict[str, Any]], *, dev_fraction: float, seed: int
) -> tuple:
    """The article split of ``scripts/squad_splits.py`` (protocol squad)."""
    order = list(range(len(articles)))
    random.Random(f"{seed}:squad_train").shuffle(order)
    held = set(order[: math.ceil(dev_fraction * len(order))])
    train = [a for i, a in enumerate(articles) if i not in held]
    heldout = [a for i, a in enumerate(articles) if i in held]
    return train, heldout


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("output", type=Path)
    p.add_argument("--assets", type=Path, default=Path("assets"))
    p.add_argument("--mirror", default=None, help="data mirror folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dev-fraction", type=float, default=0.05)
    p.add_argument("--negative-rate", type=float, default=0.5)
    p.add_argument("--heldout-negative-rate", type=float, default=1.0)
    args = p.parse_args(argv)
    mirror = Mirror.from_setting(args.mirror)
    try:
        official = args.assets / TRAIN_ASSET
        train_path = official if official.exists() else mirror.get(TRAIN_MIRROR)
        dev_path = mirror.get(DEV2_MIRROR)
    except DataError as err:
        sys.exit(f"Error: {err}")
    train, heldout = held_out_split(
        load_squad_json(train_path)["data"],
        dev_fraction=args.dev_fraction,
        seed=args.seed,
    )
    train, train_counts = add_unanswerable(
        train, rate=args.negative_rate, seed=args.seed
    )
    heldout, heldout_counts = add_unanswerable(
        heldout, rate=args.heldout_negative_rate, seed=args.seed
    )
    out = args.output
    write_json({"version": "v2.0", "data": train}, out / "train.json")
    write_json({"version": "v2.0", "data": heldout}, out / "heldout.json")
    with gzip.open(dev_path, "rb") as f:
        (out / "test.json").write_bytes(f.read())
    manifest = {
        "protocol": "squad2-built-negatives",
        "seed": args.seed,
        "dev_fraction": args.dev_fraction,
        "negative_rate": args.negative_rate,
        "heldout_negative_rate": args.heldout_negative_rate,
        "train_source": "official" if train_path == official else "rebuilt",
        "sources": {
            "squad_train": {"path": str(train_path), "sha256": sha256(train_path)},
            "squad2_dev": {"path": str(dev_path), "sha256": sha256(dev_path)},
        },
        "train": train_counts,
        "heldout": heldout_counts,
        "heldout_titles": sorted(a["title"] for a in heldout),
        "note": "Unanswerable train/held-out questions are v1.1 questions asked "
        "of another paragraph of their article: easier than SQuAD 2.0's "
        "adversarial ones. test.json is SQuAD 2.0 dev (rebuilt).",
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({k: manifest[k] for k in ("train", "heldout")}, indent=2))


if __name__ == "__main__":
    main()
