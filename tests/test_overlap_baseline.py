"""The word-overlap baseline of span QA (spacy_attn.qa_eval.overlap_baseline):
which spans it may answer with, how it scores them, and where its figures
reach the QA reports."""

import pytest
from spacy.lang.en import English

from spacy_attn.lexical import STOP_WORDS
from spacy_attn.qa_eval.overlap_baseline import best_span, overlap_predictions


def squad(*rows):
    """A SQuAD-format "data" list: one paragraph per (id, question, context)."""
    return [
        {
            "title": "t",
            "paragraphs": [
                {"context": c, "qas": [{"id": q, "question": text, "answers": []}]}
                for q, text, c in rows
            ],
        }
    ]


def test_the_span_nearest_the_question_words_wins():
    context = (
        "Tom was born in Nairobi in 1990, and he loves chess, music and the "
        "quiet evenings by the lake."
    )
    answers = overlap_predictions(squad(("q", "Where was Tom born?", context)))
    # Nairobi is 2 tokens from "born" and 4 from "Tom"; 1990 is 4 and 6.
    assert answers == {"q": "Nairobi"}


def test_rare_question_words_weigh_more():
    """A span beside the once-named "Nile" ("Red") beats those beside the
    thrice-named "Kenya" ("river", "lake", "hill")."""
    context = "Kenya river. Kenya lake. Kenya hill. Red Nile."
    doc = English()(context)
    start, end = best_span(doc, ["kenya", "nile"], 0.5, 1)
    assert doc[start:end].text == "Red"


def test_answers_are_context_substrings_without_question_words():
    rows = [
        ("a", "Who founded the company in 1998?", "Larry Page and Sergey Brin "
         "founded Google in 1998 in a garage in Menlo Park, California."),
        ("b", "What is the capital of France?", "Paris is the capital and most "
         "populous city of France, on the Seine."),
        ("c", "When did the war end?", "The war ended in 1945; the treaty "
         "followed in 1947."),
    ]  # fmt: skip
    answers = overlap_predictions(squad(*rows), max_length=4)
    tokenizer = English().tokenizer
    for qid, question, context in rows:
        answer = answers[qid]
        assert answer and answer in context
        asked = {t.lower_ for t in tokenizer(question)} - STOP_WORDS
        words = [t.lower_ for t in tokenizer(answer)]
        assert not asked & set(words), (question, answer)
        assert len(words) <= 4
        # It starts and ends with a content word.
        assert words[0] not in STOP_WORDS and words[-1] not in STOP_WORDS


def test_no_candidate_gives_an_empty_answer():
    rows = [("a", "Who won?", ""), ("b", "Who won?", "the of and ."), ("c", "x", "won")]
    assert overlap_predictions(squad(*rows)) == {"a": "", "b": "", "c": "won"}


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="max_length must be >= 1"):
        overlap_predictions(squad(), max_length=0)
    with pytest.raises(ValueError, match="decay must be >= 0"):
        overlap_predictions(squad(), decay=-1)


def test_the_questions_punctuation_does_not_cut_spans():
    """A comma in the question does not keep "Paris, France" (2 tokens from
    "born" and from "1990") out."""
    doc = English()("Born in Paris, France in 1990.")
    question = ["in", "1990", ",", "where", "was", "he", "born", "?"]
    start, end = best_span(doc, question, 0.5, 3)
    assert doc[start:end].text == "Paris, France"
