"""The distillation transfer set and rank's candidates report like the pair
reader: the file and line, what is wrong and what to do, in one line (a
``CorpusFormatError``, or the command's ``Error:`` line), never a
traceback; the transfer set is checked when its reader is made, so `spacy
train` stops before its first step."""

import json
import subprocess
import sys

import pytest
import spacy
from spacy.util import registry
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.errors import CorpusFormatError
from spacy_attn.readers import create_distill_corpus_reader

GOOD = {"first": "A dog runs.", "second": "An animal moves.", "teacher": {"yes": 0.9}}
REWRITE = "a transfer set is the file `spacy attn distill` writes"
# (the second line of the file, what the one line says after "FILE:2: ")
CASES = [
    (b'{"first": "a", "second"', "invalid JSON (Expecting ':' delimiter at column 24)"),
    (b'{"first": "caf\xe9", "second": "b"}', "invalid UTF-8 (byte 0xe9 at byte 15)"),
    (b'["a", "b"]', "expected a JSON object, got list"),
    (
        json.dumps({**GOOD, "teacher": {"yes": "high"}}).encode(),
        "\"teacher\" holds a score that is not a number ({'yes': 'high'})",
    ),
    (json.dumps({**GOOD, "cats": ["yes"]}).encode(), 'no "cats" cats ({label: score})'),
]


@pytest.mark.parametrize("line,said", CASES, ids=[said[:20] for _, said in CASES])
def test_a_bad_transfer_row_is_named_when_the_reader_is_made(tmp_path, line, said):
    path = tmp_path / "transfer.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + line + b"\n")
    with pytest.raises(CorpusFormatError) as err:
        create_distill_corpus_reader(path)
    assert str(err.value).startswith(f"{path}:2: {said}"), str(err.value)
    assert REWRITE in str(err.value)


def test_a_missing_transfer_set_is_named(tmp_path):
    path = tmp_path / "transfer.jsonl"
    with pytest.raises(CorpusFormatError, match="transfer set not found; a transfer"):
        create_distill_corpus_reader(path)
    path.write_text(json.dumps(GOOD) + "\n")
    (example,) = create_distill_corpus_reader(path)(spacy.blank("en"))
    assert example.reference.text


def test_rank_names_the_line_that_is_not_utf8(tmp_path):
    candidates = tmp_path / "candidates.txt"
    candidates.write_bytes("\ufeffA person rests.\n".encode() + b"Caf\xe9 noir.\n")
    result = CliRunner().invoke(attn_cli, ["rank", "model", "q", str(candidates)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: {candidates}:2: invalid UTF-8 (byte 0xe9 at byte 4 of the line): the "
        f"file is in another encoding (e.g. Latin-1 or Windows-1252); save it as UTF-8."
    )
    assert "Traceback" not in result.output


PAIRS = "premise,hypothesis,label\nA man sleeps.,A person rests.,entailment\n"
QUOTE = '"A dog runs.,A cat sits.,neutral\n'


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_pair_readers_read_their_file_when_made(tmp_path, version):
    """spacy train builds the train and dev readers before its first step:
    a bad or missing file stops it there, not after "Aborting and saving"."""
    make = registry.readers.get(f"spacy-attn.PairCorpus.{version}")
    bad = tmp_path / "dev.csv"
    bad.write_text(PAIRS + QUOTE, encoding="utf8")
    with pytest.raises(CorpusFormatError, match=f"^{bad}:3: a quoted field opens"):
        make(bad)
    missing = tmp_path / "missing.csv"
    with pytest.raises(CorpusFormatError, match="missing.csv: file not found; check"):
        make(missing)
    bad.write_text(PAIRS, encoding="utf8")
    assert len(list(make(bad)(spacy.blank("en")))) == 1
    assert list(make(None)(spacy.blank("en"))) == []


def test_the_textcat_reader_reads_its_file_when_made(tmp_path):
    make = registry.readers.get("spacy-attn.TextCatCorpus.v1")
    bad = tmp_path / "dev.jsonl"
    bad.write_text('{"text": "Fine.", "label": "pos"}\n{"text": "Bad."}\n', "utf8")
    with pytest.raises(CorpusFormatError, match=f"^{bad}:2: expected keys 'text'"):
        make(bad)
    with pytest.raises(CorpusFormatError, match="file not found"):
        make(tmp_path / "missing.jsonl")


@pytest.mark.slow
def test_spacy_train_stops_on_a_bad_dev_pair_file_before_training(tmp_path):
    config = tmp_path / "pair.cfg"
    args = ["init-config", str(config), "--text-cols", "premise,hypothesis"]
    assert CliRunner().invoke(attn_cli, args).exit_code == 0
    train = tmp_path / "train.csv"
    train.write_text(PAIRS + "A dog runs.,A cat sits.,neutral\n", encoding="utf8")
    dev = tmp_path / "dev.csv"
    dev.write_text(PAIRS + QUOTE, encoding="utf8")
    output = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(config), "--output",
         str(output), "--paths.train", str(train), "--paths.dev", str(dev),
         "--training.max_steps", "2", "--training.eval_frequency", "1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"✘ {dev}:3: a quoted field opens on this line"), last
    assert not (output / "model-last").exists()
