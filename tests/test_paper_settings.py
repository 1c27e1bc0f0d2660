"""The papers' training settings: the Adagrad optimizer, the v2
architectures' fixes (intra-attention distance bias, siamese W1 penalty,
separate encoding of siamese segments), the DA's N(0, 0.01^2) init and
fine-tuned word vectors."""

import numpy
import pytest
import spacy
import torch
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config, Optimizer

import spacy_attn
from spacy_attn import optimizers
from spacy_attn.models.decomposable_attention import (
    DecomposableAttention,
    IntraAttention,
)
from spacy_attn.models.self_attention import GeneralizedPooling, pairwise_hinge
from spacy_attn.models.siamese import SiameseSelfAttention
from spacy_attn.optimizers import Adagrad

from .util import add_random_vectors, tok2vec_config

# ---------------------------------------------------------------- Adagrad


def _run_both(steps, *, lr, init_acc, L2=0.0, clip=0.0, shape=(3, 4), seed=0):
    """Apply the same gradients with spacy-attn.Adagrad.v1 and
    torch.optim.Adagrad; return both weights after each step."""
    rng = numpy.random.default_rng(seed)
    w0 = rng.normal(size=shape).astype("float32")
    grads = [rng.normal(size=shape).astype("float32") * (i + 1) for i in range(steps)]
    ours = Adagrad(lr, initial_accumulator_value=init_acc, L2=L2, grad_clip=clip)
    W = w0.copy()
    param = torch.nn.Parameter(torch.tensor(w0))
    theirs = torch.optim.Adagrad(
        [param], lr=lr, initial_accumulator_value=init_acc, weight_decay=L2
    )
    out = []
    for g in grads:
        W, _ = ours((1, "W"), W, g.copy())
        theirs.zero_grad()
        param.grad = torch.tensor(g)
        if clip:
            # Thinc clips each parameter's gradient by its own norm; with one
            # parameter this is torch's clip_grad_norm_. Torch adds the L2
            # term after clipping, Thinc (and spacy-attn) before: only
            # compare clipping without L2.
            assert L2 == 0
            torch.nn.utils.clip_grad_norm_([param], clip)
        theirs.step()
        out.append((W.copy(), param.detach().numpy().copy()))
    return out


@pytest.mark.parametrize(
    "lr,init_acc,L2,clip",
    [
        (0.05, 0.1, 0.0, 0.0),
        (0.025, 0.1, 0.0, 0.0),
        (0.01, 0.0, 1e-4, 0.0),
        (0.05, 0.1, 0.01, 0.0),
        (0.05, 0.1, 0.0, 1.0),
    ],
)
@pytest.mark.parametrize("fused", [True, False])
def test_adagrad_matches_torch(lr, init_acc, L2, clip, fused, monkeypatch):
    """Both update paths (torch's fused kernel for numpy arrays, the array
    expression for cupy) follow torch.optim.Adagrad."""
    if not fused:
        monkeypatch.setattr(optimizers, "_fusable", lambda *args: False)
    for step, (ours, theirs) in enumerate(
        _run_both(6, lr=lr, init_acc=init_acc, L2=L2, clip=clip)
    ):
        numpy.testing.assert_allclose(
            ours, theirs, rtol=1e-5, atol=1e-7, err_msg=f"step {step}"
        )


def test_adagrad_clipping_changes_the_steps():
    """The clipping comparison above is not vacuous: clipping at 1.0 changes
    the weights (the gradients are scaled up by the step number)."""
    clipped = _run_both(4, lr=0.05, init_acc=0.1, clip=1.0)[-1][0]
    plain = _run_both(4, lr=0.05, init_acc=0.1)[-1][0]
    assert not numpy.allclose(clipped, plain)


