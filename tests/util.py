"""Helpers shared by the test modules: small model configs, real-data slices
(tests/fixtures/, committed, so the fast tests run on a fresh clone) and the
rules for tests that need the full data mirror (the ``mirror`` marker, see
tests/conftest.py). conftest.py keeps only fixtures and hooks."""

import gzip
import importlib
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy
from spacy.training import Example

import spacy_attn
from spacy_attn.layers.defaults import small_tok2vec_config
from spacy_attn.squad import SquadQuestion

__all__ = [
    "REPO",
    "FIXTURES",
    "MIRROR_ENV",
    "REQUIRE_MIRROR_ENV",
    "load_script",
    "mirror_dir",
]

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"


# The data mirror helper is checkout tooling (scripts/data_mirror.py), not
# part of the package; pytest puts scripts/ and benchmarks/ on the path
# (pyproject.toml's ``pythonpath``), as Python does for a script run as a file.
data_mirror = importlib.import_module("data_mirror")
MIRROR_ENV: str = data_mirror.MIRROR_ENV
mirror_dir = data_mirror.mirror_dir
FIXTURES = Path(__file__).resolve().parent / "fixtures"
"""Small slices of the mirror's real data; tests/fixtures/README.md says which."""

REQUIRE_MIRROR_ENV = "SPACY_ATTN_REQUIRE_MIRROR"
"""Set to 1 (CI does) and a test marked ``mirror`` fails where the mirror is
missing, instead of being skipped."""


# -- the full data mirror ------------------------------------------------------


def mirror_required() -> bool:
    """Whether $SPACY_ATTN_REQUIRE_MIRROR asks for the mirror (set, not "" or "0")."""
    return os.environ.get(REQUIRE_MIRROR_ENV, "") not in ("", "0")


def missing_mirror_files(
    files: Sequence[str], mirror: Optional[Path] = None
) -> List[Path]:
    """The paths of ``files`` (relative to the mirror) that do not exist; the
    mirror folder itself when no files are named and it does not exist."""
    mirror = mirror_dir() if mirror is None else mirror
    paths = [mirror / rel for rel in files] if files else [mirror]
    return [path for path in paths if not path.exists()]


def mirror_problem(
    files: Sequence[str], mirror: Optional[Path] = None
) -> Optional[str]:
    """Why a test that reads ``files`` from the mirror cannot run (None if it can)."""
    missing = missing_mirror_files(files, mirror)
    if not missing:
        return None
    return (
        f"needs the data mirror: {', '.join(str(p) for p in missing)} not found "
        f"(put the shared data at ../shared/data or set {MIRROR_ENV}; "
        f"with {REQUIRE_MIRROR_ENV}=1 this is an error, not a skip)"
    )


# -- real data slices (tests/fixtures/) ---------------------------------------


def read_jsonl_gz(path: Path, n: Optional[int] = None) -> List[Dict]:
    """The first ``n`` rows (all if None) of a gzipped JSON-lines file; a
    fixture slice with fewer than ``n`` rows is an error, not a shorter list."""
    rows = []
    with gzip.open(path, "rt", encoding="utf8") as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) == n:
                break
    if n is not None and len(rows) < n:
        raise ValueError(
            f"{path} has {len(rows)} rows, {n} asked for (see tests/fixtures/cut.py)"
        )
    return rows


def snli_rows(n: int = 64) -> List[Dict]:
    """The first ``n`` (at most 200) real SNLI dev pairs: id, premise, hypothesis, label."""
    return read_jsonl_gz(FIXTURES / "snli_dev.jsonl.gz", n)


def snli_pairs(n: int = 64) -> List[Tuple[str, str, str]]:
    """(premise, hypothesis, label) of the first ``n`` (at most 200) SNLI dev pairs."""
    return [(r["premise"], r["hypothesis"], r["label"]) for r in snli_rows(n)]


def rt_texts(n: int = 48) -> List[Tuple[str, str]]:
    """(text, label) of the first ``n`` (at most 48) Rotten Tomatoes train
    sentences (all "pos": the file lists the pos rows first)."""
    return [
        (r["text"], r["label"])
        for r in read_jsonl_gz(FIXTURES / "rotten_tomatoes_train.jsonl.gz", n)
    ]


def squad_dev() -> Dict:
    """The official SQuAD v1.1 dev JSON cut to its first two articles: article
    0 (Super_Bowl_50) with its first 8 paragraphs, article 1 with its first 6,
    every question of those."""
    with gzip.open(FIXTURES / "squad_dev.json.gz", "rt", encoding="utf8") as f:
        return json.load(f)


