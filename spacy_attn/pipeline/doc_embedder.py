"""The ``attn_doc_embedder`` component: an interpretable self-attentive document
embedding (Lin et al. 2017), trained through a text classifier on top of it
(defaults: docs/configs.md, "Defaults")."""

from typing import Callable, Dict, Iterable, List, Optional, Tuple, cast

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats2d, Floats3d

from ..layers.self_attention import (
    PENALTY_REDUCTION,
    POOLINGS,
    SelfAttentionOutput,
    pool_matrix,
)
from .base import LossFunction
from .classifier import AttnClassifier
from .defaults import default_tok2vec_config

# penalty_coef 0.01, not the paper's 1.0, which made the penalty most of the
# loss and cost 9-17 points of accuracy on RT and IMDB
# (benchmarks/results/notes_doc_penalty.md).
DEFAULT_EMBEDDER_MODEL = """
[model]
@architectures = "spacy-attn.SelfAttentiveTextCat.v1"
pooling = "flatten"
hidden_width = 256
dropout = 0.0
exclusive_classes = true
nO = null

[model.encoder]
@architectures = "spacy-attn.StructuredSelfAttention.v1"
hidden_width = 128
attention_width = 128
hops = 8
penalty_coef = 0.01
depth = 1
dropout = 0.0

""" + default_tok2vec_config("model.encoder.tok2vec")
DEFAULT_MODEL = Config().from_str(DEFAULT_EMBEDDER_MODEL)["model"]

EXTENSIONS = ("attn_embedding", "attn_weights", "attn_states")


def install_extensions() -> None:
    """Register ``doc._.attn_embedding``, ``doc._.attn_weights`` and
    ``doc._.attn_states`` (default None), unless they exist. Called by every
    ``DocEmbedder`` (as spacy-transformers does for ``doc._.trf_data``), so
    importing the package changes no global state; call it yourself to read
    the attributes of docs that never met an embedder in this process. One
    set of extensions is shared by every embedder in a pipeline (the last one
    to run wins, like the doc.vector hooks).
    """
    for name in EXTENSIONS:
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)


@Language.factory(
    "attn_doc_embedder",
    assigns=["doc.cats", "doc._.attn_embedding", "doc._.attn_weights"],
    default_config={
        "model": DEFAULT_MODEL,
        "embedding_pooling": "flatten",
        "set_cats": True,
        "doc_vector": False,
        "span_vector": False,
        "threshold": 0.5,
        "scorer": {"@scorers": "spacy-attn.doc_embedder_scorer.v1"},
    },
    default_score_weights={
        "cats_score": 1.0,
        "cats_macro_f": None,
        "cats_macro_auc": None,
        "cats_micro_f": None,
    },
)
def make_doc_embedder(
    nlp: Language,
    name: str,
    model: Model[List[Doc], Floats2d],
    *,
    embedding_pooling: str,
    set_cats: bool,
    doc_vector: bool,
    span_vector: bool,
    threshold: float,
    scorer: Optional[Callable],
) -> "DocEmbedder":
    """Create an ``attn_doc_embedder``.

    model (Model[List[Doc], Floats2d]): ``spacy-attn.SelfAttentiveTextCat.v1``
        (or any model with an "encoder" ref giving a SelfAttentionOutput and a
        "head" ref mapping it to label scores).
    embedding_pooling (str): What ``doc._.attn_embedding`` holds: "flatten"
        (the r x 2u matrix M as one vector, the paper's embedding), "mean" or
        "max" over hops (2u).
    set_cats (bool): Also write the classifier's scores to ``doc.cats``.
    doc_vector (bool): Serve ``doc.vector`` and ``doc.similarity`` from the
        embedding (user hooks).
    span_vector (bool): Serve ``span.vector`` / ``span.similarity``: the
        doc's attention renormalized over the span's tokens pools the span's
        BiLSTM states (kept in ``doc._.attn_states``).
    threshold (float): Decision threshold of multi-label models (scorer).
    scorer (Optional[Callable]): Scoring function.
    """
    return DocEmbedder(
        nlp.vocab,
        model,
        name,
        embedding_pooling=embedding_pooling,
        set_cats=set_cats,
        doc_vector=doc_vector,
        span_vector=span_vector,
        threshold=threshold,
        scorer=scorer,
    )


