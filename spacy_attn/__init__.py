"""spacy-attn: attention models from the research literature as spaCy components.

Importing the package registers its factories, architectures, layers, readers
and scorers; spaCy also finds them through the entry points in setup.cfg, so
``spacy.load`` of a packaged pipeline works without importing this package.
Loading a pipeline with one of its components imports the package all the
same, which installs the fork-safety hook of ``spacy_attn.parallel``: without
it, ``nlp.pipe(..., n_process=N)`` hangs once torch's thread pool is running.
"""
from .about import __version__
from .parallel import install_fork_safety
from .pairs import (
    DEFAULT_SPAN_KEY,
    PairError,
    get_pair_bounds,
    get_pair_spans,
    get_pair_texts,
    has_pair,
    make_pair,
    make_pairs,
    set_pair,
    upgrade_pair,
)
from .layers import FrozenVectors
from .layers.decomposable_attention import build_decomposable_attention
from .layers.self_attention import (
    build_generalized_pooling,
    build_self_attentive_textcat,
    build_siamese_self_attention,
    build_structured_self_attention,
)
from .pipeline.doc_embedder import DocEmbedder, make_doc_embedder, span_embedding
from .pipeline import PairClassifier, make_pair_classifier, pair_classifier_score
from .readers import PairCorpus, SquadCorpus, create_pair_corpus_reader, create_squad_corpus_reader
from .scorers import squad_score
from .squad import read_squad, squad_evaluate
from .render import render
from .layers.coattention import build_dynamic_coattention
from .optimizers import Adagrad
from .pipeline.span_qa import SpanQA, make_span_qa
from .qa import answer_questions

# Forked workers (nlp.pipe(n_process=N)) get one torch thread each; without
# this they hang once the parent has used torch's thread pool. See
# spacy_attn/parallel.py.
install_fork_safety()

__all__ = [
    "__version__",
    "DEFAULT_SPAN_KEY",
    "PairError",
    "make_pair",
    "make_pairs",
    "set_pair",
    "get_pair_bounds",
    "get_pair_texts",
    "get_pair_spans",
    "has_pair",
    "upgrade_pair",
    "FrozenVectors",
    "build_decomposable_attention",
    "build_structured_self_attention",
    "build_generalized_pooling",
    "build_self_attentive_textcat",
    "build_siamese_self_attention",
    "DocEmbedder",
    "make_doc_embedder",
    "span_embedding",
    "PairClassifier",
    "make_pair_classifier",
    "pair_classifier_score",
    "PairCorpus",
    "create_pair_corpus_reader",
    "SquadCorpus",
    "create_squad_corpus_reader",
    "read_squad",
    "squad_evaluate",
    "squad_score",
    "render",
    "build_dynamic_coattention",
    "Adagrad",
    "SpanQA",
    "make_span_qa",
    "answer_questions",
    "install_fork_safety",
]