def test_adagrad_from_config_is_a_thinc_optimizer():
    cfg = Config().from_str(
        """
        [optimizer]
        @optimizers = "spacy-attn.Adagrad.v1"
        learn_rate = 0.05
        initial_accumulator_value = 0.1
        L2 = 0.0001
        grad_clip = 5.0
        use_averages = true
        """
    )
    opt = registry.resolve(cfg)["optimizer"]
    assert isinstance(opt, Optimizer)
    assert opt.learn_rate == 0.05 and opt.initial_accumulator_value == 0.1
    assert opt.L2 == 0.0001 and opt.grad_clip == 5.0
    W = numpy.ones((2, 2), dtype="float32")
    W, g = opt((7, "W"), W, numpy.ones((2, 2), dtype="float32"))
    assert not g.any()  # the gradient is zeroed, as Thinc's optimizers do
    assert (7, "W") in opt.averages
    opt.step_schedules()  # no schedules: a no-op, but spaCy calls it


def test_adagrad_learn_rate_schedule_and_lr_scale():
    opt = Adagrad([0.1, 0.05], initial_accumulator_value=0.0)
    assert opt.learn_rate == 0.1
    opt.step_schedules()
    assert opt.learn_rate == 0.05
    W, _ = opt(
        (1, "W"),
        numpy.zeros(1, dtype="float32"),
        numpy.ones(1, dtype="float32"),
        lr_scale=0.5,
    )
    # Adagrad's first step is lr * g / |g| = lr, scaled by lr_scale.
    numpy.testing.assert_allclose(W, [-0.025], rtol=1e-6)


def test_adagrad_trains_a_pair_classifier(snli_rows):
    """The optimizer goes through spaCy's update path (Thinc and torch
    parameters alike) and changes the weights."""
    from .util import make_examples, pair_config

    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(
        "attn_pair_classifier", config=pair_config("tok2vec", hidden=16)
    )
    examples = make_examples(nlp, snli_rows[:8])
    optimizer = nlp.initialize(
        lambda: examples, sgd=Adagrad(0.05, initial_accumulator_value=0.1)
    )
    module = pipe.model.get_ref("attention").shims[0]._model
    before = [p.detach().clone() for p in module.parameters()]
    nlp.update(examples, sgd=optimizer)
    assert any(not torch.equal(b, p) for b, p in zip(before, module.parameters()))
    assert len(optimizer.mom2) > 0  # accumulators were created


# ---------------------------------------------------------------- distance bias


def _paper_bias_index(L, max_distance):
    """The paper's distance buckets, by hand: one per signed distance up to
    max_distance, one shared by every distance beyond it."""
    index = numpy.empty((L, L), dtype="int64")
    for i in range(L):
        for j in range(L):
            d = i - j
            index[i, j] = (
                d + max_distance if abs(d) <= max_distance else 2 * max_distance + 1
            )
    return index


def test_intra_attention_v2_distance_buckets_are_the_papers():
    intra = IntraAttention(8, 0.0, 3, far_bias=True)
    assert intra.distance_bias.shape == (2 * 3 + 2,)
    numpy.testing.assert_array_equal(
        intra.bias_index(9).numpy(), _paper_bias_index(9, 3)
    )


def test_da_v2_distance_max_does_not_share_the_far_bias():
    """Regression: v1 clamped distance +-max_distance onto the "beyond"
    bias. Under v2, changing the shared far bias changes the output only
    through pairs more than max_distance apart."""
    torch.manual_seed(0)
    model = registry.architectures.get("spacy-attn.DecomposableAttention.v2")(
        _null_tok2vec(),
        hidden_width=8,
        dropout=0.0,
        intra_attention=True,
        max_distance=2,
    )
    intra = model.get_ref("attention").shims[0]._model.intra
    assert intra.distance_bias.shape == (6,)
    X = torch.randn(4, 8)  # one doc of 4 tokens: distances up to 3
    mask = torch.ones(1, 4, dtype=torch.bool)
    with torch.no_grad():
        base = intra(X, mask)
        intra.distance_bias[-1] = 5.0  # the far bias: only |i - j| = 3 uses it
        changed = intra(X, mask)
    # Tokens 0 and 3 are the only ones with a partner 3 away.
    assert not torch.allclose(base[0], changed[0]) and not torch.allclose(
        base[3], changed[3]
    )
    torch.testing.assert_close(base[1:3], changed[1:3])


