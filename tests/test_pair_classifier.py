"""attn_pair_classifier: training, serialization, masking, edge cases."""

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import fix_random_seed

from spacy_attn import PairError, get_pair_bounds, has_pair, make_pair

from .util import add_random_vectors, make_examples, pair_config


def train(nlp, examples, n_iter=60):
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    losses_seen = []
    for _ in range(n_iter):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        losses_seen.append(losses["attn_pair_classifier"])
    return losses_seen


def predictions(nlp, pairs):
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    return numpy.asarray([[d.cats[l] for l in sorted(d.cats)] for d in nlp.pipe(docs)])


@pytest.fixture(scope="module")
def trained(snli_rows):
    """A tok2vec-backbone model overfit on 12 real SNLI pairs."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config("tok2vec"))
    examples = make_examples(nlp, snli_rows[:12])
    losses = train(nlp, examples, n_iter=80)
    return nlp, examples, losses


def test_overfit_tok2vec(trained):
    nlp, examples, losses = trained
    assert losses[0] > 0.5
    assert losses[-1] < 0.05, losses[-5:]
    for eg, doc in zip(examples, nlp.pipe([eg.predicted.copy() for eg in examples])):
        gold = max(eg.reference.cats, key=eg.reference.cats.get)
        assert max(doc.cats, key=doc.cats.get) == gold
        assert sum(doc.cats.values()) == pytest.approx(1.0, abs=1e-5)
    scores = nlp.evaluate(examples)
    assert scores["pair_acc"] == 1.0


def test_round_trip_disk_and_bytes(trained, snli_rows, tmp_path):
    nlp, _, _ = trained
    pairs = [(r["premise"], r["hypothesis"]) for r in snli_rows[:12]] + [
        ("A dog runs.", "An animal moves.")
    ]
    before = predictions(nlp, pairs)
    nlp.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    numpy.testing.assert_array_equal(predictions(nlp2, pairs), before)
    nlp3 = spacy.blank("en")
    nlp3.add_pipe("attn_pair_classifier", config=pair_config("tok2vec"))
    nlp3.from_bytes(nlp.to_bytes())
    numpy.testing.assert_array_equal(predictions(nlp3, pairs), before)
    pipe = nlp3.get_pipe("attn_pair_classifier")
    assert pipe.labels == nlp.get_pipe("attn_pair_classifier").labels


@pytest.mark.parametrize("intra", [False, True])
@pytest.mark.parametrize("backbone", ["tok2vec", "vectors"])
def test_batch_equals_single(snli_rows, intra, backbone):
    """Mixed-length batches give the same scores as one doc at a time: the
    padding is masked in attention and in the sums."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config(backbone, intra=intra))
    rows = snli_rows[:16]
    if backbone == "vectors":
        add_random_vectors(nlp, [r["premise"] + " " + r["hypothesis"] for r in rows])
    examples = make_examples(nlp, rows)
    train(nlp, examples, n_iter=3)
    pairs = [(r["premise"], r["hypothesis"]) for r in rows] + [
        (
            "Hi",
            "A much longer second text that pads the batch a lot more than the others.",
        )
    ]
    lengths = {len(make_pair(nlp, a, b)) for a, b in pairs}
    assert len(lengths) > 5  # really mixed lengths
    docs = [make_pair(nlp, a, b) for a, b in pairs]
    batched = [d.cats for d in nlp.pipe([d.copy() for d in docs], batch_size=64)]
    single = [nlp(d.copy()).cats for d in docs]
    for b, s in zip(batched, single):
        for label in b:
            assert b[label] == pytest.approx(s[label], abs=1e-5)


def test_static_vectors_backbone_trains(snli_rows, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config("vectors"))
    rows = snli_rows[:12]
    add_random_vectors(nlp, [r["premise"] + " " + r["hypothesis"] for r in rows])
    examples = make_examples(nlp, rows)
    losses = train(nlp, examples, n_iter=80)
    assert losses[-1] < 0.1 * losses[0], losses[::10]
    pairs = [(r["premise"], r["hypothesis"]) for r in rows]
    before = predictions(nlp, pairs)
    nlp.to_disk(tmp_path / "vec")
    numpy.testing.assert_array_equal(
        predictions(spacy.load(tmp_path / "vec"), pairs), before
    )


