"""benchmarks/bench/lexical.py: the lexical rows added to results tables,
where they go, which is the strongest, and the check that the rebuilt test
file is the table's."""

import pytest
from bench import lexical


def test_baseline_rows_score_a_test_file_as_evaluate_does(tmp_path):
    test = tmp_path / "test.csv"
    test.write_text(
        "qid,question,sentence,label\n"
        "q1,Where is Denver?,Denver is in Colorado.,yes\n"
        "q1,Where is Denver?,It snowed.,no\n"
        "q2,Who wrote Hamlet?,Shakespeare wrote Hamlet.,yes\n"
        "q2,Who wrote Hamlet?,Hamlet is long and Hamlet is sad and old.,no\n",
        encoding="utf8",
    )
    out = lexical.baseline_rows(
        test, text_cols=("question", "sentence"), label_col="label",
        group_col="qid", positive="yes",
    )  # fmt: skip
    rows = out["baselines"]
    assert list(rows) == ["majority class", lexical.OVERLAP, *lexical.ADDED]
    # q2's negative shares "Hamlet" only; its positive shares "wrote" too.
    # A constant score ranks at random: the answer first half the time.
    assert (
        rows["BM25"]["pair_map"] == 1.0 and rows["majority class"]["pair_map"] == 0.75
    )
    assert out["lexical_baselines"]["idf_documents"] == 4


def test_rows_go_after_word_overlap_and_replace_earlier_ones():
    rows = [{"system": s} for s in ("model", "majority class", "word overlap", "x")]
    new = [{"system": "BM25", "v": 1}]
    once = lexical.with_rows(rows, new)
    assert [r["system"] for r in once] == [
        "model", "majority class", "word overlap", "BM25", "x",
    ]  # fmt: skip
    again = lexical.with_rows(once, [{"system": "BM25", "v": 2}])
    assert [r.get("v") for r in again] == [None, None, None, 2, None]
    # Per task: after that task's word-overlap row.
    two = [{"task": t, "system": "word overlap"} for t in ("RTE", "MRPC")]
    new = [{"task": "MRPC", "system": "BM25"}]
    placed = lexical.with_rows(two, new, where=lambda r: r["task"] == "MRPC")
    assert [r["task"] for r in placed] == ["RTE", "MRPC", "MRPC"]
    assert placed[2]["system"] == "BM25"


def test_strongest_and_the_overlap_check():
    maps = {"majority class": 0.9, "word overlap": 0.84, "BM25": 0.876, "x": 0.99}
    assert lexical.strongest(maps) == ("BM25", 0.876)
    lexical.check_overlap("t", {"pair_map": 0.8402}, {"pair_map": 0.8402})
    with pytest.raises(SystemExit, match="pair_acc on the rebuilt test file"):
        lexical.check_overlap(
            "t", {"pair_acc": 0.5}, {"pair_acc": 0.51}, keys=("pair_acc",)
        )
    assert lexical.note({}) == ""


def test_note_states_each_table_rule():
    settings = {"words": "lower-cased words", "idf_documents": 7, "bm25_k1": 1.2}
    added = {"tests": {"t.csv": {**settings, "bm25_b": 0.75}}, "date": "d"}
    added.update(commit="c", device="CPU", command="cmd", ties="expected")
    text = lexical.note({"lexical_baselines": added})
    assert lexical.THRESHOLDS in text and lexical.TIES["expected"] in text
    # An AUC table ranks nothing per group; a table with its own rules says so.
    added.update(ties=None, thresholds="each column at its best threshold")
    text = lexical.note({"lexical_baselines": added})
    assert "rankings" not in text and "each column at its best threshold" in text
    added["ties"] = lexical.KEPT
    text = lexical.note({"lexical_baselines": added})
    assert "tied scores keep the file's order" in text
    # IDF from the training file: the note names it, not the test file.
    added["tests"]["t.csv"]["idf_from"] = "train.jsonl.gz"
    assert "test file's distinct" in lexical.note({"lexical_baselines": added})
    added["idf"] = lexical.TRAINING
    text = lexical.note({"lexical_baselines": added})
    assert "training file's distinct second texts (train.jsonl.gz: 7)" in text


def test_three_label_rows_and_their_note(tmp_path):
    """Without a positive label (NLI): every lexical row, cut into intervals
    by accuracy; the check can name the majority class; the note says how."""
    test = tmp_path / "test.jsonl"
    rows = [
        ("A man sleeps.", "A man sleeps.", "entailment"),
        ("A dog runs.", "A dog runs fast.", "entailment"),
        ("A cat eats.", "Nobody is here at all.", "neutral"),
        ("Kids play.", "The weather is bad today.", "neutral"),
    ]
    test.write_text(
        "".join(
            f'{{"premise": "{p}", "hypothesis": "{h}", "label": "{y}"}}\n'
            for p, h, y in rows
        ),
        encoding="utf8",
    )
    out = lexical.baseline_rows(
        test, text_cols=("premise", "hypothesis"), label_col="label",
        group_col=None, positive=None,
    )  # fmt: skip
    base = out["baselines"]
    assert list(base) == ["majority class", lexical.OVERLAP, *lexical.ADDED]
    assert base[lexical.OVERLAP]["pair_acc"] == 1.0
    assert base[lexical.OVERLAP]["classes"] == ["neutral", "entailment"]
    assert "overlap_map_positives_last" not in out
    with pytest.raises(SystemExit, match="majority class's pair_acc"):
        lexical.check_overlap(
            "t", {"pair_acc": 0.5}, {"pair_acc": 0.6}, ("pair_acc",), "majority class"
        )
    settings = {"words": "w", "idf_documents": 7, "bm25_k1": 1.2, "bm25_b": 0.75}
    added = {"tests": {"SICK test": settings}, "date": "d", "commit": "c"}
    added.update(device="CPU", command="cmd", ties="expected", zero_shot=["SICK test"])
    text = lexical.note({"lexical_baselines": added})
    assert "of SICK test (three labels) added with them: each score cut" in text
