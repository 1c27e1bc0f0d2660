"""SQuAD 2.0-style splits for span QA that may answer "no answer".

    python scripts/squad2_splits.py corpus/squad2 --mirror ../shared/data [--docbin]

With the official SQuAD 2.0 train file (``spacy project assets`` puts it at
``assets/squad2/train-v2.0.json``; sha256 checked) the model trains on SQuAD
2.0's own unanswerable questions, written adversarially to look answerable.
Without it (the data mirror has no SQuAD 2.0 train), the training
unanswerables are built the standard way from SQuAD v1.1 train: a question
asked of a different paragraph of its own article
(``spacy_attn.squad.negatives``). They are EASIER than SQuAD 2.0's: a model
trained on them tells SQuAD 2.0 dev's unanswerable questions apart barely
above chance (benchmarks/results/squad2_curve.md).

* ``train.json``: the training articles (all but the held-out 5%). Official
  SQuAD 2.0 train as it is; else SQuAD v1.1 train (the official file under
  --assets, else the mirror's rebuild) with an unanswerable copy of a
  ``--negative-rate`` share of its questions (default 0.5: a third of the
  questions are unanswerable, as in SQuAD 2.0 train).
* ``heldout.json``: the held-out articles (seed 0, 5% of the articles, as
  ``scripts/squad_splits.py``'s dev). Official SQuAD 2.0 train's keep their
  own unanswerable questions; built ones get an unanswerable copy of every
  question (``--heldout-negative-rate 1``: half unanswerable, as in SQuAD 2.0
  dev). Used for checkpoint selection and for choosing the "no answer"
  threshold; never for the reported scores.
* ``train_spans.json`` / ``heldout_spans.json``: the same articles' answerable
  questions only (the built unanswerable copies, or SQuAD 2.0's own, left
  out), for the ``squad2`` workflow's first stage: spans first, then "no
  answer" (docs/span_qa.md). Built from SQuAD v1.1, ``train_spans.json`` is
  ``scripts/squad_splits.py``'s ``train.json`` (same seed, same articles).
* ``test.json``: SQuAD 2.0 dev (``assets/squad2/dev-v2.0.json``, else the
  mirror's rebuild: 11,873 questions, 5,945 unanswerable), scored with the
  official SQuAD 2.0 metric.
* ``manifest.json``: protocol, sources and sha256, seed, rates, counts,
  held-out titles, the files written.
* With --docbin, a ``.spacy`` DocBin beside the JSON of every split (or of
  those --docbin-splits names), tokenized once in --n-process processes by
  ``spacy_attn.squad.squad_to_docbin``: the gold QA docs the readers
  (``spacy-attn.SquadCorpus.v1`` / ``v4``) build from the JSON, an
  unanswerable question's with an empty answers group; the alignment counts
  go into the manifest. The workflow's training steps read these.
"""

import argparse
import gzip
import json
import math
import random
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from data_mirror import DataError, Mirror, checked_file, sha256
from squad_splits import write_docbins, write_json

from spacy_attn.qa_eval.no_answer_eval import subset_by_ids
from spacy_attn.squad import load_squad_json
from spacy_attn.squad.negatives import add_unanswerable

TRAIN_MIRROR = "squad/train-v1.1.rebuilt.json.gz"
TRAIN_ASSET = "squad/train-v1.1.json"
TRAIN2_ASSET = "squad2/train-v2.0.json"
DEV2_ASSET = "squad2/dev-v2.0.json"
DEV2_MIRROR = "squad2/dev-v2.0.rebuilt.json.gz"
# The files written, in order (each ``{split}.json``; ``.spacy`` with --docbin).
SPLITS = ("train", "heldout", "train_spans", "heldout_spans", "test")
# sha256 of the official files (as published with the loaders that fetch them,
# e.g. ParlAI's SQuAD2 build and the Hugging Face squad loader).
OFFICIAL_SHA256 = {
    TRAIN_ASSET: "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955",
    TRAIN2_ASSET: "68dcfbb971bd3e96d5b46c7177b16c1a4e7d4bdef19fb204502738552dede002",
    DEV2_ASSET: "80a5225e94905956a6446d296ca1093975c4d3b3260f1d6c8f68bc2ab77182d8",
}


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


def question_counts(articles: List[Dict[str, Any]]) -> Dict[str, int]:
    """Answerable and unanswerable questions of SQuAD 2.0-layout articles."""
    qas = [qa for a in articles for p in a["paragraphs"] for qa in p["qas"]]
    unanswerable = sum(1 for qa in qas if qa.get("is_impossible") or not qa["answers"])
    return {"answerable": len(qas) - unanswerable, "unanswerable": unanswerable}


