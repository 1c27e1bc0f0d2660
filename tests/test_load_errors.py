"""A damaged or incompatible saved component fails with an error that names
the component and the file, for all three components and both
load paths (from_disk via spacy.load, from_bytes)."""

import re
import shutil

import pytest
import spacy
from spacy.tokens import Span
from spacy.training import Example

import spacy_attn  # noqa: F401  (registers)
from spacy_attn import make_pair
from spacy_attn.pipeline.base import ComponentLoadError

from .util import tok2vec_config

SMALL = {
    "attn_pair_classifier": {
        "model": {
            "@architectures": "spacy-attn.DecomposableAttention.v1",
            "hidden_width": 8,
            "tok2vec": tok2vec_config(8),
        }
    },
    "attn_doc_embedder": {
        "model": {
            "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
            "hidden_width": 8,
            "encoder": {
                "@architectures": "spacy-attn.StructuredSelfAttention.v1",
                "hidden_width": 4,
                "attention_width": 4,
                "hops": 2,
                "tok2vec": tok2vec_config(8),
            },
        }
    },
    "attn_span_qa": {
        "model": {
            "@architectures": "spacy-attn.DynamicCoattention.v1",
            "hidden_width": 8,
            "pool_size": 2,
            "tok2vec": tok2vec_config(8),
        }
    },
}


def _examples(nlp, factory):
    examples = []
    for i, (a, b) in enumerate(
        [("Where is Tom?", "Tom is in Kenya."), ("Who won?", "The Broncos won.")]
    ):
        if factory == "attn_doc_embedder":
            ref = nlp.make_doc(f"{a} {b}")
            ref.cats = {"X": float(i == 0), "Y": float(i == 1)}
            examples.append(Example(nlp.make_doc(ref.text), ref))
            continue
        ref = make_pair(nlp, a, b)
        if factory == "attn_pair_classifier":
            ref.cats = {"X": float(i == 0), "Y": float(i == 1)}
        else:
            ref.spans["answers"] = [
                Span(ref, len(ref) - 2, len(ref) - 1, label="answer")
            ]
        pred = ref.copy()
        pred.cats = {}
        if "answers" in pred.spans:
            del pred.spans["answers"]
        examples.append(Example(pred, ref))
    return examples


def _trained(factory, config=None):
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config=config or SMALL[factory])
    examples = _examples(nlp, factory)
    nlp.initialize(lambda: examples)
    return nlp


@pytest.fixture(scope="module", params=sorted(SMALL))
def saved(request, tmp_path_factory):
    factory = request.param
    nlp = _trained(factory)
    path = tmp_path_factory.mktemp(factory) / "pipeline"
    nlp.to_disk(path)
    return factory, nlp, path


def _damaged_message(factory, what):
    return (
        rf"Cannot load '{factory}' \(\w+\): its {what}.*damaged.*incompatible version"
    )


def test_truncated_model_file(saved, tmp_path):
    factory, nlp, path = saved
    copy = tmp_path / "pipeline"
    _copytree(path, copy)
    model_file = copy / factory / "model"
    data = model_file.read_bytes()
    model_file.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        ValueError, match=_damaged_message(factory, "model file")
    ) as info:
        spacy.load(copy)
    message = str(info.value)
    assert str(model_file) in message
    assert isinstance(info.value, ComponentLoadError)
    # The original error is kept as the cause, and shown in the message.
    assert info.value.__cause__ is not None
    assert type(info.value.__cause__).__name__ in message


def test_truncated_cfg_file(saved, tmp_path):
    factory, nlp, path = saved
    copy = tmp_path / "pipeline"
    _copytree(path, copy)
    cfg_file = copy / factory / "cfg"
    cfg_file.write_text(cfg_file.read_text(encoding="utf8")[:10], encoding="utf8")
    with pytest.raises(
        ValueError, match=_damaged_message(factory, "config file")
    ) as info:
        spacy.load(copy)
    assert str(cfg_file) in str(info.value)