def squad_pairs(n_paragraphs: int = 6) -> List[SquadQuestion]:
    """Two real SQuAD v1.1 dev questions from each of the first (at most 8)
    paragraphs of the first article."""
    article = squad_dev()["data"][0]
    if n_paragraphs > len(article["paragraphs"]):
        raise ValueError(
            f"the SQuAD fixture has {len(article['paragraphs'])} paragraphs, "
            f"{n_paragraphs} asked for"
        )
    out = []
    for para in article["paragraphs"][:n_paragraphs]:
        for qa in para["qas"][:2]:
            answers = [(a["text"], a["answer_start"]) for a in qa["answers"]]
            out.append(
                SquadQuestion(
                    qa["id"],
                    qa["question"],
                    para["context"],
                    answers,
                    article["title"],
                    0,
                )
            )
    return out


# -- pipelines and configs -----------------------------------------------------


def make_examples(nlp, rows):
    examples = []
    for row in rows:
        doc = spacy_attn.make_pair(nlp, row["premise"], row["hypothesis"])
        ref = doc.copy()
        ref.cats = {row["label"]: 1.0}
        examples.append(Example(doc, ref))
    return examples


def add_random_vectors(nlp, texts, width=16, seed=0):
    """Give every lower-cased word of ``texts`` (but a few) a random vector, so
    static-vector models can be tested without a vectors download."""
    rng = numpy.random.default_rng(seed)
    words = sorted({t.lower_ for text in texts for t in nlp.make_doc(text)})
    # Leave some words out so the OOV buckets are exercised too.
    keep = [w for i, w in enumerate(words) if i % 7 != 3]
    nlp.vocab.reset_vectors(width=width)
    for word in keep:
        nlp.vocab.set_vector(word, rng.normal(size=width).astype("float32"))
    return keep


def tok2vec_config(width: int = 32):
    """A small trainable tok2vec (hash embeddings + CNN) for tests."""
    return small_tok2vec_config(width)


def pair_config(
    tok2vec: str = "tok2vec",
    *,
    intra: bool = False,
    exclusive: bool = True,
    hidden: int = 32,
):
    """A small model config for tests."""
    if tok2vec == "vectors":
        t2v = {
            "@architectures": "spacy-attn.FrozenVectors.v1",
            "key_attr": "LOWER",
            "oov_buckets": 5,
        }
    else:
        t2v = tok2vec_config(32)
    return {
        "model": {
            "@architectures": "spacy-attn.DecomposableAttention.v1",
            "hidden_width": hidden,
            "dropout": 0.0,
            "intra_attention": intra,
            "exclusive_classes": exclusive,
            "tok2vec": t2v,
        }
    }


def load_script(relpath: str) -> ModuleType:
    """Import a checkout script (e.g. "scripts/squad_splits.py") as a module:
    scripts/ and benchmarks/ are not packages. Its imports of siblings work
    as when it is run as a file: pytest has both folders on the path."""
    path = REPO / relpath
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answering(
    answer: str, context: str
) -> Callable[..., Iterator[List[Dict[str, Any]]]]:
    """Stands in for ``spacy_attn.answer_questions``: every question gets
    ``answer``, at its first place in ``context``."""
    start = context.index(answer)

    def answer_questions(
        _nlp: Any, pairs: Any, **_kwargs: Any
    ) -> Iterator[List[Dict[str, Any]]]:
        for _ in pairs:
            yield [
                {
                    "text": answer,
                    "score": 1.0,
                    "start_char": start,
                    "end_char": start + len(answer),
                }
            ]

    return answer_questions


def initialized_qa(cfg: Path, n_paragraphs: int = 2) -> Tuple[Any, List[Example]]:
    """The span-QA pipeline of the config at ``cfg``, initialized (seed 0) on
    the SQuAD questions of ``squad_pairs(n_paragraphs)``, and those examples
    (the predicted docs without their answers)."""
    from spacy.util import load_config, load_model_from_config
    from thinc.api import fix_random_seed

    from spacy_attn.squad import make_qa_doc

    fix_random_seed(0)
    nlp = load_model_from_config(load_config(cfg), auto_fill=True)
    examples = []
    for q in squad_pairs(n_paragraphs):
        ref = make_qa_doc(nlp, q)
        pred = ref.copy()
        del pred.spans["answers"]
        examples.append(Example(pred, ref))
    nlp.initialize(lambda: examples)
    return nlp, examples


def legacy_names(config: Any) -> List[str]:
    """The registered names in ``config`` (a nested dict, e.g. a loaded
    config) whose function lives in ``spacy_attn.legacy``: superseded
    versions, which configs we write should not name."""
    from spacy.util import registry

    found: List[str] = []
    if isinstance(config, dict):
        for key, value in config.items():
            if key.startswith("@") and str(value).startswith("spacy-attn."):
                table = getattr(registry, key[1:])
                if table.get(value).__module__.startswith("spacy_attn.legacy"):
                    found.append(value)
            else:
                found.extend(legacy_names(value))
    return found