def test_da_v1_distance_bias_unchanged():
    """v1 keeps its (clamped) buckets, so v1 models load and behave as before."""
    intra = IntraAttention(8, 0.0, 3)
    assert intra.distance_bias.shape == (7,)
    index = intra.bias_index(9).numpy()
    assert index[0, 3] == index[0, 8] == 0 and index[8, 0] == index[3, 0] == 6


def _null_tok2vec(width=8):
    return registry.architectures.get("spacy-attn.FrozenVectors.v1")(oov_buckets=2)


# ---------------------------------------------------------------- DA init


def test_da_paper_init_std():
    torch.manual_seed(0)
    module = DecomposableAttention(None, 200, None, intra_attention=True, init_std=0.01)
    module(
        torch.randn(2, 5, 50),
        torch.tensor([5, 3]),
        torch.randn(2, 4, 50),
        torch.tensor([4, 2]),
    )
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    assert module.project in linears  # the lazy projection, now materialized
    assert len(linears) == 1 + 2 * 4  # project, F, G, H, F_intra
    for layer in linears:
        assert abs(float(layer.weight.detach().std()) - 0.01) < 0.002
        assert layer.bias is None or not layer.bias.any()
    default = DecomposableAttention(50, 200, None)
    assert (
        float(default.F.layers[1].weight.detach().std()) > 0.03
    )  # PyTorch's default is wider


def test_da_paper_init_loaded_weights_are_kept():
    """Loading a state dict into a lazy N(0, 0.01) model keeps the loaded
    weights (the init only runs when the width is first inferred)."""
    torch.manual_seed(0)
    A = (
        torch.randn(2, 5, 12),
        torch.tensor([5, 3]),
        torch.randn(2, 4, 12),
        torch.tensor([4, 2]),
    )
    trained = DecomposableAttention(None, 16, None, dropout=0.0, init_std=0.01)
    trained(*A)
    with torch.no_grad():
        trained.project.weight.mul_(100.0)
    fresh = DecomposableAttention(None, 16, None, dropout=0.0, init_std=0.01)
    fresh.load_state_dict(trained.state_dict())
    torch.testing.assert_close(fresh(*A), trained(*A))


def test_da_v2_init_std_from_config():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(
        "attn_pair_classifier",
        config={
            "model": {
                "@architectures": "spacy-attn.DecomposableAttention.v2",
                "init_std": 0.01,
                "tok2vec": tok2vec_config(16),
            }
        },
    )
    module = pipe.model.get_ref("attention").shims[0]._model
    assert abs(float(module.G.layers[1].weight.detach().std()) - 0.01) < 0.002


# ---------------------------------------------------------------- siamese


def test_siamese_v2_counts_the_w1_penalty_once():
    """Regression: v1 added generalized pooling's W1 penalty once per text
    (ratio 2.0 to the penalty itself); v2 once per batch."""
    torch.manual_seed(0)

    def penalty(once):
        encoder = GeneralizedPooling(
            6, 4, 5, heads=3, param_penalty=0.7, margin=100.0, reduction="mean"
        )
        module = SiameseSelfAttention(encoder, 8, n_rows=3, param_penalty_once=once)
        A, B = torch.randn(2, 5, 6), torch.randn(2, 4, 6)
        _, p = module(A, torch.tensor([5, 3]), B, torch.tensor([4, 2]))
        expected = 0.7 * pairwise_hinge(encoder.W1.flatten(1), 100.0)
        assert float(expected.detach()) > 0
        return float(p.detach() / expected.detach())

    assert penalty(True) == pytest.approx(1.0)
    assert penalty(False) == pytest.approx(2.0)  # v1, kept as it was


def _siamese_nlp(version, tok2vec, **model):
    nlp = spacy.blank("en")
    encoder = {
        "@architectures": "spacy-attn.GeneralizedPooling.v1",
        "hidden_width": 4,
        "attention_width": 5,
        "heads": 3,
        "param_penalty": 0.5,
        "penalty_margin": 100.0,
        "tok2vec": tok2vec,
    }
    cfg = {
        "@architectures": f"spacy-attn.SiameseSelfAttention.{version}",
        "hidden_width": 8,
        "encoder": encoder,
        **model,
    }
    pipe = nlp.add_pipe("attn_pair_classifier", config={"model": cfg})
    return nlp, pipe


