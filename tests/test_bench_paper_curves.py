"""benchmarks/paper_curves.py's pure helpers: reading the dev curve from a
``spacy train`` log, the majority baseline and the learns / fails verdict."""

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

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
    # benchmarks/ is a folder of scripts that import their sibling package bench.
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("paper_curves")
    finally:
        sys.path.remove(str(BENCHMARKS))


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
