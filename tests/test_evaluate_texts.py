"""`spacy attn evaluate` of a pipeline that classifies whole texts (spaCy's
textcat, attn_doc_embedder): spaCy's cats scores, accuracy, and the
majority class beside them, with the same check as for pairs."""

import json

import pytest
import spacy
from spacy.training import Example

from spacy_attn.cli import attn_cli
from spacy_attn.errors import CorpusFormatError
from spacy_attn.evaluation_texts import evaluate_texts, text_classifiers

from .test_cli import assert_one_line_error, invoke

BOW = {"@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": True}
BOW.update(ngram_size=1, no_output_layer=False, length=4096)
ROWS = [
    ("a good film", "pos"),
    ("good acting", "pos"),
    ("a bad film", "neg"),
    ("bad plot", "neg"),
    ("good good", "pos"),
    ("so good", "pos"),
]


def _textcat(rows, *, updates: int, factory: str = "textcat"):
    """A blank English pipeline with spaCy's bag-of-words textcat, trained
    ``updates`` times on the rows (0: only initialized)."""
    model = dict(BOW, exclusive_classes=factory == "textcat")
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={"model": model})
    examples = []
    for text, label in rows:
        cats = {"pos": float(label == "pos"), "neg": float(label == "neg")}
        examples.append(Example.from_dict(nlp.make_doc(text), {"cats": cats}))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(updates):
        nlp.update(examples, sgd=optimizer)
    return nlp


def _jsonl(path, rows):
    path.write_text(
        "".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in rows)
    )
    return path


def test_scores_are_the_models_and_the_majority_class(tmp_path):
    nlp = _textcat(ROWS, updates=20)
    scores = evaluate_texts(nlp, _jsonl(tmp_path / "test.jsonl", ROWS))
    # Accuracy: the top label of each text as the pipeline predicts it.
    top = [max(doc.cats, key=doc.cats.get) for doc in nlp.pipe(t for t, _ in ROWS)]
    right = sum(t == y for t, (_, y) in zip(top, ROWS))
    assert scores["cats_acc"] == right / len(ROWS)
    assert "cats_macro_f" in scores and "cats_score" in scores  # spaCy's own
    # Always 'pos' (4 of 6): its F1 is 2 * (4/6) / (1 + 4/6) = 0.8, neg's 0.
    majority = scores["baselines"]["majority class"]
    assert majority["cats_acc"] == pytest.approx(4 / 6)
    assert majority["cats_macro_f"] == pytest.approx(0.4)


def test_cli_prints_the_table_and_fails_below_the_majority_class(tmp_path):
    data = _jsonl(tmp_path / "test.jsonl", ROWS)
    trained, untrained = tmp_path / "trained", tmp_path / "untrained"
    _textcat(ROWS, updates=20).to_disk(trained)
    # Never updated: every text gets the same scores, so one label for all.
    _textcat(ROWS, updates=0).to_disk(untrained)
    out = tmp_path / "scores.json"
    result = invoke(
        attn_cli, ["evaluate", str(trained), str(data), "--output", str(out)]
    )
    saved = json.loads(out.read_text())
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["accuracy", "macro-F"]
    assert lines[1].split()[1] == f"{saved['cats_acc']:.4f}"
    assert lines[2].split()[-2:] == ["0.6667", "0.4000"]
    beaten = saved["cats_acc"] > 4 / 6 and saved["cats_macro_f"] > 0.4
    assert result.exit_code == (0 if beaten else 1), result.output
    result = invoke(attn_cli, ["evaluate", str(untrained), str(data)])
    assert_one_line_error(result, "does not beat the trivial baselines", "majority")


def test_labels_the_model_does_not_know(tmp_path):
    nlp = _textcat(ROWS, updates=0)
    path = tmp_path / "nlp"
    nlp.to_disk(path)
    data = _jsonl(
        tmp_path / "raw.jsonl", [(t, "1" if y == "pos" else "0") for t, y in ROWS]
    )
    result = invoke(attn_cli, ["evaluate", str(path), str(data)])
    assert_one_line_error(
        result, "labels the model does not know: ['0', '1']", "--label-map"
    )
    mapped = ["--label-map", '{"0": "neg", "1": "pos"}', "--no-check"]
    assert invoke(attn_cli, ["evaluate", str(path), str(data), *mapped]).exit_code == 0


def test_multi_label_textcat_is_refused():
    nlp = _textcat(ROWS, updates=0, factory="textcat_multilabel")
    assert len(text_classifiers(nlp)) == 1
    with pytest.raises(CorpusFormatError, match="one exclusive text classifier"):
        evaluate_texts(nlp, "unused.jsonl")  # type: ignore[arg-type]


def test_options_a_text_classifier_does_not_read_are_refused(tmp_path):
    path = tmp_path / "nlp"
    _textcat(ROWS, updates=0).to_disk(path)
    data = str(_jsonl(tmp_path / "test.jsonl", ROWS))
    pair_only = ["--positive-label", "pos", "--pair-key", "p", "--bm25-b", "0.5"]
    result = invoke(attn_cli, ["evaluate", str(path), data, *pair_only])
    assert_one_line_error(
        result, "--pair-key, --positive-label, --bm25-b: not read", "leave them out"
    )
    result = invoke(attn_cli, ["evaluate", str(path), data, "--group-col", "g"])
    assert_one_line_error(result, "--group-col / --id-col: not read")
    result = invoke(attn_cli, ["evaluate", str(path), data, "--text-cols", "a,b"])
    assert_one_line_error(result, "a doc task needs 1 text column, got ['a', 'b']")
    # Those it reads are accepted, and so is a pair option at its default.
    read = ["--limit", "4", "--batch-size", "2", "--bm25-b", "0.75", "--no-check"]
    assert invoke(attn_cli, ["evaluate", str(path), data, *read]).exit_code == 0


def test_options_a_squad_file_does_not_read_are_refused(tmp_path):
    from .test_qa_evaluate import squad_file

    data = str(squad_file(tmp_path / "test.json"))
    args = ["evaluate", str(tmp_path), data, "--label-map", '{"a": "b"}']
    assert_one_line_error(
        invoke(attn_cli, args),
        "--label-map: not read when evaluating a SQuAD JSON file",
        "only --limit, --batch-size, --gpu-id",
    )


def test_a_csv_with_its_own_column_names(tmp_path):
    """IMDB's csv as Kaggle ships it (review, sentiment): the columns named
    as for pairs; the scores are those of the same rows in jsonl."""
    import csv

    path = tmp_path / "nlp"
    _textcat(ROWS, updates=20).to_disk(path)
    table = tmp_path / "IMDB Dataset.csv"
    with open(table, "w", newline="", encoding="utf8") as f:
        csv.writer(f).writerows([("review", "sentiment"), *ROWS])
    named = ["--text-cols", "review", "--label-col", "sentiment", "--json"]
    result = invoke(attn_cli, ["evaluate", str(path), str(table), *named, "--no-check"])
    assert result.exit_code == 0, result.output
    jsonl = str(_jsonl(tmp_path / "test.jsonl", ROWS))
    same = invoke(attn_cli, ["evaluate", str(path), jsonl, "--json", "--no-check"])
    assert json.loads(result.stdout) == json.loads(same.stdout)
    # Unnamed, the text column is looked for as "text".
    result = invoke(attn_cli, ["evaluate", str(path), str(table)])
    assert_one_line_error(result, "no column for text 1 (looked for ['text']")
