"""spaCy pipeline components of spacy-attn."""
from .pair_classifier import PairClassifier, make_pair_classifier, pair_classifier_score

__all__ = ["PairClassifier", "make_pair_classifier", "pair_classifier_score"]
