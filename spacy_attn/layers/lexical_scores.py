"""IDF-weighted lexical scores of pair docs as a Thinc layer
(``spacy-attn.DecomposableAttention.v6``): what BM25 knows, given to the
output layer and to the component's interpolation with BM25
(docs/pair_classifier.md, "IDF features and BM25").

The IDF table is that of the training corpus's distinct candidates (second
texts), counted by the component at ``initialize`` (``lexical.IdfCounter``) and
saved in the layer's attrs, so that a packaged pipeline scores with the
table it was trained with.
"""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, cast

import numpy
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d

from ..lexical import (
    BM25_B,
    BM25_K1,
    IdfTable,
    bm25,
    candidate_idf,
    check_bm25_settings,
    content_words,
    idf_shared_words,
)
from ..pairs import DEFAULT_PAIR_KEY, get_pair_bounds

# The scores, each in [0, 1]: BM25 over its largest value for the query,
# the IDF-weighted shared words over the query's and over the candidate's
# total IDF, and the share of the query's distinct words in the candidate.
LEXICAL_SCORE_NAMES = ("bm25", "idf_query", "idf_candidate", "shared_query")
N_LEXICAL_SCORES = len(LEXICAL_SCORE_NAMES)
# Centred and scaled as the exact-match measures are
# (models.decomposable_attention.LEXICAL_SCALE), for the same reason: a new
# output weight moves by about the learn rate per step.
SCORE_SCALE = 10.0


def pair_lexical_scores(
    *, k1: float = BM25_K1, b: float = BM25_B, pair_key: str = DEFAULT_PAIR_KEY
) -> Model[List[Doc], Floats2d]:
    """A layer scoring each pair doc's second text against its first:
    ``normalised_scores`` with the IDF table in ``attrs["idf"]``, centred and
    scaled by ``SCORE_SCALE``. It holds no weights and passes no gradient.

    k1, b (float): BM25's settings.
    pair_key (str): The name of the pair (the component sets it).
    RETURNS (Model[List[Doc], Floats2d]): (n_docs, N_LEXICAL_SCORES).
    """
    check_bm25_settings(k1=k1, b=b)
    return Model(
        "pair_lexical_scores",
        _forward,
        init=_init,
        dims={"nO": N_LEXICAL_SCORES},
        attrs={"pair_key": pair_key, "k1": k1, "b": b, "idf": {}},
    )


def _init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    # The component counts the whole training corpus first; a layer used on
    # its own falls back to its sample's candidates.
    if not model.attrs["idf"] and X is not None:
        set_idf_table(model, candidate_idf(X, model.attrs["pair_key"]))


