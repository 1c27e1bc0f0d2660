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
from spacy_attn.pairs import GROUP_ID_KEY, ROW_ID_KEY
from spacy_attn.readers import (
    Columns,
    CorpusFormatError,
    PairCorpus,
    read_pair_rows,
)

from .util import REPO


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
    assert [eg.reference.cats for eg in binary(nlp)] == [
        {"1": 1.0},
        {"0": 1.0, "1": 0.0},
    ]


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
        CorpusFormatError, match=r"missing.jsonl:3: no column for text 2 .*--text-cols"
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
    with pytest.raises(
        CorpusFormatError, match=r"null.jsonl:1: the label \('label'\) is null"
    ):
        read_pair_rows(path)


# -- csv and the column settings ----------------------------------------------

# A company-style file: any column names, a quoted comma, a quoted line break
# (read with quoting="multiline": by default a quote must close on its line).
SELECTION_CSV = (
    "question_id,question,sentence,label\n"
    'q1,Who wrote it?,"Shakespeare wrote it, they say.",yes\n'
    "q1,Who wrote it?,It rains.,no\n"
    '\nq2,Where is it?,"It is in\nParis.",yes\n'
)
SELECTION_COLUMNS = Columns(["question", "sentence"], "label", "question_id")


def test_csv_with_any_column_names(tmp_path, nlp):
    path = write(tmp_path / "sel.csv", SELECTION_CSV)
    rows, stats = read_pair_rows(path, columns=SELECTION_COLUMNS, quoting="multiline")
    got = [(r.first, r.second, r.label, r.group, r.id, r.line) for r in rows]
    assert got == [
        ("Who wrote it?", "Shakespeare wrote it, they say.", "yes", "q1", None, 2),
        ("Who wrote it?", "It rains.", "no", "q1", None, 3),
        ("Where is it?", "It is in\nParis.", "yes", "q2", None, 5),
    ]
    assert stats.labels == {"yes": 2, "no": 1}
    # The same file gzipped, an id column named, and the label detected.
    gz = tmp_path / "sel.csv.gz"
    gz.write_bytes(gzip.compress(SELECTION_CSV.encode()))
    columns = Columns(["question", "sentence"], id_col="question_id")
    read = read_pair_rows(gz, columns=columns, quoting="multiline")[0]
    assert [r.id for r in read] == ["q1", "q1", "q2"]


def test_group_and_row_ids_travel_with_the_docs_through_a_docbin(tmp_path, nlp):
    from spacy_attn.conversion import convert_pairs

    path = write(tmp_path / "sel.csv", SELECTION_CSV)
    examples = list(
        PairCorpus(path, columns=SELECTION_COLUMNS, quoting="multiline")(nlp)
    )
    assert [e.reference.user_data[GROUP_ID_KEY] for e in examples] == ["q1", "q1", "q2"]
    assert [e.predicted.user_data[GROUP_ID_KEY] for e in examples] == ["q1"] * 2 + [
        "q2"
    ]
    assert all(ROW_ID_KEY not in e.reference.user_data for e in examples)
    assert examples[0].predicted.cats == {} and examples[0].reference.cats == {
        "yes": 1.0
    }
    out = tmp_path / "sel.spacy"
    columns = Columns(["question", "sentence"], None, "question_id", "sentence")
    convert_pairs(nlp, path, out, columns=columns, quoting="multiline")
    docs = [e.reference for e in PairCorpus(out)(nlp)]
    assert [d.user_data[GROUP_ID_KEY] for d in docs] == ["q1", "q1", "q2"]
    assert docs[1].user_data[ROW_ID_KEY] == "It rains."
    assert get_pair_texts(docs[2]) == ("Where is it?", "It is in\nParis.")


