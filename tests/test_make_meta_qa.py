"""scripts/make_meta.py on a SQuAD v1.1 reader: the package description says
whether it holds a checkpoint chosen on held-out articles (model-best) or the
last step's weights (model-last, a run to a deadline)."""

import argparse

import pytest

from .util import load_script

METRICS = {
    "sets": {"test": {"questions": 10570, "exact_match": 60.0, "f1": 71.0}},
}
MANIFEST = {"train_source": "rebuilt", "counts": {"train": {"questions": 82878}}}


@pytest.mark.parametrize(
    "model,says",
    [
        ("training/squad_gpu/model-last", "the weights of its last step"),
        ("training/squad/model-best", "checkpoint selected on held-out train articles"),
    ],
)
def test_the_description_says_which_weights(model, says):
    script = load_script("scripts/make_meta.py")
    args = argparse.Namespace(
        name="qa", version="0.0.1", vectors="GloVe 6B 100d", budget="on one GPU"
    )
    meta = script.qa_meta(args, {**METRICS, "model": model}, MANIFEST)
    assert f"82,878 questions; {says})" in meta["description"]
    assert "EM 60.0 / F1 71.0" in meta["description"]
    assert meta["performance"] == {"squad_dev_exact_match": 60.0, "squad_dev_f1": 71.0}


@pytest.mark.parametrize(
    "deadline,steps,says",
    [
        (0, 2500, "in batches of 256 questions for at most 2,500 steps"),
        (1796028252, 0, "in batches of 256 questions until a deadline (2026-11-30 "),
    ],
)
def test_the_budget_is_read_from_the_pipeline_s_config(tmp_path, deadline, steps, says):
    """Without --budget, the packaged pipeline's own config says how it was
    trained (a deadline run's step limit is 0)."""
    (tmp_path / "config.cfg").write_text(
        f"[training]\nmax_steps = {steps}\n\n[training.batcher]\n"
        f'@batchers = "spacy-attn.deadline_batcher.v1"\ndeadline = {deadline}\n\n'
        "[training.batcher.batcher]\nsize = 256\n"
    )
    script = load_script("scripts/make_meta.py")
    assert script.config_budget(tmp_path).startswith(says)