def test_siamese_v2_penalty_through_the_component(snli_rows):
    from .util import make_examples

    ratios = {}
    for version in ("v1", "v2"):
        torch.manual_seed(0)
        nlp, pipe = _siamese_nlp(version, tok2vec_config(8))
        examples = make_examples(nlp, snli_rows[:4])
        nlp.initialize(lambda examples=examples: examples)
        torch_layer = pipe.model.get_ref("self_attention")
        encoder = torch_layer.shims[0]._model.encoder
        # Before the update, which changes W1.
        expected = 0.5 * pairwise_hinge(encoder.W1.detach().flatten(1), 100.0)
        nlp.update(examples)
        ratios[version] = float(torch_layer.attrs["penalty"]) / float(expected)
    assert ratios["v1"] == pytest.approx(2.0, rel=1e-4)
    assert ratios["v2"] == pytest.approx(1.0, rel=1e-4)


def _segment_vectors(pipe, nlp, first, second):
    doc = spacy_attn.make_pair(nlp, first, second)
    A, la, B, lb = pipe.model.get_ref("segments").predict([doc])
    return A[0, : int(la[0])], B[0, : int(lb[0])]


@pytest.mark.parametrize(
    "version,encode", [("v2", None), ("v2", "joint"), ("v1", None)]
)
def test_siamese_segments_do_not_see_each_other(snli_rows, version, encode):
    """Regression: with a CNN tok2vec, v1 encoded the joined pair doc, so the
    premise's vectors changed with the hypothesis. v2 encodes each text on
    its own by default; encode = "joint" keeps v1's behaviour."""
    from .util import make_examples

    model = {} if encode is None else {"encode": encode}
    nlp, pipe = _siamese_nlp(version, tok2vec_config(8), **model)
    nlp.initialize(lambda: make_examples(nlp, snli_rows[:4]))
    premise = "A man is playing a guitar on stage."
    A1, B1 = _segment_vectors(pipe, nlp, premise, "Someone makes music.")
    A2, B2 = _segment_vectors(pipe, nlp, premise, "Nobody is outside today.")
    separate = version == "v2" and encode is None
    assert numpy.allclose(A1, A2) is separate
    if separate:
        # The same as encoding the premise alone.
        alone = pipe.model.get_ref("tok2vec").predict([nlp.make_doc(premise)])[0]
        numpy.testing.assert_allclose(A1, alone, rtol=1e-5, atol=1e-6)


def test_siamese_v2_separate_trains(snli_rows):
    """Gradients flow back into the tok2vec through the separate docs."""
    from .util import make_examples

    nlp, pipe = _siamese_nlp("v2", tok2vec_config(8))
    examples = make_examples(nlp, snli_rows[:6])
    optimizer = nlp.initialize(lambda: examples)
    tok2vec = pipe.model.get_ref("tok2vec")
    before = tok2vec.to_bytes()
    losses = nlp.update(examples, sgd=optimizer)
    after = tok2vec.to_bytes()
    assert losses["attn_pair_classifier"] > 0
    assert before != after
    # Empty segments still give valid tensors.
    doc = spacy_attn.make_pair(nlp, "A dog runs.", "")
    assert pipe.model.predict([doc]).shape == (1, len(pipe.labels))


def test_separate_encoding_refuses_a_listener():
    listener = {
        "@architectures": "spacy.Tok2VecListener.v1",
        "width": 8,
        "upstream": "*",
    }
    with pytest.raises(ValueError, match="listener"):
        _siamese_nlp("v2", listener)
    # joint is fine with a listener
    _siamese_nlp("v2", listener, encode="joint")


