"""Prepare pair corpora (DocBin) from official downloads or the local mirror.

    python scripts/prepare.py sick corpus/sick --assets assets --mirror ../shared/data

Sources, per task, in order of preference:
  1. the official files under --assets (fetched by `spacy project assets`),
  2. the mirror folder (--mirror, or $SPACY_ATTN_MIRROR), whose files are
     verified against the mirror's SHA256SUMS before use.
A missing file or a checksum mismatch stops with a message naming the file
and what to do.
"""

import argparse
import json
import random
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

import spacy
from data_mirror import DataError, Mirror, sha256

from spacy_attn import make_pair
from spacy_attn.readers import PairRow, cats_for, read_pair_rows, write_docbin

# sha256 of official files, from public loaders (see project.yml asset
# descriptions for the sources). Files not listed have no published checksum.
OFFICIAL_SHA256 = {
    "snli_1.0.zip": "afb3d70a5af5d8de0d9d81e2637e0fb8c22d1235c2749d83125ca43dab0dbd3e",
    "multinli_1.0.zip": "049f507b9e36b1fcb756cfd5aeb3b7a0cfcb84bf023793652987f7e7e0957822",
    "msr_paraphrase_train.txt": "60a9b09084528f0673eedee2b69cb941920f0b8cd0eeccefc464a98768457f89",
    "msr_paraphrase_test.txt": "a04e271090879aaba6423d65b94950c089298587d9c084bf9cd7439bd785f784",
}

Split = List[PairRow]


class PrepareError(DataError):
    """A task this script cannot prepare (unknown, or its data is not here)."""


def verify_official(path: Path) -> None:
    expected = OFFICIAL_SHA256.get(path.name)
    if expected and sha256(path) != expected:
        raise PrepareError(
            f"Checksum mismatch for {path}: sha256 is not the published {expected}. "
            f"The download is corrupt or a different version: delete it and run "
            f"`python -m spacy project assets` again."
        )


def _rows_from_member(zip_path: Path, member: str, tmp: Path, **kw) -> Split:
    verify_official(zip_path)
    with zipfile.ZipFile(zip_path) as zf:
        out = tmp / Path(member).name
        out.write_bytes(zf.read(member))
    return read_pair_rows(out, **kw)[0]


def seeded_split(
    rows: Split, fractions: Tuple[float, ...], seed: int = 0
) -> List[Split]:
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    start, out = 0, []
    for frac in fractions[:-1]:
        end = start + int(round(frac * len(rows)))
        out.append(rows[start:end])
        start = end
    out.append(rows[start:])
    return out


