"""``init-config --init-from``: a config that starts from a trained pipeline
(spaCy's ``source``): its weights, labels and vectors, the user's columns
and label map in the readers, one-line errors when the labels or the
component do not fit."""

import json
import shutil

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import load_config, load_model_from_config
from thinc.api import fix_random_seed
from typer.testing import CliRunner

from spacy_attn import make_pair
from spacy_attn.cli import attn_cli
from spacy_attn.readers import cats_for

COLS = ["--text-cols", "question,sentence", "--group-col", "question_id"]
ROWS = [
    ("Who wrote it?", "Ann wrote it.", "yes"),
    ("Who wrote it?", "It rained.", "no"),
    ("Where is it?", "It is in Paris.", "yes"),
    ("Where is it?", "Birds fly.", "no"),
]


def run(*args):
    return CliRunner().invoke(attn_cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A small binary pair pipeline (labels yes / no), initialized and saved."""
    tmp = tmp_path_factory.mktemp("start")
    cfg = tmp / "start.cfg"
    assert (
        run("init-config", cfg, "--binary", "--positive-label", "yes", *COLS).exit_code
        == 0
    )
    fix_random_seed(0)
    nlp = load_model_from_config(load_config(cfg), auto_fill=True)
    examples = []
    for question, sentence, label in ROWS:
        doc = make_pair(nlp, question, sentence)
        ref = doc.copy()
        ref.cats = cats_for(label, "yes")
        examples.append(Example(doc, ref))
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp / "model")
    return tmp / "model"


def test_the_config_sources_the_start(start, tmp_path):
    cfg = tmp_path / "ft.cfg"
    mapping = '{"1": "yes", "0": "no"}'
    result = run(
        "init-config", cfg, "--binary", "--positive-label", "yes", *COLS,
        "--label-col", "answer", "--init-from", start, "--label-map", mapping,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = cfg.read_text()
    assert f"Starts from {start}" in text and "--init-from" in text
    config = load_config(cfg)
    assert config["components"]["attn_pair_classifier"] == {"source": str(start)}
    for split in ("train", "dev"):
        reader = config["corpora"][split]
        assert reader["label_map"] == {"1": "yes", "0": "no"}
        assert reader["text_cols"] == ["question", "sentence"]
    # Built from the config, the component is the start's: same weights and
    # labels (spaCy does not initialize a sourced component again).
    nlp = load_model_from_config(config, auto_fill=True)
    original = spacy.load(start)
    ours = nlp.get_pipe("attn_pair_classifier")
    theirs = original.get_pipe("attn_pair_classifier")
    assert ours.labels == theirs.labels and ours.positive_label == "yes"
    assert ours.model.to_bytes() == theirs.model.to_bytes()
    docs = [make_pair(nlp, q, s) for q, s, _ in ROWS]
    numpy.testing.assert_array_equal(ours.predict(docs), theirs.predict(docs))


def test_labels_and_components_that_do_not_fit(start, tmp_path):
    cfg = tmp_path / "x.cfg"
    base = ["init-config", cfg, "--binary", *COLS, "--init-from", start]
    result = run(*base, "--positive-label", "1")
    assert (
        result.exit_code == 1
        and "the start's labels are ['yes', 'no'], not ['1']" in result.output
    )
    assert "--label-map" in result.output and "Traceback" not in result.output
    result = run(*base, "--positive-label", "yes", "--label-map", '{"1": "maybe"}')
    assert result.exit_code == 1 and "not ['maybe']" in result.output
    result = run("init-config", cfg, "--task", "qa", "--init-from", start)
    assert result.exit_code == 1 and "needs one attn_span_qa component" in result.output
    result = run(*base[:-2], "--positive-label", "yes", "--label-map", '{"1": "yes"}')
    assert (
        result.exit_code == 1
        and "--label-map: an option of --init-from" in result.output
    )
    result = run(*base[:-1], tmp_path / "nowhere")
    assert result.exit_code == 1 and "--init-from" in result.output
    assert "Traceback" not in result.output


def test_a_ranking_start_needs_groups_or_a_new_head(start, tmp_path):
    """The start ranks groups (MAP scorer): a file without a group column is
    told at init-config, not at training's first evaluation."""
    cfg = tmp_path / "x.cfg"
    base = ["init-config", cfg, "--binary", "--positive-label", "yes"]
    plain = [*base, "--init-from", start, "--label-map", '{"1": "yes", "0": "no"}']
    result = run(*plain)
    assert result.exit_code == 1 and not cfg.exists()
    assert "pair_ranking_scorer.v1" in result.output and "--group-col" in result.output
    assert "--new-head" in result.output and "Traceback" not in result.output
    # Either way on works.
    assert run(*plain, "--group-col", "question_id").exit_code == 0
    result = run(*base, "--init-from", start, "--new-head")
    assert result.exit_code == 0, result.output


def _qa_start(tmp_path, *flags):
    """A span-QA pipeline initialized on two fixture questions, saved in
    ``tmp_path / "qa_start"``; its quickstart config in ``tmp_path / "qa.cfg"``."""
    from .util import initialized_qa

    cfg = tmp_path / "qa.cfg"
    assert run("init-config", cfg, "--task", "qa", *flags).exit_code == 0
    nlp, _ = initialized_qa(cfg)
    nlp.to_disk(tmp_path / "qa_start")
    return nlp, cfg


def test_a_qa_pipeline_is_a_start_too(tmp_path):
    """The same option for span QA: the config sources attn_span_qa (its
    weights, and its "no answer" settings) from a trained QA pipeline."""
    nlp, cfg = _qa_start(tmp_path, "--no-answer")
    result = run(
        "init-config",
        tmp_path / "ft.cfg",
        "--task",
        "qa",
        "--init-from",
        tmp_path / "qa_start",
    )
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "ft.cfg")
    assert config["components"] == {
        "attn_span_qa": {"source": str(tmp_path / "qa_start")}
    }
    tuned = load_model_from_config(config, auto_fill=True).get_pipe("attn_span_qa")
    assert tuned.model.to_bytes() == nlp.get_pipe("attn_span_qa").model.to_bytes()
    assert tuned.scores_no_answer
    # Training settings for a few hundred questions, not SQuAD's from-scratch
    # ones; the next step (the threshold on the user's dev) in the header.
    from spacy_attn.quickstart.start import QA_BUILT_UNANSWERABLE, QA_FINE_TUNING

    # Questions asked of a paragraph without their answer, in both readers,
    # so a start that scores "no answer" keeps learning when to say it.
    for split, rate in QA_BUILT_UNANSWERABLE.items():
        reader = config["corpora"][split]
        assert reader["@readers"] == "spacy-attn.SquadCorpus.v4"
        assert reader["build_unanswerable"] == rate > 0
    training = config["training"]
    for key in ("max_steps", "eval_frequency", "patience"):
        assert training[key] == QA_FINE_TUNING[key]
    assert training["optimizer"]["learn_rate"] == QA_FINE_TUNING["learn_rate"]
    scratch = load_config(cfg)["training"]
    assert scratch["max_steps"] != QA_FINE_TUNING["max_steps"]
    header = (tmp_path / "ft.cfg").read_text().split("\n\n")[0]
    assert "qa-threshold training/model-best DEV" in header
    assert "--build-unanswerable" in header
    assert "build_unanswerable" in header


