"""benchmarks/paper_curves.py's lexical rule: an NLI run "learns" only if its
test accuracy also beats the strongest lexical baseline of ``spacy attn
evaluate`` on the same test pairs (no training, no network)."""

import pytest

from .util import load_script

# SNLI test's baselines as the committed table records them.
LEXICAL = {
    "name": "BM25",
    "acc": 0.46651058631921827,
    "macro_f": 0.41571786080733325,
    "n": 10,
    "all": {"majority class": {"acc": 0.34, "macro_f": 0.17}},
}


@pytest.fixture(scope="module")
def curves():
    return load_script("benchmarks/paper_curves.py")


def _run(test, lexical=None):
    run = {
        "curve": [
            {"step": i, "seen": 4 * i, "dev_acc": a}
            for i, a in enumerate([0.36, 0.42, 0.45])
        ],
        "dev_majority": {"label": "x", "acc": 0.36},
        "test_majority": {"label": "x", "acc": 0.34},
        "test": {"acc": test, "macro_f": 0.3, "n": 10},
    }
    if lexical:
        run["test_lexical"] = lexical
    return run


def test_a_run_must_beat_the_strongest_lexical_baseline_too(curves):
    # 40.2: 6 points above the majority class, below BM25's 46.65.
    below = curves.verdict(_run(0.402, LEXICAL), 0.05)
    assert below["test_gain"] >= 0.05 and below["lexical_gain"] < 0
    assert not below["learns"]
    tie = _run(LEXICAL["acc"], LEXICAL)
    assert not curves.verdict(tie, 0.05)["learns"]  # not above its best case
    assert curves.verdict(_run(0.50, LEXICAL), 0.05)["learns"]
    # Without a lexical baseline (Rotten Tomatoes: single texts) the majority
    # rule alone decides.
    single = curves.verdict(_run(0.402), 0.05)
    assert single["learns"] and single["lexical_gain"] is None


def test_the_exit_status_and_the_table_follow_the_rule(curves, capsys):
    runs = {
        "snli_siamese": _run(0.402, LEXICAL),
        "glove": _run(0.598, LEXICAL),
        "age_selfattn": _run(0.714),
    }
    with pytest.raises(SystemExit) as stop:
        curves.finish_exit(runs, 0.05)
    assert "snli_siamese" in str(stop.value) and "glove" not in str(stop.value)
    assert "BM25 46.7" in capsys.readouterr().out
    # A tagged run is reported but does not decide the exit status.
    curves.finish_exit({"snli_siamese@x": runs["snli_siamese"]}, 0.05)
    meta = {
        "command": "c",
        "commit": "abc",
        "date": "d",
        "machine": {
            "device": "CPU",
            "torch": "t",
            "torch_threads": 1,
            "spacy": "s",
            "thinc": "th",
            "python": "p",
            "load_average": [0.0, 0.0, 0.0],
        },
    }
    for r in runs.values():
        r.update(data="d", batch_size=4, train_seconds=60.0, stopped_by_timeout=False)
        r.update(steps=2, load_before=[0.0], load_after=[0.0])
        r.update(invocation="i", git_commit="g", train_command="t")
    md = curves.render(meta, {"margin": 0.05, "runs": runs}, measured=False)
    row = {
        line.split("|")[1].strip(): line for line in md.splitlines() if "| `" in line
    }
    assert "| 40.2 / 46.7 BM25 |" in row["`snli_siamese`"]
    assert row["`snli_siamese`"].endswith("| **NO** |")
    assert row["`glove`"].endswith("| **yes** |")
    assert "| — |" in row["`age_selfattn`"]


def test_add_lexical_checks_the_test_set_and_keeps_earlier_rows(curves):
    data = {"lexical": LEXICAL}
    added = {"command": "x", "commit": "y", "date": "z", "device": "CPU"}
    runs = {"glove": _run(0.598), "age_selfattn": _run(0.714)}
    curves.add_lexical(runs, lambda: data, added)
    assert runs["glove"]["test_lexical"] == {**LEXICAL, "added": added}
    assert "test_lexical" not in runs["age_selfattn"]
    # With ``added`` a run that has one keeps it; without, it is recomputed.
    runs["glove"]["test_lexical"] = {"acc": 0.1}
    curves.add_lexical(runs, lambda: data, added)
    assert runs["glove"]["test_lexical"] == {"acc": 0.1}
    curves.add_lexical(runs, lambda: data)
    assert runs["glove"]["test_lexical"] == LEXICAL
    other = {**_run(0.598), "test_majority": {"label": "x", "acc": 0.35}}
    with pytest.raises(SystemExit, match="rebuilt test set"):
        curves.add_lexical({"glove": other}, lambda: data)


def test_nli_lexical_scores_the_rows_as_evaluate_reads_them(
    curves, tmp_path, monkeypatch
):
    monkeypatch.setattr(curves, "RUNS", tmp_path)
    rows = [
        ("A man plays a guitar.", "A man plays music.", "entailment"),
        ("A dog runs in a park.", "A dog runs.", "entailment"),
        ("A woman sings.", "Nobody is singing at all.", "contradiction"),
        ("Kids eat lunch.", "The kids are at a school.", "neutral"),
    ]
    labels = ["contradiction", "entailment", "neutral"]
    lex = curves.nli_lexical({"test": rows, "labels": labels})
    assert lex["n"] == 4 and lex["all"]["majority class"]["acc"] == 0.5
    assert set(lex["all"]) == {
        "majority class",
        "word overlap",
        "shared words",
        "IDF shared words",
        "BM25",
    }
    best = max(v["acc"] for k, v in lex["all"].items() if k != "majority class")
    assert lex["acc"] == best and lex["all"][lex["name"]]["acc"] == best
    assert lex["idf_documents"] == 4
