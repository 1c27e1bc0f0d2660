"""Batch prediction on a Dask cluster: ``predict_file_dask``, the distributed
engine of ``python -m spacy_attn predict``.

It runs the job of ``spacy_attn.predict.predict_file`` (same inputs, same
options, same output lines, byte for byte) with the batches computed by the
workers of a Dask distributed cluster: a ``LocalCluster`` of worker processes
on this machine, or any running cluster by its scheduler address, e.g. one
started with ``dask scheduler`` and ``dask worker tcp://host:8786
--nworkers 4 --nthreads 1`` on other machines.

Install the extra: ``pip install "spacy-attn[distributed]"``.

Why Dask distributed
--------------------
* One model per worker process, loaded once and kept for the whole job,
  also on machines other than this one; the client sends only the texts of
  a batch and gets back finished output lines (what
  ``spacy_attn.parallel.WorkerPool`` does on one machine).
* Fault tolerance: when a worker dies (killed for memory, a lost machine),
  the scheduler runs its tasks again on another worker, including tasks it
  had finished but whose results were not fetched yet. A task that kills
  ``distributed.scheduler.allowed-failures`` workers (3 by default) fails the
  job instead (``KilledWorker``: a batch that runs out of memory everywhere).
* Back-pressure: at most ``max_in_flight`` tasks are submitted and not yet
  written, so the input is read as fast as the cluster works, and memory
  stays flat on the client, the scheduler and the workers, for any input
  size.
* GPUs: one worker per GPU (``dask-cuda``'s ``LocalCUDACluster``, or
  ``dask worker ... --resources GPU=1`` on each GPU machine), each with its
  own model on its own device.
* Nothing to install beyond ``pip``: the same code runs a ``LocalCluster``
  for tests and laptops and a multi-machine cluster in production. (Ray
  would do too, but is a much heavier dependency for this one job.)

How the model gets to the workers
---------------------------------
A ``WorkerPlugin`` (``PredictorPlugin``) holds the model of one job on every
worker: the scheduler gives it to every worker in the cluster and to every
worker that joins later (a restarted one too), and removes it, freeing the
model, when the job ends, so a long-lived shared cluster keeps nothing of
finished jobs. The plugin does not load the model in ``setup``: a worker
calls ``setup`` on its event-loop thread, where loading a large pipeline
would stall heartbeats and communication for seconds, and where CUDA and
Thinc state (current device, current ops; both per thread) would be set up
for the wrong thread. The model is loaded instead by the first task that
needs it, in the worker's task thread, where every later batch runs, and
cached on the plugin (a per-worker cached loader, owned by the plugin).
Before the first batch, one warm-up task pinned to each worker loads the
model everywhere, so that a broken model or a worker without a GPU fails
the job at once, and load time is not mixed into the first batches.

Order, accounting and resume
----------------------------
The client reads the input, cuts it into the same fixed batches as
``predict_file`` (``--batch-size`` input rows, bad rows included), submits
one task per ``batches_per_task`` batches under a deterministic key (each
batch is still predicted alone: Dask costs a few ms of CPU per task, which
a task of several batches spreads) and writes each batch's lines only when
it and every batch before it have come back. A task retried after a worker
failure is computed again from the same rows by the same model, and
written once, when its turn comes: a worker failure loses or duplicates no
row. Output and rejects files, ``--resume`` and the checks on
it are exactly those of ``predict_file`` (the same functions), so a run
interrupted under one engine can be resumed under the other.

Identical output: the lines are made by ``spacy_attn.predict.Predictor``, as
in ``predict_file``. Numbers depend on the batch (padding) and on torch's
thread count, so the output equals ``predict_file``'s for the same
``batch_size`` with ``threads=1`` (the default here, and what
``--n-process`` workers use).

Task keys are ``"<job>-<i>"`` (``<job>`` = ``"spacy-attn-predict-"`` + a
random hex id, also the plugin's name; ``i`` the 0-based task of this run)
and ``"<job>-warmup-<worker>"``, so that a job can be followed on the
dashboard.

GPU workers
-----------
With ``dask-cuda`` (``pip install dask-cuda``), ``LocalCUDACluster()``
starts one worker per visible GPU and gives each the environment
``CUDA_VISIBLE_DEVICES`` that makes its GPU device 0::

    from dask_cuda import LocalCUDACluster
    cluster = LocalCUDACluster(threads_per_worker=1)
    predict_file_dask(
        "model", "in.jsonl", "out.jsonl", scheduler=cluster.scheduler_address, gpu_id=0
    )

On a cluster of mixed machines, start GPU workers with ``dask worker
tcp://host:8786 --nthreads 1 --resources GPU=1`` (one per GPU, e.g. via
``CUDA_VISIBLE_DEVICES``) and pass ``resources={"GPU": 1}``: batches then
run only on those workers. Each worker calls ``spacy.require_gpu(gpu_id)``
before loading the model.
"""

