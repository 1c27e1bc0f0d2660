"""The training set of the pretrained NLI start: every NLI pair of the data
mirror that no evaluation uses, as one jsonl with the three SNLI labels.

    python scripts/nli_start.py corpus/nli [--mirror ../shared/data]

train.jsonl: VitaminC (the BIG-bench test subset, 54,668 pairs), MultiNLI
dev-matched (9,815), SNLI dev (9,842) and SICK train (4,439), shuffled with
seed 0; dev.jsonl: SICK trial (495). Kept out for evaluation: SNLI test,
SICK test, RTE and MRPC. Each row: ``premise``, ``hypothesis``, ``label``
(entailment / neutral / contradiction) and ``source``. Every file is
checked against the mirror's SHA256SUMS; summary.json names each split's
mirror files (``sources``) and counts the rows per source and label (the
package meta of scripts/make_meta.py reads it). Same mirror -> same bytes.
"""

import argparse
import collections
import gzip
import json
import random
from pathlib import Path

from data_mirror import Mirror

TRAIN = (
    "vitaminc/vitaminc.jsonl.gz",
    "mnli/dev_matched.jsonl.gz",
    "snli/dev.jsonl.gz",
    "sick/train.jsonl.gz",
)
DEV = ("sick/trial.jsonl.gz",)
LABELS = ("entailment", "neutral", "contradiction")


def read(mirror: Mirror, rel: str) -> list:
    rows = []
    with gzip.open(mirror.get(rel), "rt", encoding="utf8") as f:
        for line in f:
            r = json.loads(line)
            if r["label"] not in LABELS:
                raise SystemExit(f"{rel}: unexpected label {r['label']!r}")
            rows.append(
                {
                    "premise": r["premise"],
                    "hypothesis": r["hypothesis"],
                    "label": r["label"],
                    "source": rel.split("/")[0],
                }
            )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output_dir", type=Path)
    p.add_argument("--mirror", default=None)
    args = p.parse_args()
    mirror = Mirror.from_setting(args.mirror)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name, sources in (("train", TRAIN), ("dev", DEV)):
        rows = [row for rel in sources for row in read(mirror, rel)]
        if name == "train":
            random.Random("0:nli_start").shuffle(rows)
        path = args.output_dir / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
        counts = collections.Counter((r["source"], r["label"]) for r in rows)
        summary[name] = {
            "sources": list(sources),
            "rows": len(rows),
            "by_source_and_label": {
                f"{s}/{lab}": n for (s, lab), n in sorted(counts.items())
            },
        }
        print(f"{path}: {len(rows):,} pairs")
    (args.output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
