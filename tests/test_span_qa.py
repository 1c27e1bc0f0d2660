"""attn_span_qa: training on real SQuAD questions, round trips, windows, edge cases."""

import json
import os
import subprocess
import sys
import warnings
from importlib.metadata import entry_points

import numpy
import pytest
import spacy
from spacy.tokens import Span, SpanGroup
from spacy.training import Example
from spacy.util import load_config, load_model_from_config, registry
from thinc.api import fix_random_seed

import spacy_attn
from spacy_attn import PairError, answer_questions, get_pair_bounds, make_pair
from spacy_attn.layers.coattention import (
    QAOutput,
    QAWindows,
    make_windows,
    window_starts,
)
from spacy_attn.layers.qa_decode import decode_answers
from spacy_attn.squad import make_qa_doc

from .util import REPO, squad_pairs, tok2vec_config

QA_CONFIGS = [
    "squad_glove.cfg",
    "squad_glove_cpu.cfg",
    "squad_glove_gpu.cfg",
    "squad2_glove.cfg",
    "squad2_glove_cpu.cfg",
    "squadshifts_glove.cfg",
    "squad_transformer.cfg",
]


def qa_config(
    *,
    window=400,
    stride=200,
    hidden=32,
    iterations=3,
    answers_key="answers",
    pair_key="pair",
):
    """A small model config for tests (tok2vec backbone)."""
    return {
        "pair_key": pair_key,
        "answers_key": answers_key,
        "scorer": {"@scorers": "spacy-attn.squad_scorer.v1"},
        "model": {
            "@architectures": "spacy-attn.DynamicCoattention.v1",
            "hidden_width": hidden,
            "pool_size": 2,
            "max_iterations": iterations,
            "dropout": 0.0,
            "window": window,
            "stride": stride,
            "tok2vec": tok2vec_config(32),
        },
    }


@pytest.fixture(scope="session")
def squad_questions():
    """16 real SQuAD v1.1 dev questions, two from each of 8 paragraphs."""
    return squad_pairs(8)


def qa_examples(nlp, questions, **kw):
    examples = []
    for q in questions:
        ref = make_qa_doc(nlp, q, **kw)
        pred = ref.copy()
        del pred.spans[kw.get("answers_key", "answers")]
        examples.append(Example(pred, ref))
    return examples


def train(nlp, examples, n_iter):
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    losses_seen = []
    for _ in range(n_iter):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        losses_seen.append(losses["attn_span_qa"])
    return losses_seen


def answers_of(nlp, pairs):
    docs = list(nlp.pipe([make_pair(nlp, q, c) for q, c in pairs]))
    return [
        ([s.text for s in d.spans["answers"]], list(d.spans["answers"].attrs["scores"]))
        for d in docs
    ]


