"""`spacy attn init-config`: every task, backbone, label setting and device
writes a config that spaCy loads and validates; the header names the steps;
a written config trains with `spacy train`."""

import gzip
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from spacy import util
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.cli.config_templates import BACKBONES, COMPONENTS, TASKS

from .util import FIXTURES, REPO

COMBINATIONS = [
    (task, backbone, binary, gpu)
    for task, backbone, binary, gpu in itertools.product(
        TASKS, BACKBONES, (False, True), (False, True)
    )
    if not (binary and task == "qa")
]


def init_config(path: Path, *args: str):
    return CliRunner().invoke(attn_cli, ["init-config", str(path), *args])


@pytest.mark.parametrize("task,backbone,binary,gpu", COMBINATIONS)
def test_every_combination_writes_a_valid_config(tmp_path, task, backbone, binary, gpu):
    path = tmp_path / "config.cfg"
    flags = ["--task", task, "--backbone", backbone]
    flags += ["--binary" if binary else "--multiclass", "--gpu" if gpu else "--cpu"]
    result = init_config(path, *flags)
    assert result.exit_code == 0, result.output
    config = util.load_config(path)
    nlp = util.load_model_from_config(config, auto_fill=False, validate=True)
    name = COMPONENTS[task]
    assert nlp.pipe_names == (
        ["transformer", name] if backbone == "transformer" else [name]
    )
    # Filled: spaCy has nothing left to add.
    assert nlp.config.to_str() == util.load_config(path).to_str()
    interpolated = config.interpolate()
    assert interpolated["system"]["gpu_allocator"] == ("pytorch" if gpu else None)
    text = path.read_text(encoding="utf8")
    assert ("python -m spacy init vectors" in text) == (backbone == "glove")
    assert ("--gpu-id 0" in text) == gpu
    assert f"python -m spacy train {path}" in result.stdout


def test_binary_pair_config_reads_the_positive_label(tmp_path):
    path = tmp_path / "binary.cfg"
    result = init_config(path, "--binary", "--positive-label", "yes")
    assert result.exit_code == 0, result.output
    config = util.load_config(path, interpolate=True)
    for split in ("train", "dev"):
        assert config["corpora"][split]["positive_label"] == "yes"
    override = util.load_config(
        path, overrides={"vars.positive_label": "match"}, interpolate=True
    )
    assert override["corpora"]["dev"]["positive_label"] == "match"
    multiclass = tmp_path / "multi.cfg"
    assert init_config(multiclass).exit_code == 0
    config = util.load_config(multiclass, interpolate=True)
    assert config["corpora"]["train"]["positive_label"] is None
    assert "vars" not in config


def test_stdout_and_mistakes(tmp_path):
    result = CliRunner().invoke(attn_cli, ["init-config", "-", "--task", "qa"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# spacy-attn quickstart config: qa task")
    assert "[components.attn_span_qa.model]" in result.stdout
    for args, fragment in [
        (["--task", "ner"], "--task 'ner'"),
        (["--backbone", "bert"], "--backbone 'bert'"),
        (["--task", "qa", "--binary"], "--binary"),
    ]:
        result = init_config(tmp_path / "x.cfg", *args)
        assert result.exit_code == 1, result.output
        lines = result.stderr.strip().splitlines()
        assert (
            len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0]
        )
    assert not (tmp_path / "x.cfg").exists()
    result = init_config(tmp_path)
    assert result.exit_code == 1 and "is a directory" in result.stderr


def _slice(src: Path, dst: Path, start: int, n: int) -> Path:
    with gzip.open(src, "rt", encoding="utf8") as f:
        lines = f.readlines()[start : start + n]
    dst.write_text("".join(lines), encoding="utf8")
    return dst


@pytest.mark.slow  # ~20 s here: `spacy train` in a subprocess
def test_a_written_config_trains(tmp_path):
    """The pair / tok2vec / CPU quickstart trains 2 steps on SICK rows."""
    src = FIXTURES / "sick_train.jsonl.gz"
    train = _slice(src, tmp_path / "train.jsonl", 0, 24)
    dev = _slice(src, tmp_path / "dev.jsonl", 64, 8)
    config = tmp_path / "config.cfg"
    assert init_config(config, "--task", "pair", "--backbone", "tok2vec").exit_code == 0
    out = tmp_path / "out"
    args = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(out)]
    args += ["--paths.train", str(train), "--paths.dev", str(dev)]
    args += ["--training.max_steps", "2", "--training.eval_frequency", "1"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    result = subprocess.run(args, capture_output=True, text=True, cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (out / "model-last" / "attn_pair_classifier" / "model").exists()
    labels = util.load_model(out / "model-last").get_pipe("attn_pair_classifier").labels
    assert set(labels) == {"entailment", "neutral", "contradiction"}
