"""The spaCy project: the demo workflow end to end (a fast variant) against
the data mirror, ending with the packaged pipeline loaded from a fresh venv;
and the mirror's error messages."""
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .util import FIXTURES, REPO, mirror_dir


def _copy_project(dst: Path) -> Path:
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for rel in files:
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    return dst


def _run(args, cwd, check=True):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    if check:
        assert result.returncode == 0, (result.stdout[-4000:], result.stderr[-4000:])
    return result


@pytest.mark.slow
@pytest.mark.mirror("sick/train.jsonl.gz", "sick/trial.jsonl.gz", "sick/test.jsonl.gz", "glove/glove.6B.100d.top100k.txt.gz")
def test_demo_workflow(tmp_path):
    project = _copy_project(tmp_path / "project")
    overrides = [
        "--vars.mirror", str(mirror_dir()), "--vars.train_limit", "400", "--vars.dev_limit", "100",
        "--vars.max_steps", "60", "--vars.eval_frequency", "30",
    ]  # vars.venv stays the default relative path, as a user runs it
    _run([sys.executable, "-m", "spacy", "project", "run", "demo", ".", *overrides], cwd=project)
    stats = json.loads((project / "corpus/sick/stats.json").read_text())
    assert stats["counts"] == {"train": 400, "dev": 100, "test": 4906}
    assert (project / "training/vectors/vocab").exists()
    assert (project / "training/sick/model-best/attn_pair_classifier/model").exists()
    metrics = json.loads((project / "metrics/sick.json").read_text())
    assert 0.0 < metrics["pair_acc"] <= 1.0 and "pair_f_per_type" in metrics
    speed = json.loads((project / "metrics/sick-speed.json").read_text())
    assert speed["words_per_second_mean"] > 0
    wheel = project / "packages/en_attn_pair_sick-0.1.0/dist/en_attn_pair_sick-0.1.0-py3-none-any.whl"
    assert wheel.exists()
    meta = json.loads((project / "packages/en_attn_pair_sick-0.1.0/meta.json").read_text())
    assert any(r.startswith("spacy-attn") for r in meta["requirements"]), meta["requirements"]
    assert meta["performance"]["pair_acc"] == pytest.approx(metrics["pair_acc"])
    check = json.loads((project / "metrics/install-check.json").read_text())
    assert check["package"] == "en_attn_pair_sick"
    assert "site-packages" in check["spacy_attn"] and str(REPO) not in check["spacy_attn"]
    assert sum(check["cats"].values()) == pytest.approx(1.0, abs=1e-4)
    # A rerun skips what is up to date.
    again = _run([sys.executable, "-m", "spacy", "project", "run", "prepare", ".", *overrides], cwd=project)
    assert "Skipping 'prepare': nothing changed" in again.stdout


def _fake_mirror(root: Path, corrupt: bool) -> Path:
    # Real SICK rows (the committed slice of the mirror's train file) as both
    # train and trial: the tests check the messages, not the data.
    sums = {}
    for rel in ("sick/train.jsonl.gz", "sick/trial.jsonl.gz"):  # test split left out
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        data = (FIXTURES / "sick_train.jsonl.gz").read_bytes()
        sums[rel] = hashlib.sha256(data).hexdigest()
        if corrupt and rel.endswith("trial.jsonl.gz"):
            data = gzip.compress(b'{"premise": "x", "hypothesis": "y", "label": "neutral"}\n')
        (root / rel).write_bytes(data)
    sums["sick/test.jsonl.gz"] = "0" * 64
    (root / "SHA256SUMS").write_text("".join(f"{h}  {r}\n" for r, h in sums.items()))
    return root


def _prepare_sick(mirror: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SPACY_ATTN_MIRROR"}
    return subprocess.run(
        [sys.executable, "scripts/prepare.py", "sick", str(tmp_path / "out"),
         "--mirror", str(mirror), "--assets", str(tmp_path / "no-assets")],
        cwd=REPO, capture_output=True, text=True, env=env,
    )


def test_prepare_reports_missing_mirror_file(tmp_path):
    mirror = _fake_mirror(tmp_path / "mirror", corrupt=False)
    result = _prepare_sick(mirror, tmp_path)
    assert result.returncode == 1
    assert f"Mirror file {mirror / 'sick/test.jsonl.gz'} is missing" in result.stderr
    assert "spacy project assets" in result.stderr


def test_prepare_reports_checksum_mismatch(tmp_path):
    mirror = _fake_mirror(tmp_path / "mirror", corrupt=True)
    result = _prepare_sick(mirror, tmp_path)
    assert result.returncode == 1
    assert f"Checksum mismatch for mirror file {mirror / 'sick/trial.jsonl.gz'}" in result.stderr


def test_spacy_evaluate_with_pair_spans_code(tmp_path):
    """`spacy evaluate` itself works on pair DocBins with --code scripts/pair_spans.py."""
    import spacy
    from spacy.tokens import DocBin
    from spacy.training import Example

    import spacy_attn

    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier")
    docs = []
    for a, b, label in [("A b c.", "D e.", "yes"), ("F g.", "H i j.", "no")] * 4:
        doc = spacy_attn.make_pair(nlp, a, b)
        doc.cats = {label: 1.0}
        docs.append(doc)
    nlp.initialize(lambda: [Example(d.copy(), d) for d in docs])
    nlp.to_disk(tmp_path / "m")
    DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "test.spacy")
    out = tmp_path / "scores.json"
    _run([sys.executable, "-m", "spacy", "evaluate", str(tmp_path / "m"), str(tmp_path / "test.spacy"),
          "--code", "scripts/pair_spans.py", "--output", str(out)], cwd=REPO)
    assert 0.0 <= json.loads(out.read_text())["pair_acc"] <= 1.0
    bare = _run([sys.executable, "-m", "spacy", "evaluate", str(tmp_path / "m"), str(tmp_path / "test.spacy")], cwd=REPO, check=False)
    assert bare.returncode != 0 and "PairError" in bare.stderr
