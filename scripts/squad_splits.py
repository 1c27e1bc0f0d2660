"""SQuAD splits for this workplace: train on SQuADShifts, select on a
held-out slice of it, test on the official SQuAD 1.1 dev set.

    python scripts/squad_splits.py corpus/squad --assets assets --mirror ../shared/data [--docbin]

Why: the SQuAD 1.1 training set (87,599 questions) is not available here
(see the data mirror's README), so models are trained on the three
SQuADShifts sets that are (Miller et al. 2020; SQuAD-style questions written
by crowd workers on new Wikipedia articles, New York Times articles and
Reddit posts) and tested on the official SQuAD 1.1 dev set, scored with the
official metric. Published SQuAD numbers come from training on SQuAD train,
so scores here are NOT comparable to them; they compare models trained under
the same protocol.

Protocol (deterministic for a given --seed):

* train / dev: for each set (new_wiki, reddit, nyt), the units are shuffled
  with ``random.Random(f"{seed}:{set}")`` and the first
  ``ceil(dev_fraction * n_units)`` become dev (default 10%). A unit is an
  article, so no article's paragraphs are in both train and dev. reddit.json
  holds a single pseudo-article ("reddit") of 2,035 posts, so for a set with
  fewer than --min-articles articles (default 10) the unit is the paragraph
  (one Reddit post) instead. The dev questions of each set are kept whole.
* test: the official SQuAD 1.1 dev file, unchanged (10,570 questions).

Sources, in order of preference: official files under --assets
(``assets/squad/dev-v1.1.json``, ``assets/squad_shifts/{set}_v1.0.json``,
fetched by ``spacy project assets``), else the mirror folder (--mirror or
$SPACY_ATTN_MIRROR), verified against its SHA256SUMS by
``spacy_attn.mirror.Mirror``. The mirror's NYT file is BIG-bench's
modified copy (``nyt_bigbench.json.gz``: 9 questions dropped, answer
punctuation stripped, 10 offsets off by one; the reader relocates those).

Outputs in OUTPUT_DIR: ``train.json``, ``dev.json``, ``test.json`` (SQuAD
layout, version "1.1"; every article keeps its ``split`` key naming its
SQuADShifts set), ``manifest.json`` (seed, fraction, source files and
sha256, per-set counts, the held-out unit ids) and, with --docbin,
``{train,dev,test}.spacy`` (QA pair docs with gold answers, as
``spacy-attn.SquadCorpus.v1`` reads them) plus the alignment counts in the
manifest.
"""

import argparse
import gzip
import json
import math
import random
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from spacy_attn.mirror import DataError, Mirror, sha256
from spacy_attn.squad import load_squad_json

SETS = ("new_wiki", "reddit", "nyt")
MIRROR_FILES = {
    "new_wiki": "squad_shifts/new_wiki.json.gz",
    "reddit": "squad_shifts/reddit.json.gz",
    "nyt": "squad_shifts/nyt_bigbench.json.gz",
    "squad_dev": "squad/dev-v1.1.json.gz",
}
ASSET_FILES = {
    "new_wiki": "squad_shifts/new_wiki_v1.0.json",
    "reddit": "squad_shifts/reddit_v1.0.json",
    "nyt": "squad_shifts/nyt_v1.0.json",
    "squad_dev": "squad/dev-v1.1.json",
}
# sha256 of the official uncompressed files (Hugging Face squad / squadshifts
# loaders' download checksums; see the data mirror's README).
OFFICIAL_SHA256 = {
    "new_wiki_v1.0.json": "1d50a0ca4cdab88d038b52ea8a2d0510af6038d7f41a0a256b9659237769d0ee",
    "reddit_v1.0.json": "b4ac346dbf1816fdec80fdcf91d06a4b754fa51e47960fa8614a94f37ea42a4b",
    "nyt_v1.0.json": "fd55ae252cc735a695fab4473d4cd605b154183ac3b3eb63068f53cfc86f36d6",
    "dev-v1.1.json": "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9",
}


