"""scripts/vectors.py: the spaCy vectors table the GloVe configs name."""

import gzip
import hashlib

import pytest
import spacy

from .util import load_script


def test_vectors_script_makes_missing_parent_folders(tmp_path):
    """The configs' commands write ``training/vectors`` in a fresh clone,
    where ``training/`` does not exist yet."""
    mirror = tmp_path / "mirror"
    rel = "glove/glove.6B.4d.top100k.txt.gz"
    (mirror / "glove").mkdir(parents=True)
    rows = ["the 0.1 0.2 0.3 0.4", "cat 0.5 0.6 0.7 0.8", "sat -0.1 0 0.2 1"]
    (mirror / rel).write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
    digest = hashlib.sha256((mirror / rel).read_bytes()).hexdigest()
    (mirror / "SHA256SUMS").write_text(f"{digest}  {rel}\n")
    out = tmp_path / "fresh" / "training" / "vectors"
    script = load_script("scripts/vectors.py")
    args = [str(out), "--assets", str(tmp_path / "no-assets"), "--mirror", str(mirror)]
    with pytest.raises(SystemExit) as exit_info:
        script.main(args + ["--dims", "4"])
    assert exit_info.value.code == 0
    vocab = spacy.load(out).vocab
    assert vocab.vectors.shape == (3, 4)
    assert vocab.vectors.name == "glove6b4d_top100k"
