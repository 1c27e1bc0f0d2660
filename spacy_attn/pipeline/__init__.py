"""spaCy pipeline components of spacy-attn.

Importing this package registers the three factories (``attn_pair_classifier``,
``attn_doc_embedder``, ``attn_span_qa``); their scorers are in
``spacy_attn.scorers``.
"""

from .doc_embedder import DocEmbedder, make_doc_embedder
from .lookup import ComponentLookupError, find_component
from .pair_classifier import PairClassifier, make_pair_classifier, pair_classifier_score
from .span_qa import SpanQA, make_span_qa

__all__ = [
    "ComponentLookupError",
    "DocEmbedder",
    "PairClassifier",
    "SpanQA",
    "find_component",
    "make_doc_embedder",
    "make_pair_classifier",
    "make_span_qa",
    "pair_classifier_score",
]
