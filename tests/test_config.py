"""Shipped configs fill and validate; bad settings fail validation."""

from pathlib import Path

import pytest
import spacy
from spacy.util import load_config, load_model_from_config, registry
from thinc.api import ConfigValidationError

import spacy_attn  # noqa: F401

# The pair-classifier and text-classification configs; the span-QA configs
# (squad*.cfg) are checked in test_span_qa.py.
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
    assert cfg["span_key"] == "pair"
    assert pipe.span_key == "pair"
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
