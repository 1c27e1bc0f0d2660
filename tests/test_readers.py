"""Pair corpus readers and the converter, on small files written by the tests."""

import gzip
import json
import subprocess
import sys
import zlib

import pytest
import spacy
import srsly
from spacy.tokens import DocBin
from spacy.util import registry

from spacy_attn import get_pair_texts, has_pair, make_pair
from spacy_attn.readers import CorpusFormatError, PairCorpus, read_pair_rows


@pytest.fixture
def nlp():
    return spacy.blank("en")


def write(path, text):
    path.write_text(text, encoding="utf8")
    return path


def test_official_snli_jsonl_skips_unlabelled(tmp_path, nlp, caplog):
    rows = [
        {
            "gold_label": "neutral",
            "sentence1": "A b.",
            "sentence2": "C d.",
            "pairID": "1",
        },
        {"gold_label": "-", "sentence1": "E.", "sentence2": "F.", "pairID": "2"},
        {
            "gold_label": "entailment",
            "sentence1": "G h.",
            "sentence2": "I.",
            "pairID": "3",
        },
    ]
    path = write(
        tmp_path / "snli_1.0_dev.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n"
    )
    with caplog.at_level("WARNING", logger="spacy_attn"):
        found, stats = read_pair_rows(path)
    assert [r.label for r in found] == ["neutral", "entailment"]
    assert stats.skipped_unlabelled == 1
    assert "skipped 1 unlabelled" in caplog.text
    examples = list(registry.readers.get("spacy-attn.PairCorpus.v1")(path)(nlp))
    assert len(examples) == 2
    assert get_pair_texts(examples[0].predicted) == ("A b.", "C d.")
    assert examples[0].reference.cats == {"neutral": 1.0}
    assert has_pair(examples[1].predicted)


def test_mirror_jsonl_gz_and_label_map(tmp_path, nlp):
    path = tmp_path / "mrpc.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf8") as f:
        f.write(
            json.dumps({"id": "1_2", "text_a": "X y.", "text_b": "Z.", "label": 1})
            + "\n"
        )
        f.write(
            json.dumps({"id": "3_4", "text_a": "P.", "text_b": "Q r.", "label": 0})
            + "\n"
        )
    corpus = PairCorpus(path, label_map={"0": "no", "1": "yes"})
    assert [eg.reference.cats for eg in corpus(nlp)] == [{"yes": 1.0}, {"no": 1.0}]
    binary = PairCorpus(path, positive_label="1")
    assert [eg.reference.cats for eg in binary(nlp)] == [{"1": 1.0}, {"1": 0.0}]


def test_quora_tsv(tmp_path, nlp):
    text = (
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        '0\t1\t2\tHow do I learn "Python"?\tWhat is the best way to learn Python?\t1\n'
        "1\t3\t4\tWhy is the sky blue?\tHow tall is Everest?\t0\n"
    )
    path = write(tmp_path / "quora_duplicate_questions.tsv", text)
    examples = list(
        PairCorpus(path, label_map={"0": "not_duplicate", "1": "duplicate"})(nlp)
    )
    assert get_pair_texts(examples[0].predicted)[0] == 'How do I learn "Python"?'
    assert [e.reference.cats for e in examples] == [
        {"duplicate": 1.0},
        {"not_duplicate": 1.0},
    ]


def test_mrpc_official_txt(tmp_path, nlp):
    text = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t11\t12\tA b.\tA c.\n"
    path = write(tmp_path / "msr_paraphrase_train.txt", text)
    rows, _ = read_pair_rows(path)
    assert (rows[0].first, rows[0].second, rows[0].label) == ("A b.", "A c.", "1")


def test_malformed_rows_name_file_and_line(tmp_path):
    good = json.dumps({"premise": "a", "hypothesis": "b", "label": "neutral"})
    path = write(tmp_path / "bad.jsonl", good + "\n" + "{not json\n")
    with pytest.raises(CorpusFormatError, match=r"bad.jsonl:2: invalid JSON"):
        read_pair_rows(path)
    path = write(
        tmp_path / "missing.jsonl",
        good + "\n\n" + json.dumps({"premise": "a", "label": "x"}) + "\n",
    )
    with pytest.raises(
        CorpusFormatError, match=r"missing.jsonl:3: missing second text"
    ):
        read_pair_rows(path)
    path = write(
        tmp_path / "short.tsv",
        "sentence1\tsentence2\tgold_label\na\tb\tneutral\nonly\ttwo\n",
    )
    with pytest.raises(
        CorpusFormatError, match=r"short.tsv:3: expected 3 tab-separated fields"
    ):
        read_pair_rows(path)
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl"):
        read_pair_rows(tmp_path / "nowhere.jsonl")


