"""SQuAD splits: the paper's protocol (train on SQuAD v1.1 train, select on
held-out train articles, test on the official dev set), with the SQuADShifts
sets as out-of-domain tests.

    python scripts/squad_splits.py corpus/squad --assets assets --mirror ../shared/data [--docbin]

Protocol ``squad`` (the default; Xiong et al. 2017 and every SQuAD 1.1 paper):

* train / dev: SQuAD v1.1 train. Its articles are shuffled with
  ``random.Random(f"{seed}:squad_train")`` and the first
  ``ceil(dev_fraction * n_articles)`` (default 5%: 23 of 442 articles) become
  dev, used only to select the checkpoint; no article is on both sides.
* test: the official SQuAD v1.1 dev file, unchanged (10,570 questions),
  scored with the official metric.
* out-of-domain tests: the SQuADShifts sets whole (``test_new_wiki``,
  ``test_nyt``, ``test_reddit``; Miller et al. 2020).

Protocol ``shifts`` (``--protocol shifts``; how the project trained before the
SQuAD train set was here, kept to reproduce those results): train / dev are the
three SQuADShifts sets held out by article (by paragraph for a set with fewer
than --min-articles articles, i.e. reddit's one pseudo-article), test is the
official dev file. Scores under it are NOT comparable with published ones.

Sources, in order of preference: official files under --assets
(``assets/squad/{train,dev}-v1.1.json``,
``assets/squad_shifts/{set}_v1.0.json``, fetched by ``spacy project assets``
and checked against their published sha256), else the mirror folder
(--mirror or $SPACY_ATTN_MIRROR), verified against its SHA256SUMS by
``Mirror`` (scripts/data_mirror.py). The mirror's train file is a REBUILD
(``squad/train-v1.1.rebuilt.json.gz``: official texts and order, synthetic
question ids, ``answer_start`` inferred as the answer's first occurrence); the
manifest's ``train_source`` says which file was used ("official" or
"rebuilt"), and so must every number quoted from it. The mirror's NYT file is
BIG-bench's modified copy (``nyt_bigbench.json.gz``; the reader relocates its
shifted offsets).

Outputs in OUTPUT_DIR: ``train.json``, ``dev.json``, ``test.json`` (SQuAD
layout; ``test.json`` is the official bytes), the ``test_{set}.json``
out-of-domain files (protocol ``squad``), ``manifest.json`` (protocol, seed,
fraction, source files and sha256, counts, the held-out unit ids) and, with
--docbin, a ``.spacy`` DocBin beside every JSON file (QA pair docs with gold
answers, as ``spacy-attn.SquadCorpus.v1`` reads them) plus the alignment
counts in the manifest.
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

from data_mirror import DataError, Mirror, checked_file, sha256

from spacy_attn.squad import load_squad_json

SETS = ("new_wiki", "reddit", "nyt")
MIRROR_FILES = {
    "squad_train": "squad/train-v1.1.rebuilt.json.gz",
    "new_wiki": "squad_shifts/new_wiki.json.gz",
    "reddit": "squad_shifts/reddit.json.gz",
    "nyt": "squad_shifts/nyt_bigbench.json.gz",
    "squad_dev": "squad/dev-v1.1.json.gz",
}
ASSET_FILES = {
    "squad_train": "squad/train-v1.1.json",
    "new_wiki": "squad_shifts/new_wiki_v1.0.json",
    "reddit": "squad_shifts/reddit_v1.0.json",
    "nyt": "squad_shifts/nyt_v1.0.json",
    "squad_dev": "squad/dev-v1.1.json",
}
# sha256 of the official uncompressed files (Hugging Face squad / squadshifts
# loaders' download checksums; see the data mirror's README and project.yml).
OFFICIAL_SHA256 = {
    "train-v1.1.json": "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955",
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
        return checked_file(official, OFFICIAL_SHA256.get(official.name))
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


def write_docbins(
    out: Path, splits: List[str], *, lang: str = "en", n_process: int = 1
) -> Dict[str, Any]:
    """Tokenize the named splits' JSON once into ``{split}.spacy`` beside it
    (gold QA docs, an unanswerable question's with an empty answers group,
    as ``spacy-attn.SquadCorpus.v1`` / ``v4`` read them), in ``n_process``
    processes. Also used by squad2_splits.py.

    RETURNS (Dict[str, Any]): The alignment counts by split.
    """
    from spacy_attn.squad import squad_to_docbin

    alignment = {}
    for split in splits:
        stats = squad_to_docbin(
            out / f"{split}.json",
            out / f"{split}.spacy",
            lang=lang,
            n_process=n_process,
        )
        alignment[split] = {
            k: v for k, v in stats.to_dict().items() if k != "unaligned_examples"
        }
    return alignment


def _shifts_train_dev(
    assets: Path,
    mirror: Mirror,
    *,
    dev_fraction: float,
    seed: int,
    min_articles: int,
    sources: Dict[str, Any],
) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], Dict[str, Any]]:
    """Protocol ``shifts``: the three SQuADShifts sets, each held out by unit."""
    train: List[Dict[str, Any]] = []
    dev: List[Dict[str, Any]] = []
    sets = {}
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
    return train, dev, {"sets": sets}


def _squad_train_dev(
    assets: Path,
    mirror: Mirror,
    *,
    dev_fraction: float,
    seed: int,
    sources: Dict[str, Any],
) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], Dict[str, Any]]:
    """Protocol ``squad``: SQuAD v1.1 train, held out by article."""
    path = find_source("squad_train", assets, mirror)
    official = path.name == Path(ASSET_FILES["squad_train"]).name
    sources["squad_train"] = {"path": str(path), "sha256": sha256(path)}
    articles = load_squad_json(path)["data"]
    order = list(range(len(articles)))
    random.Random(f"{seed}:squad_train").shuffle(order)
    held = set(order[: math.ceil(dev_fraction * len(order))])
    train = [a for i, a in enumerate(articles) if i not in held]
    dev = [a for i, a in enumerate(articles) if i in held]
    info = {
        "train_source": "official" if official else "rebuilt",
        "dev_unit_ids": sorted(articles[i]["title"] for i in held),
    }
    return train, dev, info


PROTOCOLS = {
    "squad": "train/dev: SQuAD v1.1 train held out by article; test: official SQuAD "
    "1.1 dev; out-of-domain tests: SQuADShifts new_wiki, nyt, reddit",
    "shifts": "train/dev: SQuADShifts new_wiki + reddit + nyt, held out by article "
    "(by paragraph for sets with < min_articles articles); test: official SQuAD 1.1 dev",
}


def make_splits(
    output_dir: Path,
    *,
    assets: Path,
    mirror: Mirror,
    protocol: str = "squad",
    dev_fraction: float = 0.05,
    seed: int = 0,
    min_articles: int = 10,
    docbin: bool = False,
    lang: str = "en",
    docbin_splits: Optional[List[str]] = None,
    n_process: int = 1,
    ood: bool = True,
) -> Dict[str, Any]:
    """Write the splits and the manifest.

    protocol (str): "squad" (train on SQuAD v1.1 train) or "shifts" (train on
        the SQuADShifts sets); see the module docstring.
    docbin_splits (Optional[List[str]]): With ``docbin``, the splits to write
        as ``.spacy`` (None: every split).
    n_process (int): Processes that tokenize the DocBins.
    ood (bool): Write the SQuADShifts out-of-domain tests (protocol "squad").
    RETURNS (Dict[str, Any]): The manifest.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(
            f"protocol must be one of {sorted(PROTOCOLS)}, got {protocol!r}."
        )
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in (0, 1), got {dev_fraction}.")
    sources: Dict[str, Any] = {}
    if protocol == "squad":
        train, dev, info = _squad_train_dev(
            assets, mirror, dev_fraction=dev_fraction, seed=seed, sources=sources
        )
    else:
        train, dev, info = _shifts_train_dev(
            assets,
            mirror,
            dev_fraction=dev_fraction,
            seed=seed,
            min_articles=min_articles,
            sources=sources,
        )
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
    splits = {"train": train, "dev": dev, "test": test["data"]}
    if protocol == "squad" and ood:
        # Out-of-domain tests: every SQuADShifts set whole.
        for name in SETS:
            path = find_source(name, assets, mirror)
            sources[name] = {"path": str(path), "sha256": sha256(path)}
            data = load_squad_json(path)
            write_json(
                {"version": "1.1", "data": data["data"]},
                output_dir / f"test_{name}.json",
            )
            splits[f"test_{name}"] = data["data"]
    manifest: Dict[str, Any] = {
        "protocol": protocol,
        "description": PROTOCOLS[protocol],
        "seed": seed,
        "dev_fraction": dev_fraction,
        **({"min_articles": min_articles} if protocol == "shifts" else {}),
        "sources": sources,
        **info,
        "counts": {s: _counts(arts) for s, arts in splits.items()},
        "files": {s: f"{s}.json" for s in splits},
        "sha256": {f"{s}.json": sha256(output_dir / f"{s}.json") for s in splits},
    }
    if docbin:
        chosen = [s for s in splits if docbin_splits is None or s in docbin_splits]
        manifest["alignment"] = write_docbins(
            output_dir, chosen, lang=lang, n_process=n_process
        )
        manifest["files"].update({f"{s}_docbin": f"{s}.spacy" for s in chosen})
    (output_dir / "manifest.json").write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf8"
    )
    return manifest


