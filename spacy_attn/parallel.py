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

import multiprocessing
import os
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Deque, Iterable, Iterator, Optional, Tuple, TypeVar

import torch

K = TypeVar("K")
T = TypeVar("T")
R = TypeVar("R")

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


def _noop(_: Any) -> None:
    return None


class WorkerPool:
    """Apply a function to a stream of jobs in worker processes, yielding the
    results in input order with a bounded number of jobs in flight. With
    ``n_process=1`` the jobs run inline, in this process.

    Why not ``nlp.pipe(n_process=N)``: spaCy sends every ``Doc`` to its
    worker as ``Doc.to_bytes()`` and back the same way, about 0.7 ms for each
    ``to_bytes`` and each ``from_bytes`` of a short pair doc (half of it
    srsly's msgpack looking up its registry's entry points on every call).
    The parent does two of the four per doc, besides making the docs, so it
    caps any model at a few hundred docs/s: on SNLI dev pairs on 2 cores,
    ``nlp.pipe(n_process=2)`` gives ~430 pairs/s where one process gives
    ~1,500 (default pair model) to ~7,400 (a small one). A ``WorkerPool``
    job carries plain strings (the texts of a batch) and returns plain
    strings (output rows), so the workers do the tokenization, the model and
    the formatting: 2,300 and 9,400 pairs/s with two workers.

    Bounded: at most ``max_pending`` jobs are submitted and not yet
    returned, so a long (or endless) input is consumed as the results are
    consumed, and memory does not grow with the input.

    Usage::

        with WorkerPool(2, initializer=load, initargs=(path,)) as pool:
            for key, result in pool.imap(predict_batch, ((i, batch) for i, batch in ...)):
                ...
    """

    def __init__(
        self,
        n_process: int = 1,
        *,
        initializer: Optional[Callable[..., None]] = None,
        initargs: Tuple = (),
        max_pending: Optional[int] = None,
        start_method: Optional[str] = None,
    ) -> None:
        """Initialize the pool; worker processes start on ``__enter__``.

        n_process (int): Worker processes; 1 runs the jobs inline.
        initializer (Optional[Callable[..., None]]): Called once in each worker
            process (not inline), e.g. to load a model under ``spawn``; under
            ``fork`` a worker inherits what the parent had loaded.
        initargs (Tuple): Its arguments (pickled for ``spawn``).
        max_pending (Optional[int]): Jobs in flight at most; default
            ``2 * n_process``, so every worker has its next job queued.
        start_method (Optional[str]): "fork", "spawn", "forkserver" or None
            for multiprocessing's default.
        """
        if n_process < 1:
            raise ValueError(f"n_process must be >= 1, got {n_process}.")
        self.n_process = n_process
        self.initializer = initializer
        self.initargs = initargs
        self.max_pending = max(1, max_pending or 2 * n_process)
        self.start_method = start_method
        self._executor: Optional[ProcessPoolExecutor] = None

    def __enter__(self) -> "WorkerPool":
        if self.n_process > 1:
            context = multiprocessing.get_context(self.start_method)
            self._executor = ProcessPoolExecutor(
                self.n_process,
                mp_context=context,
                initializer=self.initializer,
                initargs=self.initargs,
            )
            # Start the workers now: a fork copies only the calling thread, so
            # forking before the caller starts threads (a progress bar's
            # monitor, ...) keeps their locks out of the children.
            list(self._executor.map(_noop, range(self.n_process)))
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def imap(
        self, fn: Callable[[T], R], jobs: Iterable[Tuple[K, T]]
    ) -> Iterator[Tuple[K, R]]:
        """Run ``fn(payload)`` for each ``(key, payload)`` of ``jobs``.

        fn (Callable[[T], R]): A module-level function (workers receive it
            pickled, by name).
        jobs (Iterable[Tuple[K, T]]): Consumed lazily. The key stays in this
            process and is yielded with the result; only the payload is sent.
        YIELDS (Tuple[K, R]): ``(key, fn(payload))`` in input order.
        RAISES: The job's own exception, or ``BrokenProcessPool`` if a worker
            died (e.g. killed for memory).
        """
        if self._executor is None:
            if self.n_process > 1:
                raise RuntimeError(
                    "WorkerPool.imap needs the pool entered: use `with WorkerPool(...) as pool`."
                )
            for key, payload in jobs:
                yield key, fn(payload)
            return
        pending: Deque[Tuple[K, Future]] = deque()
        try:
            for key, payload in jobs:
                pending.append((key, self._executor.submit(fn, payload)))
                if len(pending) >= self.max_pending:
                    key0, future = pending.popleft()
                    yield key0, future.result()
            while pending:
                key0, future = pending.popleft()
                yield key0, future.result()
        finally:
            # Stopped early (an error, or the consumer closed the generator):
            # don't start the jobs nobody will read.
            for _, future in pending:
                future.cancel()


__all__ = [
    "CHILD_THREADS",
    "WorkerPool",
    "install_fork_safety",
    "fork_safety_installed",
]
