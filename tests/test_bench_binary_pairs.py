"""benchmarks/binary_pairs.py's splits, configs and verdict, on a tiny fake
mirror (no training: the benchmark itself runs the user's commands)."""

import csv
import gzip
import json

import pytest

from .util import load_script


@pytest.fixture(scope="module")
def bp():
    return load_script("benchmarks/binary_pairs.py")


def write_jsonl_gz(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


@pytest.fixture
def mirror(tmp_path):
    mrpc = [
        {"id": f"{i}_{i + 100}", "text_a": f"a {i}", "text_b": f"b {i}", "label": i % 2}
        for i in range(6)
    ]
    write_jsonl_gz(tmp_path / "mrpc" / "train.jsonl.gz", mrpc)
    write_jsonl_gz(tmp_path / "mrpc" / "test.jsonl.gz", mrpc[:3])
    with gzip.open(tmp_path / "mrpc" / "glue_dev_ids.tsv.gz", "wt") as f:
        f.write("4\t104\n1\t101\n")
    labels = ["entailment", "not_entailment"]
    rte = [
        {"id": i, "premise": f"p {i}", "hypothesis": f"h {i}", "label": labels[i % 2]}
        for i in range(20)
    ]
    write_jsonl_gz(tmp_path / "rte" / "train.jsonl.gz", rte)
    write_jsonl_gz(tmp_path / "rte" / "dev.jsonl.gz", rte[:4])
    return tmp_path


def test_mrpc_splits_follow_glue_dev_ids(bp, mirror):
    splits = bp.mrpc_splits(mirror)
    assert [r["#1 ID"] for r in splits["dev"]] == ["1", "4"]  # file order
    assert [r["#1 ID"] for r in splits["train"]] == ["0", "2", "3", "5"]
    assert len(splits["test"]) == 3
    assert splits["dev"][0] == {
        "Quality": "1",
        "#1 ID": "1",
        "#2 ID": "101",
        "#1 String": "a 1",
        "#2 String": "b 1",
    }
    with gzip.open(mirror / "mrpc" / "glue_dev_ids.tsv.gz", "wt") as f:
        f.write("4\t104\n9\t999\n")
    with pytest.raises(SystemExit, match="1 GLUE dev ids are not in"):
        bp.mrpc_splits(mirror)


def test_rte_split_is_seeded_disjoint_and_in_file_order(bp, mirror):
    splits = bp.rte_splits(mirror, seed=0, dev_fraction=0.1)
    train = [int(r["index"]) for r in splits["train"]]
    dev = [int(r["index"]) for r in splits["dev"]]
    assert len(dev) == 2 and len(train) == 18
    assert sorted(train + dev) == list(range(20))
    assert train == sorted(train) and dev == sorted(dev)
    assert bp.rte_splits(mirror, seed=0)["dev"] == splits["dev"]
    other = [bp.rte_splits(mirror, seed=s)["dev"] for s in range(1, 6)]
    assert any(d != splits["dev"] for d in other)
    assert [r["label"] for r in splits["test"]][:2] == ["entailment", "not_entailment"]
    assert set(splits["test"][0]) == {"index", "sentence1", "sentence2", "label"}


def test_write_splits_uses_the_task_header_and_limits(bp, mirror, tmp_path):
    task = bp.TASKS["mrpc"]
    summary = bp.write_splits(
        task,
        bp.mrpc_splits(mirror),
        tmp_path / "out",
        limits={"train": 3, "dev": 5, "test": 1},
    )
    with open(tmp_path / "out" / "train.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
    assert len(rows) == 4
    assert {s: v["rows"] for s, v in summary.items()} == {
        "train": 3,
        "dev": 2,
        "test": 1,
    }
    assert summary["train"]["positive"] == 1  # ids 0, 2, 3: only 3 is label 1


def test_v3_config_is_the_quickstart_with_the_v3_model(bp, tmp_path):
    from spacy import util

    import spacy_attn  # noqa: F401  (registers the architectures)
    from spacy_attn.quickstart import quickstart_config

    task = bp.TASKS["rte"]
    v4 = tmp_path / "v4.cfg"
    quickstart_config(
        "pair",
        "glove",
        binary=True,
        positive_label=task.positive,
        columns={"text_cols": list(task.text_cols), "label_col": task.label_col},
    ).to_disk(v4)
    config = util.load_config(bp.v3_config(v4, tmp_path / "v3.cfg"))
    model = config["components"]["attn_pair_classifier"]["model"]
    assert model["@architectures"] == "spacy-attn.DecomposableAttention.v3"
    assert not (set(bp.V4_ONLY) | set(bp.V6_ONLY)) & set(model)
    assert config["corpora"]["train"]["text_cols"] == ["sentence1", "sentence2"]
    # The v3 model takes every setting left (no v4-only key is left over).
    util.load_model_from_config(config, auto_fill=False, validate=True)


def scores(acc, pos_f):
    keys = ("pair_macro_f", "pair_pos_p", "pair_pos_r")
    return {"pair_acc": acc, "pair_pos_f": pos_f, **{k: 0.5 for k in keys}}


def results():
    baselines = {"majority class": scores(0.6, 0.75), "word overlap": scores(0.62, 0.7)}
    row = {
        "architecture": "spacy-attn.DecomposableAttention.v4",
        "config": "v4.cfg",
        "train_command": "python -m spacy train v4.cfg",
        "evaluate_command": "python -m spacy attn evaluate",
        "threshold": 0.4,
        "train_wall_s": 600.0,
        "last_eval_step": 2000,
    }
    data = {
        s: {"rows": 10, "positive": 6, "path": f"{s}.csv"}
        for s in ("train", "dev", "test")
    }
    return {
        "budget_min": 10,
        "wall_s": 1300,
        "tasks": {
            "rte": {
                "title": "RTE",
                "splits": "s",
                "columns": ["a", "b", "label"],
                "positive_label": "entailment",
                "data": data,
                "init_config_command": "python -m spacy attn init-config",
                "rows": {
                    "DA v4": {
                        **row,
                        "scores": {**scores(0.7, 0.8), "baselines": baselines},
                    },
                    # Beats word overlap on positive F1, not the majority class.
                    "DA v3": {
                        **row,
                        "scores": {**scores(0.65, 0.72), "baselines": baselines},
                    },
                    "DA v2": {**row, "error": "no model-best"},
                },
            }
        },
    }


def test_losers_lists_rows_below_either_baseline(bp):
    r = results()
    assert bp.losers(r) == [
        "rte / DA v3: positive F1 0.720; majority class 0.750, word overlap 0.700",
        "rte / DA v2: no test scores",
    ]
    r["tasks"]["rte"]["rows"]["DA v3"]["scores"]["pair_pos_f"] = 0.76
    del r["tasks"]["rte"]["rows"]["DA v2"]
    assert bp.losers(r) == []


def fake_meta(command: str, commit: str) -> dict:
    """The run metadata ``render`` reads, for a measured-today run."""
    machine = {"device": "CPU", "torch": "2", "torch_threads": 1, "spacy": "3"}
    machine.update(thinc="8", python="3.11", load_average=[1.0, 1.0, 1.0])
    return {"command": command, "commit": commit, "date": "today", "machine": machine}


def test_render_shows_rows_baselines_and_verdict(bp):
    r = results()
    r["losers"] = bp.losers(r)
    meta = fake_meta("python benchmarks/binary_pairs.py", "abc")
    md = bp.render(meta, r)
    assert (
        "| DA v4 | 70.0 | 50.0 | 50.0 | 50.0 | 80.0 | 0.400 | 10.0 min | 2,000 | yes | yes |"
        in md
    )
    assert (
        "| DA v3 | 65.0 | 50.0 | 50.0 | 50.0 | 72.0 | 0.400 | 10.0 min | 2,000 | **no** | yes |"
        in md
    )
    assert "| majority class | 60.0 |" in md
    assert "- rte / DA v3: positive F1 0.720" in md
    assert "DA v2: no model-best" in md
    assert "train 10 (60.0% positive)" in md


def test_overlap_dev_tuned_takes_its_threshold_from_dev(bp):
    task = bp.TASKS["rte"]

    def rows(*items):
        keys = ("sentence1", "sentence2", "label")
        return [dict(zip(keys, item)) for item in items]

    splits = {
        "dev": rows(
            ("a b c", "a b c", "entailment"), ("a b c", "x y z", "not_entailment")
        ),
        # Overlap 1.0, 1/3 and 0: on test alone, 0 would be the best threshold.
        "test": rows(
            ("p q", "p q", "entailment"),
            ("p q", "p r", "not_entailment"),
            ("m n", "o s", "entailment"),
        ),
    }
    from bench import scoring  # pytest has benchmarks/ on the path

    scores = scoring.overlap_dev_tuned(
        splits, task.text_cols, task.label_col, task.positive
    )
    assert scores["threshold"] == pytest.approx(0.5)
    assert scores["pair_acc"] == pytest.approx(2 / 3)
    assert (scores["pair_pos_p"], scores["pair_pos_r"]) == (1.0, 0.5)
    assert scores["pair_pos_f"] == pytest.approx(2 / 3)
    assert scores["pair_macro_f"] == pytest.approx(2 / 3)


def test_render_names_rows_measured_before(bp):
    r = results()
    r["losers"] = []
    row = r["tasks"]["rte"]["rows"]["DA v4"]
    row.update(reused=True, measured={"commit": "abc1", "date": "yesterday"})
    r["tasks"]["rte"]["overlap_dev_tuned"] = {**scores(0.6, 0.7), "threshold": 0.25}
    meta = fake_meta("c", "def2")
    md = bp.render(meta, r)
    assert "RTE DA v4 at commit `abc1`, yesterday" in md
    assert "Every number below was measured in that run" not in md
    assert "| (word overlap, threshold tuned on dev) | 60.0 |" in md
    assert "| 70.0 | 0.250 |" in md


def test_losers_counts_every_lexical_baseline_present(bp):
    # A table re-scored by lexical_baselines.py carries BM25 too: a row that
    # beats the two old baselines but not BM25 is a loser.
    r = results()
    del r["tasks"]["rte"]["rows"]["DA v2"]
    r["tasks"]["rte"]["rows"]["DA v3"]["scores"]["pair_pos_f"] = 0.76
    assert bp.losers(r) == []
    for row in r["tasks"]["rte"]["rows"].values():
        row["scores"]["baselines"]["BM25"] = {"pair_pos_f": 0.77}
    assert bp.losers(r) == [
        "rte / DA v3: positive F1 0.760; majority class 0.750, word overlap 0.700, "
        "BM25 0.770"
    ]
