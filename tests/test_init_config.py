"""`spacy attn init-config`: every task, backbone, label setting and device
writes a config that spaCy loads and validates; the header names the steps;
a written config trains with `spacy train`."""

import gzip
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from spacy import util
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.pipeline import PairClassifier
from spacy_attn.quickstart import BACKBONES, COMPONENTS, TASKS
from spacy_attn.ranking import score_pairs

from .util import FIXTURES, REPO, legacy_names

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
    assert legacy_names(config) == []
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
        (["--task", "doc", "--no-answer"], "--no-answer"),
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


def test_column_options_name_the_columns_in_both_readers(tmp_path):
    """--text-cols / --label-col / --group-col / --id-col go to the train and
    dev readers; with --binary and a group column, checkpoints are selected
    on MAP (the ranking scorer); the header repeats the options."""
    path = tmp_path / "answers.cfg"
    args = ["--binary", "--positive-label", "yes", "--text-cols", "question,sentence"]
    args += ["--label-col", "answer", "--group-col", "question_id", "--id-col", "row"]
    result = init_config(path, *args)
    assert result.exit_code == 0, result.output
    config = util.load_config(path, interpolate=True)
    for split in ("train", "dev"):
        reader = config["corpora"][split]
        assert reader["text_cols"] == ["question", "sentence"]
        assert reader["label_col"] == "answer"
        assert reader["group_col"] == "question_id"
        assert reader["id_col"] == "row"
    scorer = config["components"]["attn_pair_classifier"]["scorer"]
    assert scorer["@scorers"] == "spacy-attn.pair_ranking_scorer.v1"
    header = path.read_text(encoding="utf8").split("\n\n")[0]
    assert "--text-cols question,sentence --label-col answer" in header
    assert "--group-col question_id --id-col row" in header
    assert "selected on MAP" in header
    # Multi-class with a group column: the default scorer (MAP needs a
    # positive label); no column options: the readers detect the columns.
    result = init_config(path, "--text-cols", "a,b", "--group-col", "g")
    assert result.exit_code == 0, result.output
    config = util.load_config(path, interpolate=True)
    scorer = config["components"]["attn_pair_classifier"]["scorer"]
    assert scorer["@scorers"] == "spacy-attn.pair_classifier_scorer.v1"
    assert config["corpora"]["dev"]["group_col"] == "g"
    assert config["corpora"]["dev"]["label_col"] is None
    assert init_config(path).exit_code == 0
    config = util.load_config(path, interpolate=True)
    assert config["corpora"]["train"]["text_cols"] is None


def test_column_options_mistakes(tmp_path):
    for args, fragment in [
        (["--text-cols", "a,b,c"], "--text-cols"),
        (["--text-cols", "a,"], "--text-cols"),
        (["--task", "doc", "--group-col", "g"], "--task pair only"),
        (["--task", "doc", "--text-cols", "a,b"], "a doc task needs 1 text column"),
        (["--task", "qa", "--label-col", "y"], "--task pair or doc"),
        (["--task", "qa", "--delimiter", ";"], "--task pair or doc"),
    ]:
        result = init_config(tmp_path / "x.cfg", *args)
        assert result.exit_code == 1, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert not (tmp_path / "x.cfg").exists()


def _sick_rows(n: int, start: int = 0) -> List[Dict[str, str]]:
    with gzip.open(FIXTURES / "sick_train.jsonl.gz", "rt", encoding="utf8") as f:
        return [json.loads(line) for line in f.readlines()[start : start + n]]


