"""SQuAD-format reader: answer alignment (exact / expanded / relocated /
unaligned), context offsets, DocBin round trip, filters and errors."""

import gzip
import json
import logging

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import registry

from spacy_attn import get_pair_spans, get_pair_texts, has_pair
from spacy_attn.readers import CorpusFormatError
from spacy_attn.squad import (
    context_offset,
    read_squad,
    write_squad_docbin,
)
from spacy_attn.squad.reader import SquadCorpus

from .util import answering, load_script, mirror_dir


@pytest.fixture
def nlp():
    return spacy.blank("en")


def squad_file(tmp_path, articles, *, name="squad.json", version="1.1", gz=False):
    data = {"version": version, "data": articles}
    path = tmp_path / name
    if gz:
        with gzip.open(path, "wt", encoding="utf8") as f:
            json.dump(data, f)
    else:
        path.write_text(json.dumps(data), encoding="utf8")
    return path


def qa(qid, question, *answers):
    return {
        "id": qid,
        "question": question,
        "answers": [{"text": t, "answer_start": s} for t, s in answers],
    }


def article(title, *paragraphs, **extra):
    return {
        "title": title,
        "paragraphs": [{"context": c, "qas": q} for c, q in paragraphs],
        **extra,
    }


CTX = "The Denver Broncos won $5m in Santa Clara."


def test_alignment_statuses_and_gold_layout(tmp_path, nlp):
    path = squad_file(
        tmp_path,
        [
            article(
                "Super_Bowl",
                (
                    CTX,
                    [
                        # exact, twice (duplicates are kept), and a second answer
                        qa(
                            "q1",
                            "Who won?",
                            ("Denver Broncos", 4),
                            ("Denver Broncos", 4),
                            ("The Denver Broncos", 0),
                        ),
                        # "Bronco" ends inside the token "Broncos": expanded
                        qa("q2", "Who?", ("Bronco", 11)),
                        # stored offset off by one (the nyt_bigbench case): relocated
                        qa("q3", "Where?", ("Santa Clara", 29)),
                        # not in the context at all: unaligned, but its text is kept
                        qa("q4", "When?", ("in 2016", 0), ("Santa", 30)),
                        # whitespace-only answer: unaligned
                        qa("q5", "What?", (" ", 3)),
                    ],
                ),
            )
        ],
    )
    examples, stats = read_squad(path, nlp)
    assert [eg.reference.spans["answers"].attrs["id"] for eg in examples] == [
        "q1",
        "q2",
        "q3",
        "q4",
        "q5",
    ]
    assert (stats.questions, stats.answers) == (5, 8)
    assert (stats.exact, stats.expanded, stats.relocated, stats.unaligned) == (
        4,
        1,
        1,
        2,
    )
    assert stats.questions_unaligned == 1  # q5
    golds = [eg.reference.spans["answers"] for eg in examples]
    assert [s.text for s in golds[0]] == [
        "Denver Broncos",
        "Denver Broncos",
        "The Denver Broncos",
    ]
    assert all(s.label_ == "answer" for g in golds for s in g)
    assert [s.text for s in golds[1]] == ["Broncos"]
    assert [s.text for s in golds[2]] == ["Santa Clara"]
    assert [s.text for s in golds[3]] == ["Santa"]
    assert golds[3].attrs["texts"] == [
        "in 2016",
        "Santa",
    ]  # all gold strings, unaligned too
    assert len(golds[4]) == 0 and golds[4].attrs["texts"] == [" "]
    # Gold spans lie inside the context segment; the predicted doc has the
    # pair but no answers.
    for eg in examples:
        segment = get_pair_spans(eg.reference)[1]
        assert all(
            segment.start <= s.start and s.end <= segment.end
            for s in eg.reference.spans["answers"]
        )
        assert "answers" not in eg.predicted.spans
        assert get_pair_texts(eg.predicted)[1] == CTX
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]


