"""spacy-attn: attention models from the research literature as spaCy components.

The public API is ``__all__``: the pair-doc helpers (``make_pair`` and
friends), the three component classes, and the functions for using trained
pipelines (``span_embedding``, ``answer_questions``, ``render``,
``read_squad``, ``squad_evaluate``). Architectures, factories, readers and
scorers are used by their registered names in configs (``spacy-attn.*``,
``attn_*``); their Python functions stay in their modules
(``spacy_attn.layers``, ``spacy_attn.pipeline``, ``spacy_attn.readers``,
``spacy_attn.scorers``, ``spacy_attn.optimizers``). The names this module exported before
are still found here, with a ``DeprecationWarning`` that gives their module.

Importing the package registers its factories, architectures, layers, readers
and scorers (the imports below); spaCy also finds them through the entry
points in setup.cfg, so ``spacy.load`` of a packaged pipeline works without
importing this package. Loading a pipeline with one of its components imports
the package all the same (an entry point imports its module, and so this
file), which installs the fork-safety hook of ``spacy_attn.parallel``: without
it, ``nlp.pipe(..., n_process=N)`` hangs once torch's thread pool is running.
"""

import importlib
import warnings
from typing import Any

# Registrations: the architectures and layers, the factories, the scorers,
# the readers and the optimizer. Not the pair-carrying callback: its module
# (spacy_attn.corpus_patch) patches spaCy's Corpus when used, so only a config
# that names it imports it, through its entry point.
from . import layers, optimizers, pipeline, readers, scorers  # noqa: F401
from .about import __version__
from .pairs import (
    DEFAULT_PAIR_KEY,
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
from .parallel import install_fork_safety as _install_fork_safety
from .pipeline import DocEmbedder, PairClassifier, SpanQA
from .pipeline.doc_embedder import span_embedding
from .qa import answer_questions
from .render import render
from .squad import read_squad, squad_evaluate

# Forked workers (nlp.pipe(n_process=N)) get one torch thread each; without
# this they hang once the parent has used torch's thread pool. See
# spacy_attn/parallel.py.
_install_fork_safety()

__all__ = [
    "__version__",
    # Pair docs
    "DEFAULT_PAIR_KEY",
    "PairError",
    "make_pair",
    "make_pairs",
    "set_pair",
    "get_pair_bounds",
    "get_pair_texts",
    "get_pair_spans",
    "has_pair",
    "upgrade_pair",
    # Components
    "PairClassifier",
    "DocEmbedder",
    "SpanQA",
    # Using trained pipelines
    "span_embedding",
    "answer_questions",
    "render",
    "read_squad",
    "squad_evaluate",
]

# Names exported before the API was trimmed, and where they live.
_MOVED = {
    "FrozenVectors": "spacy_attn.layers",
    "build_decomposable_attention": "spacy_attn.layers.decomposable_attention",
    "build_structured_self_attention": "spacy_attn.layers.self_attention",
    "build_generalized_pooling": "spacy_attn.layers.self_attention",
    "build_self_attentive_textcat": "spacy_attn.layers.self_attention",
    "build_siamese_self_attention": "spacy_attn.layers.self_attention",
    "build_dynamic_coattention": "spacy_attn.layers.coattention",
    "make_doc_embedder": "spacy_attn.pipeline",
    "make_pair_classifier": "spacy_attn.pipeline",
    "make_span_qa": "spacy_attn.pipeline",
    "pair_classifier_score": "spacy_attn.scorers",
    "PairCorpus": "spacy_attn.readers",
    "create_pair_corpus_reader": "spacy_attn.readers",
    "SquadCorpus": "spacy_attn.readers",
    "create_squad_corpus_reader": "spacy_attn.readers",
    "squad_score": "spacy_attn.scorers",
    "install_fork_safety": "spacy_attn.parallel",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        module = _MOVED[name]
        warnings.warn(
            f"spacy_attn.{name} is no longer part of the package's top-level "
            f"API; import it from {module} (registered functions are best "
            f"used by their registered names in configs).",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'spacy_attn' has no attribute {name!r}")
