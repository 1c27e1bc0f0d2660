"""Superseded architecture versions still load and predict as they did.

Each folder under tests/fixtures/legacy/ holds a tiny pipeline saved by the
code of the day its architecture was superseded (tests/fixtures/legacy/make.py)
and what it predicted then. Loading it resolves the old registered name from
its config (as ``spacy.load`` of an old packaged pipeline does), and its
predictions must be the stored ones.
"""

import json
from pathlib import Path
from typing import Any, Dict

import numpy
import pytest
import spacy
import torch
from spacy.util import registry

import spacy_attn

from .util import FIXTURES, load_script

LEGACY = FIXTURES / "legacy"
make = load_script("tests/fixtures/legacy/make.py")

# The fixture -> the superseded name its config must still name.
NAMES = {
    "da_v1": "spacy-attn.DecomposableAttention.v1",
    "da_v2": "spacy-attn.DecomposableAttention.v2",
    "da_v3": "spacy-attn.DecomposableAttention.v3",
    "da_v4": "spacy-attn.DecomposableAttention.v4",
    "siamese_v1": "spacy-attn.SiameseSelfAttention.v1",
    "dcn_v2": "spacy-attn.DynamicCoattention.v2",
}


def stored(name: str) -> Dict[str, Any]:
    return json.loads((LEGACY / name / "predictions.json").read_text(encoding="utf8"))


def load(name: str):
    return spacy.load(LEGACY / name / "pipeline", exclude=make.EXCLUDE)


def assert_close(got: Dict[str, Any], want: Dict[str, Any]) -> None:
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if value is None:
            assert got[key] is None, key
        else:
            numpy.testing.assert_allclose(
                got[key], value, rtol=1e-5, atol=1e-6, err_msg=key
            )


def test_every_fixture_is_listed():
    assert sorted(NAMES) == sorted(make.PIPELINES)
    assert sorted(NAMES) == sorted(p.name for p in LEGACY.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", sorted(NAMES))
def test_legacy_pipeline_predicts_as_saved(name):
    config = (LEGACY / name / "pipeline" / "config.cfg").read_text(encoding="utf8")
    assert f'"{NAMES[name]}"' in config
    assert callable(registry.architectures.get(NAMES[name]))
    want = stored(name)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the fixtures were made: float sums follow it
    try:
        nlp = load(name)
        factory = nlp.pipe_names[0]
        got = make.predictions(nlp, factory, want["inputs"])
    finally:
        torch.set_num_threads(threads)
    assert_close(got["raw"], want["raw"])
    if factory == "attn_span_qa":
        assert len(got["answers"]) == len(want["answers"])
        for answers, expected in zip(got["answers"], want["answers"]):
            assert [a[:2] for a in answers] == [a[:2] for a in expected]
            numpy.testing.assert_allclose(
                [a[2] for a in answers], [a[2] for a in expected], rtol=1e-5
            )
    else:
        assert [sorted(c) for c in got["cats"]] == [sorted(c) for c in want["cats"]]
        assert_close(
            {"cats": [[c[k] for k in sorted(c)] for c in got["cats"]]},
            {"cats": [[c[k] for k in sorted(c)] for c in want["cats"]]},
        )


def test_siamese_v1_counts_the_parameter_penalty_per_text():
    """What sets v1 apart from v2 shows only in training: its penalty (v2
    counts the parameter penalty once, half the stored number here)."""
    want = stored("siamese_v1")["penalty"]
    nlp = load("siamese_v1")
    got = make.training_penalty(nlp, stored("siamese_v1")["inputs"])
    assert got == pytest.approx(want, rel=1e-5)
    model = nlp.get_pipe("attn_pair_classifier").model
    module = model.get_ref("self_attention").shims[0]._model
    assert module.param_penalty_once is False


def test_legacy_pipeline_round_trips(tmp_path: Path):
    """Saved again by today's code, an old pipeline loads again the same."""
    nlp = load("da_v1")
    nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")
    inputs = stored("da_v1")["inputs"][:3]
    docs = [spacy_attn.make_pair(nlp, a, b) for a, b in inputs]
    first = nlp.get_pipe("attn_pair_classifier").model.predict(docs)
    second = again.get_pipe("attn_pair_classifier").model.predict(docs)
    numpy.testing.assert_allclose(first, second, rtol=1e-6)
