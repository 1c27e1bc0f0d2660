"""The distillation transfer set and rank's candidates report like the pair
reader: the file and line, what is wrong and what to do, in one line (a
``CorpusFormatError``, or the command's ``Error:`` line), never a
traceback; the transfer set is checked when its reader is made, so `spacy
train` stops before its first step."""

import json

import pytest
import spacy
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
