"""The pure parts of benchmarks/peers.py and its part modules: the seeded
training subsets of the learning curve (peers_textcat), the per-dataset
aggregation (peers) and the noise screen (peers_seeds)."""

import gzip
import importlib
import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def benchmarks_path():
    # benchmarks/ is a folder of scripts that import each other by name.
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(BENCHMARKS))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def peers(benchmarks_path):
    return importlib.import_module("peers")


@pytest.fixture(scope="module")
def peers_textcat(benchmarks_path):
    return importlib.import_module("peers_textcat")


@pytest.fixture(scope="module")
def peers_seeds(benchmarks_path):
    return importlib.import_module("peers_seeds")


def _write(path: Path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def _read(path: Path):
    with gzip.open(path, "rt", encoding="utf8") as f:
        return [json.loads(line) for line in f]


def test_fraction_splits(peers_textcat, tmp_path):
    rows = [{"text": f"doc {i}", "label": "pos" if i % 2 else "neg"} for i in range(40)]
    _write(tmp_path / "full" / "train.jsonl.gz", rows)
    splits = {
        "paths": {s: tmp_path / "full" / f"{s}.jsonl.gz" for s in ("train", "dev")},
        "labels": ["neg", "pos"],
    }
    assert peers_textcat.fraction_splits(splits, 1.0, 0, tmp_path / "a") is splits
    cut = peers_textcat.fraction_splits(splits, 0.25, 3, tmp_path / "a")
    assert cut["paths"]["dev"] == splits["paths"]["dev"]
    assert cut["labels"] == splits["labels"]
    kept = _read(cut["paths"]["train"])
    assert len(kept) == 10
    assert all(r in rows for r in kept)
    assert len({r["text"] for r in kept}) == 10
    # Same seed, same subset (made afresh elsewhere); another seed, another one.
    again = _read(
        peers_textcat.fraction_splits(splits, 0.25, 3, tmp_path / "b")["paths"]["train"]
    )
    other = _read(
        peers_textcat.fraction_splits(splits, 0.25, 4, tmp_path / "b")["paths"]["train"]
    )
    assert again == kept
    assert other != kept


def _run(dataset, row, seed, acc, docs):
    return {
        "dataset": dataset,
        "row": row,
        "seed": seed,
        "load_at_start": [1.0, 1.0, 1.0],
        "test_acc": acc,
        "test_macro_f": acc,
        "train_docs_per_s": 100.0,
        "infer_docs_per_s": 200.0,
        "train_docs": docs,
    }


def test_summarize_keeps_the_curve_out_of_the_full_table(peers, peers_textcat):
    runs = [
        _run(d, row, s, acc + 0.01 * s, docs)
        for d, docs, base in (("rt", 800, 0.8), ("rt_f25", 200, 0.6))
        for row, acc in (("bow", base), ("selfattn_p001", base - 0.05))
        for s in range(3)
    ]
    more_steps = [
        {**_run("rt_s2400", row, s, 0.7, 800), "max_steps": 2400}
        for row in ("bow", "selfattn_p001")
        for s in range(3)
    ]
    out = peers.summarize({"similarity": [], "pairs": [], "textcat": runs + more_steps})
    assert set(out["textcat"]) == {"bow", "selfattn_p001"}
    assert out["textcat"]["bow"]["acc"]["n"] == 3
    assert out["textcat"]["bow"]["acc"]["mean"] == pytest.approx(0.81)
    assert set(out["textcat_curve"]) == {"rt", "rt_f25", "rt_s2400"}
    assert out["textcat_curve"]["rt_f25"]["bow"]["acc"]["mean"] == pytest.approx(0.61)
    md = peers_textcat.render_curve(out["textcat_curve"])
    # Smallest training set first; the gap row per size.
    assert (
        md.index("200 train docs, 800 steps")
        < md.index("800 train docs, 800 steps")
        < md.index("800 train docs, 2,400 steps")
    )
    assert md.count("-5.0 points") == 2
    assert md.count("+0.0 points") == 1
    # Without a subset run there is no curve.
    full_only = [r for r in runs if r["dataset"] == "rt"]
    out = peers.summarize({"similarity": [], "pairs": [], "textcat": full_only})
    assert out["textcat_curve"] == {}
    assert peers_textcat.render_curve(out["textcat_curve"]) == ""


def test_gap_noise_screen(peers_seeds):
    def agg(mean, sd, n=3):
        return {"acc": {"mean": mean, "sd": sd, "n": n}}

    clear = peers_seeds.gap(agg(0.80, 0.005), agg(0.75, 0.005))
    assert clear["diff"] == pytest.approx(0.05)
    assert clear["beyond"] is True
    assert peers_seeds.gap(agg(0.80, 0.03), agg(0.79, 0.03))["beyond"] is False
    assert peers_seeds.gap(agg(None, None), agg(0.79, 0.03)) is None


def test_parts_without_a_checkpoint_keep_the_committed_runs(
    peers, tmp_path, monkeypatch
):
    committed = {"similarity": [{"row": "old_sim"}], "pairs": [{"row": "old_pair"}]}
    saved = {"results": {"runs": dict(committed, textcat=[])}}
    (tmp_path / "peers.json").write_text(json.dumps(saved))
    monkeypatch.setattr(peers.machine, "RESULTS", tmp_path)
    collected = {"similarity": [], "pairs": [{"row": "new_pair"}], "textcat": []}
    # pairs ran here and keeps its new run; textcat has none anywhere.
    assert peers.committed_runs(collected) == ["similarity"]
    assert collected == {
        "similarity": [{"row": "old_sim"}],
        "pairs": [{"row": "new_pair"}],
        "textcat": [],
    }
    (tmp_path / "peers.json").unlink()  # a checkout without the results file
    empty = {"similarity": [], "pairs": [], "textcat": []}
    assert peers.committed_runs(empty) == [] and not any(empty.values())


def test_report_without_runs_leaves_the_tables(peers, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(peers.peers_runs, "runs_root", lambda quick: tmp_path / "none")
    written = []
    monkeypatch.setattr(
        peers, "write_report", lambda quick, collected=None: written.append(quick)
    )
    assert peers.main(["report"]) == 1 and not written
    assert "nothing to re-render" in capsys.readouterr().err


def test_report_reads_the_checkpoints_once(peers, tmp_path, monkeypatch, capsys):
    found = {"similarity": [{"row": "a"}], "pairs": [], "textcat": []}
    reads, written = [], []
    monkeypatch.setattr(peers, "collect", lambda quick: reads.append(quick) or found)
    md = tmp_path / "peers.md"
    md.write_text("table")

    def write_report(quick, collected=None):
        written.append(collected)
        return md, {}

    monkeypatch.setattr(peers, "write_report", write_report)
    assert peers.main(["report"]) == 0
    assert reads == [False] and written == [found]
    assert "table" in capsys.readouterr().out
