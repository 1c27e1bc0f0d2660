"""benchmarks/squad_continue.py: the continued config sources the QA
component from model-last, or from a checkpoint's weights."""

import spacy
from spacy.util import load_config
from thinc.api import fix_random_seed

from .test_span_qa_no_answer import v2_config
from .util import load_script


def test_continued_config_from_model_last_or_a_checkpoint(tmp_path):
    script = load_script("benchmarks/squad_continue.py")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=v2_config())
    nlp.initialize()
    previous = tmp_path / "run"
    previous.mkdir()
    nlp.to_disk(previous / "model-last")
    # A checkpoint whose weights differ from model-last's.
    fix_random_seed(1)
    other = spacy.blank("en")
    other.add_pipe("attn_span_qa", config=v2_config())
    other.initialize()
    checkpoint = tmp_path / "step-5.bin"
    checkpoint.write_bytes(other.get_pipe("attn_span_qa").to_bytes())
    model_bytes = nlp.get_pipe("attn_span_qa").model.to_bytes()
    assert other.get_pipe("attn_span_qa").model.to_bytes() != model_bytes

    path = script.continued_config(previous, "attn_span_qa", tmp_path / "a")
    block = load_config(path)["components"]["attn_span_qa"]
    assert block == {
        "source": str(previous / "model-last"),
        "component": "attn_span_qa",
    }
    path = script.continued_config(previous, "attn_span_qa", tmp_path / "b", checkpoint)
    block = load_config(path)["components"]["attn_span_qa"]
    assert block["source"] == str(tmp_path / "b" / "start")
    start = spacy.load(tmp_path / "b" / "start").get_pipe("attn_span_qa")
    assert start.model.to_bytes() == other.get_pipe("attn_span_qa").model.to_bytes()


def test_continued_config_can_switch_to_the_streamed_reader(tmp_path):
    """A filled v1 reader section's `span_key = null` is dropped, so the
    continued run can be switched to SquadCorpus.v2 by an override."""
    from spacy.util import registry

    script = load_script("benchmarks/squad_continue.py")
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=v2_config())
    nlp.initialize()
    reader = {"@readers": "spacy-attn.SquadCorpus.v1", "path": None, "limit": 10}
    nlp.config["corpora"] = {"train": {**reader, "span_key": None}}
    (tmp_path / "run").mkdir()
    nlp.to_disk(tmp_path / "run" / "model-last")
    path = script.continued_config(tmp_path / "run", "attn_span_qa", tmp_path / "a")
    train = dict(load_config(path)["corpora"]["train"])
    assert "span_key" not in train and train["limit"] == 10
    train["@readers"] = "spacy-attn.SquadCorpus.v2"
    corpus = registry.resolve({"train": train})["train"]
    assert list(corpus(nlp)) == []  # no path: an empty corpus


def test_checkpoint_logger_keeps_the_weights_not_the_vocab(tmp_path):
    """benchmarks/squad_checkpoints.py: each evaluation's checkpoint holds the
    component's weights without the vocabulary (model-last has it; with GloVe
    it was 42 of 47 MB), and loads back into model-last's component."""
    import io

    import numpy
    import srsly
    from spacy.util import registry

    load_script("benchmarks/squad_checkpoints.py")  # registers the logger
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=v2_config())
    nlp.initialize()
    for i in range(2000):  # a vectors table that dwarfs the weights
        nlp.vocab.set_vector(f"word{i}", numpy.full((64,), i, dtype="float32"))
    nlp.to_disk(tmp_path / "model-last")
    make = registry.get("loggers", "spacy-attn-bench.CheckpointLogger.v1")
    log, finalize = make(directory=str(tmp_path / "ck"))(
        nlp, io.StringIO(), io.StringIO()
    )
    info = {"epoch": 0, "step": 5, "score": 0.5, "other_scores": {"qa_f1": 0.5}}
    info.update({"losses": {"attn_span_qa": 1.0}, "words": 10, "seconds": 1})
    log({**info, "checkpoints": [], "checkpoint": None})
    finalize()
    saved = (tmp_path / "ck" / "step-5.bin").read_bytes()
    assert "vocab" not in srsly.msgpack_loads(saved)
    full = nlp.get_pipe("attn_span_qa").to_bytes()
    assert len(saved) < len(full) / 2
    # Into model-last with other weights: the checkpoint's come back.
    other = spacy.load(tmp_path / "model-last")
    fix_random_seed(2)
    fresh = spacy.blank("en")
    fresh.add_pipe("attn_span_qa", config=v2_config())
    fresh.initialize()
    other.get_pipe("attn_span_qa").model.from_bytes(
        fresh.get_pipe("attn_span_qa").model.to_bytes()
    )
    weights = nlp.get_pipe("attn_span_qa").model.to_bytes()
    assert other.get_pipe("attn_span_qa").model.to_bytes() != weights
    other.get_pipe("attn_span_qa").from_bytes(saved)
    assert other.get_pipe("attn_span_qa").model.to_bytes() == weights
    assert other.vocab.vectors.shape == nlp.vocab.vectors.shape
