"""Pass this file to spaCy's ``--code`` so that its corpus-based commands
keep the pair of pair docs, for pipelines whose config does not set the
``spacy-attn.carry_pairs.v1`` callback (see ``spacy_attn.corpus_patch``)::

    python -m spacy evaluate MODEL test.spacy --code PATH/TO/spacy_attn/carry_pairs.py

Importing it installs the patch: that is its only purpose, and nothing in
spacy-attn imports it (``spacy_attn.corpus_patch.code_path()`` gives its path).
"""

from spacy_attn.corpus_patch import carry_pair_spans

carry_pair_spans()
