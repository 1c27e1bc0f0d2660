"""Distillation: the teacher-student loss and its gradient, the mix with the
gold label, the transfer-set reader and augmenter, the pipe's ``distill``
and ``spacy attn distill`` from a teacher to a loadable student."""

import json

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import fix_random_seed
from typer.testing import CliRunner

from spacy_attn import make_pair
from spacy_attn.cli import attn_cli
from spacy_attn.distill import (
    MASK_TOKEN,
    Augmenter,
    AugmentSettings,
    TransferRow,
    transfer_set,
)
from spacy_attn.errors import CorpusFormatError
from spacy_attn.pipeline.distill_loss import (
    TEACHER_KEY,
    DistillSettings,
    set_teacher_target,
    teacher_student_loss,
)
from spacy_attn.readers import create_distill_corpus_reader

from .util import add_random_vectors, make_examples, pair_config, snli_rows

LABELS = ["contradiction", "entailment", "neutral"]


def run(*args):
    return CliRunner().invoke(attn_cli, [str(a) for a in args])


def _probs(z, multi_label):
    if multi_label:
        return 1 / (1 + numpy.exp(-z))
    e = numpy.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.mark.parametrize("multi_label", [False, True])
@pytest.mark.parametrize("loss", ["kl", "mse"])
def test_teacher_loss_gradient_is_the_logits_gradient(loss, multi_label):
    rng = numpy.random.default_rng(0)
    z = rng.normal(size=(3, 4))
    t = numpy.asarray([[1.0], [2.0], [0.5]])
    if multi_label:
        q = rng.uniform(0.05, 0.95, size=(3, 4))
    else:
        q = rng.dirichlet(numpy.ones(4), size=3)
    _, d = teacher_student_loss(
        q, _probs(z, multi_label), t, numpy, loss=loss, multi_label=multi_label
    )
    h = 1e-6
    for i in range(3):
        for j in range(4):
            up, down = z.copy(), z.copy()
            up[i, j] += h
            down[i, j] -= h
            f_up = teacher_student_loss(
                q, _probs(up, multi_label), t, numpy, loss=loss, multi_label=multi_label
            )[0][i]
            f_down = teacher_student_loss(
                q,
                _probs(down, multi_label),
                t,
                numpy,
                loss=loss,
                multi_label=multi_label,
            )[0][i]
            assert (f_up - f_down) / (2 * h) == pytest.approx(d[i, j], abs=1e-6)


def test_teacher_loss_is_zero_where_the_student_agrees():
    q = numpy.asarray([[0.7, 0.2, 0.1]])
    losses, d = teacher_student_loss(q, q.copy(), 2.0, numpy)
    assert losses[0] == pytest.approx(0.0, abs=1e-6)
    assert numpy.abs(d).max() < 1e-6
    losses, _ = teacher_student_loss(q, numpy.asarray([[0.1, 0.2, 0.7]]), 2.0, numpy)
    assert losses[0] > 0.1


def test_settings_are_checked():
    with pytest.raises(ValueError, match="temperature"):
        DistillSettings(temperature=0)
    with pytest.raises(ValueError, match="gold_weight"):
        DistillSettings(gold_weight=1.5)
    with pytest.raises(ValueError, match="loss"):
        DistillSettings(loss="l1")


@pytest.fixture
def student():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config(hidden=16))
    examples = make_examples(nlp, snli_rows(16))
    nlp.initialize(lambda: examples)
    return nlp, examples


def _taught(examples, cats, settings):
    out = []
    for eg in examples:
        ref = eg.reference.copy()
        set_teacher_target(ref.user_data, cats, settings)
        out.append(Example(eg.predicted.copy(), ref))
    return out


def test_gold_weight_one_is_the_gold_loss(student):
    nlp, examples = student
    pipe = nlp.get_pipe("attn_pair_classifier")
    docs = [eg.predicted for eg in examples]
    scores = pipe.model.predict(docs)
    gold_loss, gold_d = pipe.get_loss(examples, scores)
    teacher = dict(zip(pipe.labels, [0.2, 0.3, 0.5]))
    taught = _taught(examples, teacher, DistillSettings(2.0, 1.0, "kl"))
    loss, d = pipe.get_loss(taught, scores)
    assert loss == pytest.approx(gold_loss, rel=1e-5)
    numpy.testing.assert_allclose(d, gold_d, rtol=1e-5, atol=1e-7)


