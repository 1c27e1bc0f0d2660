"""The worker pool of the local engine: jobs in worker processes, results in
input order, workers that die with their parent."""

import ctypes
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import traceback
from collections import deque
from typing import (
    Any,
    Callable,
    Deque,
    Dict,
    Generic,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    TypeVar,
)

K = TypeVar("K")
T = TypeVar("T")
R = TypeVar("R")

# Linux's prctl option: the signal the kernel sends a process when the thread
# that started it exits (for a single-threaded parent: when it dies).
PR_SET_PDEATHSIG = 1
# How often a waiting worker checks that its parent is alive (where prctl is
# not available), and how often the parent checks its workers.
POLL_SECONDS = 1.0


class WorkerDied(RuntimeError):
    """A worker process died while it had jobs (killed for memory, a crash):
    its results are lost, so the pool stops."""


def die_with_parent(parent_pid: int) -> bool:
    """Make this process get SIGKILL when its parent dies, whatever killed
    the parent (``kill -9``, SIGTERM, SIGHUP of a closed terminal): on Linux
    with ``prctl(PR_SET_PDEATHSIG)``. Called first thing in a worker.

    parent_pid (int): The parent's pid, as the parent saw it: if the parent
        died before this call, the process exits at once.
    RETURNS (bool): Whether the kernel will signal (False elsewhere: workers
        then rely on ``parent_alive`` checks while they wait for jobs).
    """
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    # The parent may have died before prctl took effect: then we were
    # already re-parented.
    if not parent_alive(parent_pid):
        os._exit(1)
    return armed


def parent_alive(parent_pid: int) -> bool:
    """RETURNS (bool): Whether this process's parent is still ``parent_pid``
    (once it dies, the process is re-parented to init or a subreaper)."""
    return os.getppid() == parent_pid


def _serve(
    make_worker: Callable[..., Callable[[Any], Any]],
    worker_args: Tuple,
    jobs: Any,
    results: Any,
    parent_pid: int,
) -> None:
    """The main loop of a worker process: build the worker function once,
    then run it on jobs ``(seq, payload)`` until the ``None`` sentinel,
    sending back ``(seq, ok, result or error)``; ``seq`` -1 reports start-up."""
    die_with_parent(parent_pid)
    # Ctrl-C reaches the whole process group: the parent handles it (and
    # stops the workers); a worker would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fn = make_worker(*worker_args)
    except BaseException as err:  # noqa: BLE001 - reported to the parent
        results.put((-1, False, _portable(err)))
        return
    results.put((-1, True, os.getpid()))
    while True:
        try:
            item = jobs.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if not parent_alive(parent_pid):
                os._exit(1)  # orphaned: nobody will read the results
            continue
        if item is None:
            return
        seq, payload = item
        try:
            results.put((seq, True, fn(payload)))
        except Exception as err:  # noqa: BLE001 - re-raised in the parent
            results.put((seq, False, _portable(err)))


def _portable(err: BaseException) -> BaseException:
    """The error as the parent can unpickle it, its traceback in the message
    of a ``RuntimeError`` it is chained to."""
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    try:
        pickle.loads(pickle.dumps(err))
    except Exception:  # noqa: BLE001 - any unpicklable error
        return RuntimeError(f"{type(err).__name__}: {err}\n{text}")
    err.__cause__ = RuntimeError(f"in the worker process:\n{text}")
    return err


