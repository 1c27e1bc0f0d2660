"""benchmarks/accuracy.py's verdict against the trivial baselines, on a
made-up payload (no training, no data files)."""

import pytest

from .util import load_script


@pytest.fixture(scope="module")
def acc():
    return load_script("benchmarks/accuracy.py")


def ok(test_acc):
    return {"status": "ok", "test": {"acc": test_acc}}


def payload(results, baselines=True):
    scores = {
        "majority class": {"acc": 0.57, "macro_f": 0.24},
        "word overlap": {"acc": 0.65, "macro_f": 0.44},
        "BM25": {"acc": 0.62, "macro_f": 0.42},
    }
    info = {"baselines": {"scores": scores}} if baselines else {}
    return {
        "datasets": {"sick": info},
        "rows": {r: {} for r in ("above", "below", "equal", "failed", "missing")},
        "results": {f"sick/{r}": res for r, res in results.items()},
    }


def test_rows_not_above_the_strongest_baseline_are_reported(acc):
    out = payload(
        {
            "above": ok(0.66),
            "below": ok(0.63),  # above BM25 and the majority, not word overlap
            "equal": ok(0.65),  # a tie does not beat it
            "failed": {"status": "failed: spacy train exited with 1"},
        }
    )
    assert acc.strongest(out["datasets"]["sick"]["baselines"]["scores"]) == (
        "word overlap",
        0.65,
    )
    lines = acc.losers(out)
    assert [line.split(":")[0] for line in lines] == ["sick/below", "sick/equal"]
    assert lines[0] == (
        "sick/below: test accuracy 0.6300 does not beat the strongest trivial "
        "baseline, word overlap 0.6500"
    )
    assert acc.losers(payload({"above": ok(0.66)})) == []
    # Without baselines (a payload from before them) nothing is judged.
    assert acc.losers(payload({"below": ok(0.1)}, baselines=False)) == []


def test_training_fails_on_a_loser_except_in_quick_mode(acc, capsys):
    class Args:
        quick = False

    assert acc.verdict(Args(), payload({"above": ok(0.66)})) == 0
    assert acc.verdict(Args(), payload({"below": ok(0.63)})) == 1
    assert "NOT ABOVE THE BASELINES: sick/below" in capsys.readouterr().err
    Args.quick = True
    assert acc.verdict(Args(), payload({"below": ok(0.63)})) == 0


def test_split_check_stops_on_another_test_file(acc, tmp_path, monkeypatch):
    monkeypatch.setattr(acc.machine, "REPO", tmp_path)
    rows = [{"id": "1", "premise": "a", "hypothesis": "b", "label": "neutral"}]
    sha = acc.datafiles.write_jsonl_gz(tmp_path / "test.jsonl.gz", rows)
    manifest = {"files": {"test": "test.jsonl.gz"}, "rows": {"test": 1}}
    acc.check_split("x", {"rows": {"test": 1}, "sha256": {"test": sha}}, manifest)
    with pytest.raises(SystemExit, match="not the table's"):
        acc.check_split("x", {"rows": {"test": 1}, "sha256": {"test": "0"}}, manifest)
