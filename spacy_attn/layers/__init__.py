"""Thinc layers: input/output conversion between spaCy docs and torch modules.

Importing this package registers every ``spacy-attn.*`` architecture.
"""

from . import coattention, decomposable_attention, self_attention, siamese  # noqa: F401  (registrations)
from .frozen_vectors import FrozenVectors, TrainableVectors
from .pair_output import pair_output
from .pair_segments import pair_segments

__all__ = ["FrozenVectors", "TrainableVectors", "pair_output", "pair_segments"]
