"""The official SQuAD 2.0 metric, its pipeline scorer and built unanswerable questions."""

import copy
import json

import pytest
import spacy
from spacy.tokens import Span, SpanGroup
from spacy.training import Example
from spacy.util import registry

from spacy_attn import make_pair
from spacy_attn.scorers import squad2_score
from spacy_attn.squad.negatives import add_unanswerable
from spacy_attn.squad.no_answer_metric import compute_f1, squad2_evaluate, squad2_scores

GOLDS = {
    "q1": ["Denver Broncos", "the Denver Broncos"],
    "q2": [],
    "q3": ["1990"],
    "q4": [],
    "q5": ["Paris"],
}
PREDS = {
    "q1": "Denver Broncos",
    "q2": "",
    "q3": "in 1990 year",
    "q4": "Paris",
    "q5": "Paris",
}
NA_PROBS = {"q1": 0.1, "q2": 0.9, "q3": 0.2, "q4": 0.8, "q5": 0.85}


def test_official_squad2_numbers():
    s = squad2_scores(GOLDS, PREDS, NA_PROBS)
    assert (s["exact"], s["f1"], s["total"]) == (60.0, 70.0, 5)
    assert s["HasAns_exact"] == pytest.approx(200 / 3)
    assert s["HasAns_f1"] == pytest.approx(250 / 3) and s["HasAns_total"] == 3
    assert (s["NoAns_exact"], s["NoAns_f1"], s["NoAns_total"]) == (50.0, 50.0, 2)
    # Sweeping na_prob: answering q4 ("Paris" where there is no answer)
    # costs a point, so answering q5 too only wins it back.
    assert (s["best_f1"], s["best_f1_thresh"]) == (70.0, 0.2)
    assert (s["best_exact"], s["best_exact_thresh"]) == (60.0, 0.1)
    at = squad2_scores(GOLDS, PREDS, NA_PROBS, na_prob_thresh=0.5)
    assert (at["exact"], at["f1"]) == (60.0, 70.0)
    assert at["NoAns_f1"] == 100.0 and at["HasAns_f1"] == pytest.approx(50.0)
    assert compute_f1("", "") == 1.0 and compute_f1("", "x") == 0.0


def test_squad2_evaluate_reads_the_dataset_layout():
    data = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": "...",
                        "qas": [
                            {"id": q, "answers": [{"text": t} for t in texts]}
                            for q, texts in GOLDS.items()
                        ],
                    }
                ]
            }
        ]
    }
    assert squad2_evaluate(data, PREDS, NA_PROBS) == squad2_scores(
        GOLDS, PREDS, NA_PROBS
    )
    with pytest.raises(KeyError, match="no prediction"):
        squad2_evaluate(data, {"q1": "x"})


def _example(nlp, question, context, gold, predicted, na_prob):
    ref = make_pair(nlp, question, context)
    group = SpanGroup(ref, name="answers", spans=[])
    group.attrs["texts"] = gold
    group.attrs["id"] = question
    ref.spans["answers"] = group
    pred = make_pair(nlp, question, context)
    spans = []
    if predicted:
        start = context.index(predicted)
        span = pred.char_span(
            len(pred.text) - len(context) + start,
            len(pred.text) - len(context) + start + len(predicted),
        )
        spans = [Span(pred, span.start, span.end, label="answer")]
    pred.spans["answers"] = SpanGroup(
        pred,
        name="answers",
        spans=spans,
        attrs={"scores": [0.5] * len(spans), "no_answer_score": na_prob},
    )
    return Example(pred, ref)


def test_squad2_scorer():
    nlp = spacy.blank("en")
    assert registry.scorers.get("spacy-attn.squad2_scorer.v1")() is squad2_score
    examples = [
        _example(
            nlp,
            "Who won?",
            "The Denver Broncos won.",
            GOLDS["q1"],
            "Denver Broncos",
            0.1,
        ),
        _example(nlp, "Where?", "Nothing here.", [], "", 0.9),
        _example(nlp, "When?", "It was in 1990 year.", ["1990"], "in 1990 year", 0.2),
        _example(nlp, "Capital?", "Paris is nice.", [], "Paris", 0.8),
    ]
    scores = squad2_score(examples)
    assert scores["qa_f1"] == pytest.approx(0.625)
    assert scores["qa_has_ans_f1"] == pytest.approx(0.75)
    assert scores["qa_no_ans_f1"] == pytest.approx(0.5)
    assert scores["qa_best_f1"] == pytest.approx(0.875)
    assert scores["qa_best_f1_thresh"] == pytest.approx(0.2) and scores["qa_n"] == 4
    assert squad2_score([])["qa_f1"] is None