def test_jsonl_ids_default_to_the_id_column(tmp_path, nlp):
    rows = [
        {"id": 7, "qid": 1, "premise": "a", "hypothesis": "b", "label": 1},
        {"qid": 1, "premise": "a", "hypothesis": "c", "label": 0},
    ]
    path = write(tmp_path / "x.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    read = read_pair_rows(path, columns=Columns(group_col="qid"))[0]
    assert [(r.id, r.group, r.label) for r in read] == [
        ("7", "1", "1"),
        (None, "1", "0"),
    ]
    # Without columns: as before (no group), the default id where present.
    assert [(r.id, r.group) for r in read_pair_rows(path)[0]] == [
        ("7", None),
        (None, None),
    ]


def test_registered_reader_takes_the_column_settings(tmp_path, nlp):
    path = write(tmp_path / "sel.csv", SELECTION_CSV)
    reader = registry.resolve(
        {
            "r": {
                "@readers": "spacy-attn.PairCorpus.v1",
                "path": str(path),
                "text_cols": ["question", "sentence"],
                "label_col": "label",
                "group_col": "question_id",
                "positive_label": "yes",
            }
        }
    )["r"]
    examples = list(reader(nlp))
    assert [e.reference.cats for e in examples] == [
        {"yes": 1.0},
        {"no": 1.0, "yes": 0.0},
        {"yes": 1.0},
    ]
    assert examples[2].reference.user_data[GROUP_ID_KEY] == "q2"


@pytest.mark.parametrize(
    "name,text,columns,match",
    [
        (
            "sel.csv",
            SELECTION_CSV,
            Columns(),
            r"sel.csv:1: the header has no column for text 2 .*--text-cols .*"
            r"found columns \['question_id', 'question', 'sentence', 'label'\]",
        ),
        (
            "sel.csv",
            SELECTION_CSV,
            Columns(["question", "sentence"], "answer"),
            r"sel.csv:1: the header has no column 'answer' \(--label-col .*found",
        ),
        (
            "sel.csv",
            SELECTION_CSV,
            Columns(["question", "sentence"], group_col="qid"),
            r"sel.csv:1: .*no column 'qid' \(--group-col \(group_col in a reader",
        ),
        (
            "x.jsonl",
            '{"a": "x", "b": "y", "label": "1"}\n{"a": "x", "label": "1"}\n',
            Columns(["a", "b"]),
            r"x.jsonl:2: no column 'b' \(--text-cols.*found columns \['a', 'label'\]",
        ),
        ("empty.csv", "", Columns(), r"empty.csv: no rows"),
        (
            "head.tsv",
            "premise\thypothesis\tlabel\n",
            Columns(),
            r"head.tsv: no rows",
        ),
        (
            "unl.jsonl",
            '{"premise": "a", "hypothesis": "b", "label": "-"}\n',
            Columns(),
            r"unl.jsonl: only unlabelled rows \(1",
        ),
        (
            "bad.csv",
            "premise,hypothesis,label\na,b,c,d\n",
            Columns(),
            r"bad.csv:2: expected 3 comma-separated fields",
        ),
    ],
)
def test_column_and_file_mistakes_name_file_line_and_option(
    tmp_path, name, text, columns, match
):
    path = write(tmp_path / name, text)
    with pytest.raises(CorpusFormatError, match=match):
        read_pair_rows(path, columns=columns)


def test_format_and_column_count_mistakes(tmp_path, nlp):
    path = write(tmp_path / "sel.csv", SELECTION_CSV)
    with pytest.raises(
        CorpusFormatError, match=r"sel.csv: cannot read rows .*'xml'.*--format"
    ):
        read_pair_rows(path, format="xml")
    with pytest.raises(CorpusFormatError, match=r"--text-cols .*2 text columns"):
        Columns(["question"])


def test_check_labels_names_the_row_and_the_model_labels(tmp_path, nlp):
    path = write(tmp_path / "sel.csv", SELECTION_CSV)
    corpus = PairCorpus(path, columns=SELECTION_COLUMNS, quoting="multiline")
    corpus.check_labels(nlp, {"yes", "no"})
    with pytest.raises(
        CorpusFormatError,
        match=(
            r"sel.csv:3: label 'no' is not a label of the model "
            r"\(\['maybe', 'yes'\]\).*--label-map"
        ),
    ):
        corpus.check_labels(nlp, {"yes", "maybe"})
    with pytest.raises(CorpusFormatError, match=r"sel.csv:3: .*--positive-label yes"):
        corpus.check_labels(nlp, {"yes"})
    binary = PairCorpus(path, columns=SELECTION_COLUMNS, positive_label="ok")
    with pytest.raises(CorpusFormatError, match=r"--positive-label 'ok'"):
        binary.check_labels(nlp, {"yes"})


def test_spacy_train_reads_a_csv_from_the_config(tmp_path):
    """The shipped config with the reader's column settings added: `spacy
    train` reads the csv as it is (a few steps, in this process)."""
    from spacy.cli.train import train

    path = write(tmp_path / "sel.csv", SELECTION_CSV)
    columns = (
        'shuffle = false\ntext_cols = ["question", "sentence"]\n'
        'label_col = "label"\ngroup_col = "question_id"\n'
    )
    config = (REPO / "configs" / "tok2vec.cfg").read_text(encoding="utf8")
    assert config.count("shuffle = false\n") == 2  # train and dev
    cfg = write(tmp_path / "csv.cfg", config.replace("shuffle = false\n", columns))
    out = tmp_path / "out"
    overrides = {
        "paths.train": str(path),
        "paths.dev": str(path),
        "training.max_steps": 2,
        "training.eval_frequency": 1,
    }
    train(cfg, out, overrides=overrides)
    nlp = spacy.load(out / "model-last")
    assert sorted(nlp.get_pipe("attn_pair_classifier").labels) == ["no", "yes"]


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


def test_read_docbin_gives_what_get_docs_gives(tmp_path, nlp):
    """read_docbin decodes user_data itself (srsly's decoders looked up once,
    not per doc): the docs must equal DocBin.get_docs', user_data included,
    for values that need srsly's hooks (a numpy array), extension keys
    (tuples), docs with user_data and docs without it."""
    import numpy

    from spacy_attn.readers import read_docbin

    docbin = DocBin(store_user_data=True)
    for i in range(4):
        doc = make_pair(nlp, f"Premise {i}.", f"Hypothesis number {i}.")
        doc.cats = {"yes": float(i % 2), "no": float(1 - i % 2)}
        if i == 1:
            doc.user_data[("._.", "vector", None, None)] = numpy.arange(3.0) + i
            doc.user_data["nested"] = {"ids": [i, i + 1], "name": f"row {i}"}
        docbin.add(doc)
    plain = DocBin(store_user_data=False)
    plain.add(nlp("No user data here."))
    for name, data in (("pairs", docbin.to_bytes()), ("plain", plain.to_bytes())):
        path = tmp_path / f"{name}.spacy"
        path.write_bytes(data)
        ours = list(read_docbin(path, nlp.vocab))
        theirs = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert a.to_bytes(exclude=["user_data"]) == b.to_bytes(
                exclude=["user_data"]
            )
            assert a.user_data.keys() == b.user_data.keys()
            for key in b.user_data:
                if isinstance(b.user_data[key], numpy.ndarray):
                    assert numpy.array_equal(a.user_data[key], b.user_data[key])
                else:
                    assert a.user_data[key] == b.user_data[key]
    decoded = list(read_docbin(tmp_path / "pairs.spacy", nlp.vocab))[1].user_data
    assert isinstance(decoded[("._.", "vector", None, None)], numpy.ndarray)
    assert get_pair_texts(
        list(read_docbin(tmp_path / "pairs.spacy", nlp.vocab))[3]
    ) == (
        "Premise 3.",
        "Hypothesis number 3.",
    )


def test_docbin_with_user_data_writes_what_add_writes(nlp):
    """docbin_with_user_data packs user_data itself (srsly's encoders chained
    once): the DocBin's bytes must be DocBin.add's, user data that needs
    srsly's hooks (a numpy array) and extension keys included."""
    import numpy

    from spacy_attn.readers import docbin_with_user_data

    docs = []
    for i in range(3):
        doc = make_pair(nlp, f"Premise {i}.", f"Hypothesis number {i}.")
        doc.cats = {"yes": float(i % 2), "no": float(1 - i % 2)}
        doc.user_data[("._.", "vector", None, None)] = numpy.arange(3.0) + i
        docs.append(doc)
    docs.append(nlp("No pair, no user data."))
    reference = DocBin(store_user_data=True)
    for doc in docs:
        reference.add(doc)
    ours = docbin_with_user_data(iter(docs))
    assert len(ours) == 4
    assert ours.to_bytes() == reference.to_bytes()


def test_write_docbin_makes_the_folder_and_reads_back(nlp, tmp_path):
    """write_docbin saves what docbin_with_user_data packs (folder made),
    and read_docbin gives back the docs, pairs and cats included."""
    from spacy_attn.readers import read_docbin, write_docbin

    docs = [make_pair(nlp, f"Premise {i}.", f"Hypothesis {i}.") for i in range(3)]
    for i, doc in enumerate(docs):
        doc.cats = {"yes": float(i % 2), "no": float(1 - i % 2)}
    path = tmp_path / "new" / "pairs.spacy"
    assert write_docbin(iter(docs), path) == 3
    back = list(read_docbin(path, nlp.vocab))
    assert [get_pair_texts(d) for d in back] == [get_pair_texts(d) for d in docs]
    assert [d.cats for d in back] == [d.cats for d in docs]


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
        # The line and the byte, not a byte offset into the file.
        (latin, r"latin.tsv:2: invalid UTF-8 \(byte 0xe9 at column 4\).*UTF-8"),
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

    from .util import mirror_dir

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
