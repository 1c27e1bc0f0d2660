"""spacy-attn.trim_memory.v1: the [training] before_update callback that
returns glibc's free heap memory to the system during long runs."""

import sys

import pytest
from spacy.util import registry

import spacy_attn.memory as memory


def test_registered_and_resolves_from_a_config():
    config = {"cb": {"@callbacks": "spacy-attn.trim_memory.v1", "every": 3}}
    callback = registry.resolve(config)["cb"]
    assert callable(callback)


def test_trims_every_n_steps_not_at_step_0(monkeypatch):
    calls = []
    monkeypatch.setattr(memory, "malloc_trim", lambda: calls.append)
    callback = memory.make_trim_memory(every=250)
    for step in range(0, 1001):
        callback(None, {"step": step, "epoch": 0})
    assert calls == [0, 0, 0, 0]  # steps 250, 500, 750, 1000; pad 0


def test_without_glibc_it_does_nothing(monkeypatch):
    monkeypatch.setattr(memory, "malloc_trim", lambda: None)
    callback = memory.make_trim_memory(every=1)
    callback(None, {"step": 5, "epoch": 0})  # no error, nothing to call


def test_bad_every_is_a_clear_error():
    with pytest.raises(ValueError, match="every must be >= 1"):
        memory.make_trim_memory(every=0)


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux-only"
)
def test_finds_glibc_malloc_trim_on_linux():
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    trim = memory.malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)


def test_the_squad2_configs_trim():
    """The shipped streamed SQuAD 2.0 configs use the callback."""
    from pathlib import Path

    from spacy.util import load_config

    configs = Path(__file__).parent.parent / "configs"
    for name in ("squad2_glove_cpu.cfg", "squad2_glove.cfg"):
        training = load_config(configs / name)["training"]
        assert training["before_update"]["@callbacks"] == "spacy-attn.trim_memory.v1"
