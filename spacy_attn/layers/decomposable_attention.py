"""Thinc builder for the Decomposable Attention pair classifier.

Defaults: the architecture defaults to the paper's settings (Parikh et al.
2016: hidden width 200, dropout 0.2); ``attn_pair_classifier``'s factory
config uses the same values. Left out, ``tok2vec`` is a new small trainable
``spacy.Tok2Vec.v2`` that needs no vectors (``spacy_attn.layers.defaults``;
the paper's fixed GloVe vectors are ``spacy-attn.FrozenVectors.v1``). See
docs/configs.md, "Defaults".
"""

from typing import Callable, List, Optional, Tuple, cast

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim, PyTorchWrapper_v2, chain
from thinc.types import Floats2d, Floats3d, Ints2d

from ..models.decomposable_attention import N_LEXICAL, DecomposableAttention
from ..pairs import DEFAULT_PAIR_KEY
from .defaults import build_default_tok2vec
from .exact_match import with_exact_match
from .pair_output import pair_output
from .pair_segments import Segments, pair_segments
from .tensors import torch2xp, xp2torch  # not Thinc's: no deprecated DLPack calls

# The gradient of Segments: None for the integer lengths, and for a tensor
# whose gradient torch did not compute.
SegmentGrads = Tuple[Optional[Floats3d], None, Optional[Floats3d], None]


@registry.architectures("spacy-attn.DecomposableAttention.v1")
def build_decomposable_attention_v1(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    dropout: float = 0.2,
    intra_attention: bool = False,
    max_distance: int = 10,
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Decomposable Attention (Parikh et al. 2016) over pair docs.

    tok2vec (Optional[Model[List[Doc], List[Floats2d]]]): Token vectors for
        whole pair docs: ``spacy-attn.FrozenVectors.v1`` (fixed GloVe, the
        paper's setting), a trainable ``spacy.Tok2Vec.v2``, a
        ``spacy.Tok2VecListener.v1`` or a
        ``spacy-transformers.TransformerListener.v1``. None (the default): a
        new small trainable tok2vec that needs no vectors.
    hidden_width (int): Width of the projection and of F, G and H (200 in
        the paper).
    dropout (float): Dropout on the inputs of every feed-forward layer.
    intra_attention (bool): Add intra-sentence attention (paper section 3.4).
    max_distance (int): Distances beyond this share one intra-attention bias.
    exclusive_classes (bool): Softmax over mutually exclusive labels (NLI);
        False gives an independent sigmoid score per label (e.g. a single
        "duplicate" label).
    mixed_precision (bool): Run the torch module under autocast (GPU).
    nO (Optional[int]): Number of labels; normally inferred from the
        component's labels at initialization.
    RETURNS (Model[List[Doc], Floats2d]): Class probabilities (n_docs, nO).
        ``model.get_ref("output_layer")`` is the output layer and
        ``model.attrs["multi_label"]`` follows spaCy's textcat convention.
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    return _da_model(
        tok2vec,
        pair_segments(tok2vec, pair_key=DEFAULT_PAIR_KEY),
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
    )


def _da_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    segments: Model[List[Doc], Segments],
    *,
    hidden_width: int,
    dropout: float,
    intra_attention: bool,
    max_distance: int,
    exclusive_classes: bool,
    mixed_precision: bool,
    nO: Optional[int],
    far_bias: bool = False,
    init_std: Optional[float] = None,
    null_token: bool = False,
    exact_match: bool = False,
    match_attr: str = "LOWER",
    lexical_features: bool = False,
) -> Model[List[Doc], Floats2d]:
    """The model of v1 to v5 over the given segments layer."""
    nI = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") is True else None
    module = DecomposableAttention(
        nI,
        hidden_width,
        None,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        far_bias=far_bias,
        init_std=init_std,
        null_token=null_token,
        exact_match=exact_match,
        lexical_features=lexical_features,
    )
    inputs: Model = segments
    if exact_match or lexical_features:
        inputs = with_exact_match(segments, attr=match_attr)
    torch_layer = PyTorchWrapper_v2(
        module,
        convert_inputs=convert_segment_inputs,
        convert_outputs=convert_float32_outputs,
        mixed_precision=mixed_precision,
    )
    # The lexical features join the pair representation the output layer reads.
    nP = hidden_width + N_LEXICAL * int(lexical_features)
    output_layer = pair_output(nO, nP, multi_label=not exclusive_classes)
    model: Model[List[Doc], Floats2d] = chain(inputs, torch_layer, output_layer)
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("segments", segments)
    if exact_match or lexical_features:
        model.set_ref("exact_match", inputs)
    model.set_ref("attention", torch_layer)
    model.set_ref("output_layer", output_layer)
    model.attrs["multi_label"] = not exclusive_classes
    return model


def convert_segment_inputs(
    model: Model, X: Segments, is_train: bool
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], SegmentGrads]]:
    """Padded Thinc arrays -> torch tensors; gradients flow back to the float
    inputs only (lengths are integers). ``X`` may carry the exact-match ids
    (``MatchSegments``) after the four segment arrays; they are passed on
    and get no gradient."""
    device = cast(PyTorchShim, model.shims[0]).device
    A, lengths_a, B, lengths_b = X[:4]
    args = (
        xp2torch(A, requires_grad=is_train, device=device),
        xp2torch(lengths_a, device=device),
        xp2torch(B, requires_grad=is_train, device=device),
        xp2torch(lengths_b, device=device),
    )
    extra = cast(Tuple[Ints2d, ...], X[4:])
    args += tuple(xp2torch(ids, device=device) for ids in extra)
    n_extra = len(extra)

    def reverse(d_inputs: ArgsKwargs) -> SegmentGrads:
        dA, _, dB, _ = d_inputs.args[:4]
        grads = (
            torch2xp(dA) if dA is not None else None,
            None,
            torch2xp(dB) if dB is not None else None,
            None,
        )
        return cast(SegmentGrads, grads + (None,) * n_extra)

    return ArgsKwargs(args=args, kwargs={}), reverse


