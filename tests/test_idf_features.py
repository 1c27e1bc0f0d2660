"""IDF features (spacy-attn.DecomposableAttention.v6) and the interpolation
of a binary pair classifier's score with BM25 (``lexical_weight``)."""

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn import make_pair
from spacy_attn.layers.lexical_scores import (
    N_LEXICAL_SCORES,
    SCORE_SCALE,
    bm25_scores,
    idf_table,
    normalised_scores,
)
from spacy_attn.lexical import IdfTable, bm25, candidate_idf, content_words
from spacy_attn.pairs import GROUP_ID_KEY
from spacy_attn.pipeline.lexical_weight import interpolate, pick_weight
from spacy_attn.readers.pair_corpus import cats_for

from .util import pair_config

# Each question with three candidate sentences, the answer first.
QUESTIONS = [
    ("where do cats sleep", ["cats sleep on the warm mat", "dogs bark", "a red car"]),
    ("what colour is the sky", ["the sky is blue", "grass grows", "cats purr"]),
    ("who wrote hamlet", ["shakespeare wrote hamlet", "the sea is deep", "tea"]),
    ("when does the bus leave", ["the bus leaves at noon", "a bus stop", "rain"]),
]


def grouped_examples(nlp):
    examples = []
    for q, (question, candidates) in enumerate(QUESTIONS):
        for i, candidate in enumerate(candidates):
            doc = make_pair(nlp, question, candidate)
            doc.user_data[GROUP_ID_KEY] = f"q{q}"
            ref = doc.copy()
            ref.cats = cats_for("yes" if i == 0 else "no", "yes")
            examples.append(Example(doc, ref))
    return examples


def v6_pipeline(lexical_weight=0.0, *, component=(), **settings):
    """A small v6 pair classifier initialized on ``grouped_examples``
    (``component``: more settings of the component, ``settings``: of the
    model)."""
    nlp = spacy.blank("en")
    config = pair_config("tok2vec", hidden=16)
    config["model"]["@architectures"] = "spacy-attn.DecomposableAttention.v6"
    config["model"].update(settings)
    config["lexical_weight"] = lexical_weight
    config.update(component)
    fix_random_seed(0)
    nlp.add_pipe("attn_pair_classifier", config=config)
    examples = grouped_examples(nlp)
    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    return nlp, examples


def cats_of(nlp, pairs):
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    return numpy.asarray([d.cats["yes"] for d in nlp.pipe(docs)])


def test_scores_of_a_pair_by_hand():
    nlp = spacy.blank("en")
    docs = [make_pair(nlp, "cats sleep", "cats sleep on mats"), make_pair(nlp, "", "x")]
    table = IdfTable(n_docs=4, doc_freq={"cats": 1, "sleep": 2, "mats": 1}, avg_len=2.0)
    got = normalised_scores(docs, table, k1=1.2, b=0.75)
    assert got.shape == (2, N_LEXICAL_SCORES)
    q_idf = table.idf("cats") + table.idf("sleep")
    c_idf = q_idf + table.idf("mats")
    words = content_words(docs[0])
    full = bm25(["cats", "sleep"], words[2:], table, k1=1.2, b=0.75)
    want = [full / (2.2 * q_idf), 1.0, q_idf / c_idf, 1.0]
    numpy.testing.assert_allclose(got[0], want, rtol=1e-6)
    # An empty query: every score 0.
    numpy.testing.assert_array_equal(got[1], numpy.zeros(N_LEXICAL_SCORES))


def test_v6_resolves_and_its_output_reads_the_scores():
    build = registry.architectures.get("spacy-attn.DecomposableAttention.v6")
    model = build(hidden_width=16, dropout=0.0)
    assert model.has_ref("lexical_scores")
    assert model.get_ref("output_layer").get_dim("nI") == 16 + 7 + N_LEXICAL_SCORES
    plain = build(hidden_width=16, idf_features=False)
    assert not plain.has_ref("lexical_scores")
    assert plain.get_ref("output_layer").get_dim("nI") == 16 + 7
    with pytest.raises(ValueError, match="k1"):
        build(bm25_k1=-1.0)


