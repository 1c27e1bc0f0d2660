"""Seeded train / dev / test splits of the text-classification sets, written
as DocBins with every label in ``doc.cats`` (and as jsonl.gz).

    python scripts/textcat_splits.py rt corpus/rt --mirror ../shared/data
    python scripts/textcat_splits.py imdb corpus/imdb --mirror ../shared/data

* ``rt``: Rotten Tomatoes sentence polarity, the mirror's 8,530 sentences,
  shuffled with the seed and split 80 / 10 / 10 (6,824 / 853 / 853).
* ``imdb``: IMDB's official 25,000-review train split (the mirror file, or
  ``assets/aclImdb_v1.tar.gz`` when present), shuffled with the seed; the
  first ``--train`` (4,000) reviews are train, the next ``--dev`` (500) dev,
  the next ``--test`` (2,000) test. ``--train 0`` keeps everything that is not
  dev or test (20,000 / 2,500 / 2,500 with ``--dev 2500 --test 2500``).

The benchmark (``benchmarks/textcat.py``) uses the same function, so the
project and the benchmark see the same splits for the same settings. Mirror
files are verified against the mirror's SHA256SUMS.
"""

import argparse
import gzip
import json
import random
import sys
import tarfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from data_mirror import DataError, Mirror

SOURCES = {"rt": "rotten_tomatoes/train.jsonl.gz", "imdb": "imdb/train.jsonl.gz"}
DEFAULT_SIZES = {"rt": None, "imdb": (4000, 500, 2000)}


def split_rows(
    rows: List[Dict], *, seed: int = 0, sizes: Optional[Sequence[int]] = None
) -> Dict[str, List[Dict]]:
    """Shuffle ``rows`` with ``seed`` and cut train / dev / test.

    sizes: (train, dev, test) counts; None = 80 / 10 / 10; train 0 = the rest.
    """
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    if sizes is None:
        n_train, n_dev = int(0.8 * len(rows)), int(0.1 * len(rows))
        sizes = (n_train, n_dev, len(rows) - n_train - n_dev)
    n_train, n_dev, n_test = sizes
    dev, test = rows[:0], rows[:0]
    if n_train == 0:
        dev, test = rows[:n_dev], rows[n_dev : n_dev + n_test]
        train = rows[n_dev + n_test :]
    else:
        train = rows[:n_train]
        dev = rows[n_train : n_train + n_dev]
        test = rows[n_train + n_dev : n_train + n_dev + n_test]
    if len(test) < n_test or len(dev) < n_dev:
        raise DataError(
            f"Not enough rows ({len(rows)}) for the split sizes {tuple(sizes)}"
        )
    return {"train": train, "dev": dev, "test": test}


def read_source(name: str, mirror: Mirror, assets: Path) -> Tuple[List[Dict], str]:
    """The rows (``text``, ``label``) and a description of where they came from."""
    official = assets / "aclImdb_v1.tar.gz"
    if name == "imdb" and official.exists():
        rows = []
        with tarfile.open(official) as tar:
            for member in tar:
                parts = member.name.split("/")
                if (
                    len(parts) == 4
                    and parts[1] == "train"
                    and parts[2] in ("pos", "neg")
                    and member.isfile()
                ):
                    text = tar.extractfile(member).read().decode("utf8")
                    rows.append({"text": text, "label": parts[2], "file": parts[3]})
        # Tar order is arbitrary: sort by file name so the shuffle is reproducible.
        rows.sort(key=lambda r: (r["label"], r["file"]))
        return [{"text": r["text"], "label": r["label"]} for r in rows], str(official)
    path = mirror.get(SOURCES[name])
    with gzip.open(path, "rt", encoding="utf8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [{"text": r["text"], "label": str(r["label"])} for r in rows], str(path)


def write_split(
    out: Path, split: str, rows: List[Dict], labels: List[str], nlp
) -> None:
    from spacy.tokens import DocBin

    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / f"{split}.jsonl.gz", "wt", encoding="utf8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    docbin = DocBin()
    for doc, row in zip(nlp.tokenizer.pipe(row["text"] for row in rows), rows):
        doc.cats = {label: float(label == row["label"]) for label in labels}
        docbin.add(doc)
    docbin.to_disk(out / f"{split}.spacy")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=sorted(SOURCES))
    p.add_argument("output_dir")
    p.add_argument("--mirror", default=None)
    p.add_argument("--assets", default="assets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train", type=int, default=None)
    p.add_argument("--dev", type=int, default=None)
    p.add_argument("--test", type=int, default=None)
    args = p.parse_args(argv)
    import spacy

    sizes = DEFAULT_SIZES[args.name]
    if any(v is not None for v in (args.train, args.dev, args.test)):
        base = sizes or (0, 0, 0)
        sizes = tuple(
            v if v is not None else d
            for v, d in zip((args.train, args.dev, args.test), base)
        )
    try:
        rows, source = read_source(
            args.name, Mirror.from_setting(args.mirror), Path(args.assets)
        )
        splits = split_rows(rows, seed=args.seed, sizes=sizes)
    except DataError as err:
        sys.exit(f"✘ {err}")
    labels = sorted({row["label"] for row in rows})
    nlp = spacy.blank("en")
    out = Path(args.output_dir)
    for split, split_rows_ in splits.items():
        write_split(out, split, split_rows_, labels, nlp)
    manifest = {
        "source": source,
        "seed": args.seed,
        "sizes": sizes,
        "labels": labels,
        "counts": {k: len(v) for k, v in splits.items()},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    print(f"✔ {args.name}: {manifest['counts']} -> {out}")


if __name__ == "__main__":
    main()
