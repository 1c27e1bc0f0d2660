"""Thinc builders for the self-attentive embeddings (Lin et al. 2017; Chen et
al. 2018) and the text classifier built on them; the penalty and its scale are
described in docs/doc_embedder.md."""

from typing import Any, Callable, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim, Relu, chain
from thinc.types import Floats2d, Floats3d, Ints1d

from ..models.self_attention import build_encoder
from ._util import segment_index
from .defaults import build_default_tok2vec
from .pair_output import pair_output
from .tensors import torch2xp, xp2torch  # not Thinc's: no deprecated DLPack calls
from .torch_wrapper import wrap_torch_module

# What the encoders give: (M, A, H, lengths). M (n_docs, r, 2u) the embedding
# matrix, r hops / heads; A (n_docs, r, L) per-hop token weights, rows summing
# to one over the doc's tokens, exact zeros on padding (L = longest doc); H
# (n_docs, L, 2u) BiLSTM token states, zeros on padding; lengths (n_docs,)
# tokens per doc. Only M takes a gradient.
SelfAttentionOutput = Tuple[Floats3d, Floats3d, Floats3d, Ints1d]
POOLINGS = ("flatten", "mean", "max")
PENALTY_REDUCTION = "penalty_reduction"  # the torch layer's attrs key


@registry.architectures("spacy-attn.StructuredSelfAttention.v1")
def build_structured_self_attention(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 300,
    attention_width: int = 350,
    hops: int = 30,
    penalty_coef: float = 1.0,
    depth: int = 1,
    dropout: float = 0.0,
    mixed_precision: bool = False,
) -> Model[List[Doc], SelfAttentionOutput]:
    """Lin et al. (2017), "A Structured Self-Attentive Sentence Embedding":
    BiLSTM + r-hop self-attention, trained with the penalty
    ``penalty_coef * ||A A^T - I||_F^2``.

    tok2vec (Optional[Model[List[Doc], List[Floats2d]]]): Token vectors:
        ``spacy-attn.FrozenVectors.v1`` (fixed word vectors, the paper's
        setting), a ``spacy.Tok2Vec.v2`` / listener, or a spacy-transformers
        listener. None (the default): a new small trainable tok2vec that
        needs no vectors (``spacy_attn.layers.defaults``).
    hidden_width (int): LSTM units per direction (u; 300 in the paper).
    attention_width (int): d_a, the attention MLP's hidden width (350 for
        Yelp and Age, 150 for SNLI in the paper).
    hops (int): r, the number of attention hops (30 in the paper).
    penalty_coef (float): Weight of the penalty (1.0 in the paper; 0 = off).
        It is summed over the docs of a batch, like spaCy's textcat loss.
    depth (int): Stacked BiLSTM layers.
    dropout (float): Dropout on the BiLSTM input.
    mixed_precision (bool): Run the torch module under autocast (GPU).
    RETURNS (Model[List[Doc], SelfAttentionOutput]): (M, A, H, lengths).
    """
    return encoder_model(
        "structured",
        tok2vec,
        mixed_precision,
        nH=hidden_width,
        nA=attention_width,
        hops=hops,
        penalty_coef=penalty_coef,
        depth=depth,
        dropout=dropout,
    )