def test_frozen_vectors_need_vectors(snli_rows):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config("vectors"))
    with pytest.raises(ValueError, match="nlp.vocab.vectors is empty"):
        nlp.initialize(lambda: make_examples(nlp, snli_rows[:4]))


def test_intra_attention_switch(snli_rows):
    outs = {}
    for intra in (False, True):
        nlp = spacy.blank("en")
        pipe = nlp.add_pipe("attn_pair_classifier", config=pair_config(intra=intra))
        module = pipe.model.get_ref("attention").shims[0]._model
        assert (module.intra is not None) is intra
        assert any("distance_bias" in n for n, _ in module.named_parameters()) is intra
        losses = train(nlp, make_examples(nlp, snli_rows[:12]), n_iter=60)
        assert losses[-1] < 0.1, losses[-3:]
        outs[intra] = predictions(nlp, [("A man sleeps.", "A person is awake.")])
    assert not numpy.allclose(outs[False], outs[True])


def test_empty_and_one_token_segments(trained):
    """Documented result: an empty segment contributes a zero vector; scores
    are still a valid distribution."""
    nlp, _, _ = trained
    for first, second in [
        ("", "A person makes music."),
        ("A man plays.", ""),
        ("", ""),
        ("Dogs", "Cats"),
        ("Dogs", ""),
    ]:
        doc = nlp(make_pair(nlp, first, second))
        assert set(doc.cats) == set(nlp.get_pipe("attn_pair_classifier").labels)
        values = numpy.asarray(list(doc.cats.values()))
        assert numpy.isfinite(values).all()
        assert values.sum() == pytest.approx(1.0, abs=1e-5)


def test_doc_without_pair_raises_clear_error(trained):
    nlp, _, _ = trained
    docs = [make_pair(nlp, "A b.", "C d."), nlp.make_doc("Just one text, no pair.")]
    with pytest.raises(PairError) as err:
        list(nlp.pipe(docs))
    message = str(err.value)
    assert "doc 1" in message and "Just one text" in message
    assert (
        "doc.user_data['spacy_attn.pair'] is missing" in message
        and "make_pair" in message
    )


def test_wrong_span_count_raises(trained):
    nlp, _, _ = trained
    # The span-group storage of spacy-attn 0.1 is still read, and checked.
    doc = nlp.make_doc("A b. C d.")
    doc.spans["pair"] = [doc[0:2]]
    with pytest.raises(PairError, match="1 span"):
        nlp(doc)


def test_unknown_label_in_training_data(trained, snli_rows):
    nlp, examples, _ = trained
    eg = examples[0]
    ref = eg.reference.copy()
    ref.cats = {"maybe": 1.0}
    with pytest.raises(ValueError, match="'maybe'"):
        nlp.update([Example(eg.predicted.copy(), ref)])


def test_two_positive_labels_rejected_for_exclusive(trained):
    nlp, examples, _ = trained
    eg = examples[0]
    ref = eg.reference.copy()
    ref.cats = {"entailment": 1.0, "neutral": 1.0}
    with pytest.raises(ValueError, match="mutually exclusive"):
        nlp.update([Example(eg.predicted.copy(), ref)])


def test_predict_does_not_mutate_docs(trained):
    nlp, _, _ = trained
    pipe = nlp.get_pipe("attn_pair_classifier")
    doc = make_pair(nlp, "A man plays a guitar.", "A person makes music.")
    scores = pipe.predict([doc])
    assert doc.cats == {}
    assert scores.shape == (1, len(pipe.labels))
    pipe.set_annotations([doc], scores)
    assert set(doc.cats) == set(pipe.labels)