class DocEmbedder(AttnClassifier):
    """Embed each doc with structured self-attention and classify it.

    Writes ``doc._.attn_embedding`` (float32 vector), ``doc._.attn_weights``
    ((r, n_tokens) float32, each hop's weights over the doc's tokens, rows
    summing to one), optionally ``doc.cats`` and the ``doc.vector`` /
    ``span.vector`` hooks. Training is supervised by ``doc.cats`` (exclusive
    classes or multi-label, as the model's ``exclusive_classes``); the loss is
    the cross-entropy plus the attention penalty, and the penalty alone is
    also reported as ``losses[f"{name}_penalty"]``.

    Label handling, the loss and serialization are ``AttnClassifier``'s (as
    for the pair classifier); the input is a whole doc and the outputs differ.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "attn_doc_embedder",
        *,
        embedding_pooling: str = "flatten",
        set_cats: bool = True,
        doc_vector: bool = False,
        span_vector: bool = False,
        threshold: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component (see ``make_doc_embedder`` for the options)."""
        if embedding_pooling not in POOLINGS:
            raise ValueError(
                f"embedding_pooling must be one of {POOLINGS}, got {embedding_pooling!r}"
            )
        for ref in ("encoder", "head", "self_attention"):
            if not model.has_ref(ref):
                raise ValueError(
                    f"'{name}' needs a model with an '{ref}' ref, such as "
                    f"spacy-attn.SelfAttentiveTextCat.v1; got '{model.name}'."
                )
        install_extensions()
        cfg = {
            "embedding_pooling": embedding_pooling,
            "set_cats": set_cats,
            "doc_vector": doc_vector,
            "span_vector": span_vector,
        }
        super().__init__(vocab, model, name, cfg, threshold=threshold, scorer=scorer)

    def _configure_model(self) -> None:
        # The loss is averaged over the batch, so the penalty must be too
        # (spaCy's textcat sums both; the layer defaults to that). The torch
        # layer's documented attr, read by its input converter.
        self.model.get_ref("self_attention").attrs[PENALTY_REDUCTION] = "mean"
        super()._configure_model()

    # predict and set_annotations also carry the encoder's outputs, which
    # set_annotations writes to the docs: their types differ from
    # AttnClassifier's (the ignores), as spaCy's pipes vary them.
    def predict(  # type: ignore[override]
        self, docs: Iterable[Doc]
    ) -> Tuple[Floats2d, SelfAttentionOutput]:
        """Embed and score a batch of docs without modifying them.

        docs (Iterable[Doc]): The docs.
        RETURNS (Tuple[Floats2d, SelfAttentionOutput]): (n_docs, n_labels)
            probabilities and the encoder's (M, A, H, lengths).
        """
        docs = list(docs)
        self._require_labels()
        if not docs:
            ops = self.model.ops
            empty = (
                ops.alloc3f(0, 0, 0),
                ops.alloc3f(0, 0, 0),
                ops.alloc3f(0, 0, 0),
                ops.alloc1i(0),
            )
            return ops.alloc2f(0, len(self.labels)), empty
        encoded = self.model.get_ref("encoder").predict(docs)
        scores = self.model.get_ref("head").predict(encoded)
        return scores, encoded

    def set_annotations(  # type: ignore[override]
        self, docs: Iterable[Doc], outputs: Tuple[Floats2d, SelfAttentionOutput]
    ) -> None:
        """Write the embedding, the attention weights, the scores and the
        vector hooks.

        docs (Iterable[Doc]): The docs.
        outputs: The output of ``predict``.
        """
        docs = list(docs)
        scores, (M, A, H, lengths) = outputs
        if not docs:
            return
        ops = self.model.ops
        pooling = self.cfg["embedding_pooling"]
        embeddings = ops.to_numpy(pool_matrix(M, pooling)).astype("float32")
        A = ops.to_numpy(A)
        states = ops.to_numpy(H) if self.cfg["span_vector"] else None
        lengths = ops.to_numpy(lengths)
        if self.cfg["set_cats"]:
            super().set_annotations(docs, scores)
        span_vector = _make_span_vector(pooling) if states is not None else None
        for i, doc in enumerate(docs):
            n = int(lengths[i])
            doc._.attn_embedding = embeddings[i].copy()
            doc._.attn_weights = A[i, :, :n].astype("float32")
            if self.cfg["doc_vector"]:
                doc.user_hooks["vector"] = _doc_vector
                doc.user_hooks["has_vector"] = _has_vector
                doc.user_hooks["similarity"] = _similarity
            if states is not None:
                assert span_vector is not None  # made above when states are kept
                doc._.attn_states = states[i, :n].astype("float32")
                doc.user_span_hooks["vector"] = span_vector
                doc.user_span_hooks["has_vector"] = _span_has_vector
                doc.user_span_hooks["similarity"] = _similarity

    def _update_loss(
        self, examples: List[Example], losses: Dict[str, float]
    ) -> Optional[LossFunction]:
        """``AttnClassifier``'s loss, and the penalty is reported (0.0) for a
        batch without tokens too."""
        if not any(len(eg.predicted) for eg in examples):
            # Nothing to learn from (and tok2vec layers can't backprop
            # through zero tokens), as in spaCy's textcat.
            losses.setdefault(f"{self.name}_penalty", 0.0)
            return None
        return super()._update_loss(examples, losses)

    def embed(self, docs: Iterable[Doc]) -> numpy.ndarray:
        """The embeddings of ``docs`` as one (n_docs, width) float32 array,
        without annotating them.

        docs (Iterable[Doc]): The docs (already through the earlier pipes).
        RETURNS (numpy.ndarray): One row per doc.
        """
        docs = list(docs)
        _, (M, _, _, _) = self.predict(docs)
        ops = self.model.ops
        return ops.to_numpy(pool_matrix(M, self.cfg["embedding_pooling"])).astype(
            "float32"
        )


