"""Torch-only model definitions (no spaCy or Thinc imports here)."""
