"""benchmarks/transfer_nli.py's verdict and its distilled system's command,
on made-up rows (no training: the benchmark itself runs the commands)."""

import argparse

import pytest

from .util import load_script


@pytest.fixture(scope="module")
def tn():
    return load_script("benchmarks/transfer_nli.py")


def rows(tn, system_acc, system_f, system=None):
    system = system or tn.NEW_HEAD
    return {
        "rows": [
            tn.row(
                "MRPC", system, {"pair_acc": system_acc, "pair_pos_f": system_f}, 60
            ),
            tn.row("MRPC", tn.TEACHER, {"pair_acc": 0.5, "pair_pos_f": 0.5}, 60),
            tn.row(
                "MRPC", "majority class", {"pair_acc": 0.66, "pair_pos_f": 0.80}, None
            ),
            tn.row(
                "MRPC", "word overlap", {"pair_acc": 0.72, "pair_pos_f": 0.82}, None
            ),
            tn.row(
                "MRPC", tn.OVERLAP_DEV, {"pair_acc": 0.73, "pair_pos_f": 0.81}, None
            ),
        ]
    }


def test_fine_tuned_rows_must_beat_every_baseline(tn):
    assert tn.baseline_failure(rows(tn, 0.75, 0.83)) is None
    assert tn.baseline_failure(rows(tn, 0.75, 0.83, tn.DISTILLED)) is None
    # The teacher's own row is not judged (it is not the start).
    message = tn.baseline_failure(rows(tn, 0.725, 0.83, tn.DISTILLED))
    assert "accuracy 0.7250 vs word overlap, threshold tuned on dev 0.7300" in message
    assert "word overlap 0.72" not in message
    assert tn.baseline_failure(rows(tn, 0.75, 0.8213)) is None
    assert tn.baseline_failure(rows(tn, 0.75, 0.82)).endswith(
        "pos-F 0.8200 vs word overlap 0.8200"
    )


def test_zero_shot_must_beat_the_majority_class_and_the_lexical_ones(tn):
    def results(acc):
        return {
            "rows": [
                tn.row("SICK test", "start, zero-shot", {"pair_acc": acc}, None),
                tn.row("SICK test", "majority class", {"pair_acc": 0.57}, None),
                tn.row("SICK test", "word overlap", {"pair_acc": 0.65}, None),
                tn.row("SICK test", "BM25", {"pair_acc": 0.62}, None),
            ]
        }

    assert "SICK test zero-shot" in tn.baseline_failure(results(0.5))
    # Above the majority class, not above word overlap's best cut.
    message = tn.baseline_failure(results(0.6))
    assert message.endswith(
        "SICK test zero-shot: accuracy 0.6000 vs word overlap 0.6500; "
        "SICK test zero-shot: accuracy 0.6000 vs BM25 0.6200"
    )
    assert tn.baseline_failure(results(0.81)) is None


def test_distilled_student_command(tn, tmp_path, monkeypatch):
    seen = {}

    def fake_run(teacher, cfg, out, options, overrides, threads, *, collect=False):
        seen.update(options=options, collect=collect, overrides=overrides)
        return {"command": "distill", "seconds": 1.0}

    monkeypatch.setattr(tn.distill, "distill_run", fake_run)
    args = argparse.Namespace(
        augment=8, temperature=1.0, seed=3, resume=True, threads=1
    )
    out = tmp_path / "MRPC_distill" / "model"
    run = tn.distill_student(tmp_path / "teacher", tmp_path / "c.cfg", out, {}, args)
    assert seen["options"] == ["--augment", 8, "--temperature", 1.0, "--seed", 3]
    # Nothing finished there yet: not reused.
    assert not run["resumed"] and not seen["collect"]
    (out / "model-best").mkdir(parents=True)
    (out.parent / "model.log").write_text("")
    assert tn.distill_student(tmp_path / "teacher", tmp_path / "c.cfg", out, {}, args)[
        "resumed"
    ]
    assert seen["collect"]


def test_results_header_names_the_trainings_threads(tn, monkeypatch):
    """The trainings run in subprocesses with --threads: the header's torch
    threads are theirs, not this process's."""
    written = {}

    def report(name, render, meta, results, *, quick=False):
        written["meta"] = meta

    transfer = tn.transfer
    monkeypatch.setattr(transfer.tables, "report", report)
    args = argparse.Namespace(
        report_only=False, start="START", threads=7, name="x", quick=True
    )
    transfer.run_benchmark(
        argparse.ArgumentParser(), args, lambda a: {}, lambda m, r: "", lambda r: None
    )
    assert written["meta"]["machine"]["torch_threads"] == 7