def test_missing_model_file(saved, tmp_path):
    factory, nlp, path = saved
    copy = tmp_path / "pipeline"
    _copytree(path, copy)
    (copy / factory / "model").unlink()
    with pytest.raises(
        ValueError, match=rf"Cannot load '{factory}'.*model file .* is missing"
    ):
        spacy.load(copy)


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_bytes(saved, cut):
    factory, nlp, path = saved
    pipe = nlp.get_pipe(factory)
    data = pipe.to_bytes(exclude=["vocab"])
    fresh = spacy.blank("en").add_pipe(factory, config=SMALL[factory])
    with pytest.raises(
        ValueError, match=rf"Cannot load '{factory}' \(\w+\): its .*damaged"
    ):
        fresh.from_bytes(data[: int(len(data) * cut)], exclude=["vocab"])


def test_intact_round_trip_still_loads(saved):
    factory, nlp, path = saved
    loaded = spacy.load(path)
    assert loaded.pipe_names == [factory]
    pipe = nlp.get_pipe(factory)
    again = spacy.blank("en").add_pipe(factory, config=SMALL[factory])
    again.from_bytes(pipe.to_bytes(exclude=["vocab"]), exclude=["vocab"])
    assert again.cfg == pipe.cfg


def test_incompatible_model_names_the_component(saved, tmp_path):
    """A model saved with other settings than the config says (here a wider
    hidden layer) is reported the same way, not as a bare Thinc error."""
    factory, nlp, path = saved
    config = {"model": dict(SMALL[factory]["model"], hidden_width=12)}
    other = _trained(factory, config)
    data = other.get_pipe(factory).model.to_bytes()
    model_file = tmp_path / "model"
    model_file.write_bytes(data)
    pipe = spacy.blank("en").add_pipe(factory, config=SMALL[factory])
    with pytest.raises(
        ValueError,
        match=rf"Cannot load '{factory}'.*model file '{re.escape(str(model_file))}'",
    ):
        pipe.from_disk(tmp_path, exclude=["vocab", "cfg"])


def _copytree(src, dst):
    shutil.copytree(src, dst)


# -- checksums of the model bytes ------------------------------------------------


def _flip(data: bytes, n: int = 50) -> bytes:
    """``n`` bytes of the second half flipped (weights, not the header)."""
    out = bytearray(data)
    for i in range(n):
        pos = len(out) // 2 + i * 7
        out[pos] ^= 0xFF
    return bytes(out)


def test_flipped_bytes_in_model_file_are_detected(saved, tmp_path):
    factory, nlp, path = saved
    copy = tmp_path / "pipeline"
    _copytree(path, copy)
    model_file = copy / factory / "model"
    model_file.write_bytes(_flip(model_file.read_bytes()))
    with pytest.raises(ComponentLoadError, match="does not match the checksum") as info:
        spacy.load(copy)
    message = str(info.value)
    assert str(model_file) in message and f"'{factory}'" in message
    assert "Restore the pipeline" in message and "\n" not in message


def test_flipped_bytes_in_model_bytes_are_detected(saved):
    factory, nlp, path = saved
    pipe = nlp.get_pipe(factory)
    model_bytes = pipe.model.to_bytes()
    data = pipe.to_bytes(exclude=["vocab"])
    start = data.index(model_bytes)
    damaged = data[:start] + _flip(model_bytes) + data[start + len(model_bytes) :]
    fresh = spacy.blank("en").add_pipe(factory, config=SMALL[factory])
    with pytest.raises(ComponentLoadError, match="does not match the checksum"):
        fresh.from_bytes(damaged, exclude=["vocab"])


def test_pipeline_saved_without_checksums_still_loads(saved, tmp_path):
    factory, nlp, path = saved
    copy = tmp_path / "pipeline"
    _copytree(path, copy)
    (copy / factory / "checksums.json").unlink()
    assert spacy.load(copy).pipe_names == [factory]
    # Bytes without the checksums entry (as saved before them) load too.
    import srsly

    pipe = nlp.get_pipe(factory)
    msg = srsly.msgpack_loads(pipe.to_bytes(exclude=["vocab"]))
    del msg["checksums.json"]
    fresh = spacy.blank("en").add_pipe(factory, config=SMALL[factory])
    fresh.from_bytes(srsly.msgpack_dumps(msg), exclude=["vocab"])
    assert fresh.cfg == pipe.cfg


