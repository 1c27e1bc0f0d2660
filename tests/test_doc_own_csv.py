"""A user's own labelled texts in a csv with its own column names, the way
docs/doc_embedder.md shows it: `spacy attn init-config --task doc` with the
column options, `spacy train` on the csv files, then `spacy attn evaluate`
on the test csv without naming the columns again (the pipeline keeps those
it was trained with)."""

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from spacy import util
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli

from .util import FIXTURES

REPO = Path(__file__).resolve().parent.parent


def _train(config: Path, train: Path, dev: Path, out: Path):
    cmd = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(out)]
    cmd += ["--paths.train", str(train), "--paths.dev", str(dev)]
    cmd += ["--training.max_steps", "2", "--training.eval_frequency", "1"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env)


def _rt_csv(path: Path, rows) -> Path:
    """Rotten Tomatoes rows as a csv with IMDB-style columns."""
    with open(path, "w", newline="", encoding="utf8") as f:
        writer = csv.writer(f)
        writer.writerow(["sentiment", "review"])
        writer.writerows((row["label"], row["text"]) for row in rows)
    return path


@pytest.mark.slow  # `spacy train` in a subprocess, ~20 s here
def test_init_config_train_and_evaluate_a_csv(tmp_path):
    with gzip.open(FIXTURES / "rotten_tomatoes_train.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    # The file lists its positive rows first: every split gets both labels.
    rows = [row for pair in zip(rows, reversed(rows)) for row in pair][: len(rows)]
    train = _rt_csv(tmp_path / "train.csv", rows[:40])
    dev = _rt_csv(tmp_path / "dev.csv", rows[40:56])
    test = _rt_csv(tmp_path / "test.csv", rows[56:])
    config = tmp_path / "doc.cfg"
    args = ["init-config", str(config), "--task", "doc", "--backbone", "tok2vec"]
    args += ["--text-cols", "review", "--label-col", "sentiment"]
    result = CliRunner().invoke(attn_cli, args)
    assert result.exit_code == 0, result.output
    assert "csv / tsv" in result.output
    filled = util.load_config(config, interpolate=True)
    for split in ("train", "dev"):
        reader = filled["corpora"][split]
        assert reader["@readers"] == "spacy-attn.TextCatCorpus.v2"
        assert (reader["text_cols"], reader["label_col"]) == (["review"], "sentiment")
    done = _train(config, train, dev, tmp_path / "out")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    model = str(tmp_path / "out" / "model-last")
    result = CliRunner().invoke(
        attn_cli, ["evaluate", model, str(test), "--json", "--no-check"]
    )
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    labels = [row["label"] for row in rows[56:]]
    majority = max(labels.count(y) for y in set(labels)) / len(labels)
    assert scores["baselines"]["majority class"]["cats_acc"] == pytest.approx(majority)
    assert 0.0 <= scores["cats_acc"] <= 1.0
    # Another text column named: scored, with a note on stderr.
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(
        test.read_text().replace("sentiment,review", "sentiment,body", 1)
    )
    args = ["evaluate", model, str(renamed), "--text-cols", "body", "--no-check"]
    result = CliRunner().invoke(attn_cli, args)
    assert result.exit_code == 0, result.output
    assert "--text-cols body: the model was trained on columns review" in result.stderr
    # Batch prediction on the test csv also reads the trained text column.
    out = tmp_path / "pred.jsonl"
    result = CliRunner().invoke(attn_cli, ["predict", model, str(test), str(out)])
    assert result.exit_code == 0, result.output
    predicted = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(predicted) == len(rows) - 56
    assert set(predicted[0]["cats"]) == {"neg", "pos"}


@pytest.mark.slow  # `spacy train` in a subprocess, a few seconds
def test_training_texts_of_one_label_end_in_one_line(tmp_path):
    with gzip.open(FIXTURES / "rotten_tomatoes_train.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f][:20]
    assert {row["label"] for row in rows} == {"pos"}  # the file's first rows
    train = _rt_csv(tmp_path / "train.csv", rows)
    config = tmp_path / "doc.cfg"
    args = ["init-config", str(config), "--task", "doc", "--backbone", "tok2vec"]
    args += ["--text-cols", "review", "--label-col", "sentiment"]
    assert CliRunner().invoke(attn_cli, args).exit_code == 0
    done = _train(config, train, train, tmp_path / "out")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("✘ 'attn_doc_embedder' needs at least 2 label(s)"), last
    assert "found ['pos'] in the training data" in last
