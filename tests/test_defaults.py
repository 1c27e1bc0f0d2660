"""One source of defaults: the "Defaults" table of docs/configs.md is what the code
does, and every registered architecture builds and trains from its name
alone (``{"@architectures": ...}`` and nothing else)."""

import inspect
import math
import re

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import registry
from thinc.api import fix_random_seed

import spacy_attn  # noqa: F401  (registers)
from spacy_attn import make_pair
from spacy_attn.layers.defaults import build_default_tok2vec

from .util import REPO, add_random_vectors

# Where each architecture sits in a factory's default config.
FACTORY_PATHS = {
    ("attn_pair_classifier", "spacy-attn.DecomposableAttention.v1"): ("model",),
    ("attn_span_qa", "spacy-attn.DynamicCoattention.v4"): ("model",),
    ("attn_doc_embedder", "spacy-attn.SelfAttentiveTextCat.v1"): ("model",),
    ("attn_doc_embedder", "spacy-attn.StructuredSelfAttention.v1"): (
        "model",
        "encoder",
    ),
}


def _value(text: str):
    text = re.sub(r"\s*\(.*\)$", "", text.strip())
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def readme_defaults():
    """(architecture, setting, architecture default, factory, factory
    default) rows of the Defaults table in docs/configs.md."""
    text = (REPO / "docs" / "configs.md").read_text(encoding="utf8")
    section = text.split("\n## Defaults\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = re.match(
            r"\| `(spacy-attn\.[\w.]+)` \| `(\w+)` \| ([^|]+) \| ([^|]+) \|$", line
        )
        if not m:
            continue
        arch, setting, arch_default, factory_default = m.groups()
        factory = value = None
        if factory_default.strip() != "-":
            factory, value = factory_default.split(":")
            factory, value = factory.strip().strip("`"), _value(value)
        rows.append((arch, setting, _value(arch_default), factory, value))
    return rows


ROWS = readme_defaults()
ARCHITECTURES = sorted(
    n for n in registry.architectures.get_all() if n.startswith("spacy-attn.")
)


def test_table_covers_every_architecture():
    assert len(ROWS) >= 16
    assert {row[0] for row in ROWS} == set(ARCHITECTURES)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r[0]}.{r[1]}")
def test_architecture_default_is_documented(row):
    arch, setting, documented, _, _ = row
    default = (
        inspect.signature(registry.architectures.get(arch)).parameters[setting].default
    )
    assert default == documented


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r[3]], ids=lambda r: f"{r[3]}.{r[1]}"
)
def test_factory_default_is_documented(row):
    arch, setting, _, factory, documented = row
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    section = nlp.config["components"][factory]
    for key in FACTORY_PATHS[(factory, arch)]:
        section = section[key]
    assert section["@architectures"] == arch
    assert section[setting] == documented


def test_factory_tok2vec_is_the_architecture_default():
    """The factories' tok2vec and the architectures' default tok2vec are one
    definition (same layers, same width)."""
    nlp = spacy.blank("en")
    for factory in ("attn_pair_classifier", "attn_span_qa"):
        tok2vec = nlp.add_pipe(factory).model.get_ref("tok2vec")
        default = build_default_tok2vec()
        assert [n.name for n in tok2vec.walk()] == [n.name for n in default.walk()]
        assert tok2vec.get_dim("nO") == default.get_dim("nO") == 96


def test_default_models_are_not_shared():
    """A left-out tok2vec / encoder is built per call, never one instance
    trained and saved by every model that used it."""
    build = registry.architectures.get("spacy-attn.SelfAttentiveTextCat.v1")
    a, b = build(), build()
    assert a.get_ref("encoder") is not b.get_ref("encoder")
    assert a.get_ref("tok2vec") is not b.get_ref("tok2vec")
    da = registry.architectures.get("spacy-attn.DecomposableAttention.v1")
    assert da().get_ref("tok2vec") is not da().get_ref("tok2vec")


# -- each architecture from its name alone, in its component, one update --


def _textcat_examples(nlp):
    data = [
        ("A gorgeous, witty, seductive movie.", "POS"),
        ("The plot is dull and the acting worse.", "NEG"),
        ("Charming and funny from start to end.", "POS"),
        ("A tedious mess.", "NEG"),
    ]
    return [
        Example.from_dict(
            nlp.make_doc(t),
            {"cats": {"POS": float(y == "POS"), "NEG": float(y == "NEG")}},
        )
        for t, y in data
    ]


def _pair_examples(nlp):
    data = [
        ("A man plays a guitar.", "A person makes music.", "entailment"),
        ("A dog runs in the park.", "A cat sleeps inside.", "contradiction"),
        ("Two kids play soccer.", "Children are outside.", "neutral"),
    ]
    examples = []
    for a, b, label in data:
        doc = make_pair(nlp, a, b)
        ref = doc.copy()
        ref.cats = {label: 1.0}
        examples.append(Example(doc, ref))
    return examples


def _qa_examples(nlp):
    data = [
        ("Where is Tom?", "Blah blah, Tom is in Kenya, blah.", "Kenya"),
        (
            "Who won the game?",
            "The Broncos won the game in Santa Clara.",
            "The Broncos",
        ),
    ]
    examples = []
    for question, context, answer in data:
        ref = make_pair(nlp, question, context)
        start = ref.text.rindex(answer)
        span = ref.char_span(start, start + len(answer), label="answer")
        ref.spans["answers"] = [span]
        pred = ref.copy()
        del pred.spans["answers"]
        examples.append(Example(pred, ref))
    return examples


