"""spacy-attn.TextCatCorpus.v2: a text-classification file in any row format
(jsonl, csv, tsv, gzipped or not) through the one column model, read as v1
reads its jsonl; the columns named as the pair reader names them."""

import gzip
import json

import pytest
import spacy
from spacy.util import registry

from spacy_attn.readers import CorpusFormatError

from .util import FIXTURES

ROWS = [("A good film.", "pos"), ('Bad, "very" bad.', "neg"), ("Fine\tenough.", "pos")]


def _read(path, **settings):
    reader = registry.readers.get("spacy-attn.TextCatCorpus.v2")(path, **settings)
    return [(eg.reference.text, eg.reference.cats) for eg in reader(spacy.blank("en"))]


def _csv(path, header, rows, delimiter=","):
    import csv

    with open(path, "w", newline="", encoding="utf8") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _cats(label):
    return {"neg": float(label == "neg"), "pos": float(label == "pos")}


def test_csv_tsv_and_jsonl_give_the_same_examples(tmp_path):
    want = [(text, _cats(label)) for text, label in ROWS]
    jsonl = tmp_path / "a.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf8") as f:
        f.writelines(json.dumps({"text": t, "label": y}) + "\n" for t, y in ROWS)
    assert _read(jsonl) == want
    # Columns named as a user's file names them (IMDB's csv: review, sentiment).
    csv_path = _csv(tmp_path / "imdb.csv", ["review", "sentiment"], ROWS)
    assert _read(csv_path, text_cols=["review"], label_col="sentiment") == want
    tsv = _csv(tmp_path / "a.tsv", ["label", "text"], [(y, t) for t, y in ROWS], "\t")
    # A tab inside a tsv cell cannot be written unquoted: csv.writer quotes
    # it, so the tsv is read with line quoting.
    assert _read(tsv, quoting="line") == want


def test_v2_reads_the_mirrors_jsonl_as_v1_does():
    path = FIXTURES / "rotten_tomatoes_train.jsonl.gz"
    v1 = registry.readers.get("spacy-attn.TextCatCorpus.v1")(path)
    nlp = spacy.blank("en")
    old = [(eg.reference.text, eg.reference.cats) for eg in v1(nlp)]
    assert len(old) > 50 and _read(path) == old


def test_label_lists_integers_and_limit(tmp_path):
    path = tmp_path / "yelp.jsonl"
    rows = [{"text": "Great.", "stars": 5.0}, {"text": "Both.", "stars": [1, 5]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # 5.0 is the label "5", as in the pair reader (v1 reads "5.0").
    got = _read(path, label_col="stars", labels=["1", "5"])
    assert [cats for _, cats in got] == [{"1": 0.0, "5": 1.0}, {"1": 1.0, "5": 1.0}]
    assert len(_read(path, label_col="stars", limit=1)) == 1


TEXT_OPTION = r"--text-cols \(text_cols in a reader config\)"
BAD_FILES = [
    (
        ["review", "label"],
        [("x", "pos")],
        {},
        r"a.csv:1: the header has no column for text 1 \(looked for \['text'\]; "
        rf"name it with {TEXT_OPTION}\); found columns \['review', 'label'\]",
    ),
    (["text", "stars"], [("x", "5")], {}, r"no label column \(looked for \['label', "),
    (
        ["text", "label"],
        [("x", "a"), ("", "b")],
        {},
        r"a.csv:3: column 'text' is empty",
    ),
    (["text", "label"], [("x", "a"), ("y", "")], {}, r"a.csv:3: the label \('label'\)"),
    (
        ["text", "label"],
        [("x", "pos")],
        {"text_cols": ["text", "label"]},
        r"a doc task needs 1 text column",
    ),
    (
        ["text", "label"],
        [("x", "pos")],
        {"label_col": "sentiment"},
        r"the header has no column 'sentiment' \(--label-col",
    ),
]


@pytest.mark.parametrize("header,rows,settings,message", BAD_FILES)
def test_bad_files_name_the_line_and_the_setting(
    tmp_path, header, rows, settings, message
):
    path = _csv(tmp_path / "a.csv", header, rows)
    with pytest.raises(CorpusFormatError, match=message):
        _read(path, **settings)


def test_docbin_and_no_path(tmp_path):
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    doc = nlp.make_doc("Nice.")
    doc.cats = {"pos": 1.0, "neg": 0.0}
    DocBin(docs=[doc]).to_disk(tmp_path / "a.spacy")
    assert _read(tmp_path / "a.spacy") == [("Nice.", {"pos": 1.0, "neg": 0.0})]
    assert _read(None) == []
