"""Superseded versions of spacy-attn's registered architectures and readers.

A released ``spacy-attn.<Name>.vN`` is frozen: a change of behaviour is a new
``vN+1``. The newest version of each model lives in ``spacy_attn.layers``;
the older ones of the same model for the same purpose live here, as spaCy
keeps its own in spacy-legacy, so that configs and packaged pipelines that
name them still load and predict as they did (``tests/test_legacy.py`` loads
pipelines saved before they moved). They are still registered under their
names, with entry points in setup.cfg. Use the newest version in new configs.

| here | superseded by |
| --- | --- |
| ``DecomposableAttention.v1``-``v5`` | ``DecomposableAttention.v6`` |
| ``SiameseSelfAttention.v1`` | ``SiameseSelfAttention.v2`` |
| ``DynamicCoattention.v1``-``v3`` | ``DynamicCoattention.v4`` |
| ``PairCorpus.v1`` (a reader) | ``PairCorpus.v2`` |
| ``SquadCorpus.v2``, ``v3`` (readers) | ``SquadCorpus.v4`` |
| ``TextCatCorpus.v1`` (a reader) | ``TextCatCorpus.v2`` |

Not here, though a newer version shares the name, where no newer version
does what it does: ``SquadCorpus.v1`` reads one seeded sample (``shuffle``
with ``limit``) on every pass, where v4 draws a new one each pass.
"""

from . import (  # noqa: F401  (registrations)
    coattention,
    decomposable_attention,
    pair_corpus,
    siamese,
    squad_corpus,
    textcat_corpus,
)
