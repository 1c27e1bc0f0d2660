"""Make spaCy's own corpus-based commands work with pair docs.

spaCy's ``Corpus`` (used by ``spacy evaluate``, ``spacy benchmark speed``
and ``spacy.Corpus.v1``) builds each predicted doc by re-tokenizing the
reference text, which drops span groups, so pair docs lose their pair.
``carry_pair_spans()`` makes the corpus align the pair span group from the
reference doc onto the predicted doc. The pair is input structure, not an
annotation to predict, so copying it leaks no gold labels; other span groups
are left alone.

Use it from the command line through ``--code``::

    python -m spacy evaluate MODEL test.spacy --code scripts/pair_spans.py
    python -m spacy benchmark speed MODEL test.spacy --code scripts/pair_spans.py
"""
from typing import Iterable

from .pairs import DEFAULT_SPAN_KEY, align_pair_to_predicted


def carry_pair_spans(span_keys: Iterable[str] = (DEFAULT_SPAN_KEY,)) -> None:
    """Patch ``spacy.training.Corpus`` so predicted docs keep the pair spans.

    span_keys (Iterable[str]): The span group keys to carry over. Calling it
        again adds keys; the patch is installed once.
    """
    from spacy.training.corpus import Corpus

    keys = set(span_keys)
    current = Corpus._make_example
    if getattr(current, "_spacy_attn_keys", None) is not None:
        current._spacy_attn_keys.update(keys)
        return
    original = current

    def _make_example(self, nlp, reference, gold_preproc):
        example = original(self, nlp, reference, gold_preproc)
        for key in _make_example._spacy_attn_keys:
            align_pair_to_predicted(example, key)
        return example

    _make_example._spacy_attn_keys = keys
    Corpus._make_example = _make_example
