"""benchmarks/squad_curve.py's helpers: joining continued runs into one curve
and keeping a score measured before (no model is trained or loaded here)."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from .util import answering, load_script

DATA = {
    "data": [
        {
            "title": "a",
            "paragraphs": [
                {
                    "context": "In 2016 the Denver Broncos won.",
                    "qas": [
                        {
                            "id": qid,
                            "question": "Who won?",
                            "answers": [{"text": "Denver Broncos", "answer_start": 12}],
                        }
                        for qid in ("q1", "q2")
                    ],
                }
            ],
        }
    ]
}


@pytest.fixture(scope="module")
def curve():
    return load_script("benchmarks/squad_curve.py")


def write_run(path: Path, records):
    (path / "checkpoints").mkdir(parents=True)
    with (path / "checkpoints" / "log.jsonl").open("w") as f:
        for step, seconds, score in records:
            f.write(json.dumps({"step": step, "seconds": seconds, "score": score}))
            f.write("\n")
    return path


def test_run_segments_offsets_continued_runs(curve, tmp_path):
    first = write_run(tmp_path / "a", [(0, 10.0, 0.1), (500, 600.0, 0.2)])
    second = write_run(tmp_path / "b", [(0, 5.0, 0.2), (250, 300.0, 0.3)])
    third = write_run(tmp_path / "c", [(0, 1.0, 0.3), (100, 50.0, 0.35)])
    segments = curve.run_segments(first, [second, third])
    assert [s["step0"] for s in segments] == [0, 500, 750]
    assert [s["seconds0"] for s in segments] == [0.0, 600.0, 900.0]
    assert [s["index"] for s in segments] == [0, 1, 2]


def test_score_listener_keeps_a_score_measured_before(curve, tmp_path, monkeypatch):
    import spacy

    import spacy_attn.qa_eval.evaluate as ev

    run = write_run(tmp_path / "trf", [(0, 100.0, 0.1), (20, 900.0, 0.2)])
    (run / "model-last").mkdir()
    loads = []
    monkeypatch.setattr(spacy, "load", lambda path: loads.append(path) or object())

    context = DATA["data"][0]["paragraphs"][0]["context"]
    monkeypatch.setattr(ev, "answer_questions", answering("Denver Broncos", context))
    args = SimpleNamespace(batch_size=8)
    fresh = curve.score_listener(run, DATA, None, args)
    assert len(loads) == 1 and loads[0] == run / "model-last"
    assert fresh["step"] == 20 and fresh["questions_seen"] == 20 * 32
    assert fresh["train_seconds"] == 900.0
    assert fresh["f1"] == 100.0 and fresh["questions"] == 2

    # The same pipeline, step and questions: kept, nothing is loaded.
    assert curve.score_listener(run, DATA, fresh, args) is fresh
    assert len(loads) == 1
    # A score from another step of the run, or on other questions: afresh.
    for stale in ({**fresh, "step": 10}, {**fresh, "questions": 1}):
        again = curve.score_listener(run, DATA, stale, args)
        assert (again["step"], again["questions"], again["f1"]) == (20, 2, 100.0)
    assert len(loads) == 3
