"""The batcher and logger of ``spacy_attn.training``."""

import json
import random

import pytest
import spacy
from spacy.util import registry

from spacy_attn.training import batch_by_length, until_deadline, warmup_linear


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


def test_warmup_linear_without_a_deadline_gives_thinc_s_rates():
    ours = registry.schedules.get("spacy-attn.warmup_linear.v1")(0.002, 3, 10)
    thinc = registry.schedules.get("warmup_linear.v1")(0.002, 3, 10)
    rates = [next(ours) for _ in range(14)]
    assert rates == [next(thinc) for _ in range(14)]
    assert rates[3] == 0.002 and rates[10:] == [0.0] * 4
    with pytest.raises(ValueError, match="total_steps > 0 or a deadline"):
        warmup_linear(0.002, 3, 0)


def test_warmup_linear_decays_in_wall_time_to_the_deadline():
    now = {"t": 0.0}
    rates = warmup_linear(1.0, 2, 0, deadline=100.0, clock=lambda: now["t"])
    assert [next(rates), next(rates)] == [0.0, 0.5]  # warm-up: by steps
    now["t"] = 20.0  # the warm-up ends at t=20: the decay runs from there
    assert next(rates) == 1.0
    now["t"] = 60.0
    assert next(rates) == 0.5
    now["t"] = 99.0
    assert next(rates) == pytest.approx(1 / 80)
    now["t"] = 130.0
    assert next(rates) == 0.0
    # With a step count too, the lower of the two decays wins.
    now["t"] = 0.0
    both = warmup_linear(1.0, 0, 4, deadline=100.0, clock=lambda: now["t"])
    assert next(both) == 1.0
    now["t"] = 10.0  # a tenth of the time, but a quarter of the steps
    assert next(both) == 0.75


def test_deadline_batcher_stops_at_the_deadline(monkeypatch):
    import spacy_attn.training as training

    now = {"t": 0.0}
    assert list(until_deadline([[1], [2]], 0.0, clock=lambda: 1e12)) == [[1], [2]]
    taken = []
    for batch in until_deadline(([i] for i in range(10)), 5.0, clock=lambda: now["t"]):
        taken.append(batch)
        now["t"] += 2.0  # each step takes 2 s: batches at t = 0, 2, 4
    assert taken == [[0], [1], [2]]
    inner = registry.batchers.get("spacy-attn.batch_by_length.v1")(size=2, buffer=1)
    make = registry.batchers.get("spacy-attn.deadline_batcher.v1")
    # No deadline: the wrapped batcher's batches, unchanged.
    random.seed(0)
    plain = list(make(inner, deadline=0, max_epochs=0)(["a", "bb", "c"]))
    random.seed(0)
    assert plain == list(inner(["a", "bb", "c"]))
    monkeypatch.setattr(training.time, "time", lambda: 50.0)
    assert list(make(inner, deadline=49.0, max_epochs=3)(["a", "bb"])) == []
    assert len(list(make(inner, deadline=51.0, max_epochs=3)(["a", "bb"]))) == 1
    with pytest.raises(ValueError, match="max_epochs >= 1, not 0"):
        make(inner, deadline=51.0, max_epochs=0)


DEADLINE_CONFIG = """
[paths]
train = null
dev = null

[nlp]
lang = "en"
pipeline = ["textcat"]

[components]

[components.textcat]
factory = "textcat"

[corpora]

[corpora.train]
@readers = "spacy.Corpus.v1"
path = ${paths.train}

[corpora.dev]
@readers = "spacy.Corpus.v1"
path = ${paths.dev}

[training]
max_steps = 0
max_epochs = 10000
eval_frequency = 20

[training.batcher]
@batchers = "spacy-attn.deadline_batcher.v1"
deadline = 0
max_epochs = ${training.max_epochs}

[training.batcher.batcher]
@batchers = "spacy-attn.batch_by_length.v1"
size = 2
buffer = 1

[training.optimizer]
@optimizers = "Adam.v1"

[training.optimizer.learn_rate]
@schedules = "spacy-attn.warmup_linear.v1"
initial_rate = 0.001
warmup_steps = 5
total_steps = ${training.max_steps}
deadline = ${training.batcher.deadline}
"""


def test_spacy_train_ends_by_itself_at_the_deadline(tmp_path, capsys):
    """``spacy train`` with max_steps 0 and a deadline stops taking batches
    there, runs out of epochs and saves model-last: it ends normally."""
    import time

    from spacy.tokens import DocBin
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train
    from spacy.util import load_config_from_str, load_model_from_config

    nlp = spacy.blank("en")
    docs = []
    for i in range(8):
        doc = nlp(f"text number {i} " + ("good" if i % 2 else "bad"))
        doc.cats = {"POS": float(i % 2), "NEG": float(1 - i % 2)}
        docs.append(doc)
    DocBin(docs=docs).to_disk(tmp_path / "train.spacy")
    start = time.time()
    config = load_config_from_str(DEADLINE_CONFIG).merge(
        {
            "paths": {"train": str(tmp_path / "train.spacy")},
            "training": {"batcher": {"deadline": start + 3.0}},
        }
    )
    config["paths"]["dev"] = config["paths"]["train"]
    config = load_model_from_config(config, auto_fill=True, validate=True).config
    trained = init_nlp(config)
    (tmp_path / "out").mkdir()
    train(trained, tmp_path / "out")
    ended = time.time()
    assert start + 3.0 <= ended < start + 30.0
    assert (tmp_path / "out" / "model-last" / "textcat").is_dir()
    assert "Deadline reached after" in capsys.readouterr().out
