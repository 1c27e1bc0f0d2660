"""benchmarks/squad_gpu.sh's run across two device calls: squad_gpu_report.py
joins the calls' logs on one clock and ends the curve at the deadline, and
squad_continue.py keeps an earlier run's logger when asked."""

import json
from pathlib import Path

from .util import REPO, load_script

CALL_1 = """NVIDIA H200, 143771 MiB, 580.159.04
cpus 16 mode fresh
== 0 s: prepare: python scripts/squad_splits.py ...
82878 questions (442 articles)
== 34 s: prepare: rc=0
== 34 s: train: python -m spacy train c.cfg --training.batcher.batcher.size {batch} --x 1
== 34 s: train until 640 s (deadline 1700000640)
== 70 s: first evaluation logged
== 575 s: training goes on after this call (pid 123)
"""
CALL_2 = """NVIDIA H200, 143771 MiB, 580.159.04
cpus 16 mode finish
== 600 s: finish: this call may take 190 s
ℹ Deadline reached after 2,100 steps (epoch 7): no more batches
== 652 s: train: rc=0
== 652 s: evaluate: python scripts/squad_eval.py ...
== 690 s: evaluate: rc=0
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


def write_call(folder: Path, log: str, records: list, files=()) -> Path:
    folder.mkdir()
    (folder / "run.log").write_text(log)
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "train_log.jsonl").write_text(lines)
    for name, text in files:
        (folder / name).write_text(text)
    return folder


EVAL = {
    "baseline": "first 3 words of the context",
    "train_source": "rebuilt",
    "sets": {
        "test": {
            "questions": 10570,
            "questions_per_s": 900.0,
            "exact_match": 60.0,
            "f1": 71.0,
            "baseline": {"exact_match": 0.9, "f1": 5.9},
            "word_overlap": {"exact_match": 7.7, "f1": 21.8},
        }
    },
}


def test_the_report_joins_the_calls_on_one_clock(tmp_path):
    report = load_script("benchmarks/squad_gpu_report.py")
    early = [record(0, 0.0, 0.1), record(1000, 201.0, 0.6)]
    whole = early + [record(2000, 420.0, 0.7)]
    first = write_call(tmp_path / "a", CALL_1.format(batch=256), early)
    second = write_call(
        tmp_path / "b", CALL_2, whole, [("squad_eval.json", json.dumps(EVAL))]
    )
    md = report.report([first, second], "abc1234")
    assert "2 device calls" in md
    assert "squad_gpu.sh 640 0\n" in md and "squad_gpu.sh 190 0 finish" in md
    assert "/tmp/squad-gpu /tmp/squad-gpu2 --commit abc1234" in md
    # spacy train began in call 1 (34 s) and ended in call 2 (652 s); its
    # start-up ran to the step-0 record at 70 s.
    assert "| 2 | train | 618 | 0 |" in md
    assert "| 1 | (start of spacy train, to its step-0 record) | 36 |  |" in md
    # The curve is the last call's whole log, ended at the deadline: 2,100
    # steps of 256 are 6.49 epochs of 82,878, (640 - 70) / 60 minutes.
    assert "| 2000 | 6.18 |" in md
    assert "| 2100 (deadline) | 6.49 | 9.5 |" in md
    assert "| 71.00 |" in md and "| word overlap" in md
    assert "82,878 training questions; held-out F1 on a fixed 1,000 questions" in md


def test_the_report_names_the_run_s_held_out_and_a_kept_corpus(tmp_path):
    """A smoke run's --corpora.dev.limit is its curve's held-out size; a
    corpus kept from an earlier call logs no count, and the report says so
    instead of "0 training questions"."""
    report = load_script("benchmarks/squad_gpu_report.py")
    log = CALL_1.format(batch=16).replace("--x 1", "--corpora.dev.limit 20")
    log = log.replace(
        "== 0 s: prepare: python scripts/squad_splits.py ...\n"
        "82878 questions (442 articles)\n== 34 s: prepare: rc=0\n",
        "== 0 s: prepare: kept /w/corpus\n",
    )
    records = [record(0, 0.0, 0.1), record(10, 20.0, 0.2)]
    md = report.report([write_call(tmp_path / "a", log, records)], "abc1234")
    assert "held-out F1 on a fixed 20 questions" in md
    assert "training questions not logged: the corpus was kept" in md
    assert "| 1 | prepare | kept |" in md


def test_the_report_s_default_held_out_is_the_config_s():
    from spacy.util import load_config

    report = load_script("benchmarks/squad_gpu_report.py")
    config = load_config(REPO / "configs" / "squad_glove_gpu.cfg", interpolate=False)
    limit = config["corpora"]["dev"]["limit"]
    assert report.held_out_questions(CALL_1.format(batch=256)) == limit == 1000


def test_the_report_counts_questions_at_the_run_s_batch(tmp_path):
    """A smoke run's batch (BATCH=16) sets the questions/s and the epochs; a
    fixed 256 read a CPU smoke run at 16x its speed."""
    report = load_script("benchmarks/squad_gpu_report.py")
    records = [record(0, 0.0, 0.1), record(1001, 201.0, 0.6)]
    first = write_call(tmp_path / "a", CALL_1.format(batch=16), records)
    md = report.report([first], "abc1234")
    # 1,000 steps of 16 questions in 200 training seconds; step 1001 of 16
    # questions is 0.19 epochs of 82,878.
    assert "**80 questions/s** at batch 16" in md
    assert "| 1001 | 0.19 |" in md
    assert "One device call" in md and "finish" not in md


def test_a_deadline_before_the_first_checkpoint_is_not_a_speed(tmp_path):
    """A start-up that outlasts the training time (here the deadline at
    150 s, the step-0 record at 156 s) leaves one record: the report says the
    speed was not measured, not "0 questions/s", and gives no negative
    minutes."""
    report = load_script("benchmarks/squad_gpu_report.py")
    log = (
        CALL_1.format(batch=16)
        .replace("train until 640 s", "train until 150 s")
        .replace(
            "== 70 s: first evaluation logged", "== 156 s: first evaluation logged"
        )
        .replace(
            "== 575 s: training goes on after this call (pid 123)\n",
            "ℹ Deadline reached after 1 steps (epoch 0): no more batches\n"
            "== 164 s: train: rc=0\n",
        )
    )
    md = report.report([write_call(tmp_path / "a", log, [record(0, 0.0, 0.1)])], "c")
    assert "**not measured**" in md
    assert "0 questions/s" not in md and "0.000x" not in md
    assert "| 1 (deadline) | 0.00 | before the step-0 record |" in md


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
