"""The batcher and logger of ``spacy_attn.training``."""

import json
import random

import pytest
import spacy
from spacy.util import registry

from spacy_attn.training import batch_by_length


def test_batch_by_length_fixed_size_sorted_and_shuffled():
    items = [[0] * n for n in random.Random(0).choices(range(1, 200), k=1000)]
    batches = list(batch_by_length(items, size=32, buffer=8, rng=random.Random(1)))
    sizes = [len(b) for b in batches]
    # Every item once; every batch full but the stream's last ones.
    assert sorted(map(id, (x for b in batches for x in b))) == sorted(map(id, items))
    assert sizes.count(32) == len(sizes) - 1 and sum(sizes) == 1000
    # Within a window of 8 batches, batches do not overlap in length.
    window = batches[:8]
    spans = sorted((min(map(len, b)), max(map(len, b))) for b in window)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    # ... and come in a shuffled order, not sorted.
    firsts = [min(map(len, b)) for b in window]
    assert firsts != sorted(firsts) and firsts != sorted(firsts, reverse=True)
    # Padding: far less than batching in file order.
    padded = sum(max(map(len, b)) * len(b) for b in batches)
    plain = sum(
        max(map(len, items[i : i + 32])) * len(items[i : i + 32])
        for i in range(0, 1000, 32)
    )
    assert padded < 0.7 * plain


def test_batch_by_length_registered_and_checks_settings():
    batcher = registry.batchers.get("spacy-attn.batch_by_length.v1")(size=3, buffer=2)
    assert [len(b) for b in batcher(["a", "bb", "c", "dddd", "ee"])] in (
        [3, 2],
        [2, 3],
    )
    with pytest.raises(ValueError, match="size"):
        list(batch_by_length(["a"], size=0))


def test_timed_logger_splits_training_from_evaluation(tmp_path, monkeypatch):
    import spacy_attn.training as training

    path = tmp_path / "logs" / "log.jsonl"
    setup = registry.loggers.get("spacy-attn.TimedLogger.v1")(output_file=str(path))
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    log_step, finalize = setup(nlp, stdout=open(tmp_path / "out.txt", "w"))
    clock = iter([0.0, 1.0, 2.0, 13.0, 14.0])  # step 0, 1, 2, eval at 3, 4
    monkeypatch.setattr(training.time, "perf_counter", lambda: next(clock))

    def info(step):
        return {
            "epoch": 0,
            "step": step,
            "score": 0.5,
            "other_scores": {"qa_f1": 0.5, "nested": {"x": 1}},
            "losses": {"attn_span_qa": 2.0},
            "checkpoints": [],
            "seconds": 0,
            "words": 100 * step,
        }

    log_step(info(0))
    log_step(None)
    log_step(None)
    log_step(info(3))
    log_step(None)
    finalize()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["step"] for r in records] == [0, 3]
    last = records[-1]
    # Steps 1 and 2 trained for 1 s each; step 3 held the 11-s evaluation.
    assert (last["train_seconds"], last["train_steps"], last["eval_seconds"]) == (
        2.0,
        2,
        11.0,
    )
    assert last["seconds"] == 13.0 and last["scores"] == {"qa_f1": 0.5}