def test_gold_weight_zero_ignores_the_gold_label(student):
    nlp, examples = student
    pipe = nlp.get_pipe("attn_pair_classifier")
    scores = pipe.model.predict([eg.predicted for eg in examples])
    q = numpy.asarray([0.2, 0.3, 0.5], dtype="float32")
    taught = _taught(
        examples, dict(zip(pipe.labels, q)), DistillSettings(2.0, 0.0, "kl")
    )
    loss, d = pipe.get_loss(taught, scores)
    losses, d_rows = teacher_student_loss(
        numpy.tile(q, (len(examples), 1)), scores, 2.0, numpy
    )
    assert loss == pytest.approx(float(losses.mean()), rel=1e-5)
    numpy.testing.assert_allclose(d, d_rows / len(examples), rtol=1e-4, atol=1e-7)
    # The gold labels differ between examples; the loss does not see them.
    swapped = _taught(
        examples[::-1], dict(zip(pipe.labels, q)), DistillSettings(2.0, 0.0, "kl")
    )
    for eg, other in zip(taught, swapped):
        other.reference.cats = eg.reference.cats
    assert pipe.get_loss(swapped[::-1], scores)[0] == pytest.approx(loss, rel=1e-5)


def test_teacher_labels_must_be_the_students(student):
    nlp, examples = student
    pipe = nlp.get_pipe("attn_pair_classifier")
    scores = pipe.model.predict([eg.predicted for eg in examples])
    taught = _taught(examples, {"yes": 0.6, "no": 0.4}, DistillSettings())
    with pytest.raises(ValueError, match="a teacher must set the student's labels"):
        pipe.get_loss(taught, scores)


def test_distill_moves_the_student_towards_the_teacher(student):
    nlp, examples = student
    fix_random_seed(1)
    teacher = spacy.blank("en")
    teacher.add_pipe("attn_pair_classifier", config=pair_config(hidden=8))
    teacher.initialize(lambda: make_examples(teacher, snli_rows(16)))
    t_pipe, s_pipe = (
        teacher.get_pipe("attn_pair_classifier"),
        nlp.get_pipe("attn_pair_classifier"),
    )
    refs = [eg.reference for eg in examples]

    def gap():
        q = t_pipe.predict(refs)[
            :, [t_pipe.labels.index(label) for label in s_pipe.labels]
        ]
        p = s_pipe.predict(refs)
        return float(numpy.abs(q - p).sum())

    before = gap()
    optimizer = nlp.resume_training()
    for _ in range(30):
        losses = s_pipe.distill(t_pipe, examples, sgd=optimizer)
    assert losses["attn_pair_classifier"] > 0
    assert gap() < before / 2


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_reader_puts_the_teacher_in_user_data(tmp_path):
    path = tmp_path / "transfer.jsonl"
    _write(path, [
        {"first": "A dog runs.", "second": "An animal moves.", "cats": {"entailment": 1.0},
         "teacher": {"entailment": 0.9, "neutral": 0.1}, "source": "train"},
        {"text": "A fine film.", "cats": {}, "teacher": {"pos": 0.8, "neg": 0.2}},
    ])  # fmt: skip
    reader = create_distill_corpus_reader(path, temperature=3.0, gold_weight=0.5)
    nlp = spacy.blank("en")
    pair, single = list(reader(nlp))
    assert pair.reference.cats == {"entailment": 1.0}
    assert pair.predicted.cats == {}
    entry = pair.reference.user_data[TEACHER_KEY]
    assert entry["cats"] == {"entailment": 0.9, "neutral": 0.1}
    assert entry["settings"] == {"temperature": 3.0, "gold_weight": 0.5, "loss": "kl"}
    assert single.reference.text == "A fine film."


def test_the_reader_names_a_bad_line(tmp_path):
    path = tmp_path / "transfer.jsonl"
    _write(
        path,
        [
            {"first": "a", "second": "b", "teacher": {"x": 1.0}},
            {"first": "a", "second": "b"},
        ],
    )
    with pytest.raises(
        CorpusFormatError, match=r"transfer.jsonl:2: no \"teacher\" cats"
    ):
        list(create_distill_corpus_reader(path)(spacy.blank("en")))