def find_source(name: str, assets: Path, mirror: Mirror) -> Path:
    """The official file under ``assets`` (checksum-verified) or the verified
    mirror copy."""
    official = assets / ASSET_FILES[name]
    if official.exists():
        expected = OFFICIAL_SHA256.get(official.name)
        if expected and sha256(official) != expected:
            raise DataError(
                f"Checksum mismatch for {official}: sha256 is not the published {expected}. "
                f"Delete it and run `python -m spacy project assets` again."
            )
        return official
    return mirror.get(MIRROR_FILES[name])


def _counts(articles: List[Dict[str, Any]]) -> Dict[str, int]:
    paragraphs = [p for a in articles for p in a["paragraphs"]]
    qas = [q for p in paragraphs for q in p["qas"]]
    return {
        "articles": len(articles),
        "paragraphs": len(paragraphs),
        "questions": len(qas),
        "answers": sum(len(q["answers"]) for q in qas),
    }


def split_set(
    name: str,
    data: Dict[str, Any],
    *,
    dev_fraction: float,
    seed: int,
    min_articles: int,
) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], Dict[str, Any]]:
    """Split one SQuADShifts set into (train articles, dev articles, info)."""
    articles = data["data"]
    for article in articles:
        article.setdefault("split", name)
    rng = random.Random(f"{seed}:{name}")
    if len(articles) >= min_articles:
        unit = "article"
        order = list(range(len(articles)))
        rng.shuffle(order)
        n_dev = math.ceil(dev_fraction * len(order))
        held = set(order[:n_dev])
        dev = [a for i, a in enumerate(articles) if i in held]
        train = [a for i, a in enumerate(articles) if i not in held]
        held_ids = sorted(articles[i]["title"] for i in held)
    else:
        # Too few articles to hold some out (reddit: one pseudo-article of
        # independent posts): split by paragraph, keeping each article's
        # title and split key on both sides.
        unit = "paragraph"
        units = [
            (a_i, p_i)
            for a_i, a in enumerate(articles)
            for p_i in range(len(a["paragraphs"]))
        ]
        order = list(range(len(units)))
        rng.shuffle(order)
        n_dev = math.ceil(dev_fraction * len(order))
        held = {units[i] for i in order[:n_dev]}
        train, dev = [], []
        for a_i, article in enumerate(articles):
            meta = {k: v for k, v in article.items() if k != "paragraphs"}
            paras = article["paragraphs"]
            dev_p = [p for p_i, p in enumerate(paras) if (a_i, p_i) in held]
            train_p = [p for p_i, p in enumerate(paras) if (a_i, p_i) not in held]
            if train_p:
                train.append({**meta, "paragraphs": train_p})
            if dev_p:
                dev.append({**meta, "paragraphs": dev_p})
        # A paragraph is named by its first question id (ids are unique).
        held_ids = sorted(
            articles[a_i]["paragraphs"][p_i]["qas"][0]["id"]
            for a_i, p_i in held
            if articles[a_i]["paragraphs"][p_i]["qas"]
        )
    info = {
        "unit": unit,
        "units": len(order),
        "dev_units": n_dev,
        "train": _counts(train),
        "dev": _counts(dev),
        "dev_unit_ids": held_ids,
    }
    return train, dev, info