def _write_jsonl(path: Path, rows: List[Dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf8")
    return path


def _train(config: Path, train: Path, dev: Path, out: Path, *extra: str) -> None:
    args = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(out)]
    args += ["--paths.train", str(train), "--paths.dev", str(dev)]
    args += ["--training.max_steps", "2", "--training.eval_frequency", "1", *extra]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    result = subprocess.run(args, capture_output=True, text=True, cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.slow  # ~20 s here: `spacy train` in a subprocess
def test_a_written_config_trains(tmp_path):
    """The pair / tok2vec / CPU quickstart trains 2 steps on SICK rows."""
    train = _write_jsonl(tmp_path / "train.jsonl", _sick_rows(24))
    dev = _write_jsonl(tmp_path / "dev.jsonl", _sick_rows(8, start=64))
    config = tmp_path / "config.cfg"
    assert init_config(config, "--task", "pair", "--backbone", "tok2vec").exit_code == 0
    _train(config, train, dev, tmp_path / "out")
    nlp = util.load_model(tmp_path / "out" / "model-last")
    labels = nlp.get_pipe("attn_pair_classifier").labels
    assert set(labels) == {"entailment", "neutral", "contradiction"}


@pytest.mark.slow  # ~20 s here
def test_a_binary_config_trains_with_its_positive_label(tmp_path):
    """--binary: the positive label given on the command line (overridden
    here through [vars]) is the classifier's positive label after training."""
    rows = [
        dict(row, label="match" if row["label"] == "entailment" else "other")
        for row in _sick_rows(40)
    ]
    train = _write_jsonl(tmp_path / "train.jsonl", rows[:32])
    dev = _write_jsonl(tmp_path / "dev.jsonl", rows[32:])
    config = tmp_path / "config.cfg"
    args = ["--backbone", "tok2vec", "--binary", "--positive-label", "yes"]
    assert init_config(config, *args).exit_code == 0
    _train(config, train, dev, tmp_path / "out", "--vars.positive_label", "match")
    nlp = util.load_model(tmp_path / "out" / "model-last")
    pipe = nlp.get_pipe("attn_pair_classifier")
    assert isinstance(pipe, PairClassifier)
    assert set(pipe.labels) == {"match", "other"}
    assert pipe.positive_label == "match"
    assert score_pairs(nlp, [("A man sings.", "A person sings.")]).shape == (1,)


def test_binary_pair_quickstart_settings(tmp_path):
    """A binary pair task weights its classes; the pair model is v6 with
    v4's settings (exact match, no overlap measures); option values in the
    header are shell-quoted; dev evaluation every 200 steps. (The column
    options themselves:
    test_column_options_name_the_columns_in_both_readers.)"""
    path = tmp_path / "binary.cfg"
    args = ["--binary", "--positive-label", "yes", "--text-cols", "#1 String,#2 String"]
    assert init_config(path, *args).exit_code == 0
    config = util.load_config(path, interpolate=True)
    pipe = config["components"]["attn_pair_classifier"]
    assert pipe["class_weights"] == "balanced"
    assert pipe["model"]["@architectures"] == "spacy-attn.DecomposableAttention.v6"
    assert pipe["model"]["exact_match"] is True
    assert pipe["model"]["lexical_features"] is False
    assert pipe["model"]["idf_features"] is False
    assert config["training"]["eval_frequency"] == 200
    written = path.read_text(encoding="utf8").splitlines()[1]
    assert "--text-cols '#1 String,#2 String'" in written
    plain = tmp_path / "plain.cfg"
    assert init_config(plain).exit_code == 0
    pipe = util.load_config(plain, interpolate=True)["components"]
    assert pipe["attn_pair_classifier"]["class_weights"] is None
    qa = tmp_path / "qa.cfg"
    assert init_config(qa, "--task", "qa").exit_code == 0
    assert util.load_config(qa)["training"]["eval_frequency"] == 1000


@pytest.mark.slow  # ~20 s here
def test_a_ranking_config_trains_from_a_csv_with_its_own_columns(tmp_path):
    """A csv with its own column names and a query id trains straight from
    the config init-config writes, selecting checkpoints on MAP."""
    rows = _sick_rows(48)
    header = "qid,query,passage,relevant\n"
    lines = [
        f'q{i // 4},"{row["premise"]}","{row["hypothesis"]}",'
        f"{'yes' if row['label'] == 'entailment' else 'no'}\n"
        for i, row in enumerate(rows)
    ]
    (tmp_path / "train.csv").write_text(header + "".join(lines[:36]), encoding="utf8")
    (tmp_path / "dev.csv").write_text(header + "".join(lines[36:]), encoding="utf8")
    config = tmp_path / "config.cfg"
    args = ["--backbone", "tok2vec", "--binary", "--positive-label", "yes"]
    args += ["--text-cols", "query,passage", "--label-col", "relevant"]
    assert init_config(config, *args, "--group-col", "qid").exit_code == 0
    _train(config, tmp_path / "train.csv", tmp_path / "dev.csv", tmp_path / "out")
    nlp = util.load_model(tmp_path / "out" / "model-best")
    # The dev reader of the written config, as `spacy train` used it.
    filled = util.load_config(
        config, overrides={"paths.dev": str(tmp_path / "dev.csv")}, interpolate=True
    )
    corpus = util.registry.resolve(filled["corpora"])["dev"]
    scores = nlp.evaluate(list(corpus(nlp)))
    assert scores["pair_map"] is not None and 0.0 < scores["pair_map"] <= 1.0
    assert scores["pair_score"] == scores["pair_map"]


@pytest.mark.parametrize("backbone", BACKBONES)
def test_no_answer_qa_config(tmp_path, backbone):
    """--task qa --no-answer: DCN v3 (scores "no answer"), the official SQuAD
    2.0 scorer, no threshold yet, and the header's last step sets it."""
    path = tmp_path / "config.cfg"
    result = init_config(path, "--task", "qa", "--no-answer", "--backbone", backbone)
    assert result.exit_code == 0, result.output
    config = util.load_config(path)
    nlp = util.load_model_from_config(config, auto_fill=False, validate=True)
    pipe = nlp.get_pipe("attn_span_qa")
    assert pipe.scores_no_answer and pipe.no_answer_threshold is None
    block = config["components"]["attn_span_qa"]
    assert block["model"]["@architectures"] == "spacy-attn.DynamicCoattention.v4"
    assert block["model"]["no_answer"] is True
    assert block["scorer"] == {"@scorers": "spacy-attn.squad2_scorer.v1"}
    text = path.read_text(encoding="utf8")
    assert "--task qa --backbone " + backbone + " --no-answer --cpu" in text
    assert "--multiclass" not in text and "SQuAD 2.0 json" in text
    assert (
        "python -m spacy attn qa-threshold training/model-best DEV "
        "training/model-threshold" in result.stdout
    )
    # Without the flag the QA model is the paper's reader, which always answers.
    assert init_config(path, "--task", "qa").exit_code == 0
    plain = util.load_config(path)["components"]["attn_span_qa"]
    assert plain["model"]["@architectures"] == "spacy-attn.DynamicCoattention.v4"
    assert plain["model"]["no_answer"] is False


@pytest.mark.slow  # ~40 s here: `spacy train` in a subprocess, then qa-threshold
def test_a_no_answer_config_trains_and_takes_a_threshold(tmp_path):
    """The user's path with the header's commands: init-config --no-answer,
    spacy train on SQuAD 2.0-style json, then qa-threshold on DEV. Two
    training steps learn nothing, so qa-threshold exits 1 (loudly) with a
    margin, and 0 when told --no-check, and the saved pipeline carries the threshold."""
    from spacy_attn.squad.negatives import add_unanswerable

    from .util import squad_dev

    articles, _ = add_unanswerable(squad_dev()["data"], rate=1.0, seed=0)
    train = tmp_path / "train.json"
    train.write_text(json.dumps({"version": "v2.0", "data": articles[:1]}))
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps({"version": "v2.0", "data": articles[1:]}))
    config = tmp_path / "config.cfg"
    args = ["--task", "qa", "--no-answer", "--backbone", "tok2vec"]
    assert init_config(config, *args).exit_code == 0
    out = tmp_path / "training"
    _train(config, train, dev, out, "--corpora.train.limit", "64")
    best = out / "model-best"
    step = ["qa-threshold", str(best), str(dev), str(tmp_path / "model-threshold")]
    # A threshold chosen on DEV itself can edge past 50 by a lucky question;
    # 5 points it cannot.
    result = CliRunner().invoke(attn_cli, step + ["--min-margin", "5"])
    assert result.exit_code == 1, result.output
    assert "does not beat always-no-answer by more than 5.0" in result.output
    result = CliRunner().invoke(attn_cli, step + ["--no-check"])
    assert result.exit_code == 0, result.output
    assert "always no answer" in result.stdout
    nlp = util.load_model(tmp_path / "model-threshold")
    assert nlp.get_pipe("attn_span_qa").no_answer_threshold is not None


def test_qa_config_streams_its_training_file(tmp_path):
    """QA training reads with SquadCorpus.v4 (questions only, reshuffled each
    pass) and max_epochs = -1, so spaCy streams it rather than keeping every
    gold doc (~110 KB a question); dev keeps v1, read once per evaluation."""
    for flags in ([], ["--no-answer"]):
        path = tmp_path / "qa.cfg"
        assert init_config(path, "--task", "qa", *flags).exit_code == 0
        config = util.load_config(path)
        assert config["corpora"]["train"]["@readers"] == "spacy-attn.SquadCorpus.v4"
        assert config["corpora"]["train"]["shuffle"] is True
        assert config["corpora"]["dev"]["@readers"] == "spacy-attn.SquadCorpus.v1"
        assert legacy_names(config) == []
        assert config["training"]["max_epochs"] == -1
    pair = tmp_path / "pair.cfg"
    assert init_config(pair).exit_code == 0
    assert util.load_config(pair)["training"]["max_epochs"] == 0


def test_the_library_call_of_init_config(tmp_path, capsys):
    """What the command calls, from Python: ``quickstart`` builds the config
    and its header, ``init_config`` checks the settings and writes it."""
    from spacy_attn.quickstart import QuickstartSettings, init_config, quickstart
    from spacy_attn.usage import UsageError

    settings = QuickstartSettings(
        binary=True, text_cols=["question", "sentence"], group_col="qid"
    )
    config, header = quickstart(settings)
    reader = config["corpora"]["dev"]
    assert reader["text_cols"] == ["question", "sentence"]
    assert reader["group_col"] == "qid"
    assert header[header.index("Next:") - 1].startswith("Checkpoints are selected")
    path = tmp_path / "config.cfg"
    assert init_config(path, settings) == config
    assert util.load_config(path)["corpora"]["dev"]["group_col"] == "qid"
    assert capsys.readouterr().out.startswith(f"Wrote {path}. Next:")
    with pytest.raises(UsageError, match="--task 'x': choose one of"):
        init_config(path, QuickstartSettings(task="x"))
