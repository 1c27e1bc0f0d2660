"""benchmarks/squad_gpu.sh's second call: squad_continue.py keeps the first
run's logger when asked, and squad_gpu_report.py puts the second call's
curve on the first call's clock."""

import json
from argparse import Namespace
from pathlib import Path

from .util import load_script

FIRST_LOG = """NVIDIA H200, 143771 MiB, 580.159.04
== 46 s: speed: rc=0
== 60 s: train for ~300 s: nlp.update ran 1000.0 questions/s -> max_steps 1200
== 60 s: train: python -m spacy train ...
== 400 s: train: rc={rc}
"""


def record(step: int, seconds: float, f1: float) -> dict:
    return {
        "step": step,
        "epoch": 0,
        "seconds": seconds,
        "train_seconds": seconds - 1,
        "train_steps": max(0, step - 1),
        "eval_seconds": 1.0,
        "scores": {"qa_f1": f1, "qa_exact_match": f1 - 0.1},
    }


def write_call(folder: Path, log: str, records: list) -> Path:
    folder.mkdir()
    (folder / "run.log").write_text(log)
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "train_log.jsonl").write_text(lines)
    return folder


def test_keep_logger_leaves_the_checkpoint_logger_out(tmp_path):
    script = load_script("benchmarks/squad_continue.py")
    config, out = tmp_path / "config.cfg", tmp_path / "run2"
    plain = script.train_command(config, out, 1, ["--gpu-id", "0"])
    assert "spacy-attn-bench.CheckpointLogger.v1" in plain
    kept = script.train_command(config, out, 1, ["--gpu-id", "0"], keep_logger=True)
    assert "spacy-attn-bench.CheckpointLogger.v1" not in kept
    assert "--code" not in kept
    # The overrides come last, so that they win over the script's own.
    assert kept[-2:] == ["--gpu-id", "0"] and "--system.seed" in kept


def test_the_second_call_goes_on_from_where_the_first_stopped(tmp_path):
    report = load_script("benchmarks/squad_gpu_report.py")
    records = [record(0, 0.0, 0.1), record(1000, 201.0, 0.6)]
    # Ended by itself (rc=0): it ran to max_steps 1200, after its last record.
    first = report.read_call(
        write_call(tmp_path / "a", FIRST_LOG.format(rc=0), records)
    )
    second_records = [record(0, 0.0, 0.62), record(250, 51.0, 0.65)]
    second = report.read_call(write_call(tmp_path / "b", "x\n", second_records))
    more = report.continued_records(first, second)
    assert [r["step"] for r in more] == [1200, 1450]
    assert more[0]["train_seconds"] == 200.0 * 1200 / 1000 - 1
    assert more[1]["seconds"] == 201.0 * 1200 / 1000 + 51.0
    # Cut by its timeout (rc=124): the continuation started from model-best,
    # the last record's step.
    cut = report.read_call(
        write_call(tmp_path / "c", FIRST_LOG.format(rc=124), records)
    )
    assert [r["step"] for r in report.continued_records(cut, second)] == [1000, 1250]


def test_the_report_shows_both_calls(tmp_path):
    report = load_script("benchmarks/squad_gpu_report.py")
    records = [record(0, 0.0, 0.1), record(1000, 201.0, 0.6)]
    first = write_call(tmp_path / "a", FIRST_LOG.format(rc=0), records)
    second = write_call(tmp_path / "b", FIRST_LOG.format(rc=0), [record(0, 0.0, 0.62)])
    args = Namespace(
        commit="abc1234", deadline=560, continued=str(second), continued_deadline=200
    )
    md = report.report(first, args)
    assert "Two device calls" in md and "--continued /tmp/squad-gpu2" in md
    assert "| 2 | 1200 |" in md and "| 1 | 1000 |" in md
    md = report.report(first, Namespace(commit="abc1234", deadline=560, continued=None))
    assert "One device call" in md and "| 2 |" not in md


def test_the_report_counts_questions_at_the_run_s_batch(tmp_path):
    """A smoke run's batch (BATCH=16) sets the questions/s and the epochs; a
    fixed 256 read a CPU smoke run at 16x its speed."""
    report = load_script("benchmarks/squad_gpu_report.py")
    log = FIRST_LOG.format(rc=0).replace(
        "python -m spacy train ...",
        "python -m spacy train c.cfg --training.batcher.size 16 --x 1",
    )
    log += "82878 questions (442 articles)\n"
    records = [record(0, 0.0, 0.1), record(1001, 201.0, 0.6)]
    first = write_call(tmp_path / "a", log, records)
    md = report.report(first, Namespace(commit="abc1234", deadline=560, continued=None))
    # 1,000 steps of 16 questions in 200 training seconds; step 1001 of 16
    # questions is 0.19 epochs of 82,878.
    assert "**80 questions/s** at batch 16" in md
    assert "| 1 | 1001 | 0.19 |" in md