def load_task(
    task: str, assets: Path, mirror: Mirror, tmp: Path
) -> Tuple[Split, Split, Split]:
    """(train, dev, test) rows for a task."""
    if task == "sick":
        if (assets / "SICK.zip").exists():
            with zipfile.ZipFile(assets / "SICK.zip") as zf:
                text = zf.read("SICK.txt").decode("utf8")
            splits: Dict[str, Split] = {"TRAIN": [], "TRIAL": [], "TEST": []}
            lines = text.splitlines()
            header = lines[0].split("\t")
            for line in lines[1:]:
                rec = dict(zip(header, line.split("\t")))
                splits[rec["SemEval_set"]].append(
                    PairRow(
                        rec["sentence_A"],
                        rec["sentence_B"],
                        rec["entailment_label"].lower(),
                    )
                )
            return splits["TRAIN"], splits["TRIAL"], splits["TEST"]
        return tuple(
            read_pair_rows(mirror.get(f"sick/{s}.jsonl.gz"))[0]
            for s in ("train", "trial", "test")
        )
    if task == "snli":
        if (assets / "snli_1.0.zip").exists():
            return tuple(
                _rows_from_member(
                    assets / "snli_1.0.zip", f"snli_1.0/snli_1.0_{s}.jsonl", tmp
                )
                for s in ("train", "dev", "test")
            )
        dev = read_pair_rows(mirror.get("snli/dev.jsonl.gz"))[0]
        raise PrepareError(
            f"The SNLI training set is not in the mirror (only dev, {len(dev)} pairs). "
            f"Download the official snli_1.0.zip with `python -m spacy project assets`."
        )
    if task == "mnli":
        if (assets / "multinli_1.0.zip").exists():
            z = assets / "multinli_1.0.zip"
            train = _rows_from_member(z, "multinli_1.0/multinli_1.0_train.jsonl", tmp)
            dev = _rows_from_member(
                z, "multinli_1.0/multinli_1.0_dev_matched.jsonl", tmp
            )
            test = _rows_from_member(
                z, "multinli_1.0/multinli_1.0_dev_mismatched.jsonl", tmp
            )
            return train, dev, test
        raise PrepareError(
            "The MultiNLI training set is not in the mirror. Download the official "
            "multinli_1.0.zip with `python -m spacy project assets`."
        )
    if task == "qqp":
        path = assets / "quora_duplicate_questions.tsv"
        if not path.exists():
            raise PrepareError(
                f"{path} not found (Quora Question Pairs is not in the mirror). Run "
                f"`python -m spacy project assets` to download it."
            )
        rows = read_pair_rows(path, label_map={"0": "not_duplicate", "1": "duplicate"})[
            0
        ]
        return tuple(seeded_split(rows, (0.9, 0.05, 0.05)))
    if task == "mrpc":
        labels = {"0": "not_paraphrase", "1": "paraphrase"}
        if (assets / "msr_paraphrase_train.txt").exists():
            for name in ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt"):
                verify_official(assets / name)
            train = read_pair_rows(
                assets / "msr_paraphrase_train.txt", label_map=labels
            )[0]
            test = read_pair_rows(assets / "msr_paraphrase_test.txt", label_map=labels)[
                0
            ]
            train, dev = seeded_split(train, (0.9, 0.1))
            return train, dev, test
        train = read_pair_rows(mirror.get("mrpc/train.jsonl.gz"), label_map=labels)[0]
        test = read_pair_rows(mirror.get("mrpc/test.jsonl.gz"), label_map=labels)[0]
        train, dev = seeded_split(train, (0.9, 0.1))
        return train, dev, test
    raise PrepareError(f"Unknown task {task!r}: use sick, snli, mnli, qqp or mrpc.")


def write_split(nlp, rows: Split, path: Path) -> int:
    def docs():
        for row in rows:
            doc = make_pair(nlp, row.first, row.second)
            doc.cats = cats_for(row.label, None)
            yield doc

    return write_docbin(docs(), path)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("task")
    p.add_argument("output_dir")
    p.add_argument("--assets", default="assets")
    p.add_argument(
        "--mirror",
        default=None,
        help="mirror folder ('' = none); $SPACY_ATTN_MIRROR wins",
    )
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--dev-limit", type=int, default=0)
    p.add_argument("--lang", default="en")
    args = p.parse_args(argv)
    mirror = Mirror.from_setting(args.mirror)
    out = Path(args.output_dir)
    tmp = out / ".tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        train, dev, test = load_task(args.task, Path(args.assets), mirror, tmp)
    except (DataError, FileNotFoundError) as err:
        print(f"✘ prepare {args.task}: {err}", file=sys.stderr)
        sys.exit(1)
    finally:
        for f in tmp.glob("*"):
            f.unlink()
        tmp.rmdir()
    if args.train_limit:
        train = seeded_split(train, (1.0,))[0][: args.train_limit]
    if args.dev_limit:
        dev = dev[: args.dev_limit]
    nlp = spacy.blank(args.lang)
    counts = {
        name: write_split(nlp, rows, out / f"{name}.spacy")
        for name, rows in (("train", train), ("dev", dev), ("test", test))
    }
    labels = sorted({r.label for r in train})
    # Per-split label counts: the majority-class baseline the trained model is
    # checked against (scripts/check_metrics.py).
    label_counts = {
        name: dict(sorted(Counter(r.label for r in rows).items()))
        for name, rows in (("train", train), ("dev", dev), ("test", test))
    }
    (out / "stats.json").write_text(
        json.dumps(
            {
                "task": args.task,
                "counts": counts,
                "labels": labels,
                "label_counts": label_counts,
            },
            indent=2,
        )
    )
    print(f"✔ {args.task}: {counts} -> {out} (labels {labels})")


if __name__ == "__main__":
    main()