def span_embedding(span: Span, pooling: str = "flatten") -> numpy.ndarray:
    """Embed a span (e.g. a sentence) of a doc annotated by an
    ``attn_doc_embedder`` with ``span_vector = true``: each hop's attention is
    renormalized over the span's tokens and pools their BiLSTM states. A hop
    with no weight inside the span falls back to the mean of the span's states.

    span (Span): The span.
    pooling (str): "flatten", "mean" or "max" over hops, as the doc embedding.
    RETURNS (numpy.ndarray): float32 vector.
    """
    install_extensions()
    doc = span.doc
    A, H = doc._.attn_weights, doc._.attn_states
    if A is None or H is None:
        raise ValueError(
            "span_embedding needs doc._.attn_weights and doc._.attn_states: run "
            "the doc through an attn_doc_embedder with span_vector = true."
        )
    weights = A[:, span.start : span.end].astype("float64")  # (r, n)
    states = H[span.start : span.end]
    if len(span) == 0:
        M = numpy.zeros((A.shape[0], H.shape[1]), dtype="float32")
    else:
        mass = weights.sum(axis=1, keepdims=True)
        uniform = numpy.full_like(weights, 1.0 / len(span))
        weights = numpy.where(
            mass > 1e-12, weights / numpy.maximum(mass, 1e-12), uniform
        )
        M = (weights @ states).astype("float32")
    return numpy.asarray(
        pool_matrix(cast(Floats3d, M[None]), pooling)[0], dtype="float32"
    )


def _doc_vector(doc: Doc) -> numpy.ndarray:
    return doc._.attn_embedding


def _has_vector(doc: Doc) -> bool:
    return doc._.attn_embedding is not None


def _span_has_vector(span: Span) -> bool:
    return span.doc._.attn_states is not None


def _make_span_vector(pooling: str) -> Callable[[Span], numpy.ndarray]:
    def span_vector(span: Span) -> numpy.ndarray:
        return span_embedding(span, pooling)

    return span_vector


def _similarity(first, second) -> float:
    """Cosine similarity of two docs' / spans' vectors (0.0 if either is zero)."""
    u, v = first.vector, second.vector
    norm = float(numpy.linalg.norm(u) * numpy.linalg.norm(v))
    if norm == 0.0:
        return 0.0
    return float(numpy.dot(u, v) / norm)