def parser() -> argparse.ArgumentParser:
    """The command line of ``main``."""
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
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="squad")
    p.add_argument(
        "--dev-fraction",
        type=float,
        default=None,
        help="held-out share (default 0.05 for squad, 0.1 for shifts)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-articles", type=int, default=10)
    p.add_argument(
        "--docbin", action="store_true", help="also write {train,dev,test}.spacy"
    )
    p.add_argument("--lang", default="en", help="tokenizer language for --docbin")
    p.add_argument(
        "--docbin-splits",
        default=None,
        help="with --docbin, only these splits, comma-separated (e.g. train,dev)",
    )
    p.add_argument(
        "--n-process", type=int, default=1, help="processes tokenizing --docbin"
    )
    p.add_argument(
        "--ood",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write the SQuADShifts out-of-domain tests (--no-ood: skip them)",
    )
    return p


def main(argv: Optional[List[str]] = None) -> None:
    args = parser().parse_args(argv)
    mirror = Mirror.from_setting(args.mirror)
    try:
        manifest = make_splits(
            Path(args.output_dir),
            assets=Path(args.assets),
            mirror=mirror,
            protocol=args.protocol,
            dev_fraction=args.dev_fraction
            or (0.05 if args.protocol == "squad" else 0.1),
            seed=args.seed,
            min_articles=args.min_articles,
            docbin=args.docbin,
            lang=args.lang,
            docbin_splits=args.docbin_splits.split(",") if args.docbin_splits else None,
            n_process=args.n_process,
            ood=args.ood,
        )
    except (DataError, FileNotFoundError) as err:
        print(f"✘ squad splits: {err}", file=sys.stderr)
        sys.exit(1)
    c = manifest["counts"]
    source = (
        f", train file: {manifest['train_source']}"
        if "train_source" in manifest
        else ""
    )
    print(
        f"✔ SQuAD splits ({args.protocol}{source}) -> {args.output_dir}: "
        f"train {c['train']['questions']} questions ({c['train']['articles']} articles), "
        f"dev {c['dev']['questions']} ({c['dev']['articles']} articles), "
        f"test {c['test']['questions']} (seed {args.seed}, dev fraction {manifest['dev_fraction']})"
    )
    for name, info in manifest.get("sets", {}).items():
        print(
            f"  {name}: {info['dev_units']}/{info['units']} {info['unit']}s held out; "
            f"train {info['train']['questions']} / dev {info['dev']['questions']} questions"
        )
    for name in SETS:
        if f"test_{name}" in c:
            print(
                f"  out-of-domain test_{name}: {c[f'test_{name}']['questions']} questions"
            )


if __name__ == "__main__":
    main()
