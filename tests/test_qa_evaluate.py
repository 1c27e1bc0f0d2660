"""`spacy attn evaluate` on a span-QA pipeline and a SQuAD file: the official
figures of the pipeline's own decisions, refusals of answerable questions
and the trivial baselines, from constructed candidates (not a trained
fixture's quality)."""

import json

import pytest
import spacy
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.qa_eval import pipeline_eval

QUESTIONS = [
    # id, question, context, gold answers ([]: unanswerable)
    ("q1", "Where does Tom live?", "Tom lives in Kenya.", ["Kenya"]),
    ("q2", "When was Ann born?", "Ann was born in 1990.", ["1990"]),
    ("q3", "Who plays?", "Bo plays chess well.", ["Bo"]),
    ("q4", "Where is Ann?", "Tom lives in Kenya.", []),
]
# What the fake reader says: best span text, and whether it refuses.
SAYS = {
    "Where does Tom live?": ("Kenya", False),  # right
    "When was Ann born?": ("born in", True),  # refuses an answerable question
    "Who plays?": ("chess", False),  # wrong span
    "Where is Ann?": ("Kenya", True),  # refuses rightly
}


def squad_file(path):
    articles = [
        {
            "title": "t",
            "paragraphs": [
                {
                    "context": context,
                    "qas": [
                        {
                            "id": qid,
                            "question": question,
                            "answers": [
                                {"text": t, "answer_start": context.index(t)}
                                for t in gold
                            ],
                        }
                    ],
                }
                for qid, question, context, gold in QUESTIONS
            ],
        }
    ]
    path.write_text(json.dumps({"version": "v2.0", "data": articles}))
    return path


def fake_candidates(nlp, pairs, **kwargs):
    out = []
    for question, _ in pairs:
        text, refuses = SAYS[question]
        answer = {"text": text, "probability": 0.5, "logit": 1.0}
        out.append({"answers": [answer], "no_answer_score": 0.5, "no_answer": refuses})
    return out


@pytest.fixture
def qa_model(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "attn_span_qa",
        config={"model": {"@architectures": "spacy-attn.DynamicCoattention.v3"}},
    )
    nlp.initialize()
    nlp.get_pipe("attn_span_qa").cfg["no_answer_threshold"] = 0.25
    nlp.to_disk(tmp_path / "model")
    return tmp_path / "model"


def test_evaluate_qa_scores_the_pipelines_decisions(qa_model, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline_eval, "pair_candidates", fake_candidates)
    data = squad_file(tmp_path / "test.json")
    # --no-check: the fake reader only ties with word overlap (below).
    result = CliRunner().invoke(
        attn_cli, ["evaluate", str(qa_model), str(data), "--json", "--no-check"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["has_answer"], report["no_answer"]) == (3, 1)
    assert report["threshold"] == 0.25 and report["scores_no_answer"]
    # q2 refused: 1 of 3 answerable questions.
    assert report["refused_answerable"] == pytest.approx(100 / 3)
    model = report["model"]
    # Right: q1 (exact) and q4 (refused rightly); q2 refused, q3 wrong.
    assert model["exact"] == pytest.approx(50.0)
    assert model["HasAns_exact"] == pytest.approx(100 / 3)
    assert model["NoAns_exact"] == pytest.approx(100.0)
    base = report["baselines"]
    assert base["always_no_answer"]["exact"] == pytest.approx(25.0)
    # Always answering: q1 right, q2's "born in" and q3 wrong, q4 answered.
    assert base["always_answers"]["exact"] == pytest.approx(25.0)
    assert base["always_answers"]["HasAns_exact"] == pytest.approx(100 / 3)
    assert base["always_answers"]["NoAns_exact"] == pytest.approx(0.0)
    # The first three words: "Tom lives in", "Ann was born", "Bo plays chess".
    assert base["first_words"]["exact"] == pytest.approx(0.0)
    # Word overlap: "lives" for q1 (beside "Tom"), "1990" for q2 (beside
    # "Ann ... born"), "Bo" for q3 (tied with "chess", the earlier wins), and
    # an answer to the unanswerable q4: 2 of 4 right, as many as the reader.
    assert base["word_overlap"]["exact"] == pytest.approx(50.0)
    assert base["word_overlap"]["HasAns_exact"] == pytest.approx(200 / 3)
    result = CliRunner().invoke(attn_cli, ["evaluate", str(qa_model), str(data)])
    assert result.exit_code == 1
    assert "does not beat word overlap on F1 (50.0 vs 50.0)" in result.output


def test_limit_scores_the_first_questions(qa_model, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline_eval, "pair_candidates", fake_candidates)
    data = str(squad_file(tmp_path / "test.json"))
    args = ["evaluate", str(qa_model), data, "--json", "--no-check", "--limit", "2"]
    result = CliRunner().invoke(attn_cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # q1 answered rightly, q2 refused although answerable: the file's first two.
    assert (report["questions"], report["has_answer"]) == (2, 2)
    assert "Scored 2 questions (2 answerable, 0 unanswerable)." in result.stderr
    assert report["model"]["exact"] == pytest.approx(50.0)
    assert report["refused_answerable"] == pytest.approx(50.0)


def test_evaluate_qa_fails_below_a_baseline(qa_model, tmp_path, monkeypatch):
    def refuse_all(nlp, pairs, **kwargs):
        return [
            {"answers": [{"text": "x"}], "no_answer_score": 0.9, "no_answer": True}
            for _ in pairs
        ]

    monkeypatch.setattr(pipeline_eval, "pair_candidates", refuse_all)
    data = squad_file(tmp_path / "test.json")
    result = CliRunner().invoke(attn_cli, ["evaluate", str(qa_model), str(data)])
    assert result.exit_code == 1
    assert "always no answer" in result.stdout
    assert (
        '"No answer" (threshold 0.2500) to 100.0% of the 3 answerable' in result.stdout
    )
    assert "does not beat always no answer on F1" in result.output
    result = CliRunner().invoke(
        attn_cli, ["evaluate", str(qa_model), str(data), "--no-check"]
    )
    assert result.exit_code == 0


def test_a_json_file_for_a_pair_pipeline_says_what_json_is(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier")
    nlp.to_disk(tmp_path / "pairs")
    data = squad_file(tmp_path / "test.json")
    result = CliRunner().invoke(
        attn_cli, ["evaluate", str(tmp_path / "pairs"), str(data)]
    )
    assert result.exit_code == 1
    assert "a .json file is read as SQuAD questions" in result.output
    assert "jsonl, csv, tsv or .spacy" in result.output