ARTICLES = [
    {
        "title": "A",
        "paragraphs": [
            {
                "context": "Tom lives in Kenya.",
                "qas": [
                    {
                        "id": "a1",
                        "question": "Where does Tom live?",
                        "answers": [{"text": "Kenya", "answer_start": 13}],
                    }
                ],
            },
            {
                "context": "Ann was born in 1990.",
                "qas": [
                    {
                        "id": "a2",
                        "question": "When was Ann born?",
                        "answers": [{"text": "1990", "answer_start": 16}],
                    }
                ],
            },
            {"context": "Kenya is in Africa.", "qas": []},
        ],
    },
    {
        "title": "B",
        "paragraphs": [
            {
                "context": "One paragraph only.",
                "qas": [
                    {
                        "id": "b1",
                        "question": "How many?",
                        "answers": [{"text": "One", "answer_start": 0}],
                    }
                ],
            }
        ],
    },
]


def test_add_unanswerable():
    before = copy.deepcopy(ARTICLES)
    out, counts = add_unanswerable(ARTICLES, rate=1.0, seed=0)
    assert ARTICLES == before  # input untouched
    assert counts == {"answerable": 3, "unanswerable": 2, "no_other_paragraph": 1}
    negatives = {
        qa["id"]: para["context"]
        for article in out
        for para in article["paragraphs"]
        for qa in para["qas"]
        if qa["is_impossible"]
    }
    # a1 ("Kenya") never goes to the paragraph that mentions Kenya.
    assert negatives["a1-neg"] == "Ann was born in 1990."
    assert negatives["a2-neg"] != "Ann was born in 1990."
    assert all(
        qa["answers"] == []
        for a in out
        for p in a["paragraphs"]
        for qa in p["qas"]
        if qa["is_impossible"]
    )
    assert add_unanswerable(ARTICLES, rate=1.0, seed=0)[0] == out
    assert add_unanswerable(ARTICLES, rate=0.0, seed=0)[1]["unanswerable"] == 0


def test_add_unanswerable_falls_back_to_the_file():
    """An article with one paragraph (a user's file often has one per
    "article") gets its copy from another article's paragraph, never one
    that holds the answer; the article-only rule is unchanged."""
    out, counts = add_unanswerable(ARTICLES, rate=1.0, seed=0, file_fallback=True)
    assert counts == {"answerable": 3, "unanswerable": 3, "no_other_paragraph": 0}
    where = {
        qa["id"]: para["context"]
        for article in out
        for para in article["paragraphs"]
        for qa in para["qas"]
    }
    assert where["b1-neg"] in {p["context"] for p in ARTICLES[0]["paragraphs"]}
    assert "one" not in where["b1-neg"].lower()
    # Where the article has a paragraph that will do, both rules agree.
    assert where["a1-neg"] == "Ann was born in 1990."
    # Nowhere to go: a file of one paragraph gives none.
    _, counts = add_unanswerable(ARTICLES[1:], rate=1.0, seed=0, file_fallback=True)
    assert counts["unanswerable"] == 0 and counts["no_other_paragraph"] == 1


def test_read_squad2_counts_unanswerable_questions(tmp_path):
    from spacy_attn.squad import read_squad

    path = tmp_path / "squad2.json"
    articles, _ = add_unanswerable(ARTICLES, rate=1.0, seed=0)
    path.write_text(json.dumps({"version": "v2.0", "data": articles}))
    examples, stats = read_squad(path, spacy.blank("en"))
    assert (stats.questions, stats.unanswerable, stats.questions_unaligned) == (5, 2, 0)
    assert "2 unanswerable" in stats.summary()
    negatives = [
        eg
        for eg in examples
        if eg.reference.spans["answers"].attrs["id"].endswith("-neg")
    ]
    assert len(negatives) == 2
    for eg in negatives:
        group = eg.reference.spans["answers"]
        assert len(group) == 0 and group.attrs["texts"] == []