@pytest.mark.parametrize("question", ["Who won?", "  Who won?\n"])
@pytest.mark.parametrize("lead", ["", " ", "\n\n  ", "\u2009 "])
def test_context_offsets_with_leading_whitespace(tmp_path, nlp, question, lead):
    """make_pair strips both texts: the mapping must follow exactly."""
    context = lead + CTX + "  \n"
    start = len(lead) + CTX.index("Santa Clara")
    path = squad_file(
        tmp_path, [article("t", (context, [qa("q", question, ("Santa Clara", start))]))]
    )
    (eg,), stats = read_squad(path, nlp)
    span = eg.reference.spans["answers"][0]
    assert span.text == "Santa Clara" and stats.exact == 1
    doc_start = context_offset(question, context) + start
    assert (
        span.start_char
        == doc_start
        == get_pair_spans(eg.reference)[1].start_char + (start - len(lead))
    )


def test_answer_with_surrounding_whitespace_is_trimmed(tmp_path, nlp):
    # BIG-bench stripped a leading "," and kept the offset: " 313" at the
    # stored offset is found one character later.
    context = "He batted .313 that year."
    path = squad_file(
        tmp_path,
        [article("t", (context, [qa("q", "Average?", ("313", 10), (" that ", 14))]))],
    )
    (eg,), stats = read_squad(path, nlp)
    assert [s.text for s in eg.reference.spans["answers"]] == [".313", "that"]
    assert (stats.relocated, stats.expanded, stats.exact) == (1, 0, 1)


def test_reader_registered_gz_squadshifts_layout_and_docbin(tmp_path, nlp):
    arts = [
        article(
            "A", (CTX, [qa("a1", "Who?", ("Denver Broncos", 4))]), split="new_wiki"
        ),
        article(
            "B",
            (
                "Paris is in France.",
                [qa("b1", "Where?", ("France", 12)), qa("b2", "What?", ("Paris", 0))],
            ),
        ),
    ]
    path = squad_file(tmp_path, arts, name="shifts.json.gz", version="1.0", gz=True)
    corpus = registry.readers.get("spacy-attn.SquadCorpus.v1")(path)
    assert corpus.stats is None
    examples = list(corpus(nlp))
    assert (
        len(examples) == 3
        and corpus.stats.questions == 3
        and corpus.stats.articles == 2
    )
    # A second pass (spaCy calls the reader every epoch) gives fresh copies.
    again = list(corpus(nlp))
    assert again[0].reference is not examples[0].reference
    assert [s.text for s in again[1].reference.spans["answers"]] == ["France"]
    # Article filter by title or index, limit, custom keys.
    only_b = SquadCorpus(path, articles=["B"], answers_key="qa", pair_key="pq")
    egs = list(only_b(nlp))
    assert [eg.reference.spans["qa"].attrs["id"] for eg in egs] == ["b1", "b2"]
    assert has_pair(egs[0].predicted, "pq") and "qa" not in egs[0].predicted.spans
    assert len(list(SquadCorpus(path, articles=[0])(nlp))) == 1
    assert len(list(SquadCorpus(path, limit=2, shuffle=True, seed=1)(nlp))) == 2
    # DocBin round trip keeps the spans and their attrs.
    out = tmp_path / "qa.spacy"
    assert write_squad_docbin(examples, out) == 3
    from_bin = list(SquadCorpus(out)(nlp))
    for a, b in zip(examples, from_bin):
        assert [t.text for t in a.reference] == [t.text for t in b.reference]
        ga, gb = a.reference.spans["answers"], b.reference.spans["answers"]
        assert [(s.start, s.end, s.label_) for s in ga] == [
            (s.start, s.end, s.label_) for s in gb
        ]
        assert gb.attrs == ga.attrs
        assert "answers" not in b.predicted.spans and has_pair(b.predicted)
    assert len(DocBin().from_disk(out)) == 3


