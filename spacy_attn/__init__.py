"""spacy-attn: attention models from the research literature as spaCy components.

The public API is ``__all__``: the pair-doc helpers (``make_pair`` and
friends), the three component classes, and the functions for using trained
pipelines (``span_embedding``, ``answer_questions``, ``score_pairs``,
``rank_candidates``, ``render``, ``read_squad``, ``squad_evaluate``).
Architectures, factories, readers and scorers are used by their registered
names in configs (``spacy-attn.*``, ``attn_*``); their Python functions stay
in their modules (``spacy_attn.layers``, ``spacy_attn.pipeline``,
``spacy_attn.readers``, ``spacy_attn.scorers``, ``spacy_attn.optimizers``).

Importing the package registers its factories, architectures, layers, readers
and scorers (the imports below); spaCy also finds them through the entry
points in setup.cfg, so ``spacy.load`` of a packaged pipeline works without
importing this package. Loading a pipeline with one of its components imports
the package all the same (an entry point imports its module, and so this
file), which installs the fork-safety hook of ``spacy_attn.parallel``: without
it, ``nlp.pipe(..., n_process=N)`` hangs once torch's thread pool is running.
"""

# Registrations: the architectures and layers (the superseded versions in
# legacy), the factories, the scorers, the readers, the batchers and the
# optimizer. Not the pair-carrying callback: its module
# (spacy_attn.corpus_patch) patches spaCy's Corpus when used, so only a config
# that names it imports it, through its entry point.
from . import (  # noqa: F401
    group_batches,
    layers,
    legacy,
    optimizers,
    pipeline,
    readers,
    scorers,
    training,
)
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
from .ranking import PairScoreError, RankedCandidate, rank_candidates, score_pairs
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
    "score_pairs",
    "rank_candidates",
    "RankedCandidate",
    "PairScoreError",
    "render",
    "read_squad",
    "squad_evaluate",
]