@pytest.fixture(scope="module")
def trained(squad_questions):
    """A small model overfit on 8 real SQuAD questions (8 contexts)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=qa_config())
    examples = qa_examples(nlp, squad_questions[::2])
    losses = train(nlp, examples, n_iter=70)
    return nlp, examples, losses


# -- registry and configs -----------------------------------------------


def test_registry_and_entry_points():
    assert callable(registry.architectures.get("spacy-attn.DynamicCoattention.v4"))
    assert "attn_span_qa" in spacy.Language.factories
    eps = {
        (ep.group, ep.name): ep
        for g in ("spacy_factories", "spacy_architectures")
        for ep in entry_points(group=g)
    }
    assert (
        eps[("spacy_factories", "attn_span_qa")].load()
        is spacy_attn.pipeline.span_qa.make_span_qa
    )
    assert (
        eps[("spacy_architectures", "spacy-attn.DynamicCoattention.v4")].load()
        is spacy_attn.layers.coattention.build_dynamic_coattention_v4
    )


@pytest.mark.parametrize("name", QA_CONFIGS)
def test_qa_config_fills_and_validates(name):
    from spacy.schemas import ConfigSchemaTraining

    nlp = load_model_from_config(
        load_config(REPO / "configs" / name), auto_fill=True, validate=True
    )
    assert nlp.pipe_names[-1] == "attn_span_qa"
    T = registry.resolve(
        nlp.config.interpolate()["training"], schema=ConfigSchemaTraining
    )
    assert T["train_corpus"] == "corpora.train" and T["score_weights"]["qa_f1"] == 1.0
    module = nlp.get_pipe("attn_span_qa").model.get_ref("coattention").shims[0]._model
    if name in ("squad_glove.cfg", "squad_glove_gpu.cfg"):  # the paper's sizes
        assert (module.hidden, module.hmn_start.pool_size, module.max_iterations) == (
            200,
            16,
            4,
        )
    assert (module.project is None) is (name != "squad_transformer.cfg")


def test_default_config_and_bad_values():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("attn_span_qa")
    cfg = nlp.config["components"]["attn_span_qa"]
    assert cfg["scorer"] == {"@scorers": "spacy-attn.squad_scorer.v1"}
    assert (pipe.pair_key, pipe.answers_key, pipe.top_k) == ("pair", "answers", 5)
    json.dumps(pipe.cfg)
    with pytest.raises(ValueError, match="stride"):
        spacy.blank("en").add_pipe(
            "attn_span_qa", config={"model": {**qa_config()["model"], "stride": 0}}
        )
    with pytest.raises(ValueError, match="top_k"):
        spacy.blank("en").add_pipe("attn_span_qa", config={"top_k": 0})


# -- training, round trips, batching -------------------------------------


def test_overfit_real_squad_questions(trained):
    nlp, examples, losses = trained
    assert losses[-1] < 0.05 * losses[0], losses[::10]
    for eg, doc in zip(examples, nlp.pipe([eg.predicted.copy() for eg in examples])):
        group = doc.spans["answers"]
        assert group[0].text in eg.reference.spans["answers"].attrs["texts"]
        scores = group.attrs["scores"]
        assert len(group) == len(scores) == 5 and scores == sorted(scores, reverse=True)
        assert 0.5 < scores[0] <= 1.0 and sum(scores) <= 1.0 + 1e-5
        _, _, c_start, c_end = spacy_attn.get_pair_bounds(doc)
        assert all(
            c_start <= s.start < s.end <= c_end and s.label_ == "answer" for s in group
        )
    scores = nlp.evaluate(examples)
    assert scores["qa_exact_match"] == 1.0 and scores["qa_f1"] == 1.0


def test_round_trip_disk_and_bytes(trained, squad_questions, tmp_path):
    nlp, _, _ = trained
    pairs = [(q.question, q.context) for q in squad_questions] + [
        ("Who won?", "The Broncos won the game.")
    ]
    before = answers_of(nlp, pairs)
    nlp.to_disk(tmp_path / "model")
    assert answers_of(spacy.load(tmp_path / "model"), pairs) == before
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("attn_span_qa", config=qa_config())
    nlp2.from_bytes(nlp.to_bytes())
    assert answers_of(nlp2, pairs) == before


def test_pipe_batch_equals_one_by_one(trained, squad_questions):
    nlp, _, _ = trained
    pairs = [(q.question, q.context) for q in squad_questions] + [("Who?", "Tom.")]
    docs = [make_pair(nlp, q, c) for q, c in pairs]
    batched = list(nlp.pipe([d.copy() for d in docs], batch_size=64))
    for b, d in zip(batched, docs):
        single = nlp(d.copy())
        assert [(s.start, s.end) for s in b.spans["answers"]] == [
            (s.start, s.end) for s in single.spans["answers"]
        ]
        numpy.testing.assert_allclose(
            b.spans["answers"].attrs["scores"],
            single.spans["answers"].attrs["scores"],
            atol=1e-5,
        )


def test_predict_does_not_mutate_docs(trained):
    nlp, _, _ = trained
    pipe = nlp.get_pipe("attn_span_qa")
    doc = make_pair(nlp, "Who won?", "The Broncos won the game.")
    answers = pipe.predict([doc])
    assert "answers" not in doc.spans
    pipe.set_annotations([doc], answers)
    assert [s.text for s in doc.spans["answers"]][0] in doc.text


def test_answer_questions_char_offsets(trained, squad_questions):
    nlp, _, _ = trained
    q = squad_questions[0]
    context = "  \n" + q.context + "  "  # surrounding whitespace is kept in offsets
    results = list(
        answer_questions(
            nlp, [(q.question, context), ("Anything?", "")], top_k=2, batch_size=1
        )
    )
    assert len(results) == 2 and results[1] == []
    assert len(results[0]) == 2
    for answer in results[0]:
        assert context[answer["start_char"] : answer["end_char"]] == answer["text"]
    assert results[0][0]["text"] in [t for t, _ in q.answers]
    assert nlp.get_pipe("attn_span_qa").top_k == 5  # untouched
    docs = list(answer_questions(nlp, [(q.question, q.context)], as_docs=True))
    assert docs[0].spans["answers"][0].text == results[0][0]["text"]
    with pytest.raises(PairError, match="item 0"):
        list(answer_questions(nlp, ["not a pair"]))


def test_answer_questions_top_k_is_per_call(trained, squad_questions):
    """Two interleaved answer_questions generators with different top_k each
    get their own, and the component's setting never changes meanwhile
    (top_k used to be set in pipe.cfg for the generator's whole life)."""
    nlp, _, _ = trained
    pipe = nlp.get_pipe("attn_span_qa")
    pairs = [(q.question, q.context) for q in squad_questions[:3]]
    one = answer_questions(nlp, pairs, top_k=1, batch_size=1)
    three = answer_questions(nlp, pairs, top_k=3, batch_size=1)
    got_one, got_three = [next(one)], [next(three)]
    assert pipe.top_k == 5
    # Another user of the pipeline, while both generators are open.
    doc = next(nlp.pipe([make_pair(nlp, *pairs[0])]))
    assert len(doc.spans["answers"]) == 5
    for _ in pairs[1:]:
        got_one.append(next(one))
        got_three.append(next(three))
    assert [len(a) for a in got_one] == [1, 1, 1]
    assert [len(a) for a in got_three] == [3, 3, 3]
    assert [a[0] for a in got_one] == [a[0] for a in got_three]
    assert pipe.top_k == 5
    # The same per-call option through nlp.pipe's component_cfg.
    docs = list(
        nlp.pipe(
            [make_pair(nlp, *pairs[0])], component_cfg={"attn_span_qa": {"top_k": 2}}
        )
    )
    assert len(docs[0].spans["answers"]) == 2 and pipe.top_k == 5


def test_loss_gradient_matches_finite_differences(trained):
    """The cumulative, window-joint cross-entropy and its analytic gradient."""
    pipe = trained[0].get_pipe("attn_span_qa")
    rng = numpy.random.default_rng(0)
    start = rng.normal(size=(3, 2, 5)).astype("float32")
    end = rng.normal(size=(3, 2, 5)).astype("float32")
    start[2, :, 3:] = end[2, :, 3:] = -1e4  # padding of a 3-token window
    # doc 0 has two windows (tokens 10-14 and 12-16); doc 1 one window.
    windows = QAWindows(
        numpy.array([0, 0, 1]), numpy.array([10, 12, 20]), numpy.array([5, 5, 3])
    )
    gold = [(12, 14), (21, 22)]  # doc 0's answer lies in both windows
    loss, (d_start, d_end) = pipe._loss_and_gradient(
        QAOutput(start, end, windows, None), gold
    )
    eps = 1e-3
    for grad, which in ((d_start, 0), (d_end, 1)):
        for idx in [(0, 0, 2), (1, 1, 0), (0, 1, 4), (2, 0, 1), (2, 1, 2)]:
            arrays = [start.astype("float64"), end.astype("float64")]
            arrays[which][idx] += eps
            up = pipe._loss_and_gradient(QAOutput(*arrays, windows, None), gold)[0]
            arrays[which][idx] -= 2 * eps
            down = pipe._loss_and_gradient(QAOutput(*arrays, windows, None), gold)[0]
            assert grad[idx] == pytest.approx((up - down) / (2 * eps), abs=1e-3)
    assert numpy.all(d_start[2, :, 3:] == 0)
    assert loss > 0


def _reference_loss_and_gradient(output, gold):
    """The host-side numpy implementation the device version replaced
    (float64 throughout), kept verbatim as a reference."""
    windows = output.windows
    doc = windows.doc.astype("int64")
    n_windows = len(doc)
    targets = numpy.full((n_windows, 2), -1, dtype="int64")
    for w, (i, w_start, w_len) in enumerate(zip(doc, windows.start, windows.length)):
        g = gold[i]
        if g is not None and w_start <= g[0] and g[1] <= w_start + w_len:
            targets[w] = (g[0] - w_start, g[1] - 1 - w_start)
    rows = numpy.where(targets[:, 0] >= 0)[0]
    if not len(rows):
        return 0.0, None
    has_target = numpy.zeros(len(gold), dtype=bool)
    has_target[doc[rows]] = True
    trained = has_target[doc]
    n_examples = float(has_target.sum())
    firsts = numpy.flatnonzero(numpy.r_[True, doc[1:] != doc[:-1]])
    win_doc = numpy.searchsorted(firsts, numpy.arange(n_windows), side="right") - 1
    loss = 0.0
    grads = []
    for logits, column in ((output.start_logits, 0), (output.end_logits, 1)):
        logits = numpy.asarray(logits).astype("float64")
        row_max = logits.max(axis=2)
        doc_max = numpy.maximum.reduceat(row_max, firsts, axis=0)[win_doc]
        exp = numpy.exp(logits - doc_max[:, :, None])
        doc_sum = numpy.add.reduceat(exp.sum(axis=2), firsts, axis=0)
        probs = exp / doc_sum[win_doc][:, :, None]
        t = targets[rows, column]
        gold_p = numpy.zeros(probs.shape[:2])
        gold_p[rows] = probs[rows, :, t]
        marginal = numpy.add.reduceat(gold_p, firsts, axis=0)[win_doc]
        first_rows = firsts[has_target[doc[firsts]]]
        loss += float(-numpy.log(marginal[first_rows] + 1e-12).sum() / n_examples)
        d = probs.copy()
        posterior = numpy.zeros_like(gold_p)
        posterior[rows] = gold_p[rows] / numpy.maximum(marginal[rows], 1e-30)
        d[rows, :, t] -= posterior[rows]
        d[~trained] = 0.0
        d /= n_examples
        grads.append(d.astype("float32"))
    return loss, (grads[0], grads[1])


def _random_qa_output(seed, T=3, L=7):
    """Random logits over 5 docs cut into windows of up to L tokens: docs
    with 1-3 windows, an empty context, padding at -1e4, a doc without gold,
    gold spans inside one / several / no window (crossing a boundary)."""
    rng = numpy.random.default_rng(seed)
    windows = make_windows(
        numpy.array(
            [[0, 2, 2, 9], [0, 3, 3, 18], [0, 1, 1, 1], [0, 2, 2, 13], [0, 2, 2, 6]]
        ),
        L,
        4,
    )
    W = len(windows.doc)
    start = (rng.normal(size=(W, T, L)) * 4).astype("float32")
    end = (rng.normal(size=(W, T, L)) * 4).astype("float32")
    for w, n in enumerate(windows.length):
        start[w, :, n:] = end[w, :, n:] = -1e4
    # doc 0: in both windows; doc 1: crosses window boundaries (tokens 6-9
    # are in window 3-10 only); doc 2: empty context; doc 3: no gold;
    # doc 4: one window.
    gold = [(5, 7), (6, 10), None, None, (3, 6)]
    return QAOutput(start, end, windows, None), gold


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_loss_gradient_equals_host_reference(seed, dtype):
    """The array-module loss and gradient equal the former host (numpy,
    float64) implementation on random inputs."""
    pipe = spacy.blank("en").add_pipe("attn_span_qa", config=qa_config())
    output, gold = _random_qa_output(seed)
    output = output._replace(
        start_logits=output.start_logits.astype(dtype),
        end_logits=output.end_logits.astype(dtype),
    )
    loss, (d_start, d_end) = pipe._loss_and_gradient(output, gold)
    ref_loss, (ref_start, ref_end) = _reference_loss_and_gradient(output, gold)
    assert float(loss) == pytest.approx(ref_loss, rel=1e-5)
    assert (
        d_start.dtype == d_end.dtype == numpy.float32
        and d_start.shape == ref_start.shape
    )
    numpy.testing.assert_allclose(d_start, ref_start, atol=1e-6)
    numpy.testing.assert_allclose(d_end, ref_end, atol=1e-6)
    # Windows of docs without a target (2, 3) get no gradient.
    untrained = numpy.isin(output.windows.doc, [2, 3])
    assert (d_start[untrained] == 0).all() and (d_end[untrained] == 0).all()
    # No window holds a target: no loss, no gradient.
    assert pipe._loss_and_gradient(output, [None, (2, 20), None, None, None]) == (
        0.0,
        None,
    )


def _reference_decode(output, n_docs, max_answer_length, top_k):
    """The former SpanQA._decode (per-window top_spans on the host, merged
    per doc with a dict), kept as a reference."""
    import torch

    from spacy_attn.models.coattention import top_spans

    windows = output.windows
    starts, ends, scores = top_spans(
        torch.from_numpy(numpy.ascontiguousarray(output.start_logits[:, -1])),
        torch.from_numpy(numpy.ascontiguousarray(output.end_logits[:, -1])),
        torch.from_numpy(windows.length.astype("int64")),
        max_answer_length=max_answer_length,
        top_k=top_k,
        group=torch.from_numpy(windows.doc.astype("int64")),
    )
    starts, ends, scores = starts.numpy(), ends.numpy(), scores.numpy()
    merged = [{} for _ in range(n_docs)]
    for w in range(len(windows.doc)):
        best = merged[windows.doc[w]]
        offset = int(windows.start[w])
        for s, e, score in zip(starts[w], ends[w], scores[w]):
            if s < 0:
                continue
            key = (offset + int(s), offset + int(e) + 1)
            if float(score) > best.get(key, -1.0):
                best[key] = float(score)
    results = []
    for best in merged:
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
        results.append([(s, e, score) for (s, e), score in ranked])
    return results


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("top_k,max_answer_length", [(1, 30), (5, 3), (40, 4)])
def test_decode_answers_equals_reference(seed, top_k, max_answer_length):
    """decode_answers (search where the logits are, host merge vectorized)
    gives exactly what the former per-window loop gave, including spans
    found by several overlapping windows and ties (logits rounded)."""
    output, _ = _random_qa_output(seed, T=1)
    output = output._replace(
        start_logits=output.start_logits.round(), end_logits=output.end_logits.round()
    )
    n_docs = 5
    got = decode_answers(
        output, n_docs, max_answer_length=max_answer_length, top_k=top_k
    )
    expected = _reference_decode(output, n_docs, max_answer_length, top_k)
    assert got == expected
    assert got[2] == []  # empty context
    assert all(0 < len(answers) <= top_k for i, answers in enumerate(got) if i != 2)
    assert (
        decode_answers(
            output._replace(
                windows=make_windows(numpy.zeros((0, 4), dtype="int64"), 7, 4)
            ),
            0,
            max_answer_length=3,
            top_k=2,
        )
        == []
    )


# -- windows -------------------------------------------------------------


def test_window_starts():
    assert window_starts(5, 8, 4) == [0]
    assert window_starts(20, 8, 4) == [0, 4, 8, 12]
    assert window_starts(21, 8, 4) == [0, 4, 8, 12, 13]
    w = make_windows(numpy.array([[0, 3, 3, 24], [0, 2, 2, 2]]), 8, 4)
    assert w.doc.tolist() == [0, 0, 0, 0, 0, 1]
    assert w.start.tolist() == [3, 7, 11, 15, 16, 2]
    assert w.length.tolist() == [8, 8, 8, 8, 8, 0]


def test_windows_find_answers_across_a_boundary(squad_questions):
    """Contexts cut into 12-token windows every 4 tokens: answers that cross
    the end of one window are found (in the next one), and the windows of a
    context are merged into one deduplicated ranked list."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=qa_config(window=12, stride=4))
    examples = qa_examples(nlp, [squad_questions[i] for i in (0, 2, 7, 9, 10, 11)])
    crossing = 0
    for eg in examples:
        span = eg.reference.spans["answers"][0]
        w = make_windows(numpy.array([spacy_attn.get_pair_bounds(eg.reference)]), 12, 4)
        assert len(w.doc) >= 7  # really windowed
        # A window that holds the answer's start but ends inside the answer.
        crossing += any(
            s <= span.start < s + n < span.end for s, n in zip(w.start, w.length)
        )
    assert crossing >= 4
    losses = train(nlp, examples, n_iter=60)
    assert losses[-1] < 0.1 * losses[0]
    for eg, doc in zip(examples, nlp.pipe([eg.predicted.copy() for eg in examples])):
        assert (
            doc.spans["answers"][0].text in eg.reference.spans["answers"].attrs["texts"]
        )
        starts_ends = [(s.start, s.end) for s in doc.spans["answers"]]
        assert len(set(starts_ends)) == len(starts_ends)  # deduplicated across windows
        assert (
            sum(doc.spans["answers"].attrs["scores"]) <= 1.0 + 1e-5
        )  # one joint normalization


# -- edge cases ----------------------------------------------------------


def test_doc_without_pair_raises(trained):
    nlp, _, _ = trained
    with pytest.raises(PairError, match="doc 1.*no text pair"):
        list(nlp.pipe([make_pair(nlp, "Who?", "Tom."), nlp.make_doc("No pair here.")]))


def test_empty_question_empty_context_long_question(trained):
    """Documented results: an empty question is answered from the context
    alone (only its sentinel is attended); an empty context gets no answers;
    a question longer than its context is answered from the context."""
    nlp, _, _ = trained
    doc = nlp(make_pair(nlp, "", "The Denver Broncos won Super Bowl 50."))
    assert len(doc.spans["answers"]) > 0
    assert all(s.start >= 0 and s.end <= len(doc) for s in doc.spans["answers"])
    doc = nlp(make_pair(nlp, "Who won Super Bowl 50?", ""))
    assert len(doc.spans["answers"]) == 0 and doc.spans["answers"].attrs["scores"] == []
    question = (
        "Which team, out of all of the teams that played in the game that was held in 2016, "
        "won it?"
    )
    doc = nlp(make_pair(nlp, question, "Denver won"))
    _, _, c_start, c_end = spacy_attn.get_pair_bounds(doc)
    assert c_end - c_start == 2
    assert len(doc.spans["answers"]) == 3  # all spans of a 2-token context
    assert all(c_start <= s.start < s.end <= c_end for s in doc.spans["answers"])
    assert sum(doc.spans["answers"].attrs["scores"]) == pytest.approx(1.0, abs=1e-5)


def test_examples_without_alignable_answer_are_skipped(trained, squad_questions):
    nlp, examples, _ = trained
    pipe = nlp.get_pipe("attn_span_qa")
    ref = examples[0].reference.copy()
    ref.spans["answers"] = SpanGroup(
        ref, name="answers", spans=[], attrs={"texts": ["not in the text"]}
    )
    no_answer = Example(examples[0].predicted.copy(), ref)
    before = pipe.n_skipped
    pipe._warned_skip = False
    with pytest.warns(UserWarning, match="no gold answer span"):
        losses = pipe.update([no_answer])  # nothing to learn: no crash, no loss
    assert losses["attn_span_qa"] == 0.0 and pipe.n_skipped == before + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once only
        losses = pipe.update([no_answer, examples[1]])
    assert losses["attn_span_qa"] > 0.0 and pipe.n_skipped == before + 2


def test_gold_outside_context_is_an_error(trained):
    nlp, examples, _ = trained
    ref = examples[0].reference.copy()
    ref.spans["answers"] = [Span(ref, 0, 2, label="answer")]  # inside the question
    with pytest.raises(ValueError, match="not inside the context"):
        nlp.get_pipe("attn_span_qa").update(
            [Example(examples[0].predicted.copy(), ref)]
        )


def test_different_predicted_tokenization_is_aligned(trained):
    """A predicted doc tokenized differently from the reference (and without
    span groups, as spacy.Corpus makes them) gets the pair from the
    reference and the gold span mapped through the alignment."""
    nlp, examples, _ = trained
    eg = examples[0]  # gold "Denver Broncos"
    ref = eg.reference
    gold = ref.spans["answers"][0]
    assert gold.text == "Denver Broncos"
    words, spaces = [], []
    for t in ref:
        if t.i == gold.end - 1:  # split "Broncos" into "Bron" + "cos"
            words += [t.text[:4], t.text[4:]]
            spaces += [False, bool(t.whitespace_)]
        else:
            words.append(t.text)
            spaces.append(bool(t.whitespace_))
    predicted = spacy.tokens.Doc(nlp.vocab, words=words, spaces=spaces)
    new = Example(predicted, ref)
    pipe = nlp.get_pipe("attn_span_qa")
    pipe._copy_pairs_to_predicted([new])
    q_end = get_pair_bounds(ref)[1]
    assert get_pair_bounds(new.predicted) == (0, q_end, q_end, len(ref) + 1)
    assert pipe._first_gold_span(new, 0) == (gold.start, gold.end + 1)
    assert predicted[gold.start : gold.end + 1].text == "Denver Broncos"
    assert pipe.update([new])["attn_span_qa"] > 0


def test_custom_keys_round_trip(squad_questions, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=qa_config(answers_key="gold_qa", pair_key="qa"))
    examples = qa_examples(
        nlp, squad_questions[:4], answers_key="gold_qa", pair_key="qa"
    )
    train(nlp, examples, n_iter=2)
    with pytest.raises(PairError, match="'qa'"):
        nlp(make_pair(nlp, "a", "b"))
    doc = nlp(make_pair(nlp, "Who?", "Tom did.", pair_key="qa"))
    assert "gold_qa" in doc.spans and "answers" not in doc.spans
    nlp.to_disk(tmp_path / "m")
    pipe = spacy.load(tmp_path / "m").get_pipe("attn_span_qa")
    assert (pipe.pair_key, pipe.answers_key) == ("qa", "gold_qa")
    assert pipe.model.get_ref("segments").attrs["pair_key"] == "qa"


# -- spacy train -----------------------------------------------------------


@pytest.mark.slow  # `spacy train` in a subprocess
@pytest.mark.parametrize(
    "reader",
    [
        [],
        # Streamed by spaCy (max_epochs -1), a new order on every pass.
        [
            "--corpora.train.shuffle",
            "true",
            "--training.max_epochs",
            "-1",
        ],
    ],
    ids=["config", "streamed"],
)
def test_spacy_train_squad_format_end_to_end(squad_questions, tmp_path, reader):
    """`spacy train` with the in-workplace config on a tiny SQuAD-format
    file (random 16-d vectors instead of GloVe, tiny sizes, 6 steps)."""
    data = {"version": "1.1", "data": [{"title": "t", "paragraphs": []}]}
    for q in squad_questions[:8]:
        data["data"][0]["paragraphs"].append(
            {
                "context": q.context,
                "qas": [
                    {
                        "id": q.id,
                        "question": q.question,
                        "answers": [
                            {"text": t, "answer_start": s} for t, s in q.answers
                        ],
                    }
                ],
            }
        )
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data), encoding="utf8")
    vec = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    vec.vocab.reset_vectors(width=16)
    for word in sorted(
        {
            t.lower_
            for q in squad_questions[:8]
            for t in vec.make_doc(q.question + " " + q.context)
        }
    ):
        vec.vocab.set_vector(word, rng.normal(size=16).astype("float32"))
    vec.to_disk(tmp_path / "vectors")
    out = tmp_path / "out"
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            "configs/squadshifts_glove.cfg",
            "--output",
            str(out),
            "--paths.train",
            str(path),
            "--paths.dev",
            str(path),
            "--paths.vectors",
            str(tmp_path / "vectors"),
            "--components.attn_span_qa.model.input_width",
            "16",
            "--components.attn_span_qa.model.hidden_width",
            "16",
            "--components.attn_span_qa.model.pool_size",
            "2",
            "--training.max_steps",
            "6",
            "--training.eval_frequency",
            "3",
            *reader,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "QA_F1" in result.stdout.upper()
    nlp = spacy.load(out / "model-last")
    doc = nlp(make_pair(nlp, squad_questions[0].question, squad_questions[0].context))
    assert len(doc.spans["answers"]) == 5


def test_initialize_reads_a_sample_not_the_corpus(squad_questions):
    """initialize takes (and validates) the first 10 examples: spaCy's
    validate_get_examples would read a whole SQuAD corpus first."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("attn_span_qa", config=qa_config())
    examples = qa_examples(nlp, squad_questions)
    taken = []

    def get_examples():
        for eg in examples:
            taken.append(eg)
            yield eg

    pipe.initialize(get_examples, nlp=nlp)
    assert 10 <= len(taken) <= 11 < len(examples)
    with pytest.raises(TypeError):
        pipe.initialize(None, nlp=nlp)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pipe.initialize(lambda: ["not an example"], nlp=nlp)
