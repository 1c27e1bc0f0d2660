"""A malformed SQuAD file reports like a malformed pair file: the file, the
article / paragraph / question, what is wrong and what to do, in one line
(``CorpusFormatError``): one ``Error:`` line and exit 1 under ``spacy attn
evaluate``, one ``✘`` line under ``spacy train``, before its first step, so
a bad dev file leaves no half-trained model. Never a traceback."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
import spacy
from spacy.util import registry
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.errors import CorpusFormatError
from spacy_attn.squad import load_squad_json

CONTEXT = "The cat sat on the mat. It was warm."


def squad() -> Dict[str, Any]:
    questions = [
        {
            "id": "q1",
            "question": "Where did the cat sit?",
            "answers": [{"text": "on the mat", "answer_start": 12}],
        },
        {
            "id": "q2",
            "question": "How was it?",
            "answers": [{"text": "warm", "answer_start": 31}],
        },
    ]
    paragraph = {"context": CONTEXT, "qas": questions}
    return {"version": "1.1", "data": [{"title": "Cats", "paragraphs": [paragraph]}]}


def second_question(change: Callable[[Dict[str, Any]], Any]) -> str:
    data = squad()
    qas = data["data"][0]["paragraphs"][0]["qas"]
    qas[1] = change(qas[1])
    return json.dumps(data)


def without_answers(qa: Dict[str, Any]) -> Dict[str, Any]:
    del qa["answers"]
    return qa


def null_question(qa: Dict[str, Any]) -> Dict[str, Any]:
    return {**qa, "question": None}


WHERE = "article 0 ('Cats'), paragraph 0, question"
# (file name, its text, what the one line says after the file name)
CASES = [
    (
        "no_answers.json",
        second_question(without_answers),
        f"{WHERE} 'q2': 'answers' is missing; give every question an 'answers' "
        f"list: its gold answers",
    ),
    (
        "null_question.json",
        second_question(null_question),
        f"{WHERE} 'q2': 'question' is null; every question needs a string 'id' "
        f"and 'question'",
    ),
    (
        "null_object.json",
        second_question(lambda qa: None),
        f"{WHERE} 1: null where a question object was expected",
    ),
    (
        "truncated.json",
        json.dumps(squad())[:150],
        "invalid JSON (Unterminated string starting at: line 1, column",
    ),
    (
        "pairs.csv",
        "question,context\nWhere?,The cat sat.\n",
        "invalid JSON (Expecting value: line 1, column 1); a QA corpus is SQuAD "
        "JSON (.json, .json.gz) or a .spacy DocBin of QA docs, and this is a file "
        "of rows: for pairs use a pair config",
    ),
]
IDS = [name for name, _, _ in CASES]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf8")
    return path


@pytest.mark.parametrize("name,text,said", CASES, ids=IDS)
def test_load_squad_json_names_file_question_and_fix(tmp_path, name, text, said):
    path = write(tmp_path, name, text)
    with pytest.raises(CorpusFormatError) as err:
        load_squad_json(path)
    assert str(err.value).startswith(f"{path}: {said}"), str(err.value)


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4"])
@pytest.mark.parametrize("name,text,said", CASES, ids=IDS)
def test_squad_readers_check_the_file_when_made(tmp_path, name, text, said, version):
    """The registered readers read the file's structure when spaCy builds
    them (at `spacy train`'s start), before any doc is made."""
    path = write(tmp_path, name, text)
    make = registry.readers.get(f"spacy-attn.SquadCorpus.{version}")
    with pytest.raises(CorpusFormatError, match="^" + str(path)):
        make(path)
    missing = tmp_path / "missing.json"
    with pytest.raises(CorpusFormatError, match="file not found; check the corpus"):
        make(missing)
    # A good file, a DocBin and no path are read as before.
    good = write(tmp_path, "good.json", json.dumps(squad()))
    assert len(list(make(good)(spacy.blank("en")))) == 2
    assert list(make(None)(spacy.blank("en"))) == []


@pytest.fixture(scope="module")
def qa_model(tmp_path_factory) -> Path:
    from .test_multiprocess import build_pipeline

    path = tmp_path_factory.mktemp("qa") / "qa"
    build_pipeline("qa", n_iter=1).to_disk(path)
    return path


@pytest.mark.parametrize("name,text,said", CASES[:4], ids=IDS[:4])
def test_evaluate_a_bad_squad_file_is_one_line(tmp_path, qa_model, name, text, said):
    path = write(tmp_path, name, text)
    result = CliRunner().invoke(attn_cli, ["evaluate", str(qa_model), str(path)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: {said}"), lines
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_spacy_train_stops_on_a_bad_dev_file_before_training(tmp_path):
    """One ✘ line and exit 1 before the first step: no model-last."""
    config = tmp_path / "qa.cfg"
    result = CliRunner().invoke(attn_cli, ["init-config", str(config), "--task", "qa"])
    assert result.exit_code == 0, result.output
    good = write(tmp_path, "good.json", json.dumps(squad()))
    for name, text, said in (CASES[0], CASES[4]):
        bad = write(tmp_path, name, text)
        output = tmp_path / f"out_{name}"
        done = subprocess.run(
            [sys.executable, "-m", "spacy", "train", str(config), "--output",
             str(output), "--paths.train", str(good), "--paths.dev", str(bad),
             "--training.max_steps", "2", "--training.eval_frequency", "1"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"✘ {bad}: {said}"), last
        assert not (output / "model-last").exists()
