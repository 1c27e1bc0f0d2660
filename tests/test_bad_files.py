"""Files as the world ships them, and the mistakes people make with them:
every line is a row, a blank line or a refusal naming its line; labels and
columns are checked before a model trains or predicts on them; one line,
never a traceback (docs/own_data.md, "When the file is wrong")."""

import json
import subprocess
import sys

import pytest
import spacy
from spacy.training import Example
from spacy.util import load_config, load_model_from_config
from typer.testing import CliRunner

from spacy_attn import make_pair
from spacy_attn.cli import attn_cli
from spacy_attn.errors import CorpusFormatError
from spacy_attn.readers import Columns, RowReader, cats_for, read_pair_rows
from spacy_attn.readers.pair_corpus import one_line_corpus_errors

HEADER = "QuestionID\tQuestion\tSentence\tLabel\n"
# As answer-sentence releases write them: tab-separated, quotes unescaped,
# a sentence that opens a quotation and another that ends one.
RAW_QUOTES = [
    ("q1", "Who said it?", '"I will go," said Ann.', "1"),
    ("q1", "Who said it?", '"The bridge is long', "0"),
    ("q1", "Who said it?", "It rained.", "0"),
    ("q2", 'What is "Dune"?', 'He wrote it." Then he left.', "0"),
    ("q2", 'What is "Dune"?', '"Dune" is a novel.', "1"),
    ("q2", 'What is "Dune"?', "Birds fly.", "0"),
]
COLS = ["--text-cols", "Question,Sentence", "--label-col", "Label"]


def write_tsv(path, rows, header=HEADER):
    path.write_text(header + "".join("\t".join(r) + "\n" for r in rows), "utf8")
    return path


def run(*args):
    return CliRunner().invoke(attn_cli, [str(a) for a in args])


def one_line_error(result):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


@pytest.fixture(scope="module")
def trained_path(tmp_path_factory):
    """A binary pair pipeline from `init-config` (columns Question,Sentence,
    group QuestionID, positive label 1), initialized and saved: its config
    records the columns it was trained with."""
    tmp = tmp_path_factory.mktemp("bad_files")
    cfg = tmp / "pairs.cfg"
    result = run(
        "init-config", cfg, "--binary", "--positive-label", "1", *COLS,
        "--group-col", "QuestionID",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    nlp = load_model_from_config(load_config(cfg), auto_fill=True)
    examples = []
    for _, question, sentence, label in RAW_QUOTES:
        doc = make_pair(nlp, question, sentence)
        ref = doc.copy()
        ref.cats = cats_for(label, "1")  # as the reader gives them
        examples.append(Example(doc, ref))
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp / "model")
    return tmp / "model"


def test_tsv_with_raw_quotes_reads_every_line(tmp_path, trained_path):
    src = write_tsv(tmp_path / "release.tsv", RAW_QUOTES)
    reader = RowReader(src)
    rows = list(reader.rows())
    assert [r.record["Sentence"] for r in rows] == [r[2] for r in RAW_QUOTES]
    assert (reader.counts.lines, reader.counts.rows, reader.counts.bad) == (7, 6, 0)
    read, stats = read_pair_rows(
        src, columns=Columns(["Question", "Sentence"], "Label")
    )
    assert [r.second for r in read] == [r[2] for r in RAW_QUOTES]
    assert "7 lines: 1 header, 6 rows, 0 blank, 0 bad" in stats.describe()
    # predict, with the columns the model was trained with (no --text-cols).
    out = tmp_path / "out.jsonl"
    result = run("predict", trained_path, src, out, "--no-progress")
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 6
    assert "7 lines: 1 header, 6 rows, 0 blank, 0 bad" in result.output
    assert [json.loads(ln)["group"] for ln in out.read_text().splitlines()] == [
        r[0] for r in RAW_QUOTES
    ]
    # convert counts the lines too.
    result = run("convert", src, tmp_path / "out.spacy", *COLS)
    assert result.exit_code == 0 and "6 rows, 0 blank, 0 bad" in result.output


