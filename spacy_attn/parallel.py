"""Fork safety: forked children of a spacy-attn process get one torch thread,
so that ``nlp.pipe(n_process=N)`` workers cannot hang in torch's OpenMP pool
(see docs/batch.md, "Fork safety")."""

import os

import torch

# The intra-op threads of a forked child. More than one can hang as soon as
# the parent has run a parallel op (docs/batch.md, "Fork safety").
CHILD_THREADS = 1

_installed = False


def _after_fork_in_child() -> None:
    """Limit the forked child to ``CHILD_THREADS`` intra-op thread(s).

    Runs in the child right after ``fork()``, before it can run any torch
    op. ``torch.set_num_threads`` only records the count (torch, OpenMP's
    ``omp_set_num_threads`` and MKL); it starts no parallel region, so it is
    safe to call while the inherited OpenMP state is stale.
    """
    if torch.get_num_threads() != CHILD_THREADS:
        torch.set_num_threads(CHILD_THREADS)


def install_fork_safety() -> bool:
    """Register the after-fork hook that keeps forked workers (e.g. those of
    ``nlp.pipe(n_process=N)``) from hanging in torch's OpenMP thread pool.
    Called when ``spacy_attn`` is imported; calling it again does nothing.

    RETURNS (bool): Whether the hook is installed (False where the platform
        has no ``fork``, e.g. Windows, which only spawns).
    """
    global _installed
    if _installed:
        return True
    if not hasattr(os, "register_at_fork"):
        return False
    os.register_at_fork(after_in_child=_after_fork_in_child)
    _installed = True
    return True


def fork_safety_installed() -> bool:
    """RETURNS (bool): Whether ``install_fork_safety`` registered its hook in
    this process (or in the parent it was forked from)."""
    return _installed


__all__ = ["CHILD_THREADS", "install_fork_safety", "fork_safety_installed"]
