"""The answer-sentence-selection set (scripts/sentence_selection.py) and the
ranking metrics of its benchmark (benchmarks/bench/ranking.py)."""

import csv

import pytest

from .util import FIXTURES, load_script


@pytest.fixture(scope="module")
def sel():
    return load_script("scripts/sentence_selection.py")


@pytest.fixture(scope="module")
def ranking():
    from bench import ranking

    return ranking


def texts(text, spans):
    return [text[s:e] for s, e in spans]


def test_split_sentences_rules(sel):
    text = (
        'Mr. Smith met J. R. R. Tolkien in the U.S. in 1950. "It rained!" '
        "(Nobody came.) 12 people left? Then\nA new line.  End"
    )
    assert texts(text, sel.split_sentences(text)) == [
        "Mr. Smith met J. R. R. Tolkien in the U.S. in 1950.",
        '"It rained!"',
        "(Nobody came.)",
        "12 people left?",
        "Then",
        "A new line.",
        "End",
    ]
    # Lower-case after the period: no sentence end (e.g. "approx. three").
    assert len(sel.split_sentences("It was approx. three. Done.")) == 2
    assert sel.split_sentences("   ") == []


def test_question_rows_label_by_answer_span(sel):
    context = "Paris is in France. The Seine flows through Paris. It is long."
    # "Paris" at 44 is in the second sentence; "long" in the third; an answer
    # across the first two sentences counts as inside none.
    rows, outside = sel.question_rows(
        "q1",
        "  What  flows\nthrough Paris? ",
        context,
        [("Paris", 44), ("long", 57), ("France. The", 12)],
    )
    assert [r["label"] for r in rows] == ["no", "yes", "yes"]
    assert outside == 1
    assert rows[0]["question"] == "What flows through Paris?"
    assert [r["sentence"] for r in rows] == [
        "Paris is in France.",
        "The Seine flows through Paris.",
        "It is long.",
    ]


def build(sel, out, seed=0, n=(6, 4, 5)):
    fixture = str(FIXTURES / "squad_dev.json.gz")
    sel.main(
        [
            str(out),
            "--train-file",
            fixture,
            "--test-file",
            fixture,
            "--dev-articles",
            "1",
            "--seed",
            str(seed),
            "--train-questions",
            str(n[0]),
            "--dev-questions",
            str(n[1]),
            "--test-questions",
            str(n[2]),
            "--pairs-jsonl",
        ]
    )
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_build_is_deterministic_and_split_by_article(sel, tmp_path):
    first = build(sel, tmp_path / "a")
    assert first == build(sel, tmp_path / "b")
    assert set(first) == {
        "train.csv",
        "dev.csv",
        "test.csv",
        "train.pairs.jsonl",
        "dev.pairs.jsonl",
        "test.pairs.jsonl",
        "summary.json",
        "summary.md",
    }
    other = build(sel, tmp_path / "c", seed=1)
    assert other["test.csv"] != first["test.csv"]  # another sample of questions
    splits = {
        s: read_csv(tmp_path / "a" / f"{s}.csv") for s in ("train", "dev", "test")
    }
    assert list(splits["train"][0]) == ["question_id", "question", "sentence", "label"]
    qids = {s: {r["question_id"] for r in rows} for s, rows in splits.items()}
    assert [len(q) for q in qids.values()] == [6, 4, 5]
    # dev and train come from different articles of the same file.
    assert not qids["train"] & qids["dev"]
    for rows in splits.values():
        for q in {r["question_id"] for r in rows}:
            labels = [r["label"] for r in rows if r["question_id"] == q]
            assert "yes" in labels and "no" in labels


def test_ranking_metrics_by_hand(ranking):
    keys = ["a", "a", "a", "b", "b", "c", "c"]
    golds = [False, True, True, True, False, False, False]
    scores = [0.9, 0.5, 0.1, 0.2, 0.2, 1.0, 0.0]
    m = ranking.ranking_metrics(keys, golds, scores)
    # a: relevant at ranks 2 and 3 -> AP (1/2 + 2/3) / 2, RR 1/2, P@1 0;
    # b: tie, row order keeps the relevant first -> 1, 1, 1; c: no positive.
    assert m["n_queries"] == 2
    assert m["map"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1) / 2)
    assert m["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert m["p_at_1"] == pytest.approx(0.5)


def test_threshold_and_f1(ranking):
    golds = [True, False, True, False]
    scores = [0.9, 0.8, 0.7, 0.1]
    assert ranking.positive_prf(golds, [True, True, False, False]) == pytest.approx(
        {"p": 0.5, "r": 0.5, "f": 0.5}
    )
    assert ranking.best_threshold(golds, scores) == 0.7  # F1 0.8


def test_word_overlap(ranking):
    stop = frozenset({"the", "of", "what"})
    assert (
        ranking.word_overlap(
            "What is the capital of France?", "Paris, capital of FRANCE.", stop
        )
        == 2.0
    )


@pytest.mark.parametrize("perfect", [True, False])
def test_benchmark_fails_when_overlap_is_not_beaten(
    sel, tmp_path, monkeypatch, perfect
):
    import json

    from bench import machine

    bench = load_script("benchmarks/sentence_selection.py")
    monkeypatch.setattr(machine, "RUNS", tmp_path / "runs")
    data = tmp_path / "set"
    build(sel, data)
    # A peer that scores the gold label beats overlap; one that reverses it
    # cannot.
    scores = {
        s: [
            float((r["label"] == "yes") == perfect) for r in read_csv(data / f"{s}.csv")
        ]
        for s in ("dev", "test")
    }
    (tmp_path / "peer.json").write_text(json.dumps(scores))
    argv = [
        "--data",
        str(data),
        "--scores",
        f"peer={tmp_path / 'peer.json'}",
        "--quick",
    ]
    if perfect:
        bench.main(argv)
    else:
        with pytest.raises(SystemExit) as err:
            bench.main(argv)
        assert err.value.code == 1
    saved = json.loads((tmp_path / "runs" / "sentence_selection.json").read_text())
    peer = saved["results"]["systems"]["peer"]
    if perfect:
        assert peer["map"] == 1.0
    assert (peer["map"] > saved["results"]["systems"]["word overlap"]["map"]) == perfect