def test_null_label_is_a_missing_label(tmp_path):
    # A null label used to become the label None (doc.cats == {None: 1.0}).
    null = json.dumps({"premise": "a", "hypothesis": "b", "label": None})
    path = write(tmp_path / "null.jsonl", null + "\n")
    with pytest.raises(CorpusFormatError, match=r"null.jsonl:1: missing label"):
        read_pair_rows(path)


@pytest.mark.slow  # the convert CLI in a subprocess
def test_convert_cli_and_docbin_reader(tmp_path, nlp):
    rows = [
        {
            "premise": "A man sleeps.",
            "hypothesis": "A man rests.",
            "label": "entailment",
        },
        {"premise": "A cat.", "hypothesis": "A dog.", "label": "contradiction"},
        {"premise": "x", "hypothesis": "y", "label": "-"},
    ]
    src = write(tmp_path / "in.jsonl", "\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "out.spacy"
    result = subprocess.run(
        [sys.executable, "-m", "spacy_attn", "convert", str(src), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Wrote 2 pairs" in result.stdout and "skipped 1" in result.stdout
    examples = list(PairCorpus(out)(nlp))
    assert [get_pair_texts(e.predicted) for e in examples] == [
        ("A man sleeps.", "A man rests."),
        ("A cat.", "A dog."),
    ]
    assert examples[0].predicted.cats == {}  # gold only on the reference
    assert examples[1].reference.cats == {"contradiction": 1.0}


def _docbin_bytes(nlp, n=40):
    docbin = DocBin(store_user_data=True)
    for i in range(n):
        docbin.add(make_pair(nlp, f"Premise number {i}.", f"Hypothesis {i}."))
    return docbin.to_bytes()


def _damaged_docbins(nlp):
    """(name, bytes) of .spacy files a user may end up with: cut short by an
    interrupted copy, compressed but cut inside the msgpack payload (spaCy
    alone says only "Unpack failed: incomplete input"), empty, not a DocBin."""
    data = _docbin_bytes(nlp)
    return [
        ("truncated", data[: len(data) // 2]),
        ("short_payload", zlib.compress(zlib.decompress(data)[:100])),
        ("empty", b""),
        ("foreign", zlib.compress(srsly.msgpack_dumps({"docs": []}))),
        ("jsonl", b'{"premise": "a", "hypothesis": "b", "label": "x"}\n'),
    ]


@pytest.mark.parametrize("case", range(5))
def test_damaged_docbin_names_the_file(tmp_path, nlp, case):
    from spacy_attn.readers import TextCatCorpus
    from spacy_attn.squad.reader import SquadCorpus

    name, data = _damaged_docbins(nlp)[case]
    path = tmp_path / f"{name}.spacy"
    path.write_bytes(data)
    for reader in (PairCorpus(path), TextCatCorpus(path), SquadCorpus(path)):
        with pytest.raises(
            CorpusFormatError, match=r"damaged .* incompatible version of spaCy"
        ) as err:
            list(reader(nlp))
        assert str(path) in str(err.value)
    if name == "short_payload":
        # Without read_docbin this is all a user would see.
        with pytest.raises(ValueError, match="Unpack failed"):
            list(DocBin().from_bytes(data).get_docs(nlp.vocab))


def test_gzipped_docbin_reads(tmp_path, nlp):
    path = tmp_path / "pairs.spacy.gz"
    with gzip.open(path, "wb") as f:
        f.write(_docbin_bytes(nlp, n=3))
    examples = list(PairCorpus(path)(nlp))
    assert [get_pair_texts(eg.reference) for eg in examples][2] == (
        "Premise number 2.",
        "Hypothesis 2.",
    )
    path.write_bytes(gzip.compress(_docbin_bytes(nlp, n=3))[:40])
    with pytest.raises(
        CorpusFormatError, match=r"pairs.spacy.gz: cannot be read as a DocBin"
    ):
        list(PairCorpus(path)(nlp))


def test_damaged_text_files_name_the_file(tmp_path, nlp):
    from spacy_attn.readers import TextCatCorpus

    rows = "".join(
        json.dumps({"premise": f"a{i}", "hypothesis": "b", "label": "x", "text": "t"})
        + "\n"
        for i in range(500)
    )
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(rows.encode("utf8"))[:300])
    not_gz = write(tmp_path / "plain.jsonl.gz", rows)
    latin = tmp_path / "latin.tsv"
    latin.write_bytes(
        "sentence1\tsentence2\tgold_label\ncaf\xe9\tb\tx\n".encode("latin-1")
    )
    cases = [
        (cut, r"gzipped UTF-8 text; the file is damaged .*EOFError"),
        (not_gz, r"gzipped UTF-8 text.*BadGzipFile"),
        (latin, r"UTF-8 text.*UnicodeDecodeError"),
    ]
    for path, match in cases:
        with pytest.raises(CorpusFormatError, match=match) as err:
            read_pair_rows(path)
        assert str(err.value).startswith(str(path))
    with pytest.raises(
        CorpusFormatError, match=r"cut.jsonl.gz: cannot be read as gzipped UTF-8"
    ):
        list(TextCatCorpus(cut, label_key="label")(nlp))


# -- spacy-attn.TextCatCorpus.v1 --------------------------------------------


def test_textcat_corpus_real_rotten_tomatoes(nlp):
    """The mirror's RT rows (a committed slice of its file): every example
    carries both labels, exactly one of them 1.0, and the text is the row's text."""
    from spacy_attn.readers import TextCatCorpus

    from .util import FIXTURES

    path = FIXTURES / "rotten_tomatoes_train.jsonl.gz"
    corpus = TextCatCorpus(path, limit=20)
    examples = list(corpus(nlp))
    assert len(examples) == 20
    rows = corpus.read_rows()
    for eg, (text, labels) in zip(examples, rows):
        assert eg.reference.text == text
        assert set(eg.reference.cats) == {"neg", "pos"}
        assert sum(eg.reference.cats.values()) == 1.0
        assert eg.reference.cats[labels[0]] == 1.0


def test_textcat_corpus_keys_labels_and_errors(tmp_path, nlp):
    from spacy.util import registry

    from spacy_attn.readers import CorpusFormatError

    path = tmp_path / "yelp.jsonl"
    path.write_text(
        '{"text": "Great food.", "stars": 5}\n\n{"text": "Meh.", "stars": 2}\n'
        '{"text": "Both.", "stars": [1, 5]}\n'
    )
    reader = registry.readers.get("spacy-attn.TextCatCorpus.v1")
    examples = list(reader(path, label_key="stars", labels=["1", "2", "5"])(nlp))
    assert [e.reference.cats for e in examples] == [
        {"1": 0.0, "2": 0.0, "5": 1.0},
        {"1": 0.0, "2": 1.0, "5": 0.0},
        {"1": 1.0, "2": 0.0, "5": 1.0},
    ]
    with pytest.raises(CorpusFormatError, match=r"not in labels \['1', '2'\]"):
        list(reader(path, label_key="stars", labels=["1", "2"])(nlp))
    with pytest.raises(
        CorpusFormatError, match=r"yelp.jsonl:1: expected keys 'text' and 'label'"
    ):
        list(reader(path)(nlp))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok", "label": "a"}\n{"text": \n')
    with pytest.raises(CorpusFormatError, match=r"bad.jsonl:2: invalid JSON"):
        list(reader(bad)(nlp))
    assert list(reader(None)(nlp)) == []


@pytest.mark.slow  # the splits script in a subprocess, over the full RT file
@pytest.mark.mirror("rotten_tomatoes/train.jsonl.gz")
def test_textcat_splits_script_and_docbin_reader(tmp_path, nlp):
    """scripts/textcat_splits.py makes the documented seeded RT split; the
    DocBins carry every label and TextCatCorpus reads them back."""
    from spacy_attn.readers import TextCatCorpus

    from .util import REPO, mirror_dir

    out = tmp_path / "rt"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "textcat_splits.py"),
            "rt",
            str(out),
            "--mirror",
            str(mirror_dir()),
        ],
        check=True,
        capture_output=True,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"] == {"train": 6824, "dev": 853, "test": 853}
    examples = list(TextCatCorpus(out / "test.spacy")(nlp))
    assert len(examples) == 853
    with gzip.open(out / "test.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    for eg, row in zip(examples, rows):
        assert eg.predicted.text == eg.reference.text == row["text"]
        assert eg.reference.cats == {
            "neg": float(row["label"] == "neg"),
            "pos": float(row["label"] == "pos"),
        }
    assert len(list(TextCatCorpus(out / "dev.spacy", limit=5)(nlp))) == 5