def test_a_qa_start_that_always_answers_builds_no_unanswerable(tmp_path):
    """A SQuAD 1.1 start (no "no answer" score) keeps the quickstart's
    readers and has no threshold step; the fine-tuning settings are set."""
    from spacy_attn.quickstart.start import QA_FINE_TUNING

    _qa_start(tmp_path)
    result = run(
        "init-config", tmp_path / "ft.cfg", "--task", "qa",
        "--init-from", tmp_path / "qa_start",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "ft.cfg")
    quickstart = load_config(tmp_path / "qa.cfg")
    assert config["corpora"] == quickstart["corpora"]
    assert config["training"]["max_steps"] == QA_FINE_TUNING["max_steps"]
    header = (tmp_path / "ft.cfg").read_text().split("\n\n")[0]
    assert "qa-threshold" not in header and "build_unanswerable" not in header


def test_a_new_head_keeps_every_other_weight(start, tmp_path):
    """``--new-head``: the component is built for the user's own labels (3
    here, the start has 2) with the start's model settings; at
    [initialize] (as `spacy train` runs it) every weight but the output
    layer's is the start's."""
    from spacy.training.initialize import init_nlp

    from spacy_attn.start_weights import named_weights

    rows = [
        {"premise": f"{a} sings.", "hypothesis": f"{a} {w} sings.", "label": label}
        for a in ("Ann", "Ben", "Cy")
        for w, label in (
            ("surely", "entails"),
            ("never", "contradicts"),
            ("maybe", "neutral"),
        )
    ]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "nh.cfg"
    result = run("init-config", cfg, "--init-from", start, "--new-head")
    assert result.exit_code == 0, result.output
    config = load_config(
        cfg, overrides={"paths.train": str(data), "paths.dev": str(data)}
    )
    block = config["components"]["attn_pair_classifier"]
    assert "source" not in block and block["model"]["nO"] is None
    assert config["initialize"]["after_init"]["path"] == str(start)
    nlp = init_nlp(config)
    tuned = nlp.get_pipe("attn_pair_classifier")
    assert sorted(tuned.labels) == ["contradicts", "entails", "neutral"]
    theirs = {
        (k, n): v
        for k, n, v in named_weights(
            spacy.load(start).get_pipe("attn_pair_classifier").model
        )
    }
    same = other = 0
    for key, name, value in named_weights(tuned.model):
        start_value = theirs[(key, name)]
        if "pair_output" in key:
            assert tuple(value.shape) != tuple(start_value.shape)  # 3 labels, not 2
            other += 1
        else:
            assert numpy.array_equal(
                numpy.asarray(value), numpy.asarray(start_value)
            ), key
            same += 1
    assert same > 10 and other == 2
    result = run(
        "init-config",
        tmp_path / "x.cfg",
        "--task",
        "qa",
        "--init-from",
        start,
        "--new-head",
    )
    assert result.exit_code == 1 and "--new-head: a pair task option" in result.output
    result = run("init-config", tmp_path / "x.cfg", "--new-head")
    assert (
        result.exit_code == 1
        and "--new-head: an option of --init-from" in result.output
    )


