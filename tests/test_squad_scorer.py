"""The official SQuAD v1.1 metric, on cases worked out by hand with the
algorithm of ``evaluate-v1.1.py``, and on the real dev set."""

import gzip
import json

import numpy
import pytest
import spacy
from spacy.tokens import Span, SpanGroup
from spacy.training import Example
from spacy.util import registry

from spacy_attn import make_pair
from spacy_attn.scorers import squad_score
from spacy_attn.squad import (
    exact_match_score,
    f1_score,
    normalize_answer,
    read_squad,
    squad_evaluate,
)

from .util import mirror_dir, squad_dev


def test_normalize_answer():
    assert normalize_answer("The  Denver Broncos!") == "denver broncos"
    # Articles only as whole words; punctuation is removed before articles.
    assert normalize_answer("Anthem, a theme") == "anthem theme"
    assert normalize_answer("the-an") == "thean"
    assert normalize_answer("  A\tcat\n") == "cat"
    assert normalize_answer("") == ""


@pytest.mark.parametrize(
    "prediction,gold,em,f1",
    [
        ("the Denver Broncos", "Denver Broncos", 1, 1.0),
        ("Broncos", "Denver Broncos", 0, 2 * 1.0 * 0.5 / 1.5),  # p 1, r 1/2 -> 2/3
        ("Denver Broncos.", "denver broncos", 1, 1.0),  # punctuation and case
        ("Denver   Broncos", "Denver Broncos", 1, 1.0),  # whitespace
        ("the Carolina Panthers", "Denver Broncos", 0, 0.0),
        # p 2/4, r 2/3 -> f1 = 2 * (1/2)(2/3) / (1/2 + 2/3) = 4/7
        ("Denver Broncos football team", "Denver Broncos champions", 0, 4 / 7),
        # Counter overlap: "a a b" vs "a b b" -> "a" dropped as article! -> "b" vs "b b": p 1, r 1/2
        ("a a b", "a b b", 0, 2 / 3),
        ("", "Denver Broncos", 0, 0.0),
    ],
)
def test_single_gold_cases(prediction, gold, em, f1):
    assert exact_match_score(prediction, gold) == bool(em)
    assert f1_score(prediction, gold) == pytest.approx(f1)
    got = squad_evaluate(_dataset([["q", [gold]]]), {"q": prediction})
    assert got == pytest.approx({"exact_match": 100.0 * em, "f1": 100.0 * f1})


def _dataset(questions):
    qas = [
        {
            "id": qid,
            "question": "?",
            "answers": [{"text": t, "answer_start": 0} for t in golds],
        }
        for qid, golds in questions
    ]
    return {
        "version": "1.1",
        "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}],
    }


def test_max_over_gold_and_average_over_questions(capsys):
    data = _dataset(
        [
            ["q1", ["Denver Broncos", "Broncos", "the Broncos"]],  # max: EM 1
            [
                "q2",
                ["Santa Clara, California", "Levi's Stadium"],
            ],  # "Levi's Stadium in Santa Clara"
            ["q3", ["gold"]],  # unanswered: 0
        ]
    )
    preds = {"q1": "Broncos", "q2": "Levi's Stadium in Santa Clara"}
    # q2: vs gold 1 ("santa clara california"): common 2, p 2/5, r 2/3 -> 1/2;
    #     vs gold 2 ("levis stadium"): common 2, p 2/5, r 1 -> 4/7.
    got = squad_evaluate(data, preds)
    assert got["exact_match"] == pytest.approx(100 / 3)
    assert got["f1"] == pytest.approx(100 * (1 + 4 / 7 + 0) / 3)
    assert "Unanswered question q3 will receive score 0." in capsys.readouterr().err
    # The official script passes dataset["data"]; both are accepted.
    assert squad_evaluate(data["data"], preds) == got


def _qa_example(nlp, context, gold_texts, predicted_text=None, *, key="answers"):
    pred = make_pair(nlp, "Who won?", context)
    ref = pred.copy()
    group = SpanGroup(ref, name=key, spans=[])
    group.attrs["texts"] = gold_texts
    ref.spans[key] = group
    spans = []
    if predicted_text is not None:
        start = pred.text.rindex(predicted_text)
        spans = [pred.char_span(start, start + len(predicted_text), label="answer")]
    pred.spans[key] = spans
    return Example(pred, ref)