def convert_float32_outputs(model: Model, X_Ytorch, is_train: bool):
    """torch output -> Thinc array, always float32.

    Under ``mixed_precision`` the module's output is float16; the Thinc
    layers after it keep float32 parameters, and the gradient that comes
    back must match the dtype of the tensor it is sent into. The cast is part
    of the autograd graph (a no-op for float32 output), so the backward pass
    sends the float32 gradient through it.
    """
    _, Ytorch = X_Ytorch
    Y32 = Ytorch.float()
    device = cast(PyTorchShim, model.shims[0]).device

    def reverse(dY: Floats2d) -> ArgsKwargs:
        return ArgsKwargs(
            args=((Y32,),), kwargs={"grad_tensors": (xp2torch(dY, device=device),)}
        )

    return torch2xp(Y32), reverse


# --- spacy-attn.DecomposableAttention.v2 -------------------------------------
# v1 above is frozen. v2 gives the intra-attention distances beyond
# max_distance their own shared bias (v1 clamped them onto +-max_distance, one
# bias fewer), offers the paper's N(0, 0.01^2) init and a choice between
# encoding the pair doc jointly (v1's only mode) or each text on its own.


@registry.architectures("spacy-attn.DecomposableAttention.v2")
def build_decomposable_attention_v2(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    dropout: float = 0.2,
    intra_attention: bool = False,
    max_distance: int = 10,
    init_std: Optional[float] = None,
    encode: str = "joint",
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Decomposable Attention (Parikh et al. 2016) over pair docs; as
    ``spacy-attn.DecomposableAttention.v1`` with these differences:

    max_distance (int): Signed distances up to this get a bias each; all
        distances beyond it share one more (the paper). v1 clamped them onto
        +-max_distance instead.
    init_std (Optional[float]): Draw the weights of the projection and of
        F, G, H (F_intra) from N(0, init_std^2), biases zero: 0.01 in the
        paper. None keeps PyTorch's default init (as v1).
    encode (str): "joint" runs ``tok2vec`` over the whole pair doc, so with
        a contextual backbone each text's vectors see the other text (a
        feature here, and the only way a listener works); "separate" encodes
        each text as a doc of its own (see ``separate_segments``).

    The other settings are v1's (see ``build_decomposable_attention_v1``).
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    return _da_model(
        tok2vec,
        segments_layer(tok2vec, encode),
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        far_bias=True,
        init_std=init_std,
    )


def segments_layer(tok2vec: Model, encode: str) -> Model[List[Doc], Segments]:
    """``pair_segments`` ("joint") or ``separate_segments`` ("separate")."""
    from .separate_segments import ENCODINGS, is_listener, separate_segments

    if encode not in ENCODINGS:
        raise ValueError(f"encode must be one of {ENCODINGS}, got {encode!r}")
    if encode == "joint":
        return pair_segments(tok2vec, pair_key=DEFAULT_PAIR_KEY)
    if is_listener(tok2vec):
        raise ValueError(
            'encode = "separate" needs a token encoder inside the model '
            "(e.g. spacy.Tok2Vec.v2, spacy-attn.FrozenVectors, "
            "spacy-transformers.Tok2VecTransformer.v3): a listener only "
            "passes on what its upstream component computed for the whole "
            "pair doc, so it cannot encode each text on its own. Use "
            'encode = "joint" with a listener.'
        )
    return separate_segments(tok2vec, pair_key=DEFAULT_PAIR_KEY)


