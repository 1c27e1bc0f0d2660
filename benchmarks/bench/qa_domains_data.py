"""The SQuADShifts domains as a user's own QA data: each file split by
article into train / dev / test SQuAD files (seeded), training subsets of N
questions, and the test set with its built unanswerable copies."""

import gzip
import json
import random
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import machine

DOMAINS = {
    "new_wiki": "squad_shifts/new_wiki.json.gz",
    "nyt": "squad_shifts/nyt_bigbench.json.gz",
    "reddit": "squad_shifts/reddit.json.gz",
}
# The start's own domain: SQuAD v1.1 dev (the squad workflows test on it).
IN_DOMAIN = "squad/dev-v1.1.json.gz"
# Shares of the questions (test, dev); the rest trains.
TEST_SHARE, DEV_SHARE = 0.3, 0.1
# Fewer articles than this: split by paragraph (reddit is one "article").
MIN_ARTICLES = 10


def units(articles: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """What is split: the articles, or each paragraph as its own article
    where the file has too few articles to split (titles keep the source)."""
    if len(articles) >= MIN_ARTICLES:
        return list(articles)
    return [
        {**article, "title": f"{article.get('title', '')} #{i}", "paragraphs": [para]}
        for article in articles
        for i, para in enumerate(article["paragraphs"])
    ]


def n_questions(articles: List[Dict[str, Any]]) -> int:
    return sum(len(p["qas"]) for a in articles for p in a["paragraphs"])


def split_domain(name: str, out: Path) -> Dict[str, Any]:
    """``out/{train,dev,test}.json`` from the domain's file: its articles (or
    paragraphs, see ``units``) shuffled with a seed and cut where the test
    articles reach ``TEST_SHARE`` of the questions and the dev ones
    ``DEV_SHARE``. Written once; a second call reads the manifest.

    RETURNS (Dict[str, Any]): ``source``, ``split_by``, per split its
        ``articles`` and ``questions``, and ``files`` (split -> path).
    """
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        return json.loads(manifest_path.read_text())
    source = DOMAINS[name]
    data = json.load(gzip.open(machine.data_dir() / source))
    parts = units(data["data"])
    split_by = "article" if len(parts) == len(data["data"]) else "paragraph"
    random.Random(f"0:qa_domains:{name}").shuffle(parts)
    total = n_questions(parts)
    cut: Dict[str, List[Dict[str, Any]]] = {"test": [], "dev": [], "train": []}
    seen = 0
    for part in parts:
        if seen < TEST_SHARE * total:
            cut["test"].append(part)
        elif seen < (TEST_SHARE + DEV_SHARE) * total:
            cut["dev"].append(part)
        else:
            cut["train"].append(part)
        seen += n_questions([part])
    out.mkdir(parents=True, exist_ok=True)
    manifest: Dict[str, Any] = {"source": source, "split_by": split_by, "files": {}}
    for split, articles in cut.items():
        path = out / f"{split}.json"
        path.write_text(json.dumps({"version": "1.1", "data": articles}))
        manifest["files"][split] = machine.relative(path)
        manifest[split] = {
            "articles": len(articles),
            "questions": n_questions(articles),
        }
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return manifest


def question_ids(path: Path) -> List[str]:
    return _ids(json.loads(path.read_text()))


def _ids(data: Dict[str, Any]) -> List[str]:
    return [qa["id"] for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]]


def sample_file(path: Path, n: Optional[int], out: Path, *, salt: str) -> Path:
    """``out``: the SQuAD file ``path`` (optionally ``.gz``) kept to a seeded
    ``n`` of its questions (None or more than it has: all); written once."""
    from spacy_attn.qa_eval.no_answer_eval import subset_by_ids
    from spacy_attn.squad import load_squad_json

    if out.exists():
        return out
    data = load_squad_json(path)
    ids = _ids(data)
    if n is not None and n < len(ids):
        ids = random.Random(f"0:{salt}").sample(ids, n)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(subset_by_ids(data, ids)))
    return out


def in_domain_test(n: int, out: Path) -> Path:
    """``out``: a seeded ``n`` of the official SQuAD v1.1 dev questions (the
    start's own domain, never trained on), written once: the reference the
    domains' figures are read against."""
    return sample_file(machine.data_dir() / IN_DOMAIN, n, out, salt="squad_dev")


def with_built_unanswerable(path: Path, out: Path) -> Path:
    """``out``: ``path`` with one unanswerable copy per question, asked of
    another paragraph (``spacy_attn.squad.negatives.with_unanswerable``, as
    ``qa-threshold --build-unanswerable`` builds them); written once."""
    from spacy_attn.squad.negatives import with_unanswerable

    if not out.exists():
        built, _ = with_unanswerable(json.loads(path.read_text()))
        out.write_text(json.dumps({**built, "version": "v2.0"}))
    return out
