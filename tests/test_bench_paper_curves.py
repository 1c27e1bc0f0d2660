"""benchmarks/paper_curves.py's pure helpers: reading the dev curve from a
``spacy train`` log, the majority baseline and the learns / fails verdict."""

import json

import pytest

from .util import load_script

PAIR_LOG = """\
E    #       LOSS ATTN_...  PAIR_ACC  PAIR_MACRO_F  SCORE
---  ------  -------------  --------  ------------  ------
  0       0           1.10     29.30         15.11    0.29
  0    1000        1099.28     35.90         17.61    0.36
"""
CATS_LOG = """\
E    #       LOSS TEXTCAT  CATS_SCORE  CATS_MICRO_F  SCORE
---  ------  ------------  ----------  ------------  ------
  0       0          0.25       33.31         49.94    0.50
  0      75          6.31       50.79         57.21    0.57
"""


@pytest.fixture(scope="module")
def curves():
    return load_script("benchmarks/paper_curves.py")


def test_log_curve_reads_the_accuracy_column(curves, tmp_path):
    pair, cats = tmp_path / "pair.log", tmp_path / "cats.log"
    pair.write_text(PAIR_LOG)
    cats.write_text(CATS_LOG)
    assert curves.log_curve(pair, 4) == [
        {"step": 0, "seen": 0, "dev_acc": pytest.approx(0.293)},
        {"step": 1000, "seen": 4000, "dev_acc": pytest.approx(0.359)},
    ]
    # CATS_MICRO_F (the accuracy), not CATS_SCORE (macro F) nor SCORE.
    assert [p["dev_acc"] for p in curves.log_curve(cats, 32)] == [
        pytest.approx(0.4994),
        pytest.approx(0.5721),
    ]


def test_majority_is_the_most_common_label_of_the_set(curves):
    assert curves.majority(["a", "b", "b", "c"]) == {"label": "b", "acc": 0.5}


def _run(dev, test):
    return {
        "curve": [{"step": i, "seen": 4 * i, "dev_acc": a} for i, a in enumerate(dev)],
        "dev_majority": {"label": "x", "acc": 0.36},
        "test_majority": {"label": "x", "acc": 0.34},
        "test": {"acc": test, "macro_f": 0.0, "n": 10},
    }


def test_verdict(curves):
    flat = curves.verdict(_run([0.29, 0.36, 0.36], 0.34), 0.05)
    assert not flat["learns"] and flat["first_seen_above"] is None
    good = curves.verdict(_run([0.36, 0.40, 0.45], 0.44), 0.05)
    assert good["learns"] and good["first_seen_above"] == 8
    # A good dev curve does not pass with a test score at the baseline.
    assert not curves.verdict(_run([0.36, 0.45], 0.35), 0.05)["learns"]


def test_collect_keeps_committed_rows_of_configs_without_a_run(
    curves, tmp_path, monkeypatch
):
    runs, results = tmp_path / "runs", tmp_path / "results"
    (runs / "glove").mkdir(parents=True)
    results.mkdir()
    fresh = {**_run([0.36, 0.50], 0.49), "marker": "fresh"}
    (runs / "glove" / "result.json").write_text(json.dumps(fresh))
    committed = {
        "glove": {**_run([0.36], 0.34), "marker": "old"},
        "age_selfattn": {**_run([0.50], 0.52), "marker": "old"},
    }
    (results / "paper_curves.json").write_text(
        json.dumps({"results": {"runs": committed}})
    )
    monkeypatch.setattr(curves, "RUNS", runs)
    monkeypatch.setattr(curves.machine, "RESULTS", results)
    got = curves.collect()
    # A run folder wins over the committed row; a config without one keeps
    # its committed row, marked as carried over; others stay absent.
    assert got["glove"]["marker"] == "fresh" and "carried_over" not in got["glove"]
    assert (
        got["age_selfattn"]["marker"] == "old" and got["age_selfattn"]["carried_over"]
    )
    assert set(got) == {"glove", "age_selfattn"}


def test_a_run_scored_with_finish_says_its_wall_time_was_not_recorded(curves):
    run = {"train_seconds": None, "load_before": None, "load_after": None}
    assert "not recorded" in curves.wall_and_load(run)
    timed = {"train_seconds": 90.0, "load_before": [1.5], "load_after": [2.25]}
    assert "1.50 before, 2.25 after" in curves.wall_and_load(timed)