# --- spacy-attn.DecomposableAttention.v3 -------------------------------------
# v1 and v2 above are frozen. v3 is v2 with the paper's NULL token: a learned
# token before each text, so that a word can align to nothing.


@registry.architectures("spacy-attn.DecomposableAttention.v3")
def build_decomposable_attention_v3(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    dropout: float = 0.2,
    intra_attention: bool = False,
    max_distance: int = 10,
    init_std: Optional[float] = None,
    null_token: bool = True,
    encode: str = "joint",
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Decomposable Attention (Parikh et al. 2016) over pair docs; as
    ``spacy-attn.DecomposableAttention.v2`` with:

    null_token (bool): Put a learned "NULL" token before each text (the
        default; the paper's, as its Harvard NLP and AllenNLP replications
        have it), so that a token of one text can align to nothing in the
        other. It attends and is attended to like a
        token, and ``attn_pair_classifier``'s ``alignment(...,
        include_null=True)`` shows its row and column. False computes what
        v2 computes.

    The other settings are v2's (see ``build_decomposable_attention_v2``).
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    return _da_model(
        tok2vec,
        segments_layer(tok2vec, encode),
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        far_bias=True,
        init_std=init_std,
        null_token=null_token,
    )


# --- spacy-attn.DecomposableAttention.v4 -------------------------------------
# v1 to v3 above are frozen. v4 is v3 with an exact-match signal, which is
# NOT in the paper: see docs/pair_classifier.md, "Exact match".


@registry.architectures("spacy-attn.DecomposableAttention.v4")
def build_decomposable_attention_v4(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    dropout: float = 0.2,
    intra_attention: bool = False,
    max_distance: int = 10,
    init_std: Optional[float] = None,
    null_token: bool = True,
    exact_match: bool = True,
    match_attr: str = "LOWER",
    encode: str = "joint",
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Decomposable Attention over pair docs with an exact-match signal
    (beyond the paper); as ``spacy-attn.DecomposableAttention.v3`` with:

    exact_match (bool): Tell the model which tokens of the two texts are
        identical (DrQA's exact-match feature, Chen et al. 2017): a learned
        bias on the attention logit of every identical pair, and a "this
        token occurs in the other text" input to the compare network. On
        by default; False computes what v3 computes. For tasks where
        shared words are evidence (answer-sentence selection, duplicates),
        which the paper's soft alignment over fixed vectors does not pick
        up on its own.
    match_attr (str): The token attribute that decides "identical":
        "LOWER" (the default: case-insensitive form), "ORTH", "NORM" or
        "LEMMA" (needs a lemmatizer before the component).

    The other settings are v3's (see ``build_decomposable_attention_v3``).
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    return _da_model(
        tok2vec,
        segments_layer(tok2vec, encode),
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        far_bias=True,
        init_std=init_std,
        null_token=null_token,
        exact_match=exact_match,
        match_attr=match_attr,
    )


# --- spacy-attn.DecomposableAttention.v5 -------------------------------------
# v4 with sentence-level overlap measures beside the pair representation, also
# NOT in the paper: see docs/pair_classifier.md, "Lexical features".


@registry.architectures("spacy-attn.DecomposableAttention.v5")
def build_decomposable_attention_v5(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    dropout: float = 0.2,
    intra_attention: bool = False,
    max_distance: int = 10,
    init_std: Optional[float] = None,
    null_token: bool = True,
    exact_match: bool = True,
    match_attr: str = "LOWER",
    lexical_features: bool = True,
    encode: str = "joint",
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Decomposable Attention over pair docs with an exact-match signal and
    sentence-level overlap measures (beyond the paper); as
    ``spacy-attn.DecomposableAttention.v4`` with:

    lexical_features (bool): Give the output layer, beside the pair
        representation, seven overlap measures of the two texts: the share
        of each text's tokens and token bigrams found in the other (by
        ``match_attr``), the smaller share of each kind, and the length
        ratio. On by default; False computes what v4 computes. They hold
        no weights, so every weight of a v4 model but its output layer fits
        a v5 model of the same settings: a v4 start takes a v5 config with
        a new head (``init-config --init-from START --new-head``).

    The other settings are v4's (see ``build_decomposable_attention_v4``).
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    return _da_model(
        tok2vec,
        segments_layer(tok2vec, encode),
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        far_bias=True,
        init_std=init_std,
        null_token=null_token,
        exact_match=exact_match,
        match_attr=match_attr,
        lexical_features=lexical_features,
    )
