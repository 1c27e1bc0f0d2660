"""spacy_attn.corpus_patch: the Corpus patch that keeps pairs (idempotent,
reversible, installed by the registered callback, never by ``import
spacy_attn``)."""

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Corpus

import spacy_attn
from spacy_attn import corpus_patch
from spacy_attn.pairs import get_pair_bounds, has_pair, pair_data_key

CALLBACK = {"@callbacks": "spacy-attn.carry_pairs.v1"}


@pytest.fixture
def spacy_corpus():
    """spaCy's own Corpus._make_example, restored after the test whatever it
    patched (the patch is process-wide)."""
    original = Corpus._make_example
    corpus_patch.uncarry_pair_spans()
    yield
    Corpus._make_example = original


@pytest.fixture
def pair_docbin(tmp_path):
    nlp = spacy.blank("en")
    docs = []
    for a, b in [("A man plays.", "Someone makes music."), ("Dogs bark.", "")]:
        doc = spacy_attn.make_pair(nlp, a, b)
        doc.cats = {"yes": 1.0}
        docs.append(doc)
    path = tmp_path / "pairs.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path, [get_pair_bounds(d) for d in docs]


def _predicted(path, nlp):
    return [eg.predicted for eg in Corpus(path)(nlp)]


def test_spacy_corpus_drops_the_pair_without_the_patch(spacy_corpus, pair_docbin):
    # Why the patch exists: spaCy's Corpus re-tokenizes the reference text
    # into a fresh predicted doc, without user_data. If spaCy ever keeps it,
    # this fails and the patch can go.
    path, _ = pair_docbin
    nlp = spacy.blank("en")
    examples = list(Corpus(path)(nlp))
    assert all(has_pair(eg.reference) for eg in examples)
    assert not any(has_pair(eg.predicted) for eg in examples)


def test_carry_pair_spans_is_idempotent_and_reversible(spacy_corpus, pair_docbin):
    path, bounds = pair_docbin
    nlp = spacy.blank("en")
    spacy_make_example = Corpus._make_example
    assert corpus_patch.carried_pair_keys() == frozenset()
    corpus_patch.carry_pair_spans()
    patched = Corpus._make_example
    corpus_patch.carry_pair_spans()  # again: same wrapper, no second layer
    corpus_patch.carry_pair_spans(["qa"])  # another key: added to the same wrapper
    assert Corpus._make_example is patched
    assert corpus_patch.carried_pair_keys() == {"pair", "qa"}
    assert [get_pair_bounds(d) for d in _predicted(path, nlp)] == bounds
    corpus_patch.uncarry_pair_spans()
    assert Corpus._make_example is spacy_make_example
    assert corpus_patch.carried_pair_keys() == frozenset()
    assert not any(has_pair(d) for d in _predicted(path, nlp))
    corpus_patch.uncarry_pair_spans()  # a no-op now
    assert Corpus._make_example is spacy_make_example


def test_patch_copies_only_the_pair(spacy_corpus, tmp_path):
    nlp = spacy.blank("en")
    doc = spacy_attn.make_pair(nlp, "Who plays?", "A man plays.")
    doc.spans["answers"] = [doc[4:6]]  # gold: must not reach the predicted doc
    doc.user_data["gold_note"] = "x"
    DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "qa.spacy")
    corpus_patch.carry_pair_spans()
    (predicted,) = _predicted(tmp_path / "qa.spacy", nlp)
    assert get_pair_bounds(predicted) == get_pair_bounds(doc)
    assert "answers" not in predicted.spans
    assert set(predicted.user_data) == {pair_data_key("pair")}


def test_callback_installs_the_patch_for_the_pipelines_pair_keys(
    spacy_corpus, pair_docbin
):
    path, bounds = pair_docbin
    nlp = spacy.blank("en", config={"nlp": {"after_pipeline_creation": CALLBACK}})
    assert (
        corpus_patch.carried_pair_keys() == frozenset()
    )  # no spacy-attn component: nothing to carry
    nlp = spacy.blank("en", config={"nlp": {"after_pipeline_creation": CALLBACK}})
    config = nlp.config.copy()
    config["nlp"]["pipeline"] = ["attn_pair_classifier", "attn_span_qa"]
    config["components"] = {
        "attn_pair_classifier": {
            "factory": "attn_pair_classifier",
            "pair_key": "segments",
        },
        "attn_span_qa": {"factory": "attn_span_qa"},
    }
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    assert corpus_patch.pipeline_pair_keys(nlp) == {"segments", "pair"}
    assert corpus_patch.carried_pair_keys() == {"segments", "pair"}
    assert [get_pair_bounds(d) for d in _predicted(path, nlp)] == bounds


def test_pair_configs_set_the_callback():
    from .util import REPO

    for name in (
        "glove",
        "glove_intra",
        "qqp_glove",
        "snli_siamese",
        "squad_glove",
        "squad_transformer",
        "squadshifts_glove",
        "tok2vec",
        "transformer",
    ):
        config = spacy.util.load_config(
            REPO / "configs" / f"{name}.cfg", interpolate=False
        )
        assert config["nlp"]["after_pipeline_creation"] == CALLBACK, name


def test_code_path_is_the_carry_pairs_file():
    path = corpus_patch.code_path()
    assert path.endswith("carry_pairs.py")
    text = open(path, encoding="utf8").read()
    assert "carry_pair_spans()" in text