def test_pipeline_load_problems_are_one_line(saved, tmp_path):
    """Our commands' loader: a bad meta.json names the file; a file given as
    the pipeline says so; a damaged model names the file (one line each)."""
    from spacy_attn.loading import PipelineLoadError, load_pipeline

    factory, nlp, path = saved
    copy = tmp_path / "pipeline"
    _copytree(path, copy)
    (copy / "meta.json").write_text('{"lang": "en", "name":', encoding="utf8")
    with pytest.raises(PipelineLoadError, match="meta.json: invalid JSON") as info:
        load_pipeline(copy)
    assert str(copy / "meta.json") in str(info.value)
    with pytest.raises(PipelineLoadError, match="is a file, not a pipeline directory"):
        load_pipeline(copy / "config.cfg")
    shutil.copy(path / "meta.json", copy / "meta.json")
    model_file = copy / factory / "model"
    model_file.write_bytes(_flip(model_file.read_bytes()))
    with pytest.raises(PipelineLoadError, match="does not match the checksum") as info:
        load_pipeline(copy)
    assert str(model_file) in str(info.value) and "\n" not in str(info.value)


def test_a_pipeline_copied_without_its_vectors_stops_at_loading(tmp_path):
    """A pipeline whose vocab/vectors was left out (as a device call brings a
    trained reader back) fails in our loader with one line that names the
    vectors and where they go; the same files copied back load it again, and
    another table of the same width is refused (its rows are not the ones
    the model was trained on)."""
    from spacy_attn.loading import PipelineLoadError, load_pipeline

    from .util import add_random_vectors, make_examples, pair_config

    rows = [
        {"premise": "A man sleeps.", "hypothesis": "A person rests.", "label": "yes"},
        {"premise": "A dog runs.", "hypothesis": "A cat sleeps.", "label": "no"},
    ]
    nlp = spacy.blank("en")
    add_random_vectors(nlp, [r["premise"] + " " + r["hypothesis"] for r in rows])
    nlp.add_pipe("attn_pair_classifier", config=pair_config("vectors", hidden=8))
    examples = make_examples(nlp, rows)
    nlp.initialize(lambda: examples)
    path = tmp_path / "pipeline"
    nlp.to_disk(path)
    saved = tmp_path / "vectors_saved"
    saved.mkdir()
    for name in ("vectors", "vectors.cfg"):
        shutil.move(path / "vocab" / name, saved / name)
    with pytest.raises(PipelineLoadError) as info:
        load_pipeline(path)
    message = str(info.value)
    assert "\n" not in message
    assert f"saved with {len(nlp.vocab.vectors):,} 16-d word vectors" in message
    assert "has none" in message and str(path / "vocab") in message
    for name in ("vectors", "vectors.cfg"):
        shutil.copy(saved / name, path / "vocab" / name)
    reloaded = load_pipeline(path)
    doc = make_pair(nlp, rows[0]["premise"], rows[0]["hypothesis"])
    again = make_pair(reloaded, rows[0]["premise"], rows[0]["hypothesis"])
    assert nlp.get_pipe("attn_pair_classifier").predict([doc]).tolist() == (
        reloaded.get_pipe("attn_pair_classifier").predict([again]).tolist()
    )
    other = spacy.blank("en")
    other.vocab.reset_vectors(shape=(50, 16))  # same width, other rows
    other.vocab.to_disk(tmp_path / "other_vocab")
    for name in ("vectors", "vectors.cfg"):
        shutil.copy(tmp_path / "other_vocab" / name, path / "vocab" / name)
    with pytest.raises(PipelineLoadError, match="has [0-9,]+ of width 16"):
        load_pipeline(path)