def test_a_new_head_with_lexical_features_keeps_every_other_weight(start, tmp_path):
    """``--new-head --lexical-features`` on a v4 start: the model becomes
    spacy-attn.DecomposableAttention.v6 without IDF features (what v5
    computes) with its other settings the start's;
    at [initialize] every weight but the (wider) output layer's is the
    start's, as the overlap measures hold none."""
    from spacy.training.initialize import init_nlp

    from spacy_attn.models.decomposable_attention import N_LEXICAL
    from spacy_attn.start_weights import named_weights

    rows = [
        {"premise": f"{a} sings.", "hypothesis": f"{a} {w} sings.", "label": label}
        for a in ("Ann", "Ben")
        for w, label in (("surely", "1"), ("never", "0"))
    ]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "lf.cfg"
    result = run(
        "init-config", cfg, "--binary", "--positive-label", "1",
        "--init-from", start, "--new-head", "--lexical-features",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = cfg.read_text()
    assert "--new-head --lexical-features` (spacy-attn" in text
    config = load_config(
        cfg, overrides={"paths.train": str(data), "paths.dev": str(data)}
    )
    model = config["components"]["attn_pair_classifier"]["model"]
    assert_lexical_model(model)
    theirs_model = spacy.load(start).get_pipe("attn_pair_classifier").model
    nlp = init_nlp(config)
    tuned = nlp.get_pipe("attn_pair_classifier").model
    hidden = theirs_model.get_ref("output_layer").get_dim("nI")
    assert tuned.get_ref("output_layer").get_dim("nI") == hidden + N_LEXICAL
    theirs = {(k, n): v for k, n, v in named_weights(theirs_model)}
    same = 0
    for key, name, value in named_weights(tuned):
        if "pair_output" in key:
            continue
        assert numpy.array_equal(
            numpy.asarray(value), numpy.asarray(theirs[(key, name)])
        ), key
        same += 1
    assert same > 10


def test_lexical_features_options_that_do_not_fit(start, tmp_path):
    result = run(
        "init-config", tmp_path / "a.cfg", "--binary", "--positive-label", "yes",
        *COLS, "--init-from", start, "--lexical-features",
    )  # fmt: skip
    assert result.exit_code == 1 and "needs --new-head" in result.output
    result = run(
        "init-config", tmp_path / "b.cfg", "--task", "doc", "--lexical-features"
    )
    assert result.exit_code == 1 and "a pair task option" in result.output
    assert "Traceback" not in result.output
    # Without a start: the quickstart's model, v6 with the overlap alone.
    cfg = tmp_path / "c.cfg"
    result = run("init-config", cfg, "--binary", "--lexical-features")
    assert result.exit_code == 0, result.output
    model = load_config(cfg)["components"]["attn_pair_classifier"]["model"]
    assert_lexical_model(model)
    assert "DecomposableAttention.v6 with lexical_features" in cfg.read_text()


def assert_lexical_model(model):
    """What --lexical-features writes: v6 computing what v5 computed (the
    overlap measures, no IDF features), every v6 setting written."""
    assert model["@architectures"] == "spacy-attn.DecomposableAttention.v6"
    assert model["lexical_features"] is True
    assert model["idf_features"] is False
    assert (model["bm25_k1"], model["bm25_b"]) == (1.2, 0.75)


def _start_trained_at(start, tmp_path, learn_rate):
    """A copy of ``start`` whose config says it was trained at ``learn_rate``
    (as a transformer start is, at 5e-5)."""
    copied = tmp_path / "start_lr"
    shutil.copytree(start, copied)
    config = load_config(copied / "config.cfg")
    config["training"]["optimizer"]["learn_rate"] = learn_rate
    config.to_disk(copied / "config.cfg")
    return copied


@pytest.mark.parametrize("new_head", [False, True])
def test_fine_tuning_keeps_the_starts_optimizer(start, tmp_path, new_head):
    copied = _start_trained_at(start, tmp_path, 5e-05)
    cfg = tmp_path / "ft.cfg"
    flags = ["--new-head"] if new_head else []
    result = run(
        "init-config", cfg, "--binary", "--positive-label", "yes", *COLS,
        "--init-from", copied, *flags,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = load_config(cfg)["training"]["optimizer"]
    assert written == load_config(copied / "config.cfg")["training"]["optimizer"]
    assert written["learn_rate"] == 5e-05


def test_qa_fine_tuning_never_outpaces_the_starts_rate(tmp_path):
    """QA fine-tuning's measured rate is capped at the start's own, and the
    header states the rate the config holds."""
    _qa_start(tmp_path)
    start = _start_trained_at(tmp_path / "qa_start", tmp_path, 5e-05)
    cfg = tmp_path / "ft.cfg"
    result = run("init-config", cfg, "--task", "qa", "--init-from", start)
    assert result.exit_code == 0, result.output
    assert load_config(cfg)["training"]["optimizer"]["learn_rate"] == 5e-05
    header = cfg.read_text().split("\n\n")[0]
    assert "at learn rate 5e-05," in header
