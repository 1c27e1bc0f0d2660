"""``spacy-attn.DecomposableAttention.v1``-``v5``, superseded by ``v6``
(``spacy_attn.layers.decomposable_attention``).

Each later version added a setting whose off value computes the version
before it, so v2-v5 are v6 with those settings off; v1 differs in one more
place no setting of v5 reaches (see ``build_decomposable_attention_v1``).
"""

from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..layers.decomposable_attention import (
    build_decomposable_attention_v6,
    decomposable_attention_model,
)
from ..layers.defaults import build_default_tok2vec
from ..layers.pair_segments import pair_segments
from ..pairs import DEFAULT_PAIR_KEY


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
    max_distance (int): Distances beyond this are clamped onto
        +-max_distance and share its bias (v2 and later give them one more
        bias of their own, as the paper does).
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
    return decomposable_attention_model(
        tok2vec,
        pair_segments(tok2vec, pair_key=DEFAULT_PAIR_KEY),
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        far_bias=False,
    )


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
    return build_decomposable_attention_v3(
        tok2vec,
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        init_std=init_std,
        null_token=False,
        encode=encode,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
    )


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
    return build_decomposable_attention_v4(
        tok2vec,
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        init_std=init_std,
        null_token=null_token,
        exact_match=False,
        encode=encode,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
    )


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
    return build_decomposable_attention_v6(
        tok2vec,
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        init_std=init_std,
        null_token=null_token,
        exact_match=exact_match,
        match_attr=match_attr,
        lexical_features=False,
        idf_features=False,
        encode=encode,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
    )


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
    """Decomposable Attention with an exact-match signal and overlap
    measures: ``spacy-attn.DecomposableAttention.v6`` without its IDF
    features (``idf_features = false``). The settings are v6's."""
    return build_decomposable_attention_v6(
        tok2vec,
        hidden_width=hidden_width,
        dropout=dropout,
        intra_attention=intra_attention,
        max_distance=max_distance,
        init_std=init_std,
        null_token=null_token,
        exact_match=exact_match,
        match_attr=match_attr,
        lexical_features=lexical_features,
        idf_features=False,
        encode=encode,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
    )
