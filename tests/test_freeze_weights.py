"""``spacy-attn.freeze_weights.v1``: the named parts of a component's
PyTorch model keep their values through training updates while the rest
learns; a name that matches nothing is a clear error."""

import pytest
import torch
from spacy.util import load_model_from_config, registry
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.freeze_weights import torch_modules

from .util import initialized_qa


@pytest.fixture
def qa(tmp_path):
    """A small span-QA pipeline with its examples, initialized."""
    cfg = tmp_path / "qa.cfg"
    result = CliRunner().invoke(attn_cli, ["init-config", str(cfg), "--task", "qa"])
    assert result.exit_code == 0, result.output
    return initialized_qa(cfg)


def snapshot(nlp):
    (module,) = torch_modules(nlp.get_pipe("attn_span_qa").model)
    return {k: v.detach().clone() for k, v in module.named_parameters()}


def test_frozen_parts_keep_their_values(qa):
    nlp, examples = qa
    make = registry.callbacks.get("spacy-attn.freeze_weights.v1")
    make(component="attn_span_qa", modules=["encoder", "sentinel_q"])(nlp)
    before = snapshot(nlp)
    optimizer = nlp.create_optimizer()
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    after = snapshot(nlp)
    frozen = [k for k in before if k.startswith("encoder.") or k == "sentinel_q"]
    assert frozen and "sentinel_d" not in frozen
    for name in frozen:
        assert torch.equal(before[name], after[name]), name
    moved = [
        k for k in before if k not in frozen and not torch.equal(before[k], after[k])
    ]
    # The rest still trains: the decoder's and the fusion LSTM's weights move.
    assert any(k.startswith("decoder.") for k in moved)
    assert any(k.startswith("fusion.") for k in moved)


def test_an_unknown_part_is_a_clear_error(qa):
    nlp, _ = qa
    make = registry.callbacks.get("spacy-attn.freeze_weights.v1")
    with pytest.raises(
        ValueError, match=r"no parameter .* under \['encodr'\].*'encoder'"
    ):
        make(component="attn_span_qa", modules=["encodr"])(nlp)
    with pytest.raises(ValueError, match="no component 'qa'"):
        make(component="qa", modules=["encoder"])(nlp)


def test_a_config_freezes_at_initialize(qa, tmp_path):
    """Named in [initialize.after_init], the callback runs when spacy train
    initializes the pipeline (the way a fine-tuning config uses it)."""
    nlp, examples = qa
    config = nlp.config.copy()
    config["initialize"]["after_init"] = {
        "@callbacks": "spacy-attn.freeze_weights.v1",
        "component": "attn_span_qa",
        "modules": ["encoder"],
    }
    fresh = load_model_from_config(config, auto_fill=True)
    fresh.initialize(lambda: examples)
    (module,) = torch_modules(fresh.get_pipe("attn_span_qa").model)
    grads = {k: p.requires_grad for k, p in module.named_parameters()}
    assert not any(v for k, v in grads.items() if k.startswith("encoder."))
    assert all(v for k, v in grads.items() if k.startswith("decoder."))


def test_a_sourced_component_is_frozen_too(qa, tmp_path):
    """Fine-tuning sources the start's component, and spacy train initializes
    with resumed components disabled (spacy.training.initialize.init_nlp):
    the callback still finds and freezes it."""
    nlp, examples = qa
    nlp.to_disk(tmp_path / "start")
    config = nlp.config.copy()
    config["components"] = {"attn_span_qa": {"source": str(tmp_path / "start")}}
    config["initialize"]["after_init"] = {
        "@callbacks": "spacy-attn.freeze_weights.v1",
        "component": "attn_span_qa",
        "modules": ["encoder"],
    }
    tuned = load_model_from_config(config, auto_fill=True)
    with tuned.select_pipes(disable=["attn_span_qa"]):
        tuned.initialize(lambda: examples)
    (module,) = torch_modules(tuned.get_pipe("attn_span_qa").model)
    grads = {k: p.requires_grad for k, p in module.named_parameters()}
    assert not any(v for k, v in grads.items() if k.startswith("encoder."))
    assert all(v for k, v in grads.items() if k.startswith("decoder."))


def test_the_documented_config_block_freezes(qa):
    """docs/span_qa.md's [initialize.after_init] block names parts the DCN
    has, and the callback it builds freezes them."""
    import re
    import textwrap

    from thinc.api import Config

    from .util import REPO

    text = (REPO / "docs" / "span_qa.md").read_text(encoding="utf8")
    (block,) = [
        textwrap.dedent(b)
        for b in re.findall(r"```ini\n(.*?)```", text, flags=re.S)
        if "freeze_weights" in b
    ]
    # A config's [initialize] section holds the block.
    section = Config().from_str("[initialize]\n" + block)["initialize"]["after_init"]
    nlp, _ = qa
    callback = registry.resolve({"cb": section})["cb"]
    callback(nlp)
    (module,) = torch_modules(nlp.get_pipe("attn_span_qa").model)
    frozen = {k for k, p in module.named_parameters() if not p.requires_grad}
    assert frozen and all(k.split(".")[0] in section["modules"] for k in frozen)