def _forward(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[Floats2d, Callable]:
    scores = layer_scores(model, docs)
    output = model.ops.asarray2f(
        cast(Floats2d, (scores - 0.5) * SCORE_SCALE), dtype="f"
    )

    def backprop(d_output: Floats2d) -> List[Doc]:
        return []

    return output, backprop


def with_lexical_scores(
    body: Model[List[Doc], Floats2d], scores: Model[List[Doc], Floats2d]
) -> Model[List[Doc], Floats2d]:
    """Append the output of a ``pair_lexical_scores`` layer to the pair
    representation ``body`` computes; gradients go back to ``body`` only.

    RETURNS (Model[List[Doc], Floats2d]): (n_docs, body's width + nO of
        ``scores``).
    """
    return Model(
        "with_lexical_scores", _with_forward, init=_with_init, layers=[body, scores]
    )


def _with_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    for layer in model.layers:
        layer.initialize(X=X)


def _with_forward(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[Floats2d, Callable]:
    body, scores = model.layers
    hidden, bp_hidden = body(docs, is_train)
    lexical = scores.predict(docs)
    width = hidden.shape[1]

    def backprop(d_output: Floats2d) -> List[Doc]:
        return bp_hidden(model.ops.xp.ascontiguousarray(d_output[:, :width]))

    return model.ops.xp.hstack([hidden, lexical]), backprop


def normalised_scores(
    docs: Sequence[Doc],
    idf: IdfTable,
    *,
    pair_key: str = DEFAULT_PAIR_KEY,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> numpy.ndarray:
    """``LEXICAL_SCORE_NAMES`` of each pair doc, the first text the query and
    the second the candidate, over their content words
    (``lexical.content_words``). Each is normalised by the query's (or the
    candidate's) largest possible value, so that it lies in [0, 1] and
    ranks the candidates of one query as the raw score does.

    docs (Sequence[Doc]): Pair docs.
    idf (IdfTable): IDF and mean candidate length.
    pair_key (str): The name of the pair.
    k1, b (float): BM25's settings.
    RETURNS (numpy.ndarray): float32 (n_docs, N_LEXICAL_SCORES); zeros where
        a text has no content word.
    """
    out = numpy.zeros((len(docs), N_LEXICAL_SCORES), dtype="f")
    for i, doc in enumerate(docs):
        s1, e1, s2, e2 = get_pair_bounds(doc, pair_key)
        query, candidate = content_words(doc[s1:e1]), content_words(doc[s2:e2])
        q_idf = sum(idf.idf(w) for w in set(query))
        c_idf = sum(idf.idf(w) for w in set(candidate))
        if not query or not candidate or q_idf <= 0.0:
            continue
        shared = idf_shared_words(query, candidate, idf)
        # A query word's BM25 term is at most idf * (k1 + 1).
        out[i, 0] = bm25(query, candidate, idf, k1=k1, b=b) / ((k1 + 1.0) * q_idf)
        out[i, 1] = shared / q_idf
        out[i, 2] = shared / c_idf if c_idf > 0.0 else 0.0
        out[i, 3] = len(set(query) & set(candidate)) / len(set(query))
    return out


def bm25_scores(model: Model, docs: Sequence[Doc]) -> numpy.ndarray:
    """The normalised BM25 (in [0, 1]) of each pair doc, by a
    ``pair_lexical_scores`` layer's table and settings: the score the
    component interpolates with its model's."""
    return layer_scores(model, docs)[:, LEXICAL_SCORE_NAMES.index("bm25")]


def layer_scores(model: Model, docs: Sequence[Doc]) -> numpy.ndarray:
    """``normalised_scores`` by a ``pair_lexical_scores`` layer's table and
    settings, in [0, 1] (before the layer's centring and scaling)."""
    return normalised_scores(
        docs,
        idf_table(model),
        pair_key=model.attrs["pair_key"],
        k1=model.attrs["k1"],
        b=model.attrs["b"],
    )


def set_idf_table(model: Model, table: IdfTable) -> None:
    """Store ``table`` in a ``pair_lexical_scores`` layer (as plain values,
    which Thinc serializes with the model)."""
    model.attrs["idf"] = {
        "n_docs": table.n_docs,
        "avg_len": table.avg_len,
        "doc_freq": dict(table.doc_freq),
    }


def idf_table(model: Model) -> IdfTable:
    """The ``IdfTable`` a ``pair_lexical_scores`` layer holds.

    RAISES (ValueError): If the layer has none yet (not initialized).
    """
    data: Dict[str, Any] = model.attrs["idf"]
    if not data:
        raise ValueError(
            "The lexical scores layer has no IDF table: initialize the "
            "component (spacy train, or nlp.initialize) before predicting."
        )
    # The table shares the attrs' dict: no copy of a large vocabulary per batch.
    return IdfTable(int(data["n_docs"]), data["doc_freq"], float(data["avg_len"]))


__all__ = [
    "LEXICAL_SCORE_NAMES",
    "N_LEXICAL_SCORES",
    "bm25_scores",
    "idf_table",
    "layer_scores",
    "normalised_scores",
    "pair_lexical_scores",
    "set_idf_table",
    "with_lexical_scores",
]