def test_binary_single_label(snli_rows):
    """Duplicate/paraphrase style: one sigmoid score per doc."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config(exclusive=False))
    examples = []
    for row in snli_rows[:12]:
        doc = make_pair(nlp, row["premise"], row["hypothesis"])
        ref = doc.copy()
        ref.cats = {"entailment": float(row["label"] == "entailment")}
        examples.append(Example(doc, ref))
    losses = train(nlp, examples, n_iter=80)
    assert losses[-1] < 0.05
    scores = nlp.evaluate(examples)
    assert scores["pair_acc"] == 1.0
    doc = nlp(make_pair(nlp, "A b", "c d"))
    assert list(doc.cats) == ["entailment"]


def test_exclusive_needs_two_labels(snli_rows):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config())
    examples = make_examples(nlp, [r for r in snli_rows if r["label"] == "neutral"][:4])
    with pytest.raises(ValueError, match="at least 2 label"):
        nlp.initialize(lambda: examples)


def test_spacy_corpus_predicted_docs_get_pair_spans(trained):
    """spacy.Corpus.v1 re-tokenizes reference text into predicted docs without
    span groups; update aligns the pair from the reference."""
    nlp, examples, _ = trained
    eg = examples[0]
    bare = nlp.make_doc(eg.reference.text)
    assert not has_pair(bare)
    new = Example(bare, eg.reference)
    nlp.get_pipe("attn_pair_classifier").update([new])
    assert get_pair_bounds(new.predicted) == get_pair_bounds(eg.reference)


def test_custom_pair_key(snli_rows, tmp_path):
    nlp = spacy.blank("en")
    config = pair_config()
    config["pair_key"] = "nli"
    nlp.add_pipe("attn_pair_classifier", config=config)
    examples = []
    for row in snli_rows[:8]:
        doc = make_pair(nlp, row["premise"], row["hypothesis"], pair_key="nli")
        ref = doc.copy()
        ref.cats = {row["label"]: 1.0}
        examples.append(Example(doc, ref))
    train(nlp, examples, n_iter=2)
    with pytest.raises(PairError, match="'nli'"):
        nlp(make_pair(nlp, "a", "b"))  # default key "pair" is not the configured one
    nlp.to_disk(tmp_path / "m")
    nlp2 = spacy.load(tmp_path / "m")
    assert nlp2.get_pipe("attn_pair_classifier").pair_key == "nli"
    assert nlp2(make_pair(nlp2, "a", "b", pair_key="nli")).cats


def test_old_span_key_setting_warns_and_still_loads(snli_rows, tmp_path):
    """``pair_key`` was called ``span_key`` in the pair classifier before the
    rename: a config (or a pipeline saved then) with the old name still
    works, with a DeprecationWarning; both names set differently is an error."""
    nlp = spacy.blank("en")
    config = pair_config()
    config["span_key"] = "nli"
    with pytest.warns(DeprecationWarning, match="span_key is now called pair_key"):
        pipe = nlp.add_pipe("attn_pair_classifier", config=config)
    assert pipe.pair_key == "nli"
    examples = []
    for row in snli_rows[:4]:
        doc = make_pair(nlp, row["premise"], row["hypothesis"], pair_key="nli")
        ref = doc.copy()
        ref.cats = {row["label"]: 1.0}
        examples.append(Example(doc, ref))
    nlp.initialize(lambda: examples)
    labels = set(pipe.labels)
    # Saved as the code before the rename saved it: the old name in both the
    # config and the component's settings.
    nlp.to_disk(tmp_path / "m")
    cfg_path = tmp_path / "m" / "config.cfg"
    # (The config saved now has both names: the raw setting and the filled
    # default of the new one.)
    text = cfg_path.read_text().replace('pair_key = "pair"\n', "")
    cfg_path.write_text(text)
    assert 'span_key = "nli"' in text and "pair_key" not in text
    settings = tmp_path / "m" / "attn_pair_classifier" / "cfg"
    settings.write_text(settings.read_text().replace('"pair_key"', '"span_key"'))
    with pytest.warns(DeprecationWarning, match="pair_key = 'nli'"):
        old = spacy.load(tmp_path / "m")
    loaded = old.get_pipe("attn_pair_classifier")
    assert loaded.pair_key == "nli" and "span_key" not in loaded.cfg
    assert set(old(make_pair(old, "a", "b", pair_key="nli")).cats) == labels
    config["pair_key"] = "other"
    with pytest.raises(ValueError, match="keep only pair_key"):
        spacy.blank("en").add_pipe("attn_pair_classifier", config=config)
