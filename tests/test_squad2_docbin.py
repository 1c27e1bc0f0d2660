"""The squad2 workflow tokenized once: ``scripts/squad2_splits.py --docbin``
writes DocBins that give the examples of their JSON, unanswerable questions
included, and train a "no answer" DCN exactly as the JSON does."""

import hashlib
import json

import pytest
import spacy
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_attn.pairs import get_pair_bounds

from .test_span_qa_no_answer import v2_config
from .util import load_script

NAMES = ["Ada", "Boris", "Chen", "Dora", "Emil", "Fatima", "Gus", "Hana"]
CITIES = ["Paris", "Lagos", "Quito", "Oslo", "Hanoi", "Lima", "Perth", "Cairo"]
SPLITS = ("train", "heldout", "train_spans", "heldout_spans")


def _paragraph(a, p, impossible):
    """A paragraph with two answerable questions of two answers each (one
    expanded to token boundaries: "Pari" to "Paris") and, if ``impossible``,
    one SQuAD 2.0 unanswerable question with a plausible answer."""
    i = 3 * a + p
    name, city, year = NAMES[i % 8], CITIES[(i + a) % 8], 1900 + 7 * a + p
    context = f" {name} was born in {city} in {year} and earned ${i + 5}m there."
    money = f"${i + 5}"
    qas = [
        {
            "id": f"a{a}p{p}where",
            "question": f"Where was {name} born?",
            "answers": [
                {"text": city, "answer_start": context.index(city)},
                {"text": city[:-1], "answer_start": context.index(city)},
            ],
        },
        {
            "id": f"a{a}p{p}money",
            "question": f"How much did {name} earn?",
            "answers": [{"text": money, "answer_start": context.index(money)}] * 2,
        },
    ]
    if impossible:
        qas.append(
            {
                "id": f"a{a}p{p}never",
                "question": f"Where did {name} die?",
                "answers": [],
                "is_impossible": True,
                "plausible_answers": [
                    {"text": city, "answer_start": context.index(city)}
                ],
            }
        )
    for qa in qas:
        qa.setdefault("is_impossible", False)
    return {"context": context, "qas": qas}


def _squad(impossible, n_articles=4):
    data = [
        {
            "title": f"Article {a}",
            "paragraphs": [_paragraph(a, p, impossible) for p in range(3)],
        }
        for a in range(n_articles)
    ]
    return json.dumps({"version": "v2.0", "data": data}).encode()


@pytest.fixture(scope="module", params=["squad2-official", "squad2-built-negatives"])
def splits(request, tmp_path_factory):
    """squad2_splits.py --docbin on tiny in-test data: SQuAD 2.0 train with
    its own unanswerable questions, or SQuAD 1.1 train (unanswerable ones
    built from other paragraphs)."""
    script = load_script("scripts/squad2_splits.py")
    tmp = tmp_path_factory.mktemp("squad2")
    official = request.param == "squad2-official"
    files = {
        script.TRAIN2_ASSET if official else script.TRAIN_ASSET: _squad(official),
        script.DEV2_ASSET: _squad(True, n_articles=1),
    }
    for name, data in files.items():
        (tmp / "assets" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "assets" / name).write_bytes(data)
    script.OFFICIAL_SHA256 = {
        n: hashlib.sha256(d).hexdigest() for n, d in files.items()
    }
    out = tmp / "out"
    args = [str(out), "--assets", str(tmp / "assets"), "--mirror", str(tmp / "n")]
    script.main(args + ["--docbin", "--docbin-splits", ",".join(SPLITS)])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["protocol"] == request.param
    return out, manifest


def _example(eg):
    """What an Example of a QA corpus carries: its question and context,
    its gold answers (spans and texts; none for an unanswerable question)
    and a predicted doc without them."""
    ref = eg.reference
    q0, q1, c0, c1 = get_pair_bounds(ref, "pair")
    answers = ref.spans["answers"]
    return (
        answers.attrs["id"],
        ref[q0:q1].text,
        ref[c0:c1].text,
        [(s.start, s.end, s.text, s.label_) for s in answers],
        list(answers.attrs["texts"]),
        [t.text for t in eg.predicted],
        get_pair_bounds(eg.predicted, "pair"),
        "answers" in eg.predicted.spans,
    )


def _read(reader, path, **settings):
    corpus = registry.readers.get(reader)(str(path), **settings)
    return [_example(eg) for eg in corpus(spacy.blank("en"))]


