"""Fork safety for the torch-backed components in ``nlp.pipe(n_process=N)``.

Why forked workers hung
-----------------------
The pip builds of torch for CPU run their intra-op parallelism on GNU
OpenMP (``libgomp``; see ``torch.__config__.parallel_info()``: "ATen
parallel backend: OpenMP"). The first parallel torch op in a process starts
libgomp's thread pool: ``torch.get_num_threads() - 1`` worker threads that
stay parked between ops. ``nlp.pipe(..., n_process=N)`` starts its workers
with ``multiprocessing``, and on Linux that means ``fork()``. ``fork()`` copies
only the calling thread. The child inherits libgomp's bookkeeping, which
still lists the parked pool threads, but none of the threads themselves.
libgomp has no ``atfork`` handler, so the child's first parallel op hands
work to threads that do not exist. The child then waits forever at the
region's closing barrier (``gomp_team_barrier_wait_end`` under
``gomp_team_end``, e.g. in the ``index`` kernel of the pair model's
attention). The parent in turn waits forever for the worker's docs.

A process that never ran a parallel op before forking is not affected: the
pool does not exist yet when it forks. With ``OMP_NUM_THREADS=1`` no pool is
ever started. Both explain the known workarounds, but forcing one thread
costs a single process about 20% of its throughput.

The fix
-------
``install_fork_safety()`` (called when ``spacy_attn`` is imported) registers
``os.register_at_fork(after_in_child=...)``. Right after a fork, before the
child can run any torch op, the hook sets the child's torch intra-op threads
to 1. With one thread, ``at::parallel_for`` runs inline and never enters an
OpenMP region, so the stale pool is never touched; MKL and oneDNN follow the
same setting. The parent's threads are left as they were, so a single
process (``n_process=1``) keeps its full speed. One thread per worker is also
the right size for the workers: ``nlp.pipe`` runs one worker per process and
``n_process`` is normally the number of cores, so N workers with one thread
each use the N cores without oversubscription. Forked workers cannot use
more threads safely once the parent's pool exists. The hook runs in every
forked child, not only spaCy's workers, because any forked child is exposed
to the same hang.

The ``spawn`` and ``forkserver`` start methods (``multiprocessing.
set_start_method``) do not inherit the pool: a spawned worker is a fresh
interpreter with torch's default thread count. ``forkserver`` children are
forked from a server process that has run no torch op; the hook gives them
one thread too. Spawned workers keep their defaults: set
``torch.set_num_threads`` yourself if ``n_process`` x threads exceeds your
cores. A child that needs more than one thread (and knows the parent never
started the pool) may call ``torch.set_num_threads`` again after the fork.
"""
import os

import torch

# The intra-op threads of a forked child. More than one can hang as soon as
# the parent has run a parallel op (see the module docstring).
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
