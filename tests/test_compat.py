"""spacy_attn.compat: the Corpus patch that keeps pairs (idempotent,
reversible, installed by the registered callback) and the tensor
conversions that avoid deprecated DLPack calls."""

import warnings

import numpy
import pytest
import spacy
import torch
from spacy.tokens import DocBin
from spacy.training import Corpus

import spacy_attn
from spacy_attn import compat
from spacy_attn.pairs import get_pair_bounds, has_pair, pair_data_key

CALLBACK = {"@callbacks": "spacy-attn.carry_pairs.v1"}


@pytest.fixture
def spacy_corpus():
    """spaCy's own Corpus._make_example, restored after the test whatever it
    patched (the patch is process-wide)."""
    original = Corpus._make_example
    compat.uncarry_pair_spans()
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
    assert compat.carried_pair_keys() == frozenset()
    compat.carry_pair_spans()
    patched = Corpus._make_example
    compat.carry_pair_spans()  # again: same wrapper, no second layer
    compat.carry_pair_spans(["qa"])  # another key: added to the same wrapper
    assert Corpus._make_example is patched
    assert compat.carried_pair_keys() == {"pair", "qa"}
    assert [get_pair_bounds(d) for d in _predicted(path, nlp)] == bounds
    compat.uncarry_pair_spans()
    assert Corpus._make_example is spacy_make_example
    assert compat.carried_pair_keys() == frozenset()
    assert not any(has_pair(d) for d in _predicted(path, nlp))
    compat.uncarry_pair_spans()  # a no-op now
    assert Corpus._make_example is spacy_make_example


def test_patch_copies_only_the_pair(spacy_corpus, tmp_path):
    nlp = spacy.blank("en")
    doc = spacy_attn.make_pair(nlp, "Who plays?", "A man plays.")
    doc.spans["answers"] = [doc[4:6]]  # gold: must not reach the predicted doc
    doc.user_data["gold_note"] = "x"
    DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "qa.spacy")
    compat.carry_pair_spans()
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
        compat.carried_pair_keys() == frozenset()
    )  # no spacy-attn component: nothing to carry
    nlp = spacy.blank("en", config={"nlp": {"after_pipeline_creation": CALLBACK}})
    config = nlp.config.copy()
    config["nlp"]["pipeline"] = ["attn_pair_classifier", "attn_span_qa"]
    config["components"] = {
        "attn_pair_classifier": {
            "factory": "attn_pair_classifier",
            "span_key": "segments",
        },
        "attn_span_qa": {"factory": "attn_span_qa"},
    }
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    assert compat.pipeline_pair_keys(nlp) == {"segments", "pair"}
    assert compat.carried_pair_keys() == {"segments", "pair"}
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
    path = compat.code_path()
    assert path.endswith("carry_pairs.py")
    text = open(path, encoding="utf8").read()
    assert "carry_pair_spans()" in text


class _LegacyDLPackArray(numpy.ndarray):
    """A numpy array that, like a cupy array, also has the legacy
    ``toDlpack`` (deprecated by CuPy) next to the ``__dlpack__`` protocol."""

    def toDlpack(self):
        warnings.warn(
            "toDlpack is deprecated, use __dlpack__", DeprecationWarning, stacklevel=2
        )
        return numpy.asarray(self).__dlpack__()


def test_xp2torch_uses_the_dlpack_protocol():
    x = numpy.arange(6, dtype="float32").reshape(2, 3).view(_LegacyDLPackArray)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = compat.xp2torch(x, requires_grad=True, device=torch.device("cpu"))
    assert t.requires_grad and t.dtype == torch.float32
    assert t.detach().numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    # Thinc's own xp2torch takes the legacy path on such an array.
    from thinc.api import xp2torch as thinc_xp2torch

    with pytest.warns(DeprecationWarning, match="toDlpack"):
        thinc_xp2torch(x, device=torch.device("cpu"))


def test_conversions_round_trip_like_thincs():
    from thinc.api import NumpyOps
    from thinc.api import torch2xp as thinc_torch2xp
    from thinc.api import xp2torch as thinc_xp2torch

    x = numpy.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    ours, theirs = compat.xp2torch(x), thinc_xp2torch(x)
    assert ours.device == theirs.device and torch.equal(ours, theirs)
    t = torch.tensor(x, requires_grad=True)
    for ops in (None, NumpyOps()):
        y = compat.torch2xp(t * 2, ops=ops)
        assert isinstance(y, numpy.ndarray)
        numpy.testing.assert_array_equal(y, thinc_torch2xp(t * 2, ops=ops))


def test_layers_use_the_compat_conversions():
    # The layers must not fall back to Thinc's versions (import-time binding).
    from spacy_attn.layers import coattention, decomposable_attention, self_attention

    for module in (coattention, decomposable_attention, self_attention):
        assert module.xp2torch is compat.xp2torch, module.__name__
        assert module.torch2xp is compat.torch2xp, module.__name__
