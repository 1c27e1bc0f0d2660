"""Thinc builder for the Decomposable Attention pair classifier,
``spacy-attn.DecomposableAttention.v6`` (v1-v5: ``spacy_attn.legacy``).

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
from thinc.api import ArgsKwargs, Model, PyTorchShim, chain
from thinc.types import Floats2d, Floats3d, Ints2d

from ..lexical import BM25_B, BM25_K1
from ..models.decomposable_attention import N_LEXICAL, DecomposableAttention
from ..pairs import DEFAULT_PAIR_KEY
from .defaults import build_default_tok2vec
from .exact_match import with_exact_match
from .lexical_scores import N_LEXICAL_SCORES, pair_lexical_scores, with_lexical_scores
from .pair_output import pair_output
from .pair_segments import Segments, pair_segments
from .tensors import torch2xp, xp2torch  # not Thinc's: no deprecated DLPack calls
from .torch_wrapper import wrap_torch_module

# The gradient of Segments: None for the integer lengths, and for a tensor
# whose gradient torch did not compute.
SegmentGrads = Tuple[Optional[Floats3d], None, Optional[Floats3d], None]


def decomposable_attention_model(
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
    idf_features: bool = False,
    bm25_k1: float = BM25_K1,
    bm25_b: float = BM25_B,
) -> Model[List[Doc], Floats2d]:
    """The model of every ``spacy-attn.DecomposableAttention`` version over
    the given segments layer (the settings are ``build_decomposable_attention_v6``'s;
    ``far_bias`` False is v1's clamped intra-attention distances).

    RETURNS (Model[List[Doc], Floats2d]): Class probabilities (n_docs, nO).
    """
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
    torch_layer = wrap_torch_module(
        module,
        convert_inputs=convert_segment_inputs,
        convert_outputs=convert_float32_outputs,
        mixed_precision=mixed_precision,
    )
    # The lexical features join the pair representation the output layer reads.
    nP = hidden_width + N_LEXICAL * int(lexical_features)
    scores = None
    if idf_features:
        # Computed from the docs, beside the torch module: the IDF table is
        # the component's, counted over the whole training corpus.
        scores = pair_lexical_scores(k1=bm25_k1, b=bm25_b)
        nP += N_LEXICAL_SCORES
    output_layer = pair_output(nO, nP, multi_label=not exclusive_classes)
    model: Model[List[Doc], Floats2d]
    if scores is None:
        # The layer tree of v1-v5, which their saved pipelines must match.
        model = chain(inputs, torch_layer, output_layer)
    else:
        body = with_lexical_scores(chain(inputs, torch_layer), scores)
        model = chain(body, output_layer)
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("segments", segments)
    if exact_match or lexical_features:
        model.set_ref("exact_match", inputs)
    if scores is not None:
        model.set_ref("lexical_scores", scores)
    model.set_ref("attention", torch_layer)
    model.set_ref("output_layer", output_layer)
    model.attrs["multi_label"] = not exclusive_classes
    return model


def convert_segment_inputs(
    model: Model, X: Segments, is_train: bool
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], SegmentGrads]]:
    """Padded Thinc arrays -> torch tensors; gradients flow back to the float
    inputs only (lengths are integers), and not even to them when the
    layer's ``attrs["input_gradient"]`` is False (its builder set it: the
    token vectors come from a layer that learns nothing from them, see
    ``takes_gradient``). ``X`` may carry the exact-match ids
    (``MatchSegments``) after the four segment arrays; they are passed on
    and get no gradient."""
    device = cast(PyTorchShim, model.shims[0]).device
    A, lengths_a, B, lengths_b = X[:4]
    requires_grad = is_train and model.attrs.get("input_gradient", True)
    args = (
        xp2torch(A, requires_grad=requires_grad, device=device),
        xp2torch(lengths_a, device=device),
        xp2torch(B, requires_grad=requires_grad, device=device),
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


@registry.architectures("spacy-attn.DecomposableAttention.v6")
def build_decomposable_attention_v6(
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
    idf_features: bool = True,
    bm25_k1: float = BM25_K1,
    bm25_b: float = BM25_B,
    encode: str = "joint",
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Decomposable Attention (Parikh et al. 2016) over pair docs, with an
    exact-match signal, overlap measures and IDF-weighted lexical scores
    beyond the paper (v1-v5: ``spacy_attn.legacy``; docs/pair_classifier.md).

    tok2vec (Optional[Model]): Token vectors: ``spacy-attn.FrozenVectors.v1``
        (fixed GloVe, the paper's), a ``spacy.Tok2Vec.v2``, a tok2vec or
        transformer listener. None: a new small trainable tok2vec.
    hidden_width (int): Width of projection, F, G, H (paper: 200).
    dropout (float): Dropout on the inputs of every feed-forward layer.
    intra_attention (bool): Add intra-sentence attention (paper section 3.4).
    max_distance (int): Signed distances up to this get an intra-attention
        bias each; all distances beyond it share one more (the paper).
    init_std (Optional[float]): Weights from N(0, init_std^2), biases zero
        (paper: 0.01); None: PyTorch's default init.
    null_token (bool): A learned "NULL" token before each text (paper's).
    exact_match (bool): A learned bias on the attention logit of every
        identical token pair, and an "occurs in the other text" input to the
        compare network (DrQA's exact-match feature, Chen et al. 2017).
    match_attr (str): The token attribute that decides "identical": "LOWER"
        (the default), "ORTH", "NORM" or "LEMMA" (needs a lemmatizer).
    lexical_features (bool): Seven overlap measures for the output layer.
    idf_features (bool): Four IDF-weighted scores of the second text for
        the first for the output layer (BM25, shared words' IDF, share of
        the query's words: ``layers.lexical_scores``), by the IDF table of
        the training candidates, counted at initialization and saved with
        the model; the component's ``lexical_weight`` needs it.
    bm25_k1, bm25_b (float): BM25's settings (Lucene's defaults).
    encode (str): "joint" (the whole pair doc: a listener needs it) or
        "separate" (each text on its own).
    exclusive_classes (bool): Softmax (NLI); False: a sigmoid per label.
    mixed_precision (bool): Run the torch module under autocast (GPU).
    nO (Optional[int]): Number of labels; inferred at initialization.
    RETURNS (Model[List[Doc], Floats2d]): Class probabilities (n_docs, nO),
        with the refs "output_layer" and "tok2vec" and ``attrs["multi_label"]``.

    Off, ``idf_features`` computes v5, then ``lexical_features`` v4,
    ``exact_match`` v3, ``null_token`` v2 (an older model fits but its head).
    """
    if tok2vec is None:
        tok2vec = build_default_tok2vec()
    return decomposable_attention_model(
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
        idf_features=idf_features,
        bm25_k1=bm25_k1,
        bm25_b=bm25_b,
    )