def test_da_v2_encode_option(snli_rows):
    from .util import make_examples

    nlp = spacy.blank("en")
    cfg = {
        "@architectures": "spacy-attn.DecomposableAttention.v2",
        "hidden_width": 8,
        "encode": "separate",
        "tok2vec": tok2vec_config(8),
    }
    pipe = nlp.add_pipe("attn_pair_classifier", config={"model": cfg})
    nlp.initialize(lambda: make_examples(nlp, snli_rows[:4]))
    A1, _ = _segment_vectors(pipe, nlp, "A man plays.", "Someone makes music.")
    A2, _ = _segment_vectors(pipe, nlp, "A man plays.", "Nobody is here.")
    numpy.testing.assert_allclose(A1, A2)
    with pytest.raises(ValueError, match="encode"):
        registry.architectures.get("spacy-attn.DecomposableAttention.v2")(
            _null_tok2vec(), encode="both"
        )


# ---------------------------------------------------------------- trainable vectors


def _vectors_textcat(trainable):
    nlp = spacy.blank("en")
    texts = ["a good film", "a bad film", "great acting", "awful plot"]
    add_random_vectors(nlp, texts, width=8)
    nlp.add_pipe(
        "textcat",
        config={
            "model": {
                "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
                "hidden_width": 8,
                "encoder": {
                    "@architectures": "spacy-attn.StructuredSelfAttention.v1",
                    "hidden_width": 4,
                    "attention_width": 4,
                    "hops": 2,
                    "tok2vec": {
                        "@architectures": (
                            "spacy-attn.TrainableVectors.v1"
                            if trainable
                            else "spacy-attn.FrozenVectors.v1"
                        ),
                        "oov_buckets": 3,
                    },
                },
            }
        },
    )
    examples = []
    for i, text in enumerate(texts):
        doc = nlp.make_doc(text)
        examples.append(
            Example.from_dict(
                doc, {"cats": {"POS": float(i % 2 == 0), "NEG": float(i % 2 == 1)}}
            )
        )
    return nlp, examples


@pytest.mark.parametrize("trainable", [True, False])
def test_trainable_vectors_train_and_frozen_vectors_do_not(trainable):
    nlp, examples = _vectors_textcat(trainable)
    optimizer = nlp.initialize(lambda: examples)
    tok2vec = nlp.get_pipe("textcat").model.get_ref("tok2vec")
    doc = nlp.make_doc("good film")
    table_before = nlp.vocab.vectors.data.copy()
    before = tok2vec.predict([doc])[0].copy()
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    after = tok2vec.predict([doc])[0]
    assert (not numpy.allclose(before, after)) is trainable
    assert ("W" in tok2vec.param_names) is trainable
    # The vocab's own table is never changed.
    numpy.testing.assert_array_equal(nlp.vocab.vectors.data, table_before)


def test_trainable_vectors_round_trip(tmp_path):
    nlp, examples = _vectors_textcat(True)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    tok2vec = nlp.get_pipe("textcat").model.get_ref("tok2vec")
    doc = nlp.make_doc("good film")
    trained = tok2vec.predict([doc])[0]
    nlp.to_disk(tmp_path / "nlp")
    nlp2 = spacy.load(tmp_path / "nlp")
    loaded = (
        nlp2.get_pipe("textcat")
        .model.get_ref("tok2vec")
        .predict([nlp2.make_doc("good film")])[0]
    )
    numpy.testing.assert_allclose(loaded, trained)
    fresh = nlp2.get_pipe("textcat").model.get_ref("tok2vec")
    numpy.testing.assert_allclose(fresh.get_param("W"), tok2vec.get_param("W"))


def test_trainable_vectors_start_as_frozen_vectors():
    nlp = spacy.blank("en")
    add_random_vectors(nlp, ["the cat sat on the mat"], width=8)
    docs = [nlp.make_doc("the cat sat on a mat")]
    frozen = registry.architectures.get("spacy-attn.FrozenVectors.v1")(oov_buckets=3)
    trainable = registry.architectures.get("spacy-attn.TrainableVectors.v1")(
        oov_buckets=3
    )
    frozen.initialize(X=docs)
    trainable.initialize(X=docs)
    trainable.set_param("E", frozen.get_param("E"))
    numpy.testing.assert_array_equal(
        frozen.predict(docs)[0], trainable.predict(docs)[0]
    )
    assert frozen.param_names == ("E",)
    assert trainable.param_names == ("E", "W")
    # The old name of the trainable layer is gone (0.1.0 was unreleased).
    with pytest.raises(Exception, match="FrozenVectors.v2"):
        registry.architectures.get("spacy-attn.FrozenVectors.v2")