@registry.architectures("spacy-attn.GeneralizedPooling.v1")
def build_generalized_pooling(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 300,
    attention_width: int = 600,
    heads: int = 5,
    param_penalty: float = 0.0,
    attention_penalty: float = 0.0,
    output_penalty: float = 0.0,
    penalty_margin: float = 1.0,
    depth: int = 1,
    dropout: float = 0.0,
    mixed_precision: bool = False,
) -> Model[List[Doc], SelfAttentionOutput]:
    """Chen, Ling & Zhu (2018), "Enhancing Sentence Embedding with Generalized
    Pooling": vector-based multi-head attention over BiLSTM states, with the
    paper's three optional disagreement penalties, each
    ``coef * sum_{i<j} max(margin - ||X_i - X_j||^2, 0)`` over pairs of heads.

    tok2vec (Optional[Model[List[Doc], List[Floats2d]]]): Token vectors (see
        ``spacy-attn.StructuredSelfAttention.v1``; None: the default tok2vec).
    hidden_width (int): LSTM units per direction.
    attention_width (int): Hidden width of each head's attention network.
    heads (int): Number of heads (I).
    param_penalty (float): Penalty on the heads' first-layer weights (0 = off).
    attention_penalty (float): Penalty on the heads' attention matrices.
    output_penalty (float): Penalty on the heads' pooled vectors.
    penalty_margin (float): The hinge margin (lambda) of the penalties.
    depth (int): Stacked BiLSTM layers.
    dropout (float): Dropout on the BiLSTM input.
    mixed_precision (bool): Run the torch module under autocast (GPU).
    RETURNS (Model[List[Doc], SelfAttentionOutput]): (M, A, H, lengths); A is
        each head's attention averaged over the 2u dimensions.
    """
    return encoder_model(
        "generalized",
        tok2vec,
        mixed_precision,
        nH=hidden_width,
        nA=attention_width,
        heads=heads,
        param_penalty=param_penalty,
        attention_penalty=attention_penalty,
        output_penalty=output_penalty,
        margin=penalty_margin,
        depth=depth,
        dropout=dropout,
    )