def test_component_scorer_matches_official():
    nlp = spacy.blank("en")
    ctx = "The Denver Broncos beat the Carolina Panthers in Santa Clara."
    egs = [
        _qa_example(
            nlp, ctx, ["Denver Broncos", "the Denver Broncos"], "The Denver Broncos"
        ),
        _qa_example(nlp, ctx, ["Denver Broncos"], "Broncos"),
        _qa_example(nlp, ctx, ["Santa Clara"], None),  # no predicted answer: ""
    ]
    scorer = registry.scorers.get("spacy-attn.squad_scorer.v1")()
    # A component passes its whole cfg: unknown keys are ignored.
    s = scorer(egs, answers_key="answers", pair_key="pair", max_answer_length=30)
    assert s["qa_n"] == 3
    assert s["qa_exact_match"] == pytest.approx(1 / 3)
    assert s["qa_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)


def test_component_scorer_key_fallback_and_no_gold():
    nlp = spacy.blank("en")
    ctx = "Denver Broncos won."
    eg = _qa_example(nlp, ctx, [], "Broncos", key="qa")
    assert squad_score([eg], answers_key="qa") == {
        "qa_exact_match": None,
        "qa_f1": None,
        "qa_n": 0,
    }
    # Without attrs["texts"] the gold spans' texts are the gold answers.
    ref = eg.reference
    ref.spans["qa"] = [Span(ref, 4, 6, label="answer")]  # "Denver Broncos"
    assert squad_score([eg], answers_key="qa")["qa_f1"] == pytest.approx(2 / 3)


@pytest.mark.mirror("squad/dev-v1.1.json.gz")
def test_real_dev_first_gold_answer_scores_100():
    """Predicting the first gold answer of every question of the official dev
    set gives EM = F1 = 100 through the official API and through the
    component scorer on the aligned docs (predicted span = the first gold span)."""
    path = mirror_dir() / "squad" / "dev-v1.1.json.gz"
    with gzip.open(path, "rt", encoding="utf8") as f:
        data = json.load(f)
    preds = {
        qa["id"]: qa["answers"][0]["text"]
        for article in data["data"]
        for para in article["paragraphs"]
        for qa in para["qas"]
    }
    assert len(preds) == 10570
    assert squad_evaluate(data, preds) == {"exact_match": 100.0, "f1": 100.0}
    # A wrong answer for one question moves the official numbers by 1/10570.
    first = next(iter(preds))
    assert squad_evaluate(data, {**preds, first: "Carolina Panthers"})[
        "exact_match"
    ] == pytest.approx(100.0 * 10569 / 10570)
    # The component path, on the first 3 articles (all 10,570 questions take
    # ~10 s to tokenize): the predicted span is the first gold span.
    nlp = spacy.blank("en")
    examples, stats = read_squad(path, nlp, articles=[0, 1, 2])
    assert stats.questions == len(examples) > 500
    for eg in examples:
        gold = eg.reference.spans["answers"][0]
        eg.predicted.spans["answers"] = [
            Span(eg.predicted, gold.start, gold.end, label="answer")
        ]
    s = squad_score(examples)
    assert s["qa_n"] == len(examples)
    # Gold spans expanded to token boundaries ("Sis (modern" for "Sis (mode")
    # are the only loss: on questions whose first answer aligned exactly, 100.
    exact = [
        eg
        for eg in examples
        if eg.predicted.spans["answers"][0].text
        == eg.reference.spans["answers"].attrs["texts"][0]
    ]
    assert len(exact) > 0.9 * len(examples)
    assert squad_score(exact) == {
        "qa_exact_match": 1.0,
        "qa_f1": 1.0,
        "qa_n": len(exact),
    }
    # And over all questions the two paths agree (0-1 vs 0-100 scale), with
    # the tokenization ceiling just below 100.
    span_preds = {
        eg.reference.spans["answers"].attrs["id"]: eg.predicted.spans["answers"][0].text
        for eg in examples
    }
    official = squad_evaluate(data["data"][:3], span_preds)
    assert official["exact_match"] == pytest.approx(100 * s["qa_exact_match"])
    assert official["f1"] == pytest.approx(100 * s["qa_f1"])
    assert 0.95 < s["qa_exact_match"] < 1.0


def test_official_command_line(tmp_path):
    """``python -m spacy attn squad-eval DATASET PREDICTIONS``, the official
    script's command line, prints the 0-100 scores as JSON."""
    import subprocess
    import sys

    data = {
        "version": "1.1",
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": "Paris is in France.",
                        "qas": [
                            {
                                "id": "a",
                                "question": "Where?",
                                "answers": [{"text": "France", "answer_start": 12}],
                            },
                            {
                                "id": "b",
                                "question": "What?",
                                "answers": [{"text": "Paris", "answer_start": 0}],
                            },
                        ],
                    }
                ],
            }
        ],
    }
    dataset = tmp_path / "dev.json.gz"
    with gzip.open(dataset, "wt", encoding="utf8") as f:
        json.dump(data, f)
    predictions = tmp_path / "pred.json"
    predictions.write_text(
        json.dumps({"a": "in France", "b": "Paris"}), encoding="utf8"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "attn",
            "squad-eval",
            str(dataset),
            str(predictions),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    scores = json.loads(result.stdout)
    assert scores == squad_evaluate(data, {"a": "in France", "b": "Paris"})
    assert scores["exact_match"] == 50.0 and scores["f1"] == pytest.approx(
        100 * (1 + 2 / 3) / 2
    )


def test_predictions_that_are_not_an_object(tmp_path):
    """``squad_scores`` (what squad-eval calls) names the predictions file
    that is not JSON, or not {question id: answer text}."""
    from spacy_attn.squad_scores import squad_scores
    from spacy_attn.usage import UsageError

    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps({"version": "1.1", "data": []}))
    predictions = tmp_path / "pred.json"
    for text, message in (("[1]", "expected a JSON object"), ("{", "invalid JSON")):
        predictions.write_text(text)
        with pytest.raises(UsageError, match=f"pred.json: {message}"):
            squad_scores(dataset, predictions)
    with pytest.raises(UsageError, match="PREDICTIONS not found"):
        squad_scores(dataset, tmp_path / "nope.json")