def test_unaligned_and_empty_are_counted_and_logged(tmp_path, nlp, caplog):
    path = squad_file(
        tmp_path,
        [
            article(
                "t",
                (CTX, [qa("q9", "?", ("Chicago", 5)), qa("q10", " ", ("The", 0))]),
                ("  ", [qa("q11", "?")]),
            )
        ],
    )
    with caplog.at_level(logging.WARNING, logger="spacy_attn"):
        examples, stats = read_squad(path, nlp)
    assert len(examples) == 1 and (stats.unaligned, stats.skipped_empty) == (1, 2)
    assert "1 unaligned" in caplog.text and "q9: 'Chicago'@5" in caplog.text
    assert "skipped 2 questions with an empty question or context" in caplog.text


@pytest.mark.parametrize(
    "data,match",
    [
        ({"version": "1.1"}, r"not a SQuAD-format file"),
        ({"data": [{"title": "T"}]}, r"article 0 has no 'paragraphs'"),
        (
            {"data": [{"title": "T", "paragraphs": [{"qas": []}]}]},
            r"article 0 \('T'\), paragraph 0: no string 'context'",
        ),
        (
            {
                "data": [
                    {
                        "title": "T",
                        "paragraphs": [
                            {
                                "context": "c",
                                "qas": [
                                    {
                                        "id": "x7",
                                        "question": "?",
                                        "answers": [{"text": "c"}],
                                    }
                                ],
                            }
                        ],
                    }
                ]
            },
            r"question 'x7': each answer needs .* 'answer_start'",
        ),
        (
            {
                "data": [
                    {
                        "title": "T",
                        "paragraphs": [{"context": "c", "qas": [{"question": "?"}]}],
                    }
                ]
            },
            r"paragraph 0, question 0: 'id' is missing; every question needs",
        ),
    ],
)
def test_malformed_files_name_file_and_question(tmp_path, nlp, data, match):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf8")
    with pytest.raises(CorpusFormatError, match=match) as err:
        read_squad(path, nlp)
    assert "bad.json" in str(err.value)
    path.write_text("{not json", encoding="utf8")
    with pytest.raises(CorpusFormatError, match=r"bad.json: invalid JSON"):
        read_squad(path, nlp)