def test_initialize_counts_every_training_candidate_into_the_saved_table():
    nlp, examples = v6_pipeline()
    pipe = nlp.get_pipe("attn_pair_classifier")
    table = idf_table(pipe.model.get_ref("lexical_scores"))
    want = candidate_idf([eg.reference for eg in examples])
    # All 12 candidates, not the 10 of the model's initialization sample.
    assert table.n_docs == want.n_docs == 12
    assert table.doc_freq == want.doc_freq
    # Saved and loaded with the pipeline, and the same predictions.
    pairs = [("where do cats sleep", "cats sleep here"), ("who", "tea")]
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("attn_pair_classifier", config=pipe_config(nlp))
    nlp2.from_bytes(nlp.to_bytes())
    table2 = idf_table(
        nlp2.get_pipe("attn_pair_classifier").model.get_ref("lexical_scores")
    )
    assert table2.doc_freq == want.doc_freq and table2.n_docs == 12
    numpy.testing.assert_array_equal(cats_of(nlp, pairs), cats_of(nlp2, pairs))


def pipe_config(nlp):
    config = dict(nlp.config["components"]["attn_pair_classifier"])
    config.pop("factory")
    return config


def test_the_scores_change_the_prediction():
    nlp, _ = v6_pipeline()
    pipe = nlp.get_pipe("attn_pair_classifier")
    pairs = [("where do cats sleep", "cats sleep on the warm mat"), ("a", "b c")]
    before = cats_of(nlp, pairs)
    output = pipe.model.get_ref("output_layer")
    W = output.get_param("W")
    W[0, -N_LEXICAL_SCORES:] += 1.0  # one class: softmax cancels a shift of both
    output.set_param("W", W)
    assert not numpy.allclose(before, cats_of(nlp, pairs))


def test_interpolate_and_pick_weight():
    p = numpy.asarray([0.5, 0.5, 0.9, 0.2])
    bm = numpy.asarray([0.0, 1.0, 0.0, 1.0])
    numpy.testing.assert_allclose(interpolate(p, bm, 0.0), p)
    assert interpolate(p, bm, 2.0)[1] == pytest.approx(1 / (1 + numpy.exp(-2.0)))
    # Group a: the model ranks the positive last, BM25 first; group b the
    # model is right and BM25 says nothing: a weight past the model's margin.
    golds = [False, True, True, False]
    groups = ["a", "a", "b", "b"]
    assert pick_weight(p, bm, golds, groups, grid=(0.0, 1.0)) == 1.0
    # BM25 against the gold: weight 0 stays.
    assert pick_weight(p, bm[::-1].copy(), golds, groups, grid=(0.0, 1.0)) == 0.0
    assert pick_weight(p, bm, golds, [None] * 4) is None


def test_lexical_weight_interpolates_predictions_without_touching_docs():
    nlp, _ = v6_pipeline(lexical_weight=2.0)
    pipe = nlp.get_pipe("attn_pair_classifier")
    docs = [make_pair(nlp, "where do cats sleep", "cats sleep on the warm mat")]
    raw = pipe.model.predict(docs)
    got = pipe.predict(docs)
    assert not docs[0].cats
    j = pipe.labels.index("yes")
    bm = bm25_scores(pipe.model.get_ref("lexical_scores"), docs)
    assert bm[0] > 0
    numpy.testing.assert_allclose(got[:, j], interpolate(raw[:, j], bm, 2.0), rtol=1e-5)
    numpy.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-6)


def test_weight_null_is_picked_on_dev_after_training_and_saved():
    nlp, examples = v6_pipeline(lexical_weight=None)
    pipe = nlp.get_pipe("attn_pair_classifier")
    assert pipe.cfg["lexical_weight"] == 0.0 and pipe.cfg["pick_lexical_weight"]
    optimizer = nlp.resume_training()
    nlp.update(examples, sgd=optimizer)  # (one step: the model is still poor)
    scores = nlp.evaluate(examples)
    weight = pipe.cfg["lexical_weight"]
    assert weight > 0.0, "BM25 ranks every answer here first"
    # The scores are those of the component as it is saved.
    again = nlp.evaluate(examples)
    assert again["pair_score"] == pytest.approx(scores["pair_score"])
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("attn_pair_classifier", config=pipe_config(nlp))
    nlp2.from_bytes(nlp.to_bytes())
    assert nlp2.get_pipe("attn_pair_classifier").cfg["lexical_weight"] == weight


def test_a_weight_without_idf_features_is_a_clear_error():
    with pytest.raises(ValueError, match="idf_features"):
        v6_pipeline(lexical_weight=1.0, idf_features=False)


def test_scores_scale_matches_the_layer_output():
    nlp, _ = v6_pipeline()
    layer = nlp.get_pipe("attn_pair_classifier").model.get_ref("lexical_scores")
    docs = [make_pair(nlp, "where do cats sleep", "cats sleep on the warm mat")]
    table = idf_table(layer)
    want = (normalised_scores(docs, table) - 0.5) * SCORE_SCALE
    numpy.testing.assert_allclose(layer.predict(docs), want, rtol=1e-6)