def test_augmented_copies_mask_replace_and_cut():
    nlp = spacy.blank("en")
    texts = ["the small dog runs in the green park", "a tall man reads an old book"]
    add_random_vectors(nlp, texts + ["tiny hound sprints"])
    rows = [TransferRow((texts[0], texts[1]), {"neutral": 1.0})]
    settings = AugmentSettings(copies=6, mask=0.3, replace=0.3, ngram=0.0, seed=3)
    copies = list(Augmenter(nlp, settings).copies(rows))
    assert 1 <= len(copies) <= 6
    assert all(c.source == "augmented" and c.cats == {} for c in copies)
    words = {w for c in copies for text in c.texts for w in text.split()}
    assert MASK_TOKEN in words
    # Replacements come from the vectors' words, never invented.
    known = {w for t in texts + ["tiny hound sprints"] for w in t.split()} | {
        MASK_TOKEN
    }
    assert words <= known
    assert words - {MASK_TOKEN} - set(" ".join(texts).split())  # some replaced
    again = list(Augmenter(nlp, settings).copies(rows))
    assert [c.texts for c in again] == [c.texts for c in copies]
    cut = AugmentSettings(copies=5, mask=0.0, replace=0.0, ngram=1.0, seed=0)
    for c in Augmenter(nlp, cut).copies(rows):
        assert all(1 <= len(t.split()) <= 5 for t in c.texts)


def test_transfer_set_keeps_train_rows_first_and_drops_duplicates():
    train = [TransferRow(("a b", "c"), {"x": 1.0}), TransferRow(("d", "e"), {"y": 1.0})]
    extra = [
        TransferRow(("a b", "c"), {}, "unlabelled"),
        TransferRow(("f", "g"), {}, "unlabelled"),
    ]
    rows = transfer_set(train, unlabelled=extra)
    assert [r.texts for r in rows] == [("a b", "c"), ("d", "e"), ("f", "g")]
    assert rows[0].cats == {"x": 1.0}


@pytest.fixture(scope="module")
def trained_teacher(tmp_path_factory):
    """A teacher trained on 60 SICK pairs for a few steps, and the files."""
    import gzip

    from .util import REPO

    tmp = tmp_path_factory.mktemp("distill")
    rows = [
        json.loads(line)
        for line in gzip.open(REPO / "tests/fixtures/sick_train.jsonl.gz", "rt")
    ]
    _write(tmp / "train.jsonl", rows[:60])
    _write(tmp / "dev.jsonl", rows[60:90])
    _write(
        tmp / "more.jsonl",
        [
            {"premise": r["premise"], "hypothesis": r["hypothesis"]}
            for r in rows[90:110]
        ],
    )
    assert run("init-config", tmp / "student.cfg").exit_code == 0
    from spacy.cli.train import train

    train(tmp / "student.cfg", tmp / "teacher", overrides={
        "paths.train": str(tmp / "train.jsonl"), "paths.dev": str(tmp / "dev.jsonl"),
        "training.max_steps": 10, "training.eval_frequency": 5})  # fmt: skip
    return tmp


def test_distill_command_trains_a_loadable_student(trained_teacher):
    tmp = trained_teacher
    args = ["distill", tmp / "teacher" / "model-best", tmp / "student.cfg", "--output", tmp / "out",
            "--paths.train", tmp / "train.jsonl", "--paths.dev", tmp / "dev.jsonl",
            "--training.max_steps", "6", "--training.eval_frequency", "3",
            "--augment", "2", "--unlabelled", tmp / "more.jsonl", "--no-progress"]  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.output
    transfer = [
        json.loads(line) for line in (tmp / "out/transfer/transfer.jsonl").open()
    ]
    sources = [r["source"] for r in transfer]
    assert sources[:60] == ["train"] * 60
    train_pairs = {(r["first"], r["second"]) for r in transfer[:60]}
    more = [json.loads(line) for line in (tmp / "more.jsonl").open()]
    new = {(r["premise"], r["hypothesis"]) for r in more} - train_pairs
    assert new and sources.count("unlabelled") == len(new)
    assert 60 < sources.count("augmented") <= 120
    teacher = spacy.load(tmp / "teacher" / "model-best")
    first = transfer[0]
    doc = teacher(make_pair(teacher, first["first"], first["second"]))
    assert first["teacher"] == pytest.approx(doc.cats, abs=1e-5)
    config = spacy.util.load_config(tmp / "out" / "config.cfg")
    assert config["corpora"]["train"]["@readers"] == "spacy-attn.DistillCorpus.v1"
    student = spacy.load(tmp / "out" / "model-best")
    assert set(
        student(make_pair(student, "A man sings.", "A person sings.")).cats
    ) == set(LABELS)
    # Again: the teacher's scores are kept, not predicted again.
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "teacher: 0 rows labelled" in result.output
    assert f"{len(transfer):,} kept" in result.output


