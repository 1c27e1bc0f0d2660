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

from .util import FIXTURES, legacy_names, load_script

LEGACY = FIXTURES / "legacy"
make = load_script("tests/fixtures/legacy/make.py")

# The fixture -> the superseded name its config must still name.
NAMES = {
    "da_v1": "spacy-attn.DecomposableAttention.v1",
    "da_v2": "spacy-attn.DecomposableAttention.v2",
    "da_v3": "spacy-attn.DecomposableAttention.v3",
    "da_v4": "spacy-attn.DecomposableAttention.v4",
    "da_v5": "spacy-attn.DecomposableAttention.v5",
    "siamese_v1": "spacy-attn.SiameseSelfAttention.v1",
    "dcn_v1": "spacy-attn.DynamicCoattention.v1",
    "dcn_v2": "spacy-attn.DynamicCoattention.v2",
    "dcn_v3": "spacy-attn.DynamicCoattention.v3",
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


# -- shipped configs name the newest version ------------------------------------

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
# v6's settings, newest first, each of which off computes the version before.
STEPS = (
    ("idf_features", ("idf_features", "bm25_k1", "bm25_b"), "v5"),
    ("lexical_features", ("lexical_features",), "v4"),
    ("exact_match", ("exact_match", "match_attr"), "v3"),
    ("null_token", ("null_token",), "v2"),
)


def older_equivalent(model: Dict[str, Any]) -> Dict[str, Any]:
    """The oldest version's settings that the v6 ``model`` block equals."""
    old = dict(model)
    for flag, keys, version in STEPS:
        if old.pop(flag) is not False:
            return old
        for key in keys[1:]:
            old.pop(key, None)
        old["@architectures"] = f"spacy-attn.DecomposableAttention.{version}"
    if not old["intra_attention"] and old["init_std"] is None:
        if old["encode"] == "joint":
            del old["init_std"], old["encode"]
            old["@architectures"] = "spacy-attn.DecomposableAttention.v1"
    return old


def shipped_v6_models():
    from spacy.util import load_config

    for path in sorted(CONFIGS.glob("*.cfg")):
        config = load_config(path, interpolate=False)
        model = config.get("components", {}).get("attn_pair_classifier", {})
        model = model.get("model", {})
        if model.get("@architectures") == "spacy-attn.DecomposableAttention.v6":
            yield path.name, dict(model)


def predict_with(model_config: Dict[str, Any], docs):
    """The predictions of the model of ``model_config`` (made small, seeded)
    and the shapes of its torch weights: a bias that starts at zero, such as
    v1's fewer intra-attention distances, shows only in the shapes."""
    from thinc.api import fix_random_seed

    config = dict(model_config, tok2vec=make.tiny_tok2vec(), hidden_width=8, nO=3)
    config["dropout"] = 0.0
    fix_random_seed(0)
    model = registry.resolve({"model": config})["model"]
    model.initialize(X=docs)
    scores = model.predict(docs)
    module = model.get_ref("attention").shims[0]._model
    return scores, {k: tuple(v.shape) for k, v in module.state_dict().items()}


def test_every_pair_config_names_the_newest_version():
    assert len(list(shipped_v6_models())) >= 9
    for path in sorted(CONFIGS.glob("*.cfg")):
        text = path.read_text(encoding="utf8")
        for old in ("v1", "v2", "v3", "v4", "v5"):
            assert f'"spacy-attn.DecomposableAttention.{old}"' not in text, path.name


# The configs that name v6 for its name only; those that turn on its IDF
# features (the answers start) build a model no older version builds.
REPLACING_V6 = [(n, m) for n, m in shipped_v6_models() if m["idf_features"] is False]


def test_only_the_answers_start_uses_the_idf_features():
    assert [n for n, m in shipped_v6_models() if m["idf_features"]] == [
        "answers_glove.cfg"
    ]


@pytest.mark.parametrize("name,model", REPLACING_V6)
def test_shipped_v6_config_builds_the_model_it_replaced(name, model):
    """Each config that names v6 builds, weight for weight and output for
    output, the model of an older version (the one it named before, or an
    older one still where its settings reach back that far)."""
    old = older_equivalent(model)
    assert old["@architectures"] != model["@architectures"]
    nlp = spacy.blank("en")
    docs = [spacy_attn.make_pair(nlp, a, b) for a, b in make.pair_inputs()[:4]]
    scores, shapes = predict_with(model, docs)
    old_scores, old_shapes = predict_with(old, docs)
    assert shapes == old_shapes
    numpy.testing.assert_array_equal(scores, old_scores)


def test_the_config_check_can_fail():
    """v1 and v6 with intra-attention differ in a weight's shape only."""
    nlp = spacy.blank("en")
    docs = [spacy_attn.make_pair(nlp, a, b) for a, b in make.pair_inputs()[:4]]
    v1 = {"@architectures": "spacy-attn.DecomposableAttention.v1"}
    v6 = dict(v1, **{"@architectures": "spacy-attn.DecomposableAttention.v6"})
    v6.update(
        null_token=False, exact_match=False, lexical_features=False, idf_features=False
    )
    intra = {"intra_attention": True, "max_distance": 2}
    assert predict_with(v1, docs)[1] == predict_with(v6, docs)[1]
    assert (
        predict_with({**v1, **intra}, docs)[1] != predict_with({**v6, **intra}, docs)[1]
    )


# -- DynamicCoattention.v4 serves both v1 and v3 -------------------------------


def as_dcn_v4(name: str, no_answer: bool):
    """The fixture pipeline ``name`` rebuilt with its model block renamed to
    ``DynamicCoattention.v4`` (with ``no_answer``), its weights loaded."""
    old = load(name)
    config = old.config.copy()
    model = config["components"]["attn_span_qa"]["model"]
    model["@architectures"] = "spacy-attn.DynamicCoattention.v4"
    model["no_answer"] = no_answer
    nlp = spacy.util.load_model_from_config(config, validate=True)
    nlp.get_pipe("attn_span_qa").from_bytes(old.get_pipe("attn_span_qa").to_bytes())
    return nlp


@pytest.mark.parametrize("name,no_answer", [("dcn_v1", False), ("dcn_v3", True)])
def test_dcn_v4_builds_the_model_of_v1_and_v3(name, no_answer):
    """v4 with ``no_answer`` off builds v1's model, on v3's: a pipeline saved
    with the old name, its model block renamed, takes the saved weights and
    predicts the stored numbers."""
    nlp = as_dcn_v4(name, no_answer)
    want = stored(name)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        got = make.predictions(nlp, "attn_span_qa", want["inputs"])
    finally:
        torch.set_num_threads(threads)
    assert_close(got["raw"], want["raw"])
    assert (got["raw"]["null_start"] is not None) is no_answer


def test_the_dcn_check_can_fail():
    """v3's weights in v4 without ``no_answer``: not the stored numbers."""
    nlp = as_dcn_v4("dcn_v3", False)
    want = stored("dcn_v3")
    got = make.predictions(nlp, "attn_span_qa", want["inputs"])
    assert got["raw"]["null_start"] is None
    start, stored_start = (r["start_logits"] for r in (got["raw"], want["raw"]))
    assert numpy.shape(start) != numpy.shape(stored_start) or not numpy.allclose(
        start, stored_start, rtol=1e-5, atol=1e-6
    )


def test_no_shipped_config_names_a_superseded_version():
    from spacy.util import load_config

    # PairCorpus.v1 reads a csv's quoted cells across lines and a tsv's
    # quotes as text; no one v2 setting reads both so (spacy_attn.legacy.
    # pair_corpus), and the pair configs take the user's csv or tsv.
    kept = {"spacy-attn.PairCorpus.v1"}
    paths = sorted(CONFIGS.glob("*.cfg"))
    assert len(paths) >= 20
    for path in paths:
        names = legacy_names(load_config(path, interpolate=False))
        assert set(names) <= kept, path.name
    # The check can fail: a config naming a legacy version.
    assert legacy_names({"m": {"@architectures": "spacy-attn.DynamicCoattention.v3"}})


def test_every_qa_config_names_the_newest_version():
    names = []
    for path in sorted(CONFIGS.glob("*.cfg")):
        text = path.read_text(encoding="utf8")
        for old in ("v1", "v2", "v3"):
            assert f'"spacy-attn.DynamicCoattention.{old}"' not in text, path.name
        if '"spacy-attn.DynamicCoattention.v4"' in text:
            names.append(path.name)
    assert len(names) >= 7


# -- readers ---------------------------------------------------------------------

MULTILINE_CSV = (
    'premise,hypothesis,label\n"A cat\nsits.",A cat.,entailment\nB.,C.,neutral\n'
)


def test_pair_corpus_v1_reads_csv_cells_across_lines(tmp_path):
    """v1 reads a quoted csv cell across lines, where v2 keeps a quote to its
    line unless told ``quoting = "multiline"``; and it takes ``span_key``."""
    from spacy_attn import get_pair_texts

    path = tmp_path / "pairs.csv"
    path.write_text(MULTILINE_CSV, encoding="utf8")
    nlp = spacy.blank("en")
    config = {"@readers": "spacy-attn.PairCorpus.v1", "path": str(path)}
    examples = list(registry.resolve({"r": config})["r"](nlp))
    assert [get_pair_texts(eg.reference) for eg in examples] == [
        ("A cat\nsits.", "A cat."),
        ("B.", "C."),
    ]
    assert [eg.reference.cats for eg in examples] == [
        {"entailment": 1.0},
        {"neutral": 1.0},
    ]
    with pytest.raises(spacy_attn.readers.CorpusFormatError):
        v2 = dict(config, **{"@readers": "spacy-attn.PairCorpus.v2"})
        list(registry.resolve({"r": v2})["r"](nlp))
    with pytest.warns(DeprecationWarning, match="span_key"):
        old = registry.resolve({"r": dict(config, span_key="old_pair")})["r"]
    assert old.pair_key == "old_pair"


SQUAD_STREAMS = ("spacy-attn.SquadCorpus.v2", "spacy-attn.SquadCorpus.v3")


def stored_readers() -> Dict[str, Any]:
    return json.loads((LEGACY / "readers.json").read_text(encoding="utf8"))


def test_every_reader_case_is_stored():
    assert sorted(stored_readers()) == sorted(make.READERS)


@pytest.mark.parametrize("name", sorted(make.READERS))
def test_legacy_reader_reads_as_saved(name):
    """A config naming the old reader resolves to its legacy function and
    reads, pass by pass, the examples it read before the move; v4 with the
    same settings (``cache`` on or off) reads them too, so a config may name
    v4 instead."""
    reader, settings = make.READERS[name]
    want = stored_readers()[name]
    assert (want["reader"], want["settings"]) == (reader, settings)
    assert registry.readers.get(reader).__module__ == "spacy_attn.legacy.squad_corpus"
    assert make.reader_examples(reader, settings) == want["passes"]
    v4 = "spacy-attn.SquadCorpus.v4"
    for cache in (False, True):
        got = make.reader_examples(v4, dict(settings, cache=cache))
        assert got == want["passes"], cache


def test_shipped_configs_name_squad_corpus_v1_only_for_a_fixed_sample():
    """v2 and v3 read as v4; v1 stays where it reads what v4 cannot: one
    seeded sample (``shuffle`` with ``limit``) on every pass."""
    from spacy.util import load_config

    named = 0
    for path in sorted(CONFIGS.glob("*.cfg")):
        corpora = load_config(path, interpolate=False).get("corpora", {})
        for key, block in corpora.items():
            reader = block.get("@readers", "")
            assert reader not in SQUAD_STREAMS, (path.name, key)
            if reader == "spacy-attn.SquadCorpus.v1":
                assert block["shuffle"] and block["limit"], (path.name, key)
            named += reader.startswith("spacy-attn.SquadCorpus.")
    assert named >= 14
