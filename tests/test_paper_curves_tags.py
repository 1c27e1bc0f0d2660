"""benchmarks/paper_curves.py's tagged runs: ``config@tag`` keys, ``--set``
overrides and the before / after table of a run and the one it replaces."""

import json

import pytest

from .util import load_script


@pytest.fixture(scope="module")
def curves():
    return load_script("benchmarks/paper_curves.py")


def _run(dev, test, **extra):
    return {
        "curve": [
            {"step": 10 * i, "seen": 40 * i, "dev_acc": a} for i, a in enumerate(dev)
        ],
        "dev_majority": {"label": "x", "acc": 0.36},
        "test_majority": {"label": "x", "acc": 0.34},
        "test": {"acc": test, "macro_f": 0.0, "n": 10},
        **extra,
    }


def test_config_name_and_sets(curves):
    assert curves.config_name("glove") == "glove"
    assert curves.config_name("glove@null") == "glove"
    sets = curves.parse_sets(["a.b=0.1", "c=x=y"])
    assert sets == {"a.b": "0.1", "c": "x=y"}
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        curves.parse_sets(["nothing"])


def test_before_after_compares_at_the_steps_both_reached(curves):
    runs = {
        "glove": _run([0.36, 0.36, 0.36, 0.42, 0.50], 0.55),
        "glove@null": _run([0.36, 0.38, 0.44], 0.40, versus="glove", note="NULL"),
    }
    table = curves.before_after(runs, 0.05)
    row = next(line for line in table.splitlines() if "`glove@null`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    # Compared at step 20, the last both reached: 36.0 -> 44.0 there, and the
    # old run's later rise (step 40) does not count.
    assert cells[1:4] == ["NULL", "20", "36.0 → 44.0"]
    assert cells[4] == "36.0 → 44.0"
    assert cells[5] == "never → 80"
    assert cells[6] == "55.0 → 40.0"
    assert curves.before_after({"glove": runs["glove"]}, 0.05) == ""


def test_tagged_runs_are_collected_after_their_config(curves, tmp_path, monkeypatch):
    runs, results = tmp_path / "runs", tmp_path / "results"
    for key in ("glove@null", "age_selfattn@mean", "data"):
        (runs / key).mkdir(parents=True)
    for key in ("glove@null", "age_selfattn@mean"):
        (runs / key / "result.json").write_text(json.dumps(_run([0.4], 0.4)))
    results.mkdir()
    committed = {"glove": _run([0.5], 0.5), "age_selfattn": _run([0.5], 0.5)}
    (results / "paper_curves.json").write_text(
        json.dumps({"results": {"runs": committed}})
    )
    monkeypatch.setattr(curves, "RUNS", runs)
    monkeypatch.setattr(curves.machine, "RESULTS", results)
    got = curves.collect()
    assert list(got) == ["glove", "glove@null", "age_selfattn", "age_selfattn@mean"]
    assert got["glove"]["carried_over"] and "carried_over" not in got["glove@null"]
