"""Headers and cells that used to be read silently wrong (issue 58, "Headers
and cells"): a header that names a column twice, a text column named twice,
an empty text, a header line repeated inside the file, an empty group id and
the rest of a multi-line cell. Each is refused, or a bad row that the reader's
policy counts, rejects or stops at; none is scored or written
(docs/own_data.md, "When the file is wrong")."""

import json
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from spacy.util import registry
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.errors import CorpusFormatError
from spacy_attn.readers import Columns, RowReader, read_pair_rows

from .test_multiprocess import build_pipeline

HEADER = "qid,question,sentence,label"
ROWS = [
    "q1,Who sleeps?,A man sleeps.,entailment",
    "q1,Who sleeps?,A cat runs.,contradiction",
    "q2,Where is he?,He is in Paris.,entailment",
]
COLS = ["--text-cols", "question,sentence", "--label-col", "label"]


@pytest.fixture(scope="module")
def pair_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cells") / "pair"
    build_pipeline("pair", n_iter=1).to_disk(path)
    return path


def write(path: Path, rows: List[str], header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf8")
    return path


def run(*args):
    return CliRunner().invoke(attn_cli, [str(a) for a in args])


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def predict(model: Path, src: Path, tmp_path: Path, *options: str):
    """``predict`` with --rejects: the result, the rows written and the rejects."""
    out, rejects = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
    result = run(
        "predict", model, src, out, "--rejects", rejects, "--overwrite",
        "--no-progress", *options,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [json.loads(ln) for ln in out.read_text("utf8").splitlines()]
    rejected = [json.loads(ln) for ln in rejects.read_text("utf8").splitlines()]
    return result, lines, rejected


def assert_predict_stops(model: Path, src: Path, tmp_path: Path, *fragments: str):
    """``predict`` without --rejects stops at the bad row, no row written."""
    out = tmp_path / "stopped.jsonl"
    error = one_line_error(run("predict", model, src, out, "--no-progress", *COLS[:2]))
    for fragment in fragments:
        assert fragment in error, error
    assert not out.exists() or not out.read_text("utf8").strip()


def assert_convert_refuses(src: Path, tmp_path: Path, *fragments: str, options=()):
    out = tmp_path / "pairs.spacy"
    error = one_line_error(run("convert", src, out, *COLS, *options))
    for fragment in fragments:
        assert fragment in error, error
    assert not out.exists()


def test_a_header_that_names_a_column_twice_is_refused(tmp_path, pair_model):
    # Read as a dict, the second "question" cell replaced the first: every
    # pair read wrong, "0 bad".
    src = write(tmp_path / "twice.csv", ROWS, header="qid,question,question,label")
    fragment = "twice.csv:1: the header names column 'question' twice"
    assert_convert_refuses(src, tmp_path, fragment, "fields 2 and 3")
    assert_predict_stops(pair_model, src, tmp_path, fragment)
    with pytest.raises(CorpusFormatError, match=fragment):
        RowReader(src).columns()


def test_a_text_column_named_twice_is_refused(tmp_path, pair_model):
    twice = "question,question"
    fragment = "column 'question' is named twice"
    config = tmp_path / "config.cfg"
    error = one_line_error(run("init-config", config, "--text-cols", twice))
    assert "--text-cols" in error and fragment in error
    assert not config.exists()
    src = write(tmp_path / "in.csv", ROWS)
    out = tmp_path / "out.jsonl"
    error = one_line_error(
        run("predict", pair_model, src, out, "--text-cols", twice, "--no-progress")
    )
    assert "--text-cols" in error and fragment in error
    assert not out.exists()
    # spacy train: the reader its config names refuses before the first step.
    reader = {"@readers": "spacy-attn.PairCorpus.v2", "path": str(src)}
    reader["text_cols"] = ["question", "question"]
    with pytest.raises(CorpusFormatError, match=fragment):
        registry.resolve({"train": reader})
    with pytest.raises(CorpusFormatError, match=fragment):
        Columns.parse(" question, question", kind=None)


@pytest.mark.slow
def test_spacy_train_refuses_a_text_column_named_twice(tmp_path):
    config = tmp_path / "config.cfg"
    assert run("init-config", config, *COLS).exit_code == 0
    text = config.read_text("utf8")
    named = 'text_cols = ["question", "sentence"]'
    assert text.count(named) == 2, text
    config.write_text(text.replace(named, 'text_cols = ["question", "question"]'))
    src = write(tmp_path / "in.csv", ROWS)
    done = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(config), "--paths.train",
         str(src), "--paths.dev", str(src), "--output", str(tmp_path / "out")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("✘ --text-cols") and "named twice" in last, last
    # spaCy makes the output folder first; no model is saved in it.
    assert not list((tmp_path / "out").glob("*"))


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_text_is_a_bad_row(tmp_path, pair_model, empty):
    rows = list(ROWS)
    rows[1] = f"q1,Who sleeps?,{empty},contradiction"
    src = write(tmp_path / "empty.csv", rows)
    fragment = "empty.csv:3: column 'sentence' is empty"
    assert_convert_refuses(src, tmp_path, fragment)
    error = one_line_error(run("evaluate", pair_model, src, *COLS))
    assert fragment in error
    assert_predict_stops(pair_model, src, tmp_path, fragment)
    result, lines, rejected = predict(pair_model, src, tmp_path, *COLS[:2])
    assert [line["id"] for line in lines] == [2, 4]  # never scored
    assert [r["line"] for r in rejected] == [3]
    assert "column 'sentence' is empty" in rejected[0]["reason"]
    assert "4 lines: 1 header, 2 rows, 0 blank, 1 bad" in result.output
    assert "2 rows written" in result.output and ", 1 rejected" in result.output
    # jsonl too, through the same columns.
    src = tmp_path / "empty.jsonl"
    record = {"premise": "A man sleeps.", "hypothesis": empty, "label": "neutral"}
    src.write_text(json.dumps(record) + "\n", encoding="utf8")
    with pytest.raises(CorpusFormatError, match="empty.jsonl:1: column 'hypothesis'"):
        read_pair_rows(src)


def test_a_header_line_inside_the_file_is_a_bad_row(tmp_path, pair_model):
    # Two csv files joined: the second header used to be a pair (or a label).
    src = write(tmp_path / "joined.csv", [*ROWS[:2], HEADER, *ROWS[2:]])
    fragment = "joined.csv:4: this line repeats the header (line 1)"
    assert_convert_refuses(src, tmp_path, fragment)
    assert_predict_stops(pair_model, src, tmp_path, fragment)
    _, lines, rejected = predict(pair_model, src, tmp_path, *COLS[:2])
    assert [line["id"] for line in lines] == [2, 3, 5]
    assert [r["line"] for r in rejected] == [4]
    assert "repeats the header" in rejected[0]["reason"]


def test_an_empty_group_id_is_refused_for_ranking(tmp_path, pair_model):
    rows = list(ROWS)
    rows[2] = " ,Where is he?,He is in Paris.,entailment"
    src = write(tmp_path / "groups.csv", rows)
    fragment = "groups.csv:4: column 'qid' (--group-col"
    group = ("--group-col", "qid")
    assert_convert_refuses(src, tmp_path, fragment, "is empty", options=group)
    error = one_line_error(run("evaluate", pair_model, src, *COLS, *group))
    assert fragment in error and "is empty" in error
    _, lines, rejected = predict(pair_model, src, tmp_path, *COLS[:2], *group)
    assert [line["group"] for line in lines] == ["q1", "q1"]
    assert [r["line"] for r in rejected] == [4] and "is empty" in rejected[0]["reason"]


def test_the_rest_of_a_multi_line_cell_is_not_a_row(tmp_path, pair_model):
    # Excel's cell with a line break, read without --quoting multiline: its
    # second line parses as a row of four fields of its own.
    rows = [ROWS[0], 'q1,Who sleeps?,"A man', 'sleeps, they, say.",entailment', ROWS[2]]
    src = write(tmp_path / "cells.csv", rows)
    _, lines, rejected = predict(pair_model, src, tmp_path, *COLS[:2])
    assert [line["id"] for line in lines] == [2, 5]
    assert [r["line"] for r in rejected] == [3, 4]
    assert "does not close on it" in rejected[0]["reason"]
    reason = rejected[1]["reason"]
    assert "continues the quoted cell that opens on line 3" in reason
    assert "--quoting multiline" in reason
    # Read as the hint says, the cell is whole.
    read, _ = read_pair_rows(src, quoting="multiline", columns=Columns.parse(COLS[1]))
    assert read[1].second == "A man\nsleeps, they, say."
    # A stray quote that never closes leaves the lines after it alone.
    rows = [ROWS[0], 'q1,Who sleeps?,"A man sleeps.,entailment', *ROWS[1:]]
    src = write(tmp_path / "stray.csv", rows)
    _, lines, rejected = predict(pair_model, src, tmp_path, *COLS[:2])
    assert [line["id"] for line in lines] == [2, 4, 5]
    assert [r["line"] for r in rejected] == [3]