import argparse
import gc
import itertools
import logging
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import (
    Any,
    Deque,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from spacy.language import Language

from .predict import (
    PredictError,
    Predictor,
    PredictStats,
    RowReader,
    Task,
    _Batch,
    _check_paths,
    _jobs,
    _progress_bar,
    _resume_rows,
    _Sinks,
    _write_batch,
    add_row_arguments,
    resolve_columns,
    text_columns,
)

try:  # the "distributed" extra
    import dask
    import distributed
    from distributed import Client, Future, LocalCluster
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover - exercised without the extra only
    dask = distributed = None  # type: ignore[assignment]
    Client = Future = LocalCluster = None  # type: ignore

    class WorkerPlugin:  # type: ignore[no-redef]
        """Stand-in so that this module imports without Dask."""


KEY_PREFIX = "spacy-attn-predict-"


def _require_dask() -> None:
    if distributed is None:
        raise ImportError(
            "predict_file_dask needs Dask distributed: pip install 'spacy-attn[distributed]' "
            "(or 'dask[distributed]')."
        )


# -- the worker side -----------------------------------------------------------


# A pipeline passed as a Language object travels as its config and bytes.
SerializedModel = Tuple[str, bytes]


class PredictorPlugin(WorkerPlugin):
    """The model of one prediction job on one worker, loaded by the first
    task that needs it (in the worker's task thread) and dropped when the
    plugin is removed at the end of the job. See the module docstring for why
    the model is not loaded in ``setup``."""

    idempotent = False

    def __init__(
        self,
        model: Union[str, SerializedModel],
        *,
        component: Optional[str] = None,
        gpu_id: int = -1,
        threads: Optional[int] = 1,
    ) -> None:
        """Initialize the plugin (in the client; it is pickled to the workers).

        model (Union[str, Tuple[str, bytes]]): A pipeline path or package name
            that every worker can load, or a pipeline's config (as a string)
            and ``nlp.to_bytes()``.
        component (Optional[str]): The spacy-attn component, if several.
        gpu_id (int): GPU of each worker (-1: CPU).
        threads (Optional[int]): torch intra-op threads of each worker
            process; None keeps the worker's (Dask's nanny sets
            ``OMP_NUM_THREADS=1`` by default).
        """
        self.model = model
        self.component = component
        self.gpu_id = gpu_id
        self.threads = threads
        self._predictor: Optional[Predictor] = None
        self._lock: Optional[threading.Lock] = None
        self._local: Optional[threading.local] = None

    def __getstate__(self) -> Dict[str, Any]:
        # Locks and thread-locals do not pickle, and a loaded model is never
        # shipped: each worker loads its own.
        state = dict(self.__dict__)
        state.update(_predictor=None, _lock=None, _local=None)
        return state

    def setup(self, worker: Any) -> None:
        # Cheap on purpose: this runs on the worker's event-loop thread.
        self._lock = threading.Lock()
        self._local = threading.local()

    def teardown(self, worker: Any) -> None:
        self._predictor = None
        gc.collect()
        if self.gpu_id >= 0:
            try:
                import torch

                torch.cuda.empty_cache()
            except Exception:  # pragma: no cover - GPU only
                pass

    def predictor(self) -> Predictor:
        """The job's predictor, loaded on the first call in this worker.

        RETURNS (Predictor): The predictor.
        """
        if self._lock is None:  # not set up (never happens on a worker)
            self.setup(None)
        assert self._lock is not None
        self._use_device()
        with self._lock:  # several task threads (--nthreads > 1) load once
            if self._predictor is None:
                self._predictor = self._load()
        return self._predictor

    def _use_device(self) -> None:
        # The current CUDA device and Thinc's ops are per thread: set them in
        # every thread that runs a batch.
        if (
            self.gpu_id >= 0
            and self._local is not None
            and not getattr(self._local, "gpu", False)
        ):
            import spacy

            spacy.require_gpu(self.gpu_id)
            self._local.gpu = True

    def _load(self) -> Predictor:
        import spacy
        import torch

        import spacy_attn  # noqa: F401  (registers the components)

        if self.threads is not None:
            torch.set_num_threads(self.threads)
        if isinstance(self.model, tuple):
            from thinc.api import Config

            config_str, data = self.model
            config = Config().from_str(config_str, interpolate=False)
            nlp = spacy.util.get_lang_class(config["nlp"]["lang"]).from_config(config)
            nlp.from_bytes(data)
        else:
            nlp = spacy.load(self.model)
        return Predictor(nlp, component=self.component)


def _plugin(name: str) -> PredictorPlugin:
    worker = distributed.get_worker()
    plugin = worker.plugins.get(name)
    if not isinstance(plugin, PredictorPlugin):
        raise RuntimeError(
            f"Worker {worker.address} has no plugin {name!r}: the job was cancelled?"
        )
    return plugin


def _warm_up(name: str) -> Dict[str, Any]:
    """Load the job's model on this worker (a pinned task, one per worker).

    name (str): The job's plugin name.
    RETURNS (Dict[str, Any]): The component, its task, and load facts.
    """
    import os

    import torch

    start = time.perf_counter()
    predictor = _plugin(name).predictor()
    return {
        "component": predictor.component,
        "kind": predictor.kind,
        "pid": os.getpid(),
        "threads": torch.get_num_threads(),
        "seconds": time.perf_counter() - start,
    }


def _predict_batches(name: str, batches: List[List[Task]]) -> List[List[str]]:
    """One task on a worker: ``Predictor(tasks)`` for each batch, as
    ``predict_file`` does for one batch (several batches per task spread
    Dask's per-task cost; each batch is still predicted alone, so that the
    numbers do not depend on the grouping).

    name (str): The job's plugin name.
    batches (List[List[Tuple[Any, Tuple[str, ...]]]]): ``(id, texts)`` per row,
        per batch.
    RETURNS (List[List[str]]): One output line (no newline) per row, per batch.
    """
    predictor = _plugin(name).predictor()
    return [predictor(tasks) for tasks in batches]


# -- the client side -----------------------------------------------------------


@dataclass
class DaskPredictStats(PredictStats):
    """What a ``predict_file_dask`` run did: ``PredictStats`` (``seconds`` is
    the prediction loop, from the first batch submitted to the last written)
    and the cluster.

    startup_seconds (float): Starting or connecting to the cluster and
        loading the model on every worker.
    workers (int): Workers that loaded the model before the first batch.
    tasks (int): Dask tasks submitted (``batches_per_task`` batches each).
    scheduler (str): The scheduler's address.
    """

    startup_seconds: float = 0.0
    workers: int = 0
    tasks: int = 0
    scheduler: str = ""


def predict_file_dask(
    model: Union[str, Path, Language],
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    *,
    scheduler: Union[None, str, "Client"] = None,
    n_workers: int = 2,
    batch_size: int = 64,
    batches_per_task: int = 4,
    max_in_flight: Optional[int] = None,
    gpu_id: int = -1,
    threads: Optional[int] = 1,
    resources: Optional[Dict[str, float]] = None,
    text_cols: Optional[Sequence[str]] = None,
    id_col: Optional[str] = None,
    rejects_path: Optional[Union[str, Path]] = None,
    resume: bool = False,
    overwrite: bool = False,
    input_format: str = "auto",
    component: Optional[str] = None,
    progress: bool = True,
    startup_timeout: float = 300.0,
) -> DaskPredictStats:
    """Predict every row of ``input_path`` on a Dask cluster and write one
    JSON line per row to ``output_path``: the job and the guarantees of
    ``spacy_attn.predict.predict_file`` (formats, ids, order, rejects,
    resume), the same lines for the same ``batch_size`` and ``threads=1``.

    A script that starts a ``LocalCluster`` (``scheduler=None``) must call
    this under ``if __name__ == "__main__":``: the workers are spawned
    processes, which import the script's main module.

    model (Union[str, Path, Language]): A pipeline path or package name that
        every worker can load (a relative path is made absolute here: the
        workers of a real cluster need a shared filesystem or the package
        installed), or a loaded pipeline, sent to the workers as config and
        bytes.
    input_path (Union[str, Path]): jsonl / csv / tsv, optionally ``.gz``; read
        here, on the client.
    output_path (Union[str, Path]): The jsonl output, written here.
    scheduler (Union[None, str, Client]): None starts a ``LocalCluster`` of
        ``n_workers`` processes with one thread each (closed at the end); a
        scheduler address (``"tcp://host:8786"``) connects to a running
        cluster; a ``Client`` is used as it is (left open).
    n_workers (int): Workers of the ``LocalCluster`` (``scheduler=None``).
    batch_size (int): Rows per batch: one ``nlp.pipe`` batch, one flush.
    batches_per_task (int): Batches per Dask task. Each costs the scheduler,
        the worker and the client a few ms of CPU whatever its size; a task
        of several batches spreads that cost without changing the numbers
        (each batch is predicted alone). 1 gives the finest load balancing
        and the least recomputation after a failure.
    max_in_flight (Optional[int]): Tasks submitted and not yet written, at
        most; None: two per worker thread, so every worker has its next task
        queued.
    gpu_id (int): GPU of each worker, -1 for the CPU (0 with one GPU per
        worker, as ``LocalCUDACluster`` gives).
    threads (Optional[int]): torch intra-op threads per worker process; None
        keeps the worker's default.
    resources (Optional[Dict[str, float]]): Worker resources every batch
        needs, e.g. ``{"GPU": 1}`` for workers started with ``--resources
        GPU=1``.
    text_cols (Optional[Sequence[str]]): The text columns; None: detected.
    id_col (Optional[str]): The id column; None: ``id`` if present, else the
        line number.
    rejects_path (Optional[Union[str, Path]]): Write bad rows here instead of
        stopping at the first.
    resume (bool): Continue an interrupted run (of either engine).
    overwrite (bool): Replace an existing OUTPUT / REJECTS.
    input_format (str): "auto", "jsonl", "csv" or "tsv".
    component (Optional[str]): The spacy-attn component, if several.
    progress (bool): Show a progress bar on stderr.
    startup_timeout (float): Seconds to wait for the cluster, a first worker
        and the model loads.
    RETURNS (DaskPredictStats): Counts, times and the cluster used.
    RAISES (PredictError): As ``predict_file``; also if no worker can run the
        job. A batch that kills workers repeatedly raises ``KilledWorker``
        after the batches before it are written (``resume`` goes on).
    """
    _require_dask()
    input_path, output_path = Path(input_path), Path(output_path)
    rejects = Path(rejects_path) if rejects_path is not None else None
    if (
        batch_size < 1
        or batches_per_task < 1
        or (max_in_flight is not None and max_in_flight < 1)
    ):
        raise PredictError(
            f"batch_size, batches_per_task and max_in_flight must be >= 1, got {batch_size}, "
            f"{batches_per_task} and {max_in_flight}."
        )
    _check_paths(output_path, rejects, resume=resume, overwrite=overwrite)
    reader = RowReader(input_path, input_format=input_format)
    available = reader.columns()
    plugin = PredictorPlugin(
        _model_for_workers(model), component=component, gpu_id=gpu_id, threads=threads
    )
    name = KEY_PREFIX + uuid.uuid4().hex[:12]

    cluster, client, owns_client = None, None, False
    sinks, bar = None, None
    pending: Deque[Tuple[List[_Batch], Optional["Future"]]] = deque()
    stats = DaskPredictStats()
    start = time.perf_counter()
    try:
        if scheduler is None:
            if n_workers < 1:
                raise PredictError(f"n_workers must be >= 1, got {n_workers}.")
            cluster = _local_cluster(n_workers)
            client, owns_client = Client(cluster, set_as_default=False), True
        elif isinstance(scheduler, str):
            client = Client(scheduler, timeout=startup_timeout, set_as_default=False)
            owns_client = True
        else:
            client = scheduler
        client.register_plugin(plugin, name=name)
        info = _warm_up_workers(client, name, resources, timeout=startup_timeout)
        stats.startup_seconds = time.perf_counter() - start
        stats.workers = len(info)
        stats.scheduler = client.scheduler_info(n_workers=0)["address"]
        stats.component, stats.task = info[0]["component"], info[0]["kind"]
        columns = None
        if available is not None:
            columns = resolve_columns(
                stats.task,
                available,
                text_cols=text_cols,
                id_col=id_col,
                where=str(input_path),
                header=reader.header is not None,
            )
        stats.columns = columns
        rows, stats.skipped, n_done = _resume_rows(
            reader, columns, output_path, rejects, batch_size, resume=resume
        )
        if max_in_flight is None:
            n_threads = sum(
                w["nthreads"] for w in _eligible_workers(client, resources).values()
            )
            max_in_flight = max(2, 2 * n_threads)

        start = time.perf_counter()
        sinks = _Sinks(output_path, rejects, append=resume)
        bar = _progress_bar(
            input_path, stats.skipped, header=reader.format != "jsonl", enabled=progress
        )
        jobs = _jobs(
            rows, columns, batch_size, keep_going=rejects is not None, n_done=n_done
        )
        results = _ordered_results(
            client,
            name,
            jobs,
            pending,
            max_in_flight,
            batches_per_task,
            resources,
            stats,
        )
        for batch, lines in results:
            _write_batch(batch, lines, sinks, stats, input_path)
            if bar is not None:
                bar.update(len(batch.rows))
    finally:
        stats.seconds = time.perf_counter() - start
        # Stopped early (a bad row, an error, Ctrl-C): drop the batches that
        # nobody will write.
        futures = [f for _, f in pending if f is not None]
        pending.clear()
        if client is not None:
            if futures:
                try:
                    client.cancel(futures)
                except Exception:  # the cluster may be gone
                    pass
            try:
                client.unregister_worker_plugin(name)  # frees the model on every worker
            except Exception:
                pass
            if owns_client:
                client.close()
        if cluster is not None:
            cluster.close()
        if sinks is not None:
            sinks.close()
        if bar is not None:
            bar.close()
    return stats


def _ordered_results(
    client: "Client",
    name: str,
    jobs: Iterable[Tuple[_Batch, List[Task]]],
    pending: Deque[Tuple[List[_Batch], Optional["Future"]]],
    max_in_flight: int,
    batches_per_task: int,
    resources: Optional[Dict[str, float]],
    stats: "DaskPredictStats",
) -> Iterator[Tuple[_Batch, List[str]]]:
    """Submit one task per ``batches_per_task`` batches, at most
    ``max_in_flight`` tasks ahead of the one being written, and yield the
    batches with their lines in input order. ``pending`` is the caller's, so
    that it can cancel what is left."""
    index = 0
    group: List[Tuple[_Batch, List[Task]]] = []
    for item in itertools.chain(jobs, [None]):
        if item is not None:
            group.append(item)
            if len(group) < batches_per_task:
                continue
        if not group:
            break
        future = None
        if any(tasks for _, tasks in group):  # bad rows only: nothing to compute
            # A fixed key per task: a retried task stays the same task, and
            # the dashboard shows which part of which job it is.
            future = client.submit(
                _predict_batches,
                name,
                [tasks for _, tasks in group],
                key=f"{name}-{index}",
                pure=False,
                resources=resources,
            )
            stats.tasks += 1
        index += 1
        pending.append(([batch for batch, _ in group], future))
        group = []
        if len(pending) >= max_in_flight:
            yield from _collect(pending.popleft())
    while pending:
        yield from _collect(pending.popleft())


def _collect(
    item: Tuple[List[_Batch], Optional["Future"]],
) -> Iterator[Tuple[_Batch, List[str]]]:
    batches, future = item
    if future is None:
        yield from ((batch, []) for batch in batches)
        return
    try:
        results = future.result()
    except distributed.KilledWorker as err:
        raise PredictError(
            f"Task {future.key} ({len(batches)} batches) killed the workers that ran it, "
            f"{dask.config.get('distributed.scheduler.allowed-failures')} + 1 times "
            f"(out of memory? lower --batch-size or --batches-per-task). The batches before "
            f"it are written; rerun with --resume. ({err})"
        ) from err
    # Releasing the future frees the result on the worker.
    future.release()
    yield from zip(batches, results)


def _local_cluster(n_workers: int) -> "LocalCluster":
    """A ``LocalCluster`` of ``n_workers`` processes with one thread each.

    Its workers are started without Dask's default ``MALLOC_TRIM_THRESHOLD_=
    65536``: setting it turns off glibc's dynamic mmap threshold, so every
    tensor buffer above 128 KiB is mmap'ed and unmapped again, page faults
    included, for every batch. Measured on the pair classifier (2 workers):
    ~30% fewer rows/s and 3-4x the workers' system time. (Do the same on a
    real cluster: ``distributed.nanny.pre-spawn-environ`` in the workers'
    Dask config.)
    """
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        return LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )


def _eligible_workers(
    client: "Client", resources: Optional[Dict[str, float]]
) -> Dict[str, Dict[str, Any]]:
    """The workers that have ``resources`` (all of them without)."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    if not resources:
        return dict(workers)
    return {
        address: w
        for address, w in workers.items()
        if all(w.get("resources", {}).get(k, 0) >= v for k, v in resources.items())
    }


def _warm_up_workers(
    client: "Client",
    name: str,
    resources: Optional[Dict[str, float]],
    *,
    timeout: float,
) -> List[Dict[str, Any]]:
    """Load the model on every eligible worker now, with one task pinned to
    each: a model that cannot load (a path the workers cannot see, no GPU)
    fails the job before any batch, and load time stays out of the
    prediction loop. A worker that joins later loads it with its first
    batch."""
    deadline = time.monotonic() + timeout
    while True:
        workers = _eligible_workers(client, resources)
        if workers:
            break
        if time.monotonic() > deadline:
            need = f" with resources {resources}" if resources else ""
            raise PredictError(
                f"No worker{need} joined the cluster in {timeout:.0f} s."
            )
        time.sleep(0.2)
    futures = [
        client.submit(
            _warm_up,
            name,
            key=f"{name}-warmup-{address}",
            workers=[address],
            allow_other_workers=False,
            pure=False,
        )
        for address in workers
    ]
    # A worker that died while loading is no reason to stop; a load error is.
    info, errors = [], []
    for future in futures:
        try:
            info.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
        except TimeoutError:
            continue  # judged below: a worker that never loaded it
        except Exception as err:
            errors.append(err)
    client.cancel([f for f in futures if not f.done()])
    if errors and not info:
        raise errors[0]
    if errors:
        raise PredictError(
            f"The model failed to load on {len(errors)} of {len(futures)} workers: {errors[0]!r}"
        )
    if not info:
        raise PredictError(f"No worker loaded the model in {timeout:.0f} s.")
    return info


def _model_for_workers(
    model: Union[str, Path, Language],
) -> Union[str, SerializedModel]:
    """What the plugin carries to the workers: a path made absolute (workers
    may not share the client's working directory), a package name as it is,
    or a loaded pipeline's config and bytes."""
    if isinstance(model, Language):
        return model.config.to_str(), model.to_bytes()
    path = Path(model)
    return str(path.resolve()) if path.exists() else str(model)


# -- command line ----------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``python -m spacy_attn.distributed MODEL INPUT OUTPUT [--scheduler
    tcp://host:8786 | --n-workers N] [predict options]``."""
    p = argparse.ArgumentParser(
        prog="python -m spacy_attn.distributed",
        description=(
            "Batch prediction on a Dask cluster (the job of `python -m spacy_attn predict`)."
        ),
    )
    p.add_argument(
        "model", help="pipeline path (visible to every worker) or package name"
    )
    p.add_argument("input", help="jsonl, csv or tsv, optionally gzipped (read here)")
    p.add_argument("output", help="jsonl output (written here)")
    p.add_argument(
        "--scheduler",
        default=None,
        help="scheduler address, e.g. tcp://host:8786 (default: a LocalCluster)",
    )
    p.add_argument(
        "--n-workers", type=int, default=2, help="LocalCluster worker processes"
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument(
        "--batches-per-task", type=int, default=4, help="batches per Dask task"
    )
    p.add_argument(
        "--max-in-flight",
        type=int,
        default=None,
        help="tasks submitted and not yet written",
    )
    p.add_argument(
        "--gpu-id",
        type=int,
        default=-1,
        help="GPU of each worker (0 under LocalCUDACluster)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads per worker (0: the worker's default)",
    )
    p.add_argument(
        "--resources", default=None, help="resources every batch needs, e.g. GPU=1"
    )
    add_row_arguments(p)
    p.add_argument(
        "--startup-timeout",
        type=float,
        default=300.0,
        help="seconds to wait for workers (with --resources) and the model loads",
    )
    args = p.parse_args(argv)
    resources = None
    if args.resources:
        resources = {
            k.strip(): float(v)
            for k, v in (item.split("=", 1) for item in args.resources.split(","))
        }
    try:
        stats = predict_file_dask(
            args.model,
            args.input,
            args.output,
            scheduler=args.scheduler,
            n_workers=args.n_workers,
            batch_size=args.batch_size,
            batches_per_task=args.batches_per_task,
            max_in_flight=args.max_in_flight,
            gpu_id=args.gpu_id,
            threads=args.threads or None,
            resources=resources,
            text_cols=text_columns(args.text_cols),
            id_col=args.id_col,
            rejects_path=args.rejects,
            resume=args.resume,
            overwrite=args.overwrite,
            input_format=args.format,
            component=args.component,
            progress=not args.no_progress,
            startup_timeout=args.startup_timeout,
        )
    except PredictError as err:
        print(f"Error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    rate = stats.rows / stats.seconds if stats.seconds else 0.0
    print(
        f"{stats.component} ({stats.task}): {stats.written} rows written to {args.output}"
        + (f", {stats.rejected} rejected to {args.rejects}" if args.rejects else "")
        + (f", {stats.skipped} already done (--resume)" if stats.skipped else "")
        + f" in {stats.seconds:.1f} s ({rate:,.0f} rows/s) on {stats.workers} Dask workers "
        f"at {stats.scheduler} (startup {stats.startup_seconds:.1f} s)",
        file=sys.stderr,
    )


__all__ = ["DaskPredictStats", "PredictorPlugin", "predict_file_dask", "main"]


if __name__ == "__main__":
    # Run main() from the module imported under its real name: functions
    # defined in ``__main__`` would be pickled to the workers as
    # ``__main__._predict_batch``, which they cannot import.
    from spacy_attn.distributed import main as _main

    _main()