class WorkerPool(Generic[K, T, R]):
    """Apply a function to a stream of jobs in worker processes, yielding the
    results in input order with a bounded number of jobs in flight. With
    ``n_process=1`` the jobs run inline, in this process.

    Each worker builds its function once, ``make_worker(*worker_args)``, and
    keeps it for all its jobs, so a worker's model is a local of its own
    main loop (no module state). Under ``fork`` the arguments are inherited,
    not pickled: pass the loaded model itself; under ``spawn`` /
    ``forkserver`` pass what loads it (a path).

    Workers die with the pool's process: on Linux the kernel kills them
    when it dies (``prctl(PR_SET_PDEATHSIG)``, whatever the signal, ``kill
    -9`` included), elsewhere they exit within ``POLL_SECONDS`` of noticing
    that they were orphaned. A worker that dies raises ``WorkerDied`` here.

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

        with WorkerPool(2, make_worker=load_model, worker_args=(path,)) as pool:
            for key, result in pool.imap((i, batch) for i, batch in ...):
                ...
    """

    def __init__(
        self,
        n_process: int = 1,
        *,
        make_worker: Callable[..., Callable[[T], R]],
        worker_args: Tuple = (),
        max_pending: Optional[int] = None,
        start_method: Optional[str] = None,
    ) -> None:
        """Initialize the pool; worker processes start on ``__enter__``.

        n_process (int): Worker processes; 1 runs the jobs inline.
        make_worker (Callable[..., Callable[[T], R]]): Called once per worker
            (once here with ``n_process=1``) with ``worker_args``; returns the
            function that runs a job. A module-level function (``spawn``
            pickles it by name).
        worker_args (Tuple): Its arguments.
        max_pending (Optional[int]): Jobs in flight at most; default
            ``2 * n_process``, so every worker has its next job queued.
        start_method (Optional[str]): "fork", "spawn", "forkserver" or None
            for multiprocessing's default.
        """
        if n_process < 1:
            raise ValueError(f"n_process must be >= 1, got {n_process}.")
        self.n_process = n_process
        self.make_worker = make_worker
        self.worker_args = worker_args
        self.max_pending = max(1, max_pending or 2 * n_process)
        self.start_method = start_method
        self._fn: Optional[Callable[[T], R]] = None
        self._procs: List[Any] = []
        self._jobs: Any = None
        self._results: Any = None
        self.pids: List[int] = []
        self._abandoned = False

    def __enter__(self) -> "WorkerPool[K, T, R]":
        if self.n_process == 1:
            self._fn = self.make_worker(*self.worker_args)
            return self
        context = multiprocessing.get_context(self.start_method)
        self._jobs, self._results = context.Queue(), context.Queue()
        parent = os.getpid()
        try:
            for _ in range(self.n_process):
                proc = context.Process(  # type: ignore[attr-defined]
                    target=_serve,
                    args=(
                        self.make_worker,
                        self.worker_args,
                        self._jobs,
                        self._results,
                        parent,
                    ),
                    daemon=True,
                )
                proc.start()
                self._procs.append(proc)
            # Wait for every worker to be ready: a model that cannot load
            # fails here, and the workers are forked before the caller starts
            # threads (a progress bar's monitor) whose locks they would copy.
            for _ in range(self.n_process):
                _, ok, value = self._get()
                if not ok:
                    raise value
                self.pids.append(value)
        except BaseException:
            self._stop(graceful=False)
            raise
        return self

    def __exit__(self, exc_type: Any, *exc_info: Any) -> None:
        self._stop(graceful=exc_type is None and not self._abandoned)

    def _stop(self, *, graceful: bool) -> None:
        if not self._procs:
            return
        if graceful:
            for _ in self._procs:
                self._jobs.put(None)
            for proc in self._procs:
                proc.join(timeout=10)
        for proc in self._procs:
            if proc.is_alive():
                proc.kill()
            proc.join()
        for q in (self._jobs, self._results):
            # Items nobody will read must not keep this process from exiting.
            q.cancel_join_thread()
            q.close()
        self._procs = []

    def _get(self) -> Tuple[int, bool, Any]:
        """The next message of any worker, checking while waiting that none
        died (a dead worker's job would never come back)."""
        while True:
            try:
                return self._results.get(timeout=POLL_SECONDS)
            except queue.Empty:
                dead = [p for p in self._procs if p.exitcode is not None]
                if dead:
                    raise WorkerDied(
                        f"A worker process died (pid {dead[0].pid}, exit code "
                        f"{dead[0].exitcode}; killed for memory?)."
                    ) from None

    def imap(self, jobs: Iterable[Tuple[K, T]]) -> Iterator[Tuple[K, R]]:
        """Run the worker function on the payload of each ``(key, payload)``.

        jobs (Iterable[Tuple[K, T]]): Consumed lazily. The key stays in this
            process and is yielded with the result; only the payload is sent.
        YIELDS (Tuple[K, R]): ``(key, result)`` in input order.
        RAISES: The job's own exception, or ``WorkerDied``.
        """
        if self._fn is not None:
            for key, payload in jobs:
                yield key, self._fn(payload)
            return
        if not self._procs:
            raise RuntimeError(
                "WorkerPool.imap needs the pool entered: use `with WorkerPool(...) as pool`."
            )
        keys: Deque[K] = deque()
        done: Dict[int, Any] = {}
        next_seq = 0

        def result() -> Tuple[K, R]:
            nonlocal next_seq
            while next_seq not in done:
                seq, ok, value = self._get()
                if not ok:
                    raise value
                done[seq] = value
            next_seq += 1
            return keys.popleft(), done.pop(next_seq - 1)

        try:
            for seq, (key, payload) in enumerate(jobs):
                self._jobs.put((seq, payload))
                keys.append(key)
                if len(keys) >= self.max_pending:
                    yield result()
            while keys:
                yield result()
        finally:
            # Stopped early (an error, or the consumer closed the generator):
            # the jobs in flight are abandoned, so the workers are stopped,
            # not asked to finish them.
            self._abandoned = bool(keys)


__all__ = ["WorkerPool", "WorkerDied", "die_with_parent", "parent_alive"]