def test_docbins_give_the_json_examples(splits):
    out, manifest = splits
    assert not (out / "test.spacy").exists()  # not among --docbin-splits
    assert {f"{s}_docbin" for s in SPLITS} <= set(manifest["files"])
    for split in SPLITS:
        json_path, docbin = out / f"{split}.json", out / f"{split}.spacy"
        # The training reader in file order and as the configs read (a new
        # shuffle each pass), and the dev reader's seeded sample.
        for reader, settings in (
            ("spacy-attn.SquadCorpus.v4", {}),
            ("spacy-attn.SquadCorpus.v4", {"shuffle": True, "seed": 3}),
            ("spacy-attn.SquadCorpus.v1", {"shuffle": True, "limit": 7}),
        ):
            from_json = _read(reader, json_path, **settings)
            assert _read(reader, docbin, **settings) == from_json, (split, reader)
        whole = _read("spacy-attn.SquadCorpus.v4", json_path)
        unanswerable = [e for e in whole if not e[4]]
        assert all(e[3] == [] for e in unanswerable)
        counts = manifest["alignment"][split]
        assert counts["unanswerable"] == manifest[split]["unanswerable"]
        assert counts["questions"] == len(whole)
        # Stage one's files have none; the others some in either split.
        assert bool(unanswerable) != split.endswith("_spans")
        answered = [e for e in whole if e[4]]
        assert answered and all(len(e[3]) == len(e[4]) == 2 for e in answered)
        # "Pari": the span grows to the token ("Paris"), the text stays.
        assert any(e[3][1][2] == e[3][0][2] != e[4][1] for e in answered)


def test_docbin_splits_must_be_splits(tmp_path):
    script = load_script("scripts/squad2_splits.py")
    with pytest.raises(SystemExit):
        script.main([str(tmp_path), "--docbin", "--docbin-splits", "train,dev"])
    assert not list(tmp_path.iterdir())


def test_build_unanswerable_needs_json(splits):
    """SquadCorpus.v4's build_unanswerable draws paragraphs from the JSON's
    articles: on a DocBin, which does not keep them, an error, not a
    setting silently ignored."""
    out, _ = splits
    v4 = registry.readers.get("spacy-attn.SquadCorpus.v4")
    with pytest.raises(ValueError, match="is a DocBin"):
        v4(str(out / "train_spans.spacy"), build_unanswerable=0.5)
    built = v4(str(out / "train_spans.json"), build_unanswerable=1.0)
    assert any(
        not eg.reference.spans["answers"].attrs["texts"]
        for eg in built(spacy.blank("en"))
    )


def _losses(path):
    """Three ``nlp.update`` steps of a tiny no-answer DCN (v3, as the
    squad2 configs) on the first 24 examples of a pass of the configs'
    training reader."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = v2_config()
    config["model"]["@architectures"] = "spacy-attn.DynamicCoattention.v3"
    nlp.add_pipe("attn_span_qa", config=config)
    reader = registry.readers.get("spacy-attn.SquadCorpus.v4")
    examples = list(reader(str(path), shuffle=True, seed=0)(nlp))[:24]
    optimizer = nlp.initialize(lambda: examples[:10])
    losses = []
    for i in range(0, 24, 8):
        out = nlp.update(examples[i : i + 8], sgd=optimizer, losses={})
        losses.append(out["attn_span_qa"])
    return losses, examples


def test_same_losses_from_docbin_as_from_json(splits):
    out, _ = splits
    from_json, examples = _losses(out / "train.json")
    from_docbin, _ = _losses(out / "train.spacy")
    assert from_docbin == from_json
    assert len(set(from_json)) == 3  # three different steps, not one value
    # Both kinds of question are in the steps compared.
    texts = [eg.reference.spans["answers"].attrs["texts"] for eg in examples]
    assert any(texts) and not all(texts)


def test_dev_reader_decodes_a_docbin_once(splits, monkeypatch):
    """SquadCorpus.v1 (the configs' dev reader, called at every evaluation)
    keeps a DocBin's sampled docs, as it keeps the JSON's, and hands out
    copies."""
    import spacy_attn.squad.reader as reader_module

    out, _ = splits
    nlp = spacy.blank("en")
    v1 = registry.readers.get("spacy-attn.SquadCorpus.v1")
    dev = v1(str(out / "heldout.spacy"), shuffle=True, limit=5)
    first = list(dev(nlp))
    monkeypatch.setattr(reader_module, "read_docbin", lambda *a, **k: iter(()))
    second = list(dev(nlp))
    assert [_example(e) for e in second] == [_example(e) for e in first]
    assert len(first) == 5 and second[0].reference is not first[0].reference
    # Another pipeline's vocab: read again (here: the patched, empty file).
    assert list(dev(spacy.blank("en"))) == []