def _one_update(nlp, examples, name):
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    pipe = nlp.get_pipe(name)
    before = [p.copy() for p in _params(pipe.model)]
    losses = nlp.update(examples, sgd=optimizer)
    assert math.isfinite(losses[name]) and losses[name] > 0
    after = _params(pipe.model)
    assert any(not numpy.array_equal(x, y) for x, y in zip(before, after)), (
        "nothing trained"
    )
    list(nlp.pipe([eg.predicted for eg in examples]))  # and it predicts
    return pipe


def _params(model):
    """Thinc parameters and the torch modules' weights, as numpy arrays."""
    out = []
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                out.append(numpy.array(node.ops.to_numpy(node.get_param(name))))
        for shim in node.shims:
            out.extend(
                p.detach().cpu().numpy().copy() for p in shim._model.parameters()
            )
    return out


def test_self_attentive_textcat_alone_in_textcat():
    """The one-liner builds (paper settings, default encoder and
    tok2vec) and trains."""
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "textcat",
        config={"model": {"@architectures": "spacy-attn.SelfAttentiveTextCat.v1"}},
    )
    assert nlp.config["components"]["textcat"]["model"]["encoder"] is None
    pipe = _one_update(nlp, _textcat_examples(nlp), "textcat")
    encoder = pipe.model.get_ref("encoder")
    assert (encoder.attrs["n_rows"], encoder.attrs["width"]) == (30, 600)
    assert pipe.model.get_ref("tok2vec").get_dim("nO") == 96


@pytest.mark.parametrize(
    "encoder",
    ["spacy-attn.StructuredSelfAttention.v1", "spacy-attn.GeneralizedPooling.v1"],
)
def test_encoder_alone_as_sublayer(encoder):
    nlp = spacy.blank("en")
    model = {
        "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
        "encoder": {"@architectures": encoder},
    }
    nlp.add_pipe(
        "textcat_multilabel", config={"model": {**model, "exclusive_classes": False}}
    )
    pipe = _one_update(nlp, _textcat_examples(nlp), "textcat_multilabel")
    expected_rows = 30 if "Structured" in encoder else 5
    assert pipe.model.get_ref("encoder").attrs["n_rows"] == expected_rows


@pytest.mark.parametrize(
    "arch",
    [
        "spacy-attn.DecomposableAttention.v1",
        "spacy-attn.SiameseSelfAttention.v1",
        "spacy-attn.DecomposableAttention.v2",
        "spacy-attn.SiameseSelfAttention.v2",
    ],
)
def test_pair_architecture_alone_in_pair_classifier(arch):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config={"model": {"@architectures": arch}})
    pipe = _one_update(nlp, _pair_examples(nlp), "attn_pair_classifier")
    assert pipe.model.get_ref("tok2vec").get_dim("nO") == 96
    if "Siamese" in arch:
        # Averaged like the pair classifier's loss.
        assert pipe.model.get_ref("self_attention").attrs["penalty_reduction"] == "mean"


@pytest.mark.parametrize(
    "version,vectors",
    [
        ("v1", "FrozenVectors.v1"),
        ("v2", "FrozenVectors.v1"),
        ("v2", "TrainableVectors.v1"),
    ],
)
def test_frozen_vectors_alone_as_sublayer(version, vectors):
    nlp = spacy.blank("en")
    examples = _pair_examples(nlp)
    add_random_vectors(nlp, [eg.reference.text for eg in examples], width=16)
    model = {
        "@architectures": f"spacy-attn.DecomposableAttention.{version}",
        "tok2vec": {"@architectures": f"spacy-attn.{vectors}"},
    }
    nlp.add_pipe("attn_pair_classifier", config={"model": model})
    pipe = _one_update(nlp, examples, "attn_pair_classifier")
    assert pipe.model.get_ref("tok2vec").get_dim("nO") == 16


def test_self_attentive_textcat_alone_in_doc_embedder():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "attn_doc_embedder",
        config={"model": {"@architectures": "spacy-attn.SelfAttentiveTextCat.v1"}},
    )
    pipe = _one_update(nlp, _textcat_examples(nlp), "attn_doc_embedder")
    assert pipe.model.get_ref("self_attention").attrs["penalty_reduction"] == "mean"


def test_dynamic_coattention_alone_in_span_qa():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "attn_span_qa",
        config={"model": {"@architectures": "spacy-attn.DynamicCoattention.v4"}},
    )
    _one_update(nlp, _qa_examples(nlp), "attn_span_qa")


def test_dynamic_coattention_alone_has_paper_settings():
    """From its name alone (no factory config merged in): the paper's sizes."""
    model = registry.resolve(
        {"m": {"@architectures": "spacy-attn.DynamicCoattention.v4"}}
    )["m"]
    module = model.get_ref("coattention").shims[0]._model
    assert model.get_ref("tok2vec").get_dim("nO") == 96
    hmn = module.hmn_start
    assert (module.hidden, hmn.pool_size, module.max_iterations) == (200, 16, 4)
    assert hmn.dropout.p == 0.3