def test_damaged_files_name_the_file(tmp_path, nlp):
    """A truncated or foreign file says which file and what is wrong, not
    just gzip's "Compressed file ended before the end-of-stream marker"."""
    good = json.dumps(
        {
            "version": "1.1",
            "data": [article("t", (CTX, [qa("q1", "Who?", ("Denver", 4))]))] * 20,
        }
    )
    cut_gz = tmp_path / "cut.json.gz"
    cut_gz.write_bytes(gzip.compress(good.encode("utf8"))[:120])
    cut = tmp_path / "cut.json"
    cut.write_text(good[: len(good) // 2], encoding="utf8")
    not_gz = tmp_path / "plain.json.gz"
    not_gz.write_text(good, encoding="utf8")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\x80\x81\xfe" * 10)
    cases = [
        (
            cut_gz,
            r"cut.json.gz: cannot be read as gzipped UTF-8 JSON; the file is damaged .*EOFError",
        ),
        (cut, r"cut.json: invalid JSON .*; the file is damaged \(e.g. truncated"),
        (not_gz, r"plain.json.gz: cannot be read as gzipped UTF-8 JSON.*BadGzipFile"),
        (binary, r"binary.json: cannot be read as UTF-8 JSON.*UnicodeDecodeError"),
    ]
    for path, match in cases:
        with pytest.raises(CorpusFormatError, match=match):
            read_squad(path, nlp)
        with pytest.raises(CorpusFormatError, match=match):
            list(SquadCorpus(path)(nlp))


def test_squad_reader_and_scorer_have_one_import_path():
    """The SQuAD reader lives in spacy_attn.squad.reader and the scorer in
    spacy_attn.scorers, with no second import path (0.1.0 is unreleased)."""
    import spacy_attn.readers
    import spacy_attn.scorers
    import spacy_attn.squad as squad
    import spacy_attn.squad.reader

    for name in ("SquadCorpus", "create_squad_corpus_reader", "squad_score"):
        assert not hasattr(squad, name), name
    for name in ("SquadCorpus", "create_squad_corpus_reader"):
        assert not hasattr(spacy_attn.readers, name), name
    assert callable(spacy_attn.scorers.make_squad_scorer)
    assert (
        registry.readers.get("spacy-attn.SquadCorpus.v1")
        is spacy_attn.squad.reader.create_squad_corpus_reader
    )
    namespace = {}
    exec("from spacy_attn.squad import *", namespace)
    assert set(squad.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="no_such_name"):
        squad.no_such_name


@pytest.mark.mirror("squad_shifts/nyt_bigbench.json.gz")
def test_real_nyt_bigbench_offsets(nlp):
    """The mirror's nyt_bigbench copy has 10 answers whose stored offset is
    off by one (see the data README); the rest align. Read one article that
    has such an answer plus a few others, to keep the test fast."""
    path = mirror_dir() / "squad_shifts" / "nyt_bigbench.json.gz"
    with gzip.open(path, "rt", encoding="utf8") as f:
        data = json.load(f)
    shifted = []
    for i, art in enumerate(data["data"]):
        for para in art["paragraphs"]:
            for q in para["qas"]:
                for a in q["answers"]:
                    if (
                        para["context"][
                            a["answer_start"] : a["answer_start"] + len(a["text"])
                        ]
                        != a["text"]
                    ):
                        shifted.append(i)
    assert len(shifted) == 10
    picked = sorted(set(shifted[:2]) | {0, 1})
    examples, stats = read_squad(path, nlp, articles=picked)
    n_shifted = sum(1 for i in shifted if i in picked)
    assert stats.relocated == n_shifted and stats.unaligned == 0
    assert stats.exact + stats.expanded + stats.relocated == stats.answers
    assert stats.questions == sum(
        len(p["qas"]) for i in picked for p in data["data"][i]["paragraphs"]
    )


def _write_mirror(root, sets):
    """A tiny data mirror in the shared/data layout, with SHA256SUMS."""
    import hashlib

    files = {
        "squad_shifts/new_wiki.json.gz": sets["new_wiki"],
        "squad_shifts/reddit.json.gz": sets["reddit"],
        "squad_shifts/nyt_bigbench.json.gz": sets["nyt"],
        "squad/dev-v1.1.json.gz": sets["dev"],
    }
    if "train" in sets:
        files["squad/train-v1.1.rebuilt.json.gz"] = sets["train"]
    lines = []
    for rel, articles in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt", encoding="utf8") as f:
            json.dump({"version": "1.0", "data": articles}, f)
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {rel}")
    (root / "SHA256SUMS").write_text("\n".join(lines) + "\n")


def paper_mirror(tmp_path):
    """A tiny mirror for protocol "squad": 40 train articles of 2 questions,
    the SQuADShifts sets and a dev file."""
    mirror = tmp_path / "mirror"
    _write_mirror(
        mirror,
        {
            "train": _articles("t", 40, 2),
            "new_wiki": _articles("w", 3, 2),
            "reddit": _articles("r", 1, 4),
            "nyt": _articles("n", 2, 1),
            "dev": _articles("d", 2, 3),
        },
    )
    return mirror


def _articles(prefix, n_articles, n_paragraphs):
    return [
        article(
            f"{prefix}{a}",
            *[
                (CTX, [qa(f"{prefix}{a}_{p}", "Who?", ("Denver Broncos", 4))])
                for p in range(n_paragraphs)
            ],
        )
        for a in range(n_articles)
    ]


def test_squad_splits_script(tmp_path, nlp):
    splits = load_script("scripts/squad_splits.py")
    mirror = tmp_path / "mirror"
    _write_mirror(
        mirror,
        {
            "new_wiki": _articles("w", 20, 2),
            "reddit": _articles("r", 1, 30),  # one pseudo-article: split by paragraph
            "nyt": _articles("n", 12, 1),
            "dev": _articles("d", 2, 3),
        },
    )
    out = tmp_path / "out"
    m = splits.make_splits(
        out,
        assets=tmp_path / "no_assets",
        mirror=splits.Mirror(str(mirror)),
        protocol="shifts",
        dev_fraction=0.1,
        seed=3,
        docbin=True,
    )
    assert (
        m["sets"]["new_wiki"]["unit"] == "article"
        and m["sets"]["new_wiki"]["dev_units"] == 2
    )
    assert (
        m["sets"]["reddit"]["unit"] == "paragraph"
        and m["sets"]["reddit"]["dev_units"] == 3
    )
    assert m["sets"]["nyt"]["dev_units"] == 2  # ceil(10% of 12)
    train = json.loads((out / "train.json").read_text())["data"]
    dev = json.loads((out / "dev.json").read_text())["data"]
    titles = lambda arts, s: {a["title"] for a in arts if a["split"] == s}
    assert not titles(train, "new_wiki") & titles(dev, "new_wiki")  # disjoint articles
    assert sorted(titles(dev, "new_wiki")) == m["sets"]["new_wiki"]["dev_unit_ids"]
    ids = lambda arts: [
        q["id"] for a in arts for p in a["paragraphs"] for q in p["qas"]
    ]
    assert len(ids(train)) == 40 + 30 + 12 - (4 + 3 + 2) and len(ids(dev)) == 9
    assert not set(ids(train)) & set(ids(dev))
    assert (
        m["counts"]["test"]["questions"] == 6 and m["alignment"]["train"]["exact"] == 73
    )
    # The DocBins read back with the reader; the same seed gives the same split.
    assert len(list(SquadCorpus(out / "dev.spacy")(nlp))) == 9
    again = splits.make_splits(
        tmp_path / "again",
        assets=tmp_path / "no_assets",
        mirror=splits.Mirror(str(mirror)),
        protocol="shifts",
        dev_fraction=0.1,
        seed=3,
    )
    assert again["sets"] == m["sets"]
    other = splits.make_splits(
        tmp_path / "other",
        assets=tmp_path / "no_assets",
        mirror=splits.Mirror(str(mirror)),
        protocol="shifts",
        dev_fraction=0.1,
        seed=4,
    )
    assert other["sets"]["nyt"]["dev_unit_ids"] != m["sets"]["nyt"]["dev_unit_ids"]
    # A corrupted mirror file is refused.
    with gzip.open(mirror / "squad_shifts" / "reddit.json.gz", "wt") as f:
        f.write("{}")
    with pytest.raises(splits.DataError, match="Checksum mismatch"):
        splits.make_splits(
            tmp_path / "bad",
            assets=tmp_path / "no_assets",
            mirror=splits.Mirror(str(mirror)),
            protocol="shifts",
        )


def test_squad_splits_paper_protocol(tmp_path, nlp):
    """Protocol "squad": SQuAD train held out by article, the official dev
    file as test, the SQuADShifts sets whole as out-of-domain tests; the
    manifest says the train file is the mirror's rebuild."""
    splits = load_script("scripts/squad_splits.py")
    mirror = paper_mirror(tmp_path)
    out = tmp_path / "out"
    m = splits.make_splits(
        out, assets=tmp_path / "no_assets", mirror=splits.Mirror(str(mirror)), seed=1
    )
    assert m["protocol"] == "squad" and m["train_source"] == "rebuilt"
    assert m["counts"]["dev"]["articles"] == 2  # ceil(5% of 40)
    assert m["counts"]["train"]["articles"] == 38
    train = json.loads((out / "train.json").read_text())["data"]
    dev = json.loads((out / "dev.json").read_text())["data"]
    assert sorted(a["title"] for a in dev) == m["dev_unit_ids"]
    assert not {a["title"] for a in train} & {a["title"] for a in dev}
    assert m["counts"]["test"]["questions"] == 6
    assert m["counts"]["test_new_wiki"]["questions"] == 6
    assert m["counts"]["test_reddit"]["questions"] == 4
    assert m["counts"]["test_nyt"]["questions"] == 2
    assert (out / "test_nyt.json").exists()
    # The same seed holds out the same articles; another seed others.
    again = splits.make_splits(
        tmp_path / "again",
        assets=tmp_path / "no_assets",
        mirror=splits.Mirror(str(mirror)),
        seed=1,
    )
    assert again["dev_unit_ids"] == m["dev_unit_ids"]
    # An official train file under assets wins, and must carry its published
    # sha256: a different file is refused.
    assets = tmp_path / "assets"
    (assets / "squad").mkdir(parents=True)
    (assets / "squad" / "train-v1.1.json").write_text('{"data": []}')
    with pytest.raises(splits.DataError, match="Checksum mismatch"):
        splits.make_splits(
            tmp_path / "x", assets=assets, mirror=splits.Mirror(str(mirror))
        )


def test_evaluate_squad_and_baseline(monkeypatch):
    """The official metric over answers from a pipeline, beside the trivial
    baseline; ``limit`` scores only the first questions."""
    from spacy_attn.qa_eval.evaluate import baseline_predictions, evaluate_squad

    ctx = "In 2016 the Denver Broncos won the Super Bowl."
    data = {
        "data": [
            article(
                "a",
                (
                    ctx,
                    [
                        qa("q1", "Who?", ("Denver Broncos", 12)),
                        qa("q2", "Who?", ("Denver Broncos", 12)),
                    ],
                ),
            )
        ]
    }
    base = baseline_predictions(data)
    assert base == {"q1": "In 2016 the", "q2": "In 2016 the"}

    class Fixed:
        """Stands in for a pipeline: answer_questions is patched below."""

    import spacy_attn.qa_eval.evaluate as ev

    monkeypatch.setattr(ev, "answer_questions", answering("Denver Broncos", ctx))
    res = evaluate_squad(Fixed(), data)
    one = evaluate_squad(Fixed(), data, limit=1)
    assert res["exact_match"] == 100.0 and res["f1"] == 100.0
    assert res["questions"] == 2 and set(res["predictions"]) == {"q1", "q2"}
    assert res["baseline"] == {"exact_match": 0.0, "f1": 0.0}
    assert one["questions"] == 1 and one["exact_match"] == 100.0


@pytest.mark.parametrize(
    "answer,code,below",
    [
        ("Denver Broncos", 0, ""),
        ("In 2016", 1, "word overlap"),
        # F1 80 (the metric drops "the"): far above the first words ("In 2016
        # the", F1 0), but the word-overlap baseline answers the same.
        ("2016 the Denver Broncos", 1, "word overlap"),
    ],
)
def test_squad_eval_script_prints_scores_and_fails_below_the_margin(
    tmp_path, monkeypatch, capsys, answer, code, below
):
    """scripts/squad_eval.py (the workflow's evaluate-squad step) writes the
    scores and the train source, and exits 1, naming the budget, when the model
    is not --min-margin F1 points above the stronger trivial baseline."""
    import spacy_attn.qa_eval.evaluate as ev

    ctx = "In 2016 the Denver Broncos won the Super Bowl."
    squad_file(
        tmp_path,
        [article("a", (ctx, [qa("q1", "Who won?", ("Denver Broncos", 12))]))],
        name="test.json",
    )
    (tmp_path / "manifest.json").write_text(
        json.dumps({"protocol": "squad", "train_source": "rebuilt"})
    )

    monkeypatch.setattr(ev, "answer_questions", answering(answer, ctx))
    import spacy_attn.loading

    # The script loads through the library's loader (its checks need a real
    # pipeline folder; the answers are stubbed above).
    monkeypatch.setattr(
        spacy_attn.loading, "load_pipeline", lambda _path, gpu_id=-1: object()
    )
    script = load_script("scripts/squad_eval.py")
    out = tmp_path / "metrics" / "squad.json"
    args = ["model", str(tmp_path), "--output", str(out)]
    if code:
        with pytest.raises(SystemExit) as exc:
            script.main(args)
        assert exc.value.code == 1
    else:
        script.main(args)
    printed = capsys.readouterr()
    assert ("test: EM   0.00" if code else "test: EM 100.00") in printed.out
    assert ("not 10 points above" in printed.err) == bool(code)
    assert (f"the {below} baseline's" in printed.err) == bool(code)
    assert "(first words F1  0.00, word overlap F1 80.00)" in printed.out
    assert ("stops here, before packaging" in printed.err) == bool(code)
    res = json.loads(out.read_text())
    assert res["train_source"] == "rebuilt"
    assert res["sets"]["test"]["word_overlap"]["f1"] == pytest.approx(80.0)


def test_reader_v2_streams_and_reshuffles_every_pass(tmp_path, nlp, monkeypatch):
    """spacy-attn.SquadCorpus.v2: the same examples as v1, built one at a
    time (nothing cached), a new seeded order (and ``limit`` sample) on every
    pass, the first complete pass's counts in ``stats``."""
    import spacy_attn.squad.reader as reader_module

    paragraphs = [
        (
            f"Paris {i} is in France.",
            [qa(f"q{i}", "Where?", ("France", 13 + len(str(i))))],
        )
        for i in range(12)
    ]
    paragraphs.append(("Empty question here.", [qa("empty", " ")]))
    path = squad_file(tmp_path, [article("A", *paragraphs)])
    v1 = list(registry.readers.get("spacy-attn.SquadCorpus.v1")(path)(nlp))
    make = registry.readers.get("spacy-attn.SquadCorpus.v2")
    corpus = make(path)
    v2 = list(corpus(nlp))
    # Without shuffle: v1's examples, in file order (the empty one skipped).
    assert [eg.reference.text for eg in v2] == [eg.reference.text for eg in v1]
    assert [[(s.start, s.end) for s in eg.reference.spans["answers"]] for eg in v2] == [
        [(s.start, s.end) for s in eg.reference.spans["answers"]] for eg in v1
    ]
    assert "answers" not in v2[0].predicted.spans and has_pair(v2[0].predicted)
    assert corpus.stats.questions == 12 and corpus.stats.skipped_empty == 1
    assert corpus.stats.exact == 12
    # Built as read: taking one example of a pass builds one doc.
    built = []
    original = reader_module.make_qa_doc
    monkeypatch.setattr(
        reader_module,
        "make_qa_doc",
        lambda *a, **kw: built.append(1) or original(*a, **kw),
    )
    next(iter(make(path)(nlp)))
    assert len(built) == 1
    monkeypatch.undo()

    def ids(corpus):
        return [eg.reference.spans["answers"].attrs["id"] for eg in corpus(nlp)]

    shuffled = make(path, shuffle=True, seed=3, limit=4)
    passes = [ids(shuffled) for _ in range(4)]
    assert all(len(p) == 4 for p in passes)
    assert len({tuple(p) for p in passes}) == 4  # a new sample every pass
    assert len({q for p in passes for q in p}) > 4
    again = make(path, shuffle=True, seed=3, limit=4)
    assert [ids(again) for _ in range(4)] == passes  # seeded
    assert ids(make(path, shuffle=True, seed=4, limit=4)) != passes[0]
    # Stats: of the first complete pass (4 questions), not of later ones.
    assert shuffled.stats.questions == 4