def test_a_csv_quote_that_does_not_close_is_its_lines_error(tmp_path, trained_path):
    lines = [f"Where is item {i}?,Item {i} is here.,{i % 2}" for i in range(6)]
    for bad, where in ((5, 7), (0, 2)):
        rows = list(lines)
        rows[bad] = rows[bad].replace("Item", '"Item')
        src = tmp_path / f"bad{bad}.csv"
        src.write_text("Question,Sentence,Label\n" + "\n".join(rows) + "\n", "utf8")
        out, rejects = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
        result = run(
            "predict", trained_path, src, out, "--rejects", rejects,
            "--overwrite", "--no-progress",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert len(out.read_text().splitlines()) == 5  # every other row
        (reject,) = [json.loads(ln) for ln in rejects.read_text().splitlines()]
        assert reject["line"] == where and "does not close" in reject["reason"]
        assert "7 lines: 1 header, 5 rows, 0 blank, 1 bad" in result.output
        error = one_line_error(run("convert", src, tmp_path / "x.spacy", *COLS))
        assert f"bad{bad}.csv:{where}: a quoted field opens on this line" in error
    # A cell that holds a line break is read whole when asked.
    src = tmp_path / "multi.csv"
    src.write_text('Question,Sentence,Label\nWhy?,"Two\nlines.",1\nWho?,Ann.,0\n')
    rows, _ = read_pair_rows(
        src,
        quoting="multiline",
        columns=Columns(["Question", "Sentence"], "Label"),
    )
    assert [(r.second, r.line) for r in rows] == [("Two\nlines.", 2), ("Ann.", 4)]
    src.write_text('Question,Sentence,Label\nWhy?,"Two lines.,1\nWho?,Ann.,0\n')
    with pytest.raises(CorpusFormatError, match="multi.csv:2: a quoted field opens"):
        read_pair_rows(
            src,
            quoting="multiline",
            columns=Columns(["Question", "Sentence"], "Label"),
        )


def test_binary_labels_are_checked_before_training(tmp_path):
    cols = Columns(["Question", "Sentence"], "Label")
    src = write_tsv(tmp_path / "01.tsv", RAW_QUOTES)
    with pytest.raises(CorpusFormatError, match="no row has the positive label 'yes'"):
        read_pair_rows(src, columns=cols, positive_label="yes")
    third = [*RAW_QUOTES, ("q3", "Why?", "Because.", "2")]
    src = write_tsv(tmp_path / "012.tsv", third)
    with pytest.raises(CorpusFormatError, match="needs the positive label '1' and one"):
        read_pair_rows(src, columns=cols, positive_label="1")
    assert read_pair_rows(src, columns=cols)[1].labels == {"0": 4, "1": 2, "2": 1}
    error = one_line_error(
        run("convert", src, tmp_path / "x.spacy", *COLS, "--positive-label", "1")
    )
    assert "012.tsv: a binary task needs" in error
    error = one_line_error(
        run("convert", src, tmp_path / "x.spacy", "--text-cols", "Question,Sentence",
            "--label-col", "Question")
    )  # fmt: skip
    assert "'Question' is also a text column" in error
    error = one_line_error(
        run("init-config", tmp_path / "c.cfg", "--multiclass", "--positive-label", "1")
    )
    assert "--positive-label names the positive label of a binary task" in error


def test_the_model_knows_its_columns(tmp_path, trained_path):
    src = write_tsv(tmp_path / "test.tsv", RAW_QUOTES)
    swapped = ["--text-cols", "Sentence,Question"]
    error = one_line_error(
        run("predict", trained_path, src, tmp_path / "o.jsonl", *swapped)
    )
    assert "swaps the columns the model was trained with (Question,Sentence)" in error
    error = one_line_error(run("evaluate", trained_path, src, *swapped))
    assert "swaps the columns" in error
    # Without column options, evaluate reads the trained columns and group.
    result = run("evaluate", trained_path, src, "--json", "--no-check")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["pair_map"] is not None
    assert "7 lines: 1 header, 6 rows" in scores["read"]
    # A test file without positives is one line, not a traceback.
    negatives = write_tsv(tmp_path / "neg.tsv", [r for r in RAW_QUOTES if r[3] == "0"])
    error = one_line_error(run("evaluate", trained_path, negatives))
    assert "neg.tsv: no row has the positive label '1'" in error


def test_weak_messages_name_the_fix(tmp_path):
    semi = tmp_path / "semi.csv"
    semi.write_text("Question;Sentence;Label\nWhy?;Because.;1\n", "utf8")
    with pytest.raises(CorpusFormatError, match="holds ';': pass --delimiter ';'"):
        read_pair_rows(semi, columns=Columns(["Question", "Sentence"], "Label"))
    rows, _ = read_pair_rows(
        semi, delimiter=";", columns=Columns(["Question", "Sentence"], "Label")
    )
    assert rows[0].second == "Because."
    tabbed = tmp_path / "tabbed.csv"
    tabbed.write_text("Question\tSentence\tLabel\nWhy?\tBecause.\t1\n", "utf8")
    with pytest.raises(CorpusFormatError, match="holds tabs: pass --format tsv"):
        read_pair_rows(tabbed, columns=Columns(["Question", "Sentence"], "Label"))
    latin = tmp_path / "latin.tsv"
    latin.write_bytes(HEADER.encode() + "q\tCaf\xe9?\tYes.\t1\n".encode("latin-1"))
    (row,) = RowReader(latin).rows()
    assert row.line == 2 and "invalid UTF-8 (byte 0xe9 at column 6)" in row.error
    # A cell over the csv module's own 131,072-character limit.
    big = tmp_path / "big.csv"
    big.write_text("Question,Sentence,Label\nWhy?," + "a" * 150_000 + ",1\n", "utf8")
    (row,) = RowReader(big).rows()
    assert row.error is None and len(row.record["Sentence"]) == 150_000


def test_an_uncaught_corpus_error_prints_one_line():
    """What `spacy train` shows for a data mistake (the hook the registered
    readers install): one line on stderr, exit 1."""
    code = (
        "from spacy_attn.readers.pair_corpus import one_line_corpus_errors\n"
        "from spacy_attn.errors import CorpusFormatError\n"
        "one_line_corpus_errors()\n"
        "raise CorpusFormatError('train.tsv:3: a quoted field opens here')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == "✘ train.tsv:3: a quoted field opens here\n"
    # Other errors keep their traceback; installing twice adds nothing.
    previous = sys.excepthook
    try:
        one_line_corpus_errors()
        hook = sys.excepthook
        one_line_corpus_errors()
        assert sys.excepthook is hook
    finally:
        sys.excepthook = previous


@pytest.mark.slow
def test_spacy_train_on_a_bad_file_is_one_line(tmp_path):
    cfg = tmp_path / "pairs.cfg"
    assert (
        run("init-config", cfg, "--binary", "--positive-label", "1", *COLS).exit_code
        == 0
    )
    train = write_tsv(tmp_path / "train.tsv", RAW_QUOTES)
    bad = write_tsv(
        tmp_path / "bad.tsv", RAW_QUOTES, HEADER.replace("\tQuestion\t", "\tQuestoin\t")
    )
    done = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(cfg), "--paths.train", str(bad),
         "--paths.dev", str(train), "--training.max_steps", "1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"✘ {bad}:1: the header has no column 'Question'")
    )
    assert spacy.__version__  # the spaCy that ran is this one


def test_spacy_evaluate_shows_the_pair_scores(tmp_path, trained_path, capsys):
    """spaCy's own `spacy evaluate` prints the pair score (its TEXTCAT row)
    and the per-label table; `spacy attn evaluate` says how many groups MAP
    averages over."""
    from spacy.cli.evaluate import evaluate

    src = write_tsv(tmp_path / "test.tsv", [*RAW_QUOTES, ("q3", "Why?", "No.", "0")])
    docbin = tmp_path / "test.spacy"
    args = [*COLS, "--group-col", "QuestionID", "--positive-label", "1"]
    assert run("convert", src, docbin, *args).exit_code == 0
    capsys.readouterr()
    scores = evaluate(str(trained_path), docbin, silent=False)
    printed = capsys.readouterr().out
    assert scores["cats_score"] == scores["pair_score"] == scores["pair_map"]
    assert "TEXTCAT (pair MAP)" in printed and "Textcat F (per label)" in printed
    assert (scores["pair_map_groups"], scores["pair_map_groups_without_positive"]) == (
        2,
        1,
    )
    result = run("evaluate", trained_path, src, "--no-check")
    assert "over 2 groups (1 without a positive pair left out)" in result.output
