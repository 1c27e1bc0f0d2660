"""benchmarks/qa_many_contexts.py: rows built the way the docs show them,
scored against the right paragraph, and a run through `spacy attn predict`."""

import json

import pytest
import spacy

from .test_span_qa_no_answer import v2_config
from .util import load_script, squad_dev

script = load_script("benchmarks/qa_many_contexts.py")


def test_rows_hide_the_right_paragraph_among_others():
    data = squad_dev()
    rows, others, keys = script.build_rows(
        data, n_questions=12, n_contexts=5, others="article", seed=0
    )
    again = script.build_rows(
        data, n_questions=12, n_contexts=5, others="article", seed=0
    )
    assert (rows, others, keys) == again
    paragraphs = {
        qa["id"]: (p["context"], a["paragraphs"])
        for a in data["data"]
        for p in a["paragraphs"]
        for qa in p["qas"]
    }
    places = set()
    for row, other, key in zip(rows, others, keys):
        own, article = paragraphs[row["id"]]
        assert len(row["contexts"]) == 5 and row["contexts"][key["own"]] == own
        assert own not in other["contexts"] and len(other["contexts"]) == 4
        assert set(other["contexts"]) < set(row["contexts"])
        assert set(row["contexts"]) <= {p["context"] for p in article}
        places.add(key["own"])
    # Shuffled: the right paragraph is not always in the same place.
    assert len(places) > 1


def test_score_counts_the_right_paragraph_and_no_answers():
    rows = [
        {
            "id": "a",
            "question": "Where does Tom live?",
            "contexts": ["Ann sings.", "Tom lives in Kenya."],
        },
        {
            "id": "b",
            "question": "Who sings?",
            "contexts": ["Ann sings.", "Tom lives in Kenya."],
        },
    ]
    keys = [{"gold": ["Kenya"], "own": 1}, {"gold": ["Ann"], "own": 0}]
    answered = [
        {"id": "a", "answers": [{"text": "Kenya", "context": 1, "no_answer": False}]},
        {"id": "b", "answers": [{"text": "", "context": None, "no_answer": True}]},
    ]
    unanswered = [
        {"id": "a", "answers": [{"text": "", "context": None, "no_answer": True}]},
        {"id": "b", "answers": [{"text": "Tom", "context": 0, "no_answer": False}]},
    ]
    s = script.score(rows, answered, unanswered, keys)
    assert s["top1_paragraph"] == 0.5 and s["top1_exact"] == 0.5
    assert s["top1_paragraph_when_answered"] == 1.0
    assert s["no_answer_when_answerable"] == 0.5 and s["no_answer_when_not"] == 0.5
    assert s["chance"] == 0.5
    # "tom", "live" -> the second context; "sings" -> the first (stop words out).
    assert s["word_overlap"] == 1.0


@pytest.mark.slow  # two `spacy attn predict` subprocesses
def test_script_runs_predict_as_a_user_does(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=v2_config())
    nlp.initialize()
    model = tmp_path / "model"
    nlp.to_disk(model)
    data = tmp_path / "data.json"
    data.write_text(json.dumps(squad_dev()))
    out = tmp_path / "out"
    args = [str(model), str(data), "--questions", "4", "--contexts", "3"]
    args += ["--out-dir", str(out), "--work-dir", str(tmp_path / "work")]
    try:
        script.main(args)
    except SystemExit as exit:  # an untrained model may lose to word overlap
        assert "word overlap" in str(exit)
    res = json.loads((out / "qa_many_contexts.json").read_text())["results"]
    s = res["scores"]
    assert s["questions"] == 4 and s["contexts_per_question"] == 3
    assert 0.0 <= s["top1_paragraph"] <= 1.0
    assert s["chance"] == pytest.approx(1 / 3)
    # The rows the user's command read, and its answers, one per row.
    answers = (tmp_path / "work/answerable.answers.jsonl").read_text().splitlines()
    assert len(answers) == 4
    md = (out / "qa_many_contexts.md").read_text()
    assert "word overlap" in md and "spacy attn predict" in md
