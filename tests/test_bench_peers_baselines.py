"""The trivial-baseline verdicts of benchmarks/peers.py (peers_baselines):
a model row whose mean over seeds is not strictly above its table's
strongest baseline is reported (and fails a training run), one above is
not; the tables mark both. Pure functions only: no data, no training."""

import importlib
import types
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def pb():
    # benchmarks/ is a folder of scripts that import each other by name.
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(BENCHMARKS))
    yield importlib.import_module("peers_baselines")
    mp.undo()


def _agg(mean, n=3):
    return {"mean": mean, "sd": 0.01, "n": n}


PAIR_BASE = {
    "sick": {
        "scores": {
            "majority class": {"acc": 0.57, "macro_f": 0.24},
            "word overlap": {"acc": 0.65, "macro_f": 0.44},
            "BM25": {"acc": 0.62, "macro_f": 0.42},
        }
    }
}
PAIRS = {
    "sick": {
        "da_trf": {"acc": _agg(0.84)},
        "da_glove": {"acc": _agg(0.61)},
        "tied": {"acc": _agg(0.65)},
    }
}
SIM_BASE = {
    "scores": {
        "word overlap": {"spearman": 0.57, "pearson": 0.58},
        "BM25": {"spearman": 0.56, "pearson": 0.55},
    }
}
SIM = {
    "minilm_mean": {"spearman": _agg(0.77, 1)},
    "attn_flatten": {"spearman": _agg(0.42)},
    "attn_mean": {"spearman": _agg(0.51)},
}


def test_pair_rows_below_the_strongest_baseline_are_reported(pb):
    lines = pb.pair_losers(PAIRS, PAIR_BASE)
    assert len(lines) == 2
    assert lines[0].startswith("sick/da_glove: mean test accuracy 0.6100")
    assert "word overlap 0.6500" in lines[0]
    # Equal is not above: the rule is strict.
    assert lines[1].startswith("sick/tied:")
    assert not any("da_trf" in line for line in lines)
    # Without baselines nothing is judged.
    assert pb.pair_losers(PAIRS, {}) == []


def test_similarity_rows_below_the_strongest_lexical_rho_are_reported(pb):
    lines = pb.similarity_losers(SIM, SIM_BASE)
    assert [line.split(":")[0] for line in lines] == [
        "similarity/attn_flatten",
        "similarity/attn_mean",
    ]
    assert "strongest lexical baseline, word overlap 0.5700" in lines[0]
    assert pb.similarity_losers(SIM, None) == []


def test_verdict_judges_the_rows_the_invocation_trained(pb, capsys):
    results = {
        "summary": {"pairs": PAIRS, "similarity": SIM},
        "baselines": {"pairs": PAIR_BASE, "similarity": SIM_BASE},
    }
    args = types.SimpleNamespace(
        part="pairs", datasets=["sick"], rows=["da_glove"], quick=False
    )
    assert pb.verdict(args, results) == 1
    err = capsys.readouterr().err
    assert err.count("NOT ABOVE THE BASELINES: sick/da_glove") == 1
    assert "tied" not in err
    args.rows = ["da_trf"]
    assert pb.verdict(args, results) == 0
    args.rows, args.quick = ["da_glove"], True  # a smoke test only prints
    assert pb.verdict(args, results) == 0
    sim_args = types.SimpleNamespace(
        part="similarity", rows=["minilm_mean", "attn"], quick=False
    )
    assert len(pb.losers(sim_args, results)) == 2  # both attn_* rows
    sim_args.rows = ["minilm_mean"]
    assert pb.verdict(sim_args, results) == 0


def test_tables_mark_each_row_and_the_strongest(pb):
    header, cells = pb.pair_table(
        ["model", "test acc", "test macro-F", "dev acc"],
        [["a", "84.0", "83.0", "84.0"], ["b", "61.0", "47.0", "60.0"]],
        [0.84, 0.61],
        PAIR_BASE["sick"],
    )
    assert header[-1] == "beats baselines"
    assert [c[-1] for c in cells[:2]] == ["yes", "NO"]
    assert cells[3] == [
        "word overlap (trivial, best cut on test)",
        "65.0",
        "44.0",
        "—",
        "(strongest)",
    ]
    assert all(len(c) == len(header) for c in cells)
    header, cells = pb.similarity_table(
        ["embedding", "rho", "r", "seeds"], [["m", "77", "83", "1"]], [0.77], SIM_BASE
    )
    assert header[-1] == "beats lexical"
    assert cells[0][-1] == "yes"
    assert cells[1][0] == "word overlap (lexical, no training)"
    assert cells[1][-1] == "(strongest)"
    # No baselines: the table as it was.
    assert pb.pair_table(["m"], [["x"]], [0.5], None) == (["m"], [["x"]])


def test_check_pair_test_needs_the_runs_label_counts(pb):
    base = {"labels": {"a": 4, "b": 6}, "pairs": 10, "test_file": "t"}
    run = {
        "dataset": "d",
        "row": "r",
        "seed": 0,
        "test": {
            "n": 10,
            "acc": 0.7,
            "per_label": {"a": {"r": 0.25}, "b": {"r": 1.0}},
        },
    }
    pb.check_pair_test("d", base, [run])  # 1 + 6 hits of 10: fits
    with pytest.raises(SystemExit, match="not the same test set"):
        pb.check_pair_test("d", {**base, "labels": {"a": 5, "b": 5}}, [run])


def test_add_baselines_is_a_mode_of_its_own(pb):
    peers = importlib.import_module("peers")
    assert peers.parse_args(["--add-baselines"]).add_baselines
    assert peers.parse_args(["pairs", "--datasets", "sick"]).part == "pairs"
    for argv in ([], ["pairs", "--add-baselines"]):
        with pytest.raises(SystemExit):
            peers.parse_args(argv)
