"""benchmarks/dcn_settings.py: every setting starts from the same weights
over the same batches, a failing setting is reported beside the others, and
squad_gpu_report.py carries its file into the session's results."""

import argparse
import importlib
import json
from itertools import islice

import numpy
import pytest
import spacy
import torch
from spacy.vectors import Vectors

from spacy_attn.squad import read_squad
from spacy_attn.training import warmup_linear

from .test_bench_squad_gpu import CALL_1, record, write_call
from .util import FIXTURES, REPO, load_script

TINY = {
    "input_width": 4,
    "hidden_width": 6,
    "pool_size": 2,
    "max_iterations": 2,
    "dropout": 0.0,
}


@pytest.fixture(scope="module")
def settings():
    return load_script("benchmarks/dcn_settings.py")


@pytest.fixture(scope="module")
def data(settings):
    nlp = spacy.blank("en")
    examples, _ = read_squad(FIXTURES / "squad_dev.json.gz", nlp, log=False)
    docs = [eg.reference for eg in examples]
    words = sorted({t.lower_ for doc in docs for t in doc})[:40]
    table = numpy.random.default_rng(0).normal(size=(len(words), 4)).astype("f")
    vectors = Vectors(data=table, keys=[nlp.vocab.strings.add(w) for w in words])
    bare_loop = importlib.import_module("bench.bare_loop")
    lookup = bare_loop.torch_vectors(vectors, 0, normalize=False, device="cpu")
    train = settings.Questions(docs[:40], lookup, window=400)
    dev = settings.Questions(docs[40:56], lookup, window=400)
    return {
        "docs": docs,
        "lookup": lookup,
        "model_cfg": TINY,
        "train": train,
        "dev": dev,
    }


def args_for(steps: int = 3):
    return argparse.Namespace(
        steps=steps, warmup_steps=1, warmup_fraction=0.34, seed=0, eval_batch_size=8
    )


def test_the_default_rate_is_the_gpu_config_s_peak(settings):
    """Precisions are compared at the rate the GPU run trains with, so a
    change to the config's peak changes the benchmark's default too."""
    from spacy.util import load_config

    config = load_config(REPO / "configs" / settings.CONFIG, interpolate=False)
    peak = config["training"]["optimizer"]["learn_rate"]["initial_rate"]
    assert settings.parser().parse_args([]).learn_rates == [peak] == [0.004]


def test_questions_keep_single_window_contexts_and_their_gold_spans(settings, data):
    assert data["train"].items, "the fixture has answerable questions"
    for question, context, spans in data["train"].items:
        assert question and context
        assert all(0 <= a <= b < len(context) for a, b in spans)
    longest = max(len(c) for _, c, _ in data["train"].items)
    shorter = settings.Questions(data["docs"][:40], data["lookup"], window=longest - 1)
    assert 0 < len(shorter.items) < len(data["train"].items)


def test_batches_are_an_epoch_in_length_sorted_runs(settings, data):
    train = data["train"]
    batches = train.batches(4, seed=1)
    flat = [i for b in batches for i in b]
    assert len(flat) == len(set(flat)) and len(flat) > len(train.items) - 4
    assert batches == train.batches(4, seed=1)
    assert batches != train.batches(4, seed=2)
    # One buffer holds the whole fixture: sorted by length, then cut.
    spans = sorted(
        (min(len(train.items[i][1]) for i in b), max(len(train.items[i][1]) for i in b))
        for b in batches
    )
    assert all(hi <= lo_next for (_, hi), (lo_next, _) in zip(spans, spans[1:]))


def test_each_setting_starts_from_the_same_weights_and_batches(settings, data):
    args = args_for()
    run_data = {
        **data,
        "batches": {
            4: settings.step_batches(data["train"], data["lookup"], 4, args, "cpu")
        },
    }
    device = torch.device("cpu")
    runs = [
        settings.train_run(
            {"precision": p, "learn_rate": 0.01, "batch_size": 4},
            run_data,
            args,
            device,
        )
        for p in ("fp32", "fp32", "bf16")
    ]
    first, again, bf16 = (r["loss"] for r in runs)
    assert first == again  # same weights, same batches: the same curve
    assert first[0] == pytest.approx(bf16[0], rel=0.05)  # same start, other precision
    assert first[0] != bf16[0]  # ... computed in bfloat16
    # The rates of spacy-attn.warmup_linear.v1: warm-up, then decay to zero.
    rates = list(islice(warmup_linear(0.01, 1, 3), 3))
    assert rates[0] == 0.0 and max(rates) == 0.01 and rates[-1] < 0.01
    for r in runs:
        assert r["learn_rates"] == rates
        assert len(r["loss"]) == 3 and r["nonfinite_losses"] == 0
        assert 0 <= r["held_out"]["token_f1"] <= 100


def test_a_failed_setting_is_reported_beside_the_others(settings, data):
    ok = {
        "precision": "fp32",
        "learn_rate": 0.002,
        "batch_size": 4,
        "questions_per_s": 10.0,
        "loss": [4.0, 3.0],
        "nonfinite_losses": 0,
        "held_out": {"loss": 1.0, "token_em": 10.0, "token_f1": 20.0},
    }
    failed = {
        "precision": "fp16",
        "learn_rate": 0.002,
        "batch_size": 4,
        "error": "RuntimeError: no kernel",
    }
    res = {
        "runs": [failed, ok],
        "window": 1,
        "steps": 2,
        "warmup_steps": 1,
        "train_questions": 8,
        "held_out_questions": 4,
    }
    meta = {
        "command": "x",
        "date": "d",
        "commit": "c",
        "machine": {
            "device": "CPU",
            "torch": "t",
            "torch_threads": 1,
            "spacy": "s",
            "thinc": "t",
            "python": "p",
            "load_average": [0, 0, 0],
        },
    }
    md = settings.render(meta, res)
    assert "| fp16 | 0.002 | 4 | RuntimeError: no kernel |" in md
    assert "| fp32 | 0.002 | 4 | 10 | 1.00 | 3.000 | 0.000 | 0 |" in md
    only_failed = settings.render(meta, {**res, "runs": [failed]})
    assert "- fp16 0.002 4: RuntimeError: no kernel" in only_failed


def test_the_session_report_carries_the_settings_file(tmp_path):
    report = load_script("benchmarks/squad_gpu_report.py")
    settings_md = (
        "# Settings title\n\nGenerated ... Every number below was measured in "
        "that run.\n\nBare loop.\n\n| precision |\n"
    )
    call = write_call(
        tmp_path / "a",
        CALL_1.format(batch=256),
        [record(0, 0.0, 0.1)],
        [("dcn_settings_gpu.md", settings_md), ("squad_eval.json", json.dumps({}))],
    )
    md = report.report([call], "abc1234")
    assert "## Precision settings of the same session" in md
    assert "Bare loop.\n\n| precision |" in md and "Settings title" not in md