# ---------------------------------------------------------------- configs

CONFIG_DIR = __import__("pathlib").Path(__file__).resolve().parent.parent / "configs"

# The papers' values that each "SETTING: PAPER" config must carry:
# (dotted config path, value).
PAPER_VALUES = {
    "glove.cfg": {
        "training.optimizer.@optimizers": "spacy-attn.Adagrad.v1",
        "training.optimizer.learn_rate": 0.05,
        "training.optimizer.initial_accumulator_value": 0.1,
        "training.batcher.size": 4,
        "components.attn_pair_classifier.model.dropout": 0.2,
        "components.attn_pair_classifier.model.init_std": 0.01,
        "components.attn_pair_classifier.model.hidden_width": 200,
        "components.attn_pair_classifier.model.intra_attention": False,
        "components.attn_pair_classifier.model.@architectures": (
            "spacy-attn.DecomposableAttention.v6"
        ),
        "components.attn_pair_classifier.model.null_token": True,
        # v6's settings beyond the paper, off.
        "components.attn_pair_classifier.model.exact_match": False,
        "components.attn_pair_classifier.model.lexical_features": False,
        "components.attn_pair_classifier.model.idf_features": False,
    },
    "glove_intra.cfg": {
        "training.optimizer.@optimizers": "spacy-attn.Adagrad.v1",
        "training.optimizer.learn_rate": 0.025,
        "training.optimizer.initial_accumulator_value": 0.1,
        "training.batcher.size": 4,
        "components.attn_pair_classifier.model.@architectures": (
            "spacy-attn.DecomposableAttention.v6"
        ),
        "components.attn_pair_classifier.model.null_token": True,
        "components.attn_pair_classifier.model.exact_match": False,
        "components.attn_pair_classifier.model.lexical_features": False,
        "components.attn_pair_classifier.model.idf_features": False,
        "components.attn_pair_classifier.model.init_std": 0.01,
        "components.attn_pair_classifier.model.intra_attention": True,
    },
    "snli_siamese.cfg": {
        "training.optimizer.@optimizers": "spacy-attn.Adagrad.v1",
        "training.optimizer.learn_rate": 0.01,
        # Not the paper's (it does not say): 0.1 did not learn in the budget
        # where 0 does (configs/snli_siamese.cfg, docs/paper_settings.md).
        "training.optimizer.initial_accumulator_value": 0.0,
        "components.attn_pair_classifier.model.@architectures": (
            "spacy-attn.SiameseSelfAttention.v2"
        ),
        "components.attn_pair_classifier.model.encode": "separate",
        "components.attn_pair_classifier.model.hidden_width": 4000,
        "components.attn_pair_classifier.model.encoder.penalty_coef": 0.3,
        "components.attn_pair_classifier.model.encoder.attention_width": 150,
        "components.attn_pair_classifier.model.encoder.hops": 30,
        "components.attn_pair_classifier.model.encoder.tok2vec.@architectures": (
            "spacy-attn.TrainableVectors.v1"
        ),
    },
    "yelp_selfattn.cfg": {
        "training.optimizer.@optimizers": "SGD.v1",
        "training.optimizer.learn_rate": 0.06,
        "training.optimizer.L2": 0.0001,
        "training.optimizer.L2_is_weight_decay": False,
        "training.optimizer.grad_clip": 0.5,
        "training.batcher.size": 32,
        "training.dropout": 0.5,
        "components.textcat.model.dropout": 0.5,
        "components.textcat.model.hidden_width": 3000,
        "components.textcat.model.encoder.penalty_coef": 1.0,
        "components.textcat.model.encoder.tok2vec.@architectures": "spacy-attn.TrainableVectors.v1",
        "components.textcat.model.encoder.tok2vec.key_attr": "ORTH",
    },
    "age_selfattn.cfg": {
        "training.optimizer.@optimizers": "SGD.v1",
        "training.optimizer.learn_rate": 0.06,
        "training.optimizer.L2": 0.0001,
        "training.batcher.size": 16,
        "training.dropout": 0.5,
        "components.textcat.model.dropout": 0.5,
        "components.textcat.model.hidden_width": 2000,
        "components.textcat.model.encoder.tok2vec.@architectures": "spacy-attn.TrainableVectors.v1",
        "components.textcat.model.encoder.tok2vec.key_attr": "ORTH",
    },
    "squad_glove.cfg": {
        "training.optimizer.@optimizers": "Adam.v1",
        "components.attn_span_qa.model.window": 600,
        "components.attn_span_qa.model.hidden_width": 200,
        "components.attn_span_qa.model.pool_size": 16,
        "components.attn_span_qa.model.max_iterations": 4,
        "components.attn_span_qa.model.tok2vec.key_attr": "ORTH",
        "components.attn_span_qa.model.tok2vec.oov_buckets": 0,
        "components.attn_span_qa.model.tok2vec.normalize": False,
    },
}