def test_distill_command_refuses_a_teacher_with_other_labels(trained_teacher, tmp_path):
    tmp = trained_teacher
    binary = tmp_path / "binary.jsonl"
    _write(
        binary,
        [
            {"premise": "a", "hypothesis": "b", "label": lab}
            for lab in ("yes", "no") * 4
        ],
    )
    result = run(
        "distill", tmp / "teacher" / "model-best", tmp / "student.cfg",
        "--output", tmp_path / "out", "--paths.train", binary,
        "--paths.dev", binary, "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "a teacher must set the student's labels" in result.output


def test_the_teacher_cache_key_ignores_how_bytes_are_serialized(student, monkeypatch):
    """A spacy-transformers model serializes differently in each process;
    the model hash that resumes the teacher's pass reads the weights."""
    import os

    from thinc.shims import PyTorchShim

    from spacy_attn.batch import Predictor

    nlp, _ = student
    monkeypatch.setattr(PyTorchShim, "to_bytes", lambda self: os.urandom(16))
    first = Predictor(nlp).model_hash()
    assert Predictor(nlp).model_hash() == first
    module = next(
        shim._model
        for node in nlp.get_pipe("attn_pair_classifier").model.walk()
        for shim in node.shims
    )
    param = next(iter(module.parameters()))
    with __import__("torch").no_grad():
        param.add_(1.0)
    assert Predictor(nlp).model_hash() != first


def test_the_doc_classifier_learns_from_text_rows(tmp_path):
    """attn_doc_embedder's classifier learns from a transfer set of texts:
    with the gold label ignored (gold weight 0), it moves to the teacher."""
    from .test_doc_embedder import textcat_model
    from .util import rt_texts

    texts = [text for text, _ in rt_texts(16)]
    path = tmp_path / "transfer.jsonl"
    # The teacher says "neg" for everything; the gold says "pos".
    _write(path, [{"text": t, "cats": {"pos": 1.0, "neg": 0.0},
                   "teacher": {"pos": 0.05, "neg": 0.95}} for t in texts])  # fmt: skip
    fix_random_seed(0)
    nlp = spacy.blank("en")
    add_random_vectors(nlp, texts)
    pipe = nlp.add_pipe("attn_doc_embedder", config={"model": textcat_model()})
    examples = list(create_distill_corpus_reader(path, gold_weight=0.0)(nlp))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)
    scores, _ = pipe.predict([eg.predicted for eg in examples])
    neg = pipe.labels.index("neg")
    assert float(numpy.asarray(scores)[:, neg].mean()) > 0.8


def test_unlabelled_cols_errors_name_the_option(trained_teacher):
    """An --unlabelled file whose columns are not found names --unlabelled-cols,
    the option of its columns, not --text-cols; no output is written."""
    tmp = trained_teacher
    _write(tmp / "odd.jsonl", [{"a": "A man sleeps.", "b": "A person rests."}])
    args = ["distill", tmp / "teacher" / "model-best", tmp / "student.cfg",
            "--output", tmp / "odd_out", "--paths.train", tmp / "train.jsonl",
            "--paths.dev", tmp / "dev.jsonl",
            "--unlabelled", tmp / "odd.jsonl", "--no-progress"]  # fmt: skip
    result = run(*args)
    assert result.exit_code == 1, result.output
    assert "name it with --unlabelled-cols" in result.output
    assert "--text-cols" not in result.output
    assert not (tmp / "odd_out" / "transfer").exists()