def write_json(data: Dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf8") as f:
        json.dump(data, f, ensure_ascii=False)


def make_splits(
    output_dir: Path,
    *,
    assets: Path,
    mirror: Mirror,
    dev_fraction: float = 0.1,
    seed: int = 0,
    min_articles: int = 10,
    docbin: bool = False,
    lang: str = "en",
) -> Dict[str, Any]:
    """Write the splits and the manifest; RETURNS (Dict[str, Any]): the manifest."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in (0, 1), got {dev_fraction}.")
    sources, train, dev, sets = {}, [], [], {}
    for name in SETS:
        path = find_source(name, assets, mirror)
        sources[name] = {"path": str(path), "sha256": sha256(path)}
        tr, dv, info = split_set(
            name,
            load_squad_json(path),
            dev_fraction=dev_fraction,
            seed=seed,
            min_articles=min_articles,
        )
        train.extend(tr)
        dev.extend(dv)
        sets[name] = info
    test_path = find_source("squad_dev", assets, mirror)
    sources["squad_dev"] = {"path": str(test_path), "sha256": sha256(test_path)}
    test = load_squad_json(test_path)
    output_dir.mkdir(parents=True, exist_ok=True)
    write_json({"version": "1.1", "data": train}, output_dir / "train.json")
    write_json({"version": "1.1", "data": dev}, output_dir / "dev.json")
    # The official bytes, not a re-serialization: test.json's sha256 is then
    # the published one (95aa6a52...).
    if test_path.suffix == ".gz":
        with (
            gzip.open(test_path, "rb") as src,
            open(output_dir / "test.json", "wb") as dst,
        ):
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(test_path, output_dir / "test.json")
    manifest: Dict[str, Any] = {
        "protocol": "train/dev: SQuADShifts new_wiki + reddit + nyt, held out by article "
        "(by paragraph for sets with < min_articles articles); test: official SQuAD 1.1 dev",
        "seed": seed,
        "dev_fraction": dev_fraction,
        "min_articles": min_articles,
        "sources": sources,
        "sets": sets,
        "counts": {
            "train": _counts(train),
            "dev": _counts(dev),
            "test": _counts(test["data"]),
        },
        "files": {s: f"{s}.json" for s in ("train", "dev", "test")},
        "sha256": {
            f"{s}.json": sha256(output_dir / f"{s}.json")
            for s in ("train", "dev", "test")
        },
    }
    if docbin:
        import spacy

        from spacy_attn.squad import read_squad, write_squad_docbin

        nlp = spacy.blank(lang)
        manifest["alignment"] = {}
        for split in ("train", "dev", "test"):
            examples, stats = read_squad(output_dir / f"{split}.json", nlp)
            write_squad_docbin(examples, output_dir / f"{split}.spacy")
            manifest["alignment"][split] = {
                k: v for k, v in stats.to_dict().items() if k != "unaligned_examples"
            }
            manifest["files"][f"{split}_docbin"] = f"{split}.spacy"
    (output_dir / "manifest.json").write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf8"
    )
    return manifest


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("output_dir")
    p.add_argument("--assets", default="assets")
    p.add_argument(
        "--mirror",
        default=None,
        help="mirror folder ('' = none); $SPACY_ATTN_MIRROR wins",
    )
    p.add_argument("--dev-fraction", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-articles", type=int, default=10)
    p.add_argument(
        "--docbin", action="store_true", help="also write {train,dev,test}.spacy"
    )
    p.add_argument("--lang", default="en", help="tokenizer language for --docbin")
    args = p.parse_args(argv)
    mirror = Mirror.from_setting(args.mirror)
    try:
        manifest = make_splits(
            Path(args.output_dir),
            assets=Path(args.assets),
            mirror=mirror,
            dev_fraction=args.dev_fraction,
            seed=args.seed,
            min_articles=args.min_articles,
            docbin=args.docbin,
            lang=args.lang,
        )
    except (DataError, FileNotFoundError) as err:
        print(f"✘ squad splits: {err}", file=sys.stderr)
        sys.exit(1)
    c = manifest["counts"]
    print(
        f"✔ SQuAD splits -> {args.output_dir}: train {c['train']['questions']} questions "
        f"({c['train']['articles']} articles), dev {c['dev']['questions']}, test "
        f"{c['test']['questions']} (seed {args.seed}, dev fraction {args.dev_fraction})"
    )
    for name, info in manifest["sets"].items():
        print(
            f"  {name}: {info['dev_units']}/{info['units']} {info['unit']}s held out; "
            f"train {info['train']['questions']} / dev {info['dev']['questions']} questions"
        )


if __name__ == "__main__":
    main()