def _setting(path):
    first = path.read_text().splitlines()[0]
    assert first.startswith("# SETTING: "), (
        f"{path.name}: the header must say which setting it is"
    )
    return first[len("# SETTING: ") :]


def test_every_config_says_which_setting_it_is():
    paper = {
        p.name for p in CONFIG_DIR.glob("*.cfg") if _setting(p).startswith("PAPER")
    }
    assert paper == set(PAPER_VALUES)
    for path in CONFIG_DIR.glob("*.cfg"):
        if path.name not in paper:
            assert "VARIANT" in _setting(path), path.name
    # Every paper config that trains with something other than Adam has a
    # fast Adam variant beside it.
    for name in paper - {"squad_glove.cfg"}:
        adam = CONFIG_DIR / name.replace(".cfg", "_adam.cfg")
        assert adam.exists(), adam.name
        assert (
            Config().from_disk(adam, interpolate=False)["training"]["optimizer"][
                "@optimizers"
            ]
            == "Adam.v1"
        )


@pytest.mark.parametrize("name", sorted(PAPER_VALUES))
def test_paper_configs_carry_the_papers_values(name):
    cfg = Config().from_disk(CONFIG_DIR / name, interpolate=False)
    for dotted, expected in PAPER_VALUES[name].items():
        node = cfg
        for key in dotted.split("."):
            node = node[key]
        assert node == expected, (name, dotted, node)


def test_segment_docs_keep_words_spaces_norms_and_annotations():
    from spacy_attn.layers.separate_segments import segment_docs

    nlp = spacy.blank("en")
    doc = spacy_attn.make_pair(nlp, "I don't know.", "She can't  say!")
    s1, e1, s2, e2 = spacy_attn.get_pair_bounds(doc)
    for annotate in (False, True):
        if annotate:
            for token in doc:
                token.tag_ = "X"
        a, b = segment_docs(doc, s1, e1, s2, e2)
        for seg, (start, end) in ((a, (s1, e1)), (b, (s2, e2))):
            span = doc[start:end]
            assert [t.text for t in seg] == [t.text for t in span]
            assert [t.whitespace_ for t in seg] == [t.whitespace_ for t in span]
            assert [t.norm_ for t in seg] == [t.norm_ for t in span]
            assert [t.tag_ for t in seg] == [t.tag_ for t in span]
    assert "not" in [t.norm_ for t in a]  # a tokenizer-exception norm


@pytest.mark.parametrize("name", ["yelp_selfattn.cfg", "age_selfattn.cfg"])
def test_self_attentive_paper_configs_state_their_loss_reduction(name):
    """spaCy's textcat sums its loss gradient over the batch; the paper does
    not give its reduction, so the config must say which one it trains with."""
    header = (CONFIG_DIR / name).read_text().split("\n[", 1)[0]
    assert "Loss reduction" in header and "summed over the batch" in " ".join(
        header.replace("#", " ").split()
    ).replace("SUMMED", "summed")
