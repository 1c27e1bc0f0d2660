"""SQuAD tokenized once: ``squad_to_docbin`` (in processes),
``spacy-attn.SquadCorpus.v4`` (gold docs kept in memory), and the same
training from a ``.spacy`` corpus as from the JSON reader."""

import gzip
import json

import pytest
import spacy
import srsly
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn.readers import TOKENIZER_ATTRS, read_docbin, write_docbin
from spacy_attn.readers.formats import msgpack_hooks_looked_up_once
from spacy_attn.squad import read_squad, squad_to_docbin

from .test_span_qa import qa_config
from .util import FIXTURES


@pytest.fixture(scope="module")
def squad_path(tmp_path_factory):
    """The SQuAD dev fixture (two articles, 14 paragraphs) as plain JSON."""
    path = tmp_path_factory.mktemp("squad") / "dev.json"
    with gzip.open(FIXTURES / "squad_dev.json.gz", "rt", encoding="utf8") as f:
        path.write_text(f.read(), encoding="utf8")
    return path


def _layout(doc):
    """What a QA doc carries: text, tokens, pair, answers and their attrs."""
    answers = doc.spans["answers"]
    return (
        doc.text,
        [t.text for t in doc],
        dict(doc.user_data),
        [(s.start, s.end, s.label_) for s in answers],
        dict(answers.attrs),
    )


@pytest.mark.parametrize("n_process", [1, 2])
def test_squad_to_docbin_writes_what_read_squad_builds(tmp_path, squad_path, n_process):
    nlp = spacy.blank("en")
    examples, stats = read_squad(squad_path, nlp, log=False)
    out = tmp_path / "dev.spacy"
    written = squad_to_docbin(squad_path, out, n_process=n_process)
    docs = list(read_docbin(out, nlp.vocab))
    assert [_layout(d) for d in docs] == [_layout(eg.reference) for eg in examples]
    # The counts of the shares add up to those of one pass.
    counts = {k: v for k, v in stats.to_dict().items() if k != "unaligned_examples"}
    assert {k: written.to_dict()[k] for k in counts} == counts
    assert written.questions == len(docs) > 100
    # Only what a tokenizer sets is stored (DocBin's default is 13 columns);
    # the docs above are the same nonetheless.
    stored = DocBin().from_disk(out)
    assert stored.attrs == DocBin(attrs=list(TOKENIZER_ATTRS)).attrs
    assert len(stored.attrs) < len(DocBin().attrs)
    assert all(tokens.shape[1] == len(TOKENIZER_ATTRS) for tokens in stored.tokens)


def test_msgpack_hooks_are_restored_and_answer_the_same():
    from srsly.msgpack import msgpack_decoders, msgpack_encoders

    before = {r: r.get_all() for r in (msgpack_encoders, msgpack_decoders)}
    data = {"a": [1, 2], "b": "x"}
    with msgpack_hooks_looked_up_once(before):
        # Inside: the cached answers, and srsly round-trips as before.
        assert "get_all" in vars(msgpack_decoders)
        assert msgpack_decoders.get_all() == before[msgpack_decoders]
        assert srsly.msgpack_loads(srsly.msgpack_dumps(data)) == data
    # Outside: the registries' own method again, even after an error.
    assert "get_all" not in vars(msgpack_decoders)
    with pytest.raises(RuntimeError):
        with msgpack_hooks_looked_up_once(before):
            raise RuntimeError
    assert "get_all" not in vars(msgpack_encoders)


def test_docbin_round_trip_keeps_span_groups(tmp_path, squad_path):
    nlp = spacy.blank("en")
    examples, _ = read_squad(squad_path, nlp, log=False)
    path = tmp_path / "x.spacy"
    write_docbin([eg.reference for eg in examples[:20]], path)
    docs = list(read_docbin(path, spacy.blank("en").vocab))
    assert [_layout(d) for d in docs] == [_layout(eg.reference) for eg in examples[:20]]