def answerable_only(articles: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The articles with their answerable questions only (paragraphs left
    without a question dropped), in order."""
    ids = [
        qa["id"]
        for article in articles
        for para in article["paragraphs"]
        for qa in para["qas"]
        if qa["answers"] and not qa.get("is_impossible", False)
    ]
    return subset_by_ids(articles, ids)["data"]


def asset(assets: Path, name: str) -> Optional[Path]:
    """The official file ``name`` under ``assets`` (sha256 checked), if there."""
    path = assets / name
    return checked_file(path, OFFICIAL_SHA256[name]) if path.exists() else None


def parser() -> argparse.ArgumentParser:
    """The command line of ``main``."""
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
    p.add_argument(
        "--docbin", action="store_true", help=f"also write {{{','.join(SPLITS)}}}.spacy"
    )
    p.add_argument("--lang", default="en", help="tokenizer language for --docbin")
    p.add_argument(
        "--docbin-splits",
        default=None,
        help="with --docbin, only these splits, comma-separated "
        "(e.g. train_spans,heldout_spans,train,heldout)",
    )
    p.add_argument(
        "--n-process", type=int, default=1, help="processes tokenizing --docbin"
    )
    return p


def splits_of(
    args: argparse.Namespace, train_path: Path, official_train: bool
) -> Tuple[Dict[str, List[Dict[str, Any]]], Dict[str, Any]]:
    """The articles of the train / held-out splits (and their answerable
    questions alone, ``*_spans``) and the manifest's protocol and counts."""
    train, heldout = held_out_split(
        load_squad_json(train_path)["data"],
        dev_fraction=args.dev_fraction,
        seed=args.seed,
    )
    # Stage one of the workflow reads the answerable questions alone.
    train_spans, heldout_spans = answerable_only(train), answerable_only(heldout)
    if official_train:
        # SQuAD 2.0's own (adversarial) unanswerable questions: none built.
        train_counts, heldout_counts = question_counts(train), question_counts(heldout)
        info: Dict[str, Any] = {
            "protocol": "squad2-official",
            "note": "SQuAD 2.0 train and its own unanswerable questions.",
        }
    else:
        train, train_counts = add_unanswerable(
            train, rate=args.negative_rate, seed=args.seed
        )
        heldout, heldout_counts = add_unanswerable(
            heldout, rate=args.heldout_negative_rate, seed=args.seed
        )
        info = {
            "protocol": "squad2-built-negatives",
            "note": "Unanswerable train/held-out questions are v1.1 questions asked "
            "of another paragraph of their article: easier than SQuAD 2.0's "
            "adversarial ones.",
        }
    splits = {
        "train": train,
        "heldout": heldout,
        "train_spans": train_spans,
        "heldout_spans": heldout_spans,
    }
    info["counts"] = {
        "train": train_counts,
        "heldout": heldout_counts,
        "train_spans": question_counts(train_spans),
        "heldout_spans": question_counts(heldout_spans),
    }
    return splits, info


def main(argv: Optional[List[str]] = None) -> None:
    p = parser()
    args = p.parse_args(argv)
    docbin_splits = args.docbin_splits.split(",") if args.docbin_splits else SPLITS
    unknown = sorted(set(docbin_splits) - set(SPLITS))
    if unknown:
        p.error(f"--docbin-splits: no split {unknown}; the splits are {SPLITS}")
    mirror = Mirror.from_setting(args.mirror)
    try:
        train2_path = asset(args.assets, TRAIN2_ASSET)
        train_path = (
            train2_path or asset(args.assets, TRAIN_ASSET) or mirror.get(TRAIN_MIRROR)
        )
        dev_path = asset(args.assets, DEV2_ASSET) or mirror.get(DEV2_MIRROR)
    except DataError as err:
        sys.exit(f"Error: {err}")
    official_train = train2_path is not None
    splits, info = splits_of(args, train_path, official_train)
    dev_source = "official" if dev_path.name == Path(DEV2_ASSET).name else "rebuilt"
    out = args.output
    for name, articles in splits.items():
        write_json({"version": "v2.0", "data": articles}, out / f"{name}.json")
    # The official bytes (ungzipped): test.json's sha256 is the source's.
    opener = gzip.open if dev_path.suffix == ".gz" else open
    with opener(dev_path, "rb") as f:
        (out / "test.json").write_bytes(f.read())
    manifest = {
        "protocol": info["protocol"],
        "seed": args.seed,
        "dev_fraction": args.dev_fraction,
        "negative_rate": None if official_train else args.negative_rate,
        "heldout_negative_rate": (
            None if official_train else args.heldout_negative_rate
        ),
        "train_source": "rebuilt" if train_path.suffix == ".gz" else "official",
        "test_source": dev_source,
        "sources": {
            "squad_train": {"path": str(train_path), "sha256": sha256(train_path)},
            "squad2_dev": {"path": str(dev_path), "sha256": sha256(dev_path)},
        },
        **info["counts"],
        "heldout_titles": sorted(a["title"] for a in splits["heldout"]),
        "note": f"{info['note']} test.json is SQuAD 2.0 dev ({dev_source}).",
        "files": {name: f"{name}.json" for name in SPLITS},
    }
    if args.docbin:
        chosen = [s for s in SPLITS if s in docbin_splits]
        manifest["alignment"] = write_docbins(
            out, chosen, lang=args.lang, n_process=args.n_process
        )
        manifest["files"].update({f"{s}_docbin": f"{s}.spacy" for s in chosen})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({k: manifest[k] for k in ("train", "heldout")}, indent=2))


if __name__ == "__main__":
    main()