@registry.architectures("spacy-attn.SelfAttentiveTextCat.v1")
def build_self_attentive_textcat(
    encoder: Optional[Model[List[Doc], SelfAttentionOutput]] = None,
    *,
    pooling: str = "flatten",
    hidden_width: int = 512,
    dropout: float = 0.0,
    exclusive_classes: bool = True,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Text classifier on a self-attentive embedding: pool the embedding
    matrix M, one ReLU hidden layer (the paper's 2-layer MLP), then softmax or
    a sigmoid per label. Usable as the model of spaCy's ``textcat`` and
    ``textcat_multilabel`` and of ``attn_doc_embedder``.

    encoder (Optional[Model[List[Doc], SelfAttentionOutput]]): A
        ``spacy-attn.StructuredSelfAttention.v1`` or
        ``spacy-attn.GeneralizedPooling.v1``. None (the default): a new
        ``spacy-attn.StructuredSelfAttention.v1`` with its defaults.
    pooling (str): "flatten" (the paper: M reshaped to r*2u), "mean" or "max"
        over hops (2u).
    hidden_width (int): Width of the hidden layer.
    dropout (float): Dropout on the hidden layer.
    exclusive_classes (bool): Softmax (textcat) or one sigmoid per label
        (textcat_multilabel).
    nO (Optional[int]): Number of labels; set by the component.
    RETURNS (Model[List[Doc], Floats2d]): Label probabilities. Refs:
        "encoder", "self_attention" (the torch layer), "tok2vec", "head"
        (pooled embedding -> probabilities), "output_layer";
        ``attrs["multi_label"]`` as spaCy's textcat expects.
    """
    if encoder is None:
        encoder = build_structured_self_attention()
    output_layer = pair_output(nO, hidden_width, multi_label=not exclusive_classes)
    head: Model[SelfAttentionOutput, Floats2d] = chain(
        embedding_pool(pooling),
        Relu(nO=hidden_width, dropout=dropout, normalize=False),
        output_layer,
    )
    model: Model[List[Doc], Floats2d] = chain(encoder, head)
    model.set_ref("encoder", encoder)
    model.set_ref("self_attention", encoder.get_ref("self_attention"))
    model.set_ref("tok2vec", encoder.get_ref("tok2vec"))
    model.set_ref("head", head)
    model.set_ref("output_layer", output_layer)
    model.attrs["multi_label"] = not exclusive_classes
    return model


def encoder_model(
    kind: str,
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]],
    mixed_precision: bool,
    **settings: Any,
) -> Model[List[Doc], SelfAttentionOutput]:
    """The model of both self-attentive encoders: ``tok2vec``, padding and
    the torch module ``build_encoder(kind, ...)`` of ``settings``.

    kind (str): "structured" or "generalized" (``build_encoder``).
    tok2vec (Optional[Model[List[Doc], List[Floats2d]]]): None: the default
        small trainable tok2vec.
    mixed_precision (bool): Run the torch module under autocast (GPU).
    **settings: The torch module's settings (``nH`` its hidden width).
    RETURNS (Model[List[Doc], SelfAttentionOutput]): (M, A, H, lengths).
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    nI = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") is True else None
    module = build_encoder(kind, nI, **settings)
    # Summed over the batch, like spaCy's textcat loss (docs/doc_embedder.md).
    torch_layer = penalized_torch_layer(
        module,
        convert_padded_inputs,
        convert_self_attention_outputs,
        reduction="sum",
        mixed_precision=mixed_precision,
    )
    model: Model[List[Doc], SelfAttentionOutput] = chain(
        tok2vec, pad_sequences(), torch_layer
    )
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("self_attention", torch_layer)
    model.attrs["n_rows"] = module.n_rows  # r hops / I heads
    model.attrs["width"] = 2 * settings["nH"]  # 2u
    return model


def penalized_torch_layer(
    module: Any,
    convert_inputs: Callable,
    convert_outputs: Callable,
    *,
    reduction: str,
    mixed_precision: bool,
) -> Model:
    """A torch module that returns a penalty beside its output, wrapped: the
    converters keep the last penalty in ``attrs["penalty"]`` (0.0 until a
    call), and ``attrs[PENALTY_REDUCTION]`` tells the module how to reduce
    it over a batch.

    module (torch.nn.Module): The module.
    convert_inputs (Callable): Thinc's ``convert_inputs`` of the wrapper.
    convert_outputs (Callable): Thinc's ``convert_outputs`` of the wrapper.
    reduction (str): "sum" or "mean" over the batch.
    mixed_precision (bool): Run the module under autocast (GPU).
    RETURNS (Model): The wrapped module.
    """
    torch_layer = wrap_torch_module(
        module,
        convert_inputs=convert_inputs,
        convert_outputs=convert_outputs,
        mixed_precision=mixed_precision,
    )
    torch_layer.attrs["penalty"] = 0.0
    torch_layer.attrs[PENALTY_REDUCTION] = reduction
    return torch_layer


def pad_sequences() -> Model[List[Floats2d], Tuple[Floats3d, Ints1d]]:
    """List of (n_tokens, width) arrays -> zero-padded (n_docs, L, width) and
    the lengths. L is at least 1, so empty docs still give a valid tensor."""
    return Model("pad_sequences", _pad_forward)


def _pad_forward(model: Model, Xs: List[Floats2d], is_train: bool):
    ops = model.ops
    lengths = numpy.asarray([len(x) for x in Xs], dtype="int32")
    width = Xs[0].shape[1] if Xs else 0
    # Whole docs are segments [0, length): the pair layers' gather index.
    bounds = numpy.stack([numpy.zeros_like(lengths), lengths], axis=1)
    example, position, _, _ = segment_index(bounds, numpy.cumsum(lengths) - lengths)
    # The int32 numpy arrays are Ints1d to Thinc (casts); Thinc's array types
    # do not model fancy indexing (the ignore).
    example_i = ops.asarray1i(cast(Ints1d, example))
    position_i = ops.asarray1i(cast(Ints1d, position))
    lengths_i = cast(Ints1d, lengths)
    padded = ops.alloc3f(len(Xs), max(int(lengths.max(initial=0)), 1), width)
    if len(example):
        padded[example_i, position_i] = ops.flatten(Xs)  # type: ignore[index]

    def backprop(d_padded: Tuple[Floats3d, Optional[Ints1d]]) -> List[Floats2d]:
        dX = d_padded[0]
        return ops.unflatten(
            cast(Floats2d, dX[example_i, position_i]), ops.asarray1i(lengths_i)
        )

    return (padded, ops.asarray1i(lengths_i)), backprop


def convert_padded_inputs(model: Model, X: Tuple[Floats3d, Ints1d], is_train: bool):
    """(padded, lengths) -> torch, with the layer's penalty reduction; the
    gradient flows back to ``padded``."""
    device = cast(PyTorchShim, model.shims[0]).device
    padded, lengths = X
    args = (
        xp2torch(padded, requires_grad=is_train, device=device),
        xp2torch(lengths, device=device),
    )

    def reverse(d_inputs: ArgsKwargs):
        d_padded = d_inputs.args[0]
        return (torch2xp(d_padded) if d_padded is not None else None, None)

    return ArgsKwargs(args=args, kwargs=penalty_reduction_kwargs(model)), reverse


def penalty_reduction_kwargs(model: Model) -> dict:
    """The layer's penalty reduction as the torch module's keyword argument."""
    # A layer without the attr (built before it existed) keeps the module's own.
    reduction = model.attrs.get(PENALTY_REDUCTION)
    return {} if reduction is None else {"reduction": reduction}


def convert_self_attention_outputs(model: Model, X_Ytorch, is_train: bool):
    """torch (M, A, H, penalty) -> Thinc (M, A, H, lengths).

    The backward pass sends the gradient of M and a gradient of 1 for the
    (already weighted) penalty into ``torch.autograd.backward`` together, so
    whatever loss the owner puts on M, the parameters get d(loss + penalty).
    """
    (_, lengths), (M, A, H, penalty) = X_Ytorch
    # float32 whatever autocast chose (see convert_float32_outputs).
    M, A, H, penalty = M.float(), A.float(), H.float(), penalty.float()
    device = cast(PyTorchShim, model.shims[0]).device
    if is_train:
        # A 0-d tensor, not a float: float() would make every GPU step wait
        # here for the forward pass. Readers call float() after the step.
        model.attrs["penalty"] = penalty.detach()
    Y = (torch2xp(M), torch2xp(A), torch2xp(H), lengths)

    def reverse(dY: SelfAttentionOutput) -> ArgsKwargs:
        return penalized_backward_args(((M, A, H), dY[:3]), penalty, device)

    return Y, reverse


def penalized_backward_args(outputs_and_grads, penalty, device) -> ArgsKwargs:
    """Arguments of ``torch.autograd.backward`` for the outputs that got a
    gradient, plus the (already weighted) penalty with gradient 1."""
    tensors, grads = [], []
    for y_torch, dy in zip(*outputs_and_grads):
        if dy is not None:
            tensors.append(y_torch)
            grads.append(xp2torch(dy, device=device))
    if penalty.requires_grad:
        tensors.append(penalty)
        grads.append(penalty.new_ones(()))
    return ArgsKwargs(args=(tuple(tensors),), kwargs={"grad_tensors": tuple(grads)})


def embedding_pool(pooling: str = "flatten") -> Model[SelfAttentionOutput, Floats2d]:
    """The embedding matrix M (n_docs, r, 2u) -> one vector per doc.

    pooling (str): "flatten" (r * 2u, Lin et al.), "mean" or "max" over the
        hops (2u).
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    return Model("embedding_pool", _pool_forward, attrs={"pooling": pooling})


def pool_matrix(M: Floats3d, pooling: str) -> Floats2d:
    """Pool (n, r, d) -> (n, r*d) or (n, d) without a backward pass."""
    if pooling == "flatten":
        return cast(Floats2d, M.reshape((M.shape[0], -1)))
    if pooling == "mean":
        return M.mean(axis=1)  # type: ignore[attr-defined]  # Thinc's types lack mean
    return M.max(axis=1)


def _pool_forward(model: Model, X: SelfAttentionOutput, is_train: bool):
    ops = model.ops
    M = X[0]
    pooling = model.attrs["pooling"]
    Y = ops.xp.ascontiguousarray(pool_matrix(M, pooling))
    shape = M.shape

    # Only M has a gradient. Thinc's array types do not model newaxis
    # indexing (the ignores).
    def backprop(dY: Floats2d) -> Tuple[Floats3d, None, None, None]:
        if pooling == "flatten":
            dM = dY.reshape(shape)
        elif pooling == "mean":
            dM = ops.xp.repeat(dY[:, None, :] / shape[1], shape[1], axis=1)  # type: ignore[index]
        else:
            # The gradient goes to the hop that gave the maximum.
            dM = (M == Y[:, None, :]) * dY[:, None, :]  # type: ignore[index]
        return (ops.asarray3f(cast(Floats3d, dM)), None, None, None)

    return Y, backprop