def test_reader_v4_cache_gives_v3s_passes(tmp_path, squad_path, monkeypatch):
    import spacy_attn.squad.reader as reader_module

    nlp = spacy.blank("en")
    spacy_path = tmp_path / "dev.spacy"
    squad_to_docbin(squad_path, spacy_path)
    v3 = registry.readers.get("spacy-attn.SquadCorpus.v3")
    v4 = registry.readers.get("spacy-attn.SquadCorpus.v4")

    def ids(corpus):
        return [eg.reference.spans["answers"].attrs["id"] for eg in corpus(nlp)]

    for path in (squad_path, spacy_path):
        plain = v3(path, shuffle=True, seed=2, limit=30)
        cached = v4(path, shuffle=True, seed=2, limit=30, cache=True)
        assert [ids(cached) for _ in range(3)] == [ids(plain) for _ in range(3)]
    # Cached: later passes neither read the DocBin nor build docs again.
    cached = v4(spacy_path, cache=True)
    first = list(cached(nlp))
    calls = []
    monkeypatch.setattr(
        reader_module, "read_docbin", lambda *a, **k: calls.append(1) or iter(())
    )
    monkeypatch.setattr(reader_module, "make_qa_doc", lambda *a, **k: calls.append(1))
    second = list(cached(nlp))
    assert not calls and len(second) == len(first) > 100
    # The predicted docs are new each pass, without answers; the gold kept.
    assert second[0].predicted is not first[0].predicted
    assert "answers" not in second[0].predicted.spans
    assert second[0].reference is first[0].reference


def _losses(nlp_examples):
    nlp, examples = nlp_examples
    optimizer = nlp.initialize(lambda: examples[:10])
    losses = []
    for i in range(0, 24, 8):
        out = nlp.update(examples[i : i + 8], sgd=optimizer, losses={})
        losses.append(out["attn_span_qa"])
    return losses


def test_same_losses_from_docbin_as_from_json(tmp_path, squad_path):
    """The CPU path: the workflow's .spacy corpus trains exactly like the
    JSON reader on a fixed seed."""
    spacy_path = tmp_path / "dev.spacy"
    squad_to_docbin(squad_path, spacy_path, n_process=2)
    runs = []
    for reader, path in (
        ("spacy-attn.SquadCorpus.v2", squad_path),
        ("spacy-attn.SquadCorpus.v4", spacy_path),
    ):
        fix_random_seed(0)
        nlp = spacy.blank("en")
        nlp.add_pipe("attn_span_qa", config=qa_config())
        examples = list(registry.readers.get(reader)(path)(nlp))[:24]
        assert all(isinstance(eg, Example) for eg in examples)
        runs.append(_losses((nlp, examples)))
    assert runs[0] == runs[1]
    assert len(set(runs[0])) == 3  # three different steps, not one value


def test_squad_splits_docbin_options(tmp_path):
    """scripts/squad_splits.py --docbin --docbin-splits --n-process --no-ood:
    DocBins of the named splits only, no out-of-domain tests."""
    from .test_squad import paper_mirror
    from .util import load_script

    splits = load_script("scripts/squad_splits.py")
    mirror = paper_mirror(tmp_path)
    out = tmp_path / "out"
    splits.main(
        [str(out), "--assets", str(tmp_path / "none"), "--mirror", str(mirror)]
        + ["--docbin", "--docbin-splits", "train,dev", "--n-process", "2", "--no-ood"]
    )
    assert (out / "train.spacy").exists() and (out / "dev.spacy").exists()
    assert not (out / "test.spacy").exists()
    assert not list(out.glob("test_*.json"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["alignment"]) == {"train", "dev"}
    assert manifest["alignment"]["train"]["questions"] == 76  # 38 articles x 2
    docs = list(read_docbin(out / "train.spacy", spacy.blank("en").vocab))
    assert len(docs) == 76 and docs[0].spans["answers"][0].text == "Denver Broncos"
