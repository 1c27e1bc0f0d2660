"""Shipped configs fill and validate; bad settings fail validation."""

from pathlib import Path

import pytest
import spacy
from spacy.util import load_config, load_model_from_config, registry
from thinc.api import ConfigValidationError

import spacy_attn  # noqa: F401

# The pair-classifier and text-classification configs; the span-QA configs
# (squad*.cfg) are checked in test_span_qa.py, squad2_from_spans.cfg (which
# sources a trained component) in test_project.py.
CONFIGS = sorted(
    p
    for p in (Path(__file__).resolve().parent.parent / "configs").glob("*.cfg")
    if not p.name.startswith("squad")
)


def test_configs_exist():
    names = {p.name for p in CONFIGS}
    assert {
        "glove.cfg",
        "glove_intra.cfg",
        "tok2vec.cfg",
        "transformer.cfg",
        "qqp_glove.cfg",
    } <= names


PIPES = {
    "doc_embedder.cfg": "attn_doc_embedder",
    "textcat_selfattn.cfg": "textcat",
    "textcat_generalized.cfg": "textcat",
    "yelp_selfattn.cfg": "textcat",
    "yelp_selfattn_adam.cfg": "textcat",
    "age_selfattn.cfg": "textcat",
    "age_selfattn_adam.cfg": "textcat",
}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_fills_and_validates(path):
    config = load_config(path)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    pipe_name = PIPES.get(path.name, "attn_pair_classifier")
    assert pipe_name in nlp.pipe_names
    # The training section resolves too (readers, optimizer, batcher).
    filled = nlp.config.interpolate()
    from spacy.schemas import ConfigSchemaTraining

    T = registry.resolve(filled["training"], schema=ConfigSchemaTraining)
    assert T["train_corpus"] == "corpora.train"
    model = nlp.get_pipe(pipe_name).model
    if model.has_ref("attention"):  # Decomposable Attention
        expected = "intra" in path.name
        assert model.get_ref("attention").shims[0]._model.intra_attention is expected
    else:  # self-attentive encoders
        module = model.get_ref("self_attention").shims[0]._model
        expected = {
            "snli_siamese.cfg": "SiameseSelfAttention",
            "snli_siamese_adam.cfg": "SiameseSelfAttention",
            "textcat_generalized.cfg": "GeneralizedPooling",
        }
        assert type(module).__name__ == expected.get(
            path.name, "StructuredSelfAttention"
        )


def test_default_config_fill():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("attn_pair_classifier")
    cfg = nlp.config["components"]["attn_pair_classifier"]
    assert cfg["model"]["@architectures"] == "spacy-attn.DecomposableAttention.v1"
    assert cfg["pair_key"] == "pair"
    assert pipe.pair_key == "pair"
    # cfg must be JSON-serialisable (it is written to cfg on disk)
    import json

    json.dumps(pipe.cfg)


def test_bad_config_value_fails_validation():
    nlp = spacy.blank("en")
    with pytest.raises(ConfigValidationError):
        nlp.add_pipe(
            "attn_pair_classifier",
            config={
                "model": {
                    "@architectures": "spacy-attn.DecomposableAttention.v1",
                    "hidden_width": "wide",
                }
            },
        )


# -- near-copies: each variant config is its base plus these overrides --
#
# spaCy's config system has no include/inheritance, and a config file is
# what a user trains, packages and reproduces from, so the variants stay
# files; this table is their definition as base + overrides (the form
# `spacy train BASE --section.key value` takes), and the test keeps each
# file equal to it, so a change to a base that is not carried over fails.


def _adam(grad_clip, eps=1e-08):
    return {
        "@optimizers": "Adam.v1",
        "beta1": 0.9,
        "beta2": 0.999,
        "L2_is_weight_decay": True,
        "L2": 0.0,
        "grad_clip": grad_clip,
        "use_averages": False,
        "eps": eps,
        "learn_rate": 0.001,
    }


def _fixed_vectors(key_attr):
    return {
        "@architectures": "spacy-attn.FrozenVectors.v1",
        "key_attr": key_attr,
        "oov_buckets": 100,
        "normalize": True,
    }


DA = "components.attn_pair_classifier.model"
TEXTCAT = "components.textcat.model"
SELFATTN_ADAM = {
    f"{TEXTCAT}.dropout": 0.0,
    f"{TEXTCAT}.encoder.tok2vec": _fixed_vectors("ORTH"),
    "training.dropout": 0.1,
    "training.batcher.size": 64,
    "training.optimizer": _adam(0.5),
}
VARIANTS = {
    "glove_intra.cfg": (
        "glove.cfg",
        {f"{DA}.intra_attention": True, "training.optimizer.learn_rate": 0.025},
    ),
    "glove_adam.cfg": (
        "glove.cfg",
        {
            f"{DA}.init_std": None,
            "training.batcher.size": 32,
            "training.patience": 5000,
            "training.max_steps": 50000,
            "training.eval_frequency": 1000,
            "training.optimizer": _adam(5.0),
        },
    ),
    "glove_intra_adam.cfg": ("glove_adam.cfg", {f"{DA}.intra_attention": True}),
    "snli_siamese_adam.cfg": (
        "snli_siamese.cfg",
        {
            f"{DA}.encoder.tok2vec": _fixed_vectors("LOWER"),
            "training.optimizer": _adam(5.0),
        },
    ),
    "yelp_selfattn_adam.cfg": ("yelp_selfattn.cfg", SELFATTN_ADAM),
    "age_selfattn_adam.cfg": ("age_selfattn.cfg", SELFATTN_ADAM),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_is_base_plus_overrides(variant):
    configs = Path(__file__).resolve().parent.parent / "configs"
    base, overrides = VARIANTS[variant]
    expected = load_config(configs / base, overrides=overrides, interpolate=False)
    assert load_config(configs / variant, interpolate=False) == expected
    # And the file says so, for a reader who opens it.
    assert f"configs/{base} plus" in (configs / variant).read_text(encoding="utf8")
