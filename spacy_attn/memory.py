"""Hand the C heap's free memory back to the system during long training runs.

A streamed DCN run (``spacy-attn.SquadCorpus.v2``, ``max_epochs = -1``) built
and freed a doc per question, beside PyTorch tensors of a new shape every
batch, and its resident memory grew from 2.0 GB to 3.75 GB over 2,500 steps
(7.3 GB in a longer run). Calling glibc's ``malloc_trim(0)`` in that process
brought it back to 1.79 GB: the growth was free memory glibc kept, not live
objects (docs/span_qa.md, "Memory"). The callback below trims every few
hundred steps, so a long run keeps the resident size it starts with.
"""

import ctypes
import sys
from typing import Any, Callable, Dict, Optional

from spacy.language import Language
from spacy.util import registry


def malloc_trim() -> Optional[Callable[[int], int]]:
    """glibc's ``malloc_trim``, or None where there is none (macOS, Windows,
    musl): there the callback does nothing.

    RETURNS (Optional[Callable[[int], int]]): ``malloc_trim(pad)``, which
        returns 1 when it released memory.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


@registry.callbacks("spacy-attn.trim_memory.v1")
def make_trim_memory(
    every: int = 250,
) -> Callable[[Language, Dict[str, Any]], None]:
    """A ``[training] before_update`` callback that returns the C heap's free
    memory to the system every ``every`` steps (glibc's ``malloc_trim``; a
    no-op without glibc). A trim takes milliseconds.

    every (int): Trim before every ``every``-th update (not step 0).
    RETURNS (Callable[[Language, Dict[str, Any]], None]): The callback,
        called by ``spacy train`` as ``callback(nlp, {"step", "epoch"})``.
    """
    if every < 1:
        raise ValueError(f"spacy-attn.trim_memory.v1: every must be >= 1, got {every}.")
    trim = malloc_trim()

    def trim_memory(nlp: Language, info: Dict[str, Any]) -> None:
        step = info.get("step", 0)
        if trim is not None and step > 0 and step % every == 0:
            trim(0)

    return trim_memory


__all__ = ["make_trim_memory", "malloc_trim"]
