import gzip
import json
from pathlib import Path

import numpy
import pytest
from spacy.training import Example

import spacy_attn
from spacy_attn.mirror import mirror_dir  # noqa: F401 (tests import it from here)

REPO = Path(__file__).resolve().parent.parent




@pytest.fixture(scope="session")
def snli_rows():
    """The first 64 pairs of the real SNLI dev set (from the mirror)."""
    path = mirror_dir() / "snli" / "dev.jsonl.gz"
    if not path.exists():
        raise FileNotFoundError(
            f"Test data mirror not found at {path}. Put the shared data beside the "
            f"repo (../shared/data) or set SPACY_ATTN_MIRROR."
        )
    rows = []
    with gzip.open(path, "rt", encoding="utf8") as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) == 64:
                break
    return rows


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
    return {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": width,
            "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
            "rows": [500, 100, 200, 200],
            "include_static_vectors": False,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": width,
            "depth": 1,
            "window_size": 1,
            "maxout_pieces": 2,
        },
    }


def pair_config(tok2vec: str = "tok2vec", *, intra: bool = False, exclusive: bool = True, hidden: int = 32):
    """A small model config for tests."""
    if tok2vec == "vectors":
        t2v = {"@architectures": "spacy-attn.FrozenVectors.v1", "key_attr": "LOWER", "oov_buckets": 5}
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
