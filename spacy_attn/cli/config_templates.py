"""Moved to ``spacy_attn.quickstart``; this name stays for the lab's scripts
that import ``backbone_block`` from it (benchmarks/transfer_arch.py)."""

from ..quickstart.templates import backbone_block

__all__ = ["backbone_block"]