def test_hf_baseline_features_round_trip(monkeypatch):
    """benchmarks/squad_hf.py: the training targets of every window, fed back
    as logits through the n-best post-processing, give back the gold answers
    (EM 100 with the official metric), with several windows per context."""
    import importlib.util
    from types import SimpleNamespace

    from transformers import AutoTokenizer

    from .util import REPO

    # The benchmark imports its shared helpers (benchmarks/bench/) as a
    # sibling package, as it does when run as a script
    # (python benchmarks/squad_hf.py).
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "squad_hf", REPO / "benchmarks" / "squad_hf.py"
    )
    hf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hf)
    data = squad_dev()  # article 1 holds the first 6 paragraphs of the official one
    data = {
        "data": [{**data["data"][1], "paragraphs": data["data"][1]["paragraphs"][:6]}]
    }
    rows = hf.datafiles.squad_rows(data)
    tokenizer = AutoTokenizer.from_pretrained(
        hf.datafiles.minilm_dir(), local_files_only=True
    )
    args = SimpleNamespace(max_length=96, doc_stride=32)
    train = hf.make_features(tokenizer, rows, args, train=True)
    evals = hf.make_features(tokenizer, rows, args, train=False)
    assert len(train) == len(evals) > 1.5 * len(rows)  # contexts span several windows
    starts, ends = [], []
    for tf in train:
        s, e = numpy.zeros(len(tf["input_ids"])), numpy.zeros(len(tf["input_ids"]))
        s[tf["start_positions"]] = e[tf["end_positions"]] = 10.0
        starts.append(s)
        ends.append(e)
    preds = hf.postprocess(rows, evals, starts, ends)
    assert squad_evaluate(data, preds) == {"exact_match": 100.0, "f1": 100.0}
