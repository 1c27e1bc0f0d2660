"""The device check (``python -m spacy attn device-check``): every component
trains, round-trips and agrees with the CPU on a device."""

from .checks import BACKBONES, COMPONENTS, CPU_TOLERANCE, DATA_FILES, check, run

__all__ = ["BACKBONES", "COMPONENTS", "CPU_TOLERANCE", "DATA_FILES", "check", "run"]