def _threshold_case(seed):
    """A SQuAD 2.0 layout with 12 questions (6 answerable) and best answers
    with seeded "no answer" scores (ties included), some spans wrong, some
    partly right, one unanswerable question without a span."""
    import random

    rng = random.Random(seed)
    qas, answers = [], {}
    spans = ["Denver Broncos", "the Broncos of Denver", "Carolina", ""]
    for i in range(12):
        qid = f"q{i}"
        gold = ["Denver Broncos"] if i < 6 else []
        qas.append({"id": qid, "question": "?", "answers": [{"text": t} for t in gold]})
        answers[qid] = {
            "text": "" if i == 11 else rng.choice(spans),
            "no_answer_score": rng.choice([0.1, 0.2, 0.3, 0.5, 0.7, 0.9]),
        }
    data = {"data": [{"paragraphs": [{"context": "x", "qas": qas}]}]}
    return data, answers


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("drop", [None, 0.0, 10.0, 30.0, 100.0])
def test_choose_threshold_keeping_answers_matches_brute_force(seed, drop):
    """The constrained threshold is the best F1 among the thresholds whose
    HasAns F1 is within ``drop`` points of always answering's (every
    candidate scored by the official metric); None is the official best."""
    from spacy_attn.qa_eval.no_answer_eval import choose_threshold, score_at

    data, answers = _threshold_case(seed)
    forced = score_at(data, answers, float("inf"))["HasAns_f1"]
    scores = sorted({a["no_answer_score"] for a in answers.values()})
    results = [score_at(data, answers, t) for t in [scores[0] - 1.0, *scores]]
    chosen = score_at(
        data, answers, choose_threshold(data, answers, max_has_answer_drop=drop)
    )
    if drop is None:
        # The official threshold (the midpoint above it says "no answer" to
        # the same questions). With ties the official best_f1 can exceed
        # every threshold's F1: its sweep splits tied questions.
        official = score_at(data, answers, results[0]["best_f1_thresh"])
        assert chosen["f1"] == pytest.approx(official["f1"])
        return
    feasible = [r for r in results if r["HasAns_f1"] >= forced - drop - 1e-9]
    assert chosen["HasAns_f1"] >= forced - drop - 1e-9
    assert chosen["f1"] == pytest.approx(max(r["f1"] for r in feasible))


def test_choose_threshold_keeping_answers_gives_up_no_answers():
    """A case where the official best threshold refuses answerable questions:
    with a 0-point drop every answerable question keeps its span, and the
    F1 is lower (the price of keeping them)."""
    from spacy_attn.qa_eval.no_answer_eval import choose_threshold, score_at

    qas = [
        {"id": "a1", "question": "?", "answers": [{"text": "Paris"}]},
        {"id": "a2", "question": "?", "answers": [{"text": "Rome"}]},
        {"id": "u1", "question": "?", "answers": []},
        {"id": "u2", "question": "?", "answers": []},
    ]
    data = {"data": [{"paragraphs": [{"context": "x", "qas": qas}]}]}
    answers = {
        "a1": {"text": "Paris", "no_answer_score": 0.1},
        "a2": {"text": "Rome", "no_answer_score": 0.6},  # right, but unsure
        "u1": {"text": "Oslo", "no_answer_score": 0.5},
        "u2": {"text": "Bern", "no_answer_score": 0.4},
    }
    best = score_at(data, answers, choose_threshold(data, answers))
    assert (best["f1"], best["HasAns_f1"]) == (75.0, 50.0)  # a2 refused
    kept = score_at(
        data, answers, choose_threshold(data, answers, max_has_answer_drop=0.0)
    )
    assert (kept["f1"], kept["HasAns_f1"], kept["NoAns_f1"]) == (50.0, 100.0, 0.0)
    with pytest.raises(ValueError, match="0 or more"):
        choose_threshold(data, answers, max_has_answer_drop=-1.0)


def test_squad_corpus_v3_builds_unanswerable_questions(tmp_path):
    """SquadCorpus.v3 with build_unanswerable: a file of answerable questions
    also yields each one asked of another paragraph, with no gold answer;
    0.0 reads as v2 does."""
    import json

    import spacy
    from spacy.util import registry

    path = tmp_path / "train.json"
    path.write_text(json.dumps({"version": "1.1", "data": ARTICLES}))
    nlp = spacy.blank("en")

    def read(name, **settings):
        reader = registry.readers.get(name)(str(path), **settings)
        return [
            (eg.reference.text, len(eg.reference.spans["answers"]))
            for eg in reader(nlp)
        ]

    plain = read("spacy-attn.SquadCorpus.v2")
    assert read("spacy-attn.SquadCorpus.v3") == plain
    built = read("spacy-attn.SquadCorpus.v3", build_unanswerable=1.0)
    assert len(plain) == 3 and all(n == 1 for _, n in plain)
    # One copy per answerable question (b1's from another article's paragraph).
    assert len(built) == 6 and sum(1 for _, n in built if n == 0) == 3
    assert set(plain) < set(built)
    with pytest.raises(ValueError, match="build_unanswerable is a rate"):
        registry.readers.get("spacy-attn.SquadCorpus.v3")(
            str(path), build_unanswerable=2
        )
