"""The package's import side effects and public API: importing
registers everything and installs the fork-safety hook, but sets no Doc
extensions; the doc embedder installs its extensions itself."""

import subprocess
import sys
import warnings

import pytest

import spacy_attn

PUBLIC = {
    "__version__",
    "DEFAULT_PAIR_KEY",
    "PairError",
    "make_pair",
    "make_pairs",
    "set_pair",
    "get_pair_bounds",
    "get_pair_texts",
    "get_pair_spans",
    "has_pair",
    "upgrade_pair",
    "PairClassifier",
    "DocEmbedder",
    "SpanQA",
    "span_embedding",
    "answer_questions",
    "score_pairs",
    "rank_candidates",
    "RankedCandidate",
    "PairScoreError",
    "render",
    "read_squad",
    "squad_evaluate",
}


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_public_api():
    assert set(spacy_attn.__all__) == PUBLIC
    for name in spacy_attn.__all__:
        assert getattr(spacy_attn, name) is not None


def test_no_shims_for_names_of_the_unreleased_api():
    """0.1.0 is unreleased: names that moved to their modules are found there
    only, not also at the top level through a deprecation shim."""
    from spacy_attn.layers.coattention import build_dynamic_coattention_v4
    from spacy_attn.readers import PairCorpus

    assert callable(build_dynamic_coattention_v4) and callable(PairCorpus)
    for name in ("build_dynamic_coattention_v4", "PairCorpus", "no_such_name"):
        with pytest.raises(AttributeError):
            getattr(spacy_attn, name)
    assert not hasattr(spacy_attn, "__getattr__")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spacy_attn.make_pair  # public names do not warn


def test_import_registers_and_sets_no_extensions():
    """In a fresh process: the modules that register are imported (so the
    registry is complete without entry points), the fork-safety hook is in,
    and no Doc extension exists until a doc embedder is created."""
    out = _run(
        "import sys, spacy\n"
        "from spacy.tokens import Doc\n"
        "import spacy_attn\n"
        "from spacy_attn import parallel\n"
        "mods = ['spacy_attn.layers.decomposable_attention', 'spacy_attn.layers.frozen_vectors',\n"
        "        'spacy_attn.layers.self_attention', 'spacy_attn.layers.coattention',\n"
        "        'spacy_attn.pipeline.pair_classifier', 'spacy_attn.pipeline.doc_embedder',\n"
        "        'spacy_attn.pipeline.span_qa', 'spacy_attn.readers', 'spacy_attn.squad']\n"
        "print(all(m in sys.modules for m in mods))\n"
        "print(parallel.fork_safety_installed())\n"
        "print(Doc.has_extension('attn_embedding'))\n"
        "nlp = spacy.blank('en'); nlp.add_pipe('attn_doc_embedder')\n"
        "print(all(Doc.has_extension(n) for n in "
        "('attn_embedding', 'attn_weights', 'attn_states')))\n"
        "nlp.add_pipe('attn_doc_embedder', name='second')\n"  # idempotent
        "print('ok')\n"
    )
    lines = out.splitlines()
    assert lines[0] == "True"
    assert lines[1] == "True"
    assert lines[2] == "False"
    assert lines[3] == "True"
    assert lines[4] == "ok"
