"""The Dask engine of batch prediction: ``predict_file(..., engine="dask")``
and ``python -m spacy attn predict --engine dask``.

The same job as the local engines (same inputs, same options, same output
lines, byte for byte), with the batches computed by the
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
The driver reads the input and cuts it into fixed batches (``--batch-size``
input rows, bad rows included), as for every engine; this engine submits
one task per ``batches_per_task`` batches under a deterministic key (each
batch is still predicted alone: Dask costs a few ms of CPU per task, which
a task of several batches spreads) and writes each batch's lines only when
it and every batch before it have come back. A task retried after a worker
failure is computed again from the same rows by the same model, and
written once, when its turn comes: a worker failure loses or duplicates no
row. Output and rejects files, ``--resume`` and the checks on
it are the driver's, the same for every engine, so a run interrupted under
one engine can be resumed under the other.

Identical output: the lines are made by ``spacy_attn.batch.Predictor``, as
in the local engines. Numbers depend on the batch (padding) and on torch's
thread count, so the output equals the local engines' for the same
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
    predict_file(
        "model", "in.jsonl", "out.jsonl", engine="dask",
        scheduler=cluster.scheduler_address, gpu_id=0,
    )

On a cluster of mixed machines, start GPU workers with ``dask worker
tcp://host:8786 --nthreads 1 --resources GPU=1`` (one per GPU, e.g. via
``CUDA_VISIBLE_DEVICES``) and pass ``resources={"GPU": 1}``: batches then
run only on those workers. Each worker calls ``spacy.require_gpu(gpu_id)``
before loading the model.
"""

import gc
import itertools
import logging
import threading
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Deque, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language

from ..loading import load_pipeline
from .engines import Engine, EngineInfo, K, Model
from .errors import PredictError
from .predictor import Predictor
from .rows import Task

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
        # A PredictError: the commands show it as one line.
        raise PredictError(
            "--engine dask needs Dask distributed: pip install 'spacy-attn[distributed]' "
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
            nlp = load_pipeline(self.model)
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
        "model_hash": predictor.model_hash(),
        "max_length": predictor.nlp.max_length,
        "pid": os.getpid(),
        "threads": torch.get_num_threads(),
        "seconds": time.perf_counter() - start,
    }


def _predict_batches(name: str, batches: List[List[Task]]) -> List[List[str]]:
    """One task on a worker: ``Predictor(tasks)`` for each batch, as
    the local engines do for one batch (several batches per task spread
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


class DaskEngine(Engine):
    """Predict on the workers of a Dask distributed cluster (see the module
    docstring)."""

    name = "dask"

    def __init__(
        self,
        *,
        scheduler: Union[None, str, "Client"] = None,
        n_workers: int = 2,
        batches_per_task: int = 4,
        max_in_flight: Optional[int] = None,
        gpu_id: int = -1,
        threads: Optional[int] = 1,
        resources: Optional[Dict[str, float]] = None,
        startup_timeout: float = 300.0,
    ) -> None:
        """Initialize the engine (nothing starts before ``start``).

        scheduler (Union[None, str, Client]): None starts a ``LocalCluster``
            of ``n_workers`` processes with one thread each (closed at the
            end); a scheduler address (``"tcp://host:8786"``) connects to a
            running cluster; a ``Client`` is used as it is (left open).
        n_workers (int): Workers of the ``LocalCluster`` (``scheduler=None``).
        batches_per_task (int): Batches per Dask task. Each costs the
            scheduler, the worker and the client a few ms of CPU whatever its
            size; a task of several batches spreads that cost without
            changing the numbers (each batch is predicted alone). 1 gives the
            finest load balancing and the least recomputation after a failure.
        max_in_flight (Optional[int]): Tasks submitted and not yet written, at
            most; None: two per worker thread, so every worker has its next
            task queued.
        gpu_id (int): GPU of each worker, -1 for the CPU (0 with one GPU per
            worker, as ``LocalCUDACluster`` gives).
        threads (Optional[int]): torch intra-op threads per worker process;
            None keeps the worker's default.
        resources (Optional[Dict[str, float]]): Worker resources every batch
            needs, e.g. ``{"GPU": 1}`` for workers started with
            ``--resources GPU=1``.
        startup_timeout (float): Seconds to wait for the cluster, a first
            worker and the model loads.
        RAISES (PredictError): On options out of range.
        """
        if batches_per_task < 1 or (max_in_flight is not None and max_in_flight < 1):
            raise PredictError(
                f"--batches-per-task and --max-in-flight must be >= 1, got "
                f"{batches_per_task} and {max_in_flight}."
            )
        if scheduler is None and n_workers < 1:
            raise PredictError(f"--n-workers must be >= 1, got {n_workers}.")
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.batches_per_task = batches_per_task
        self.max_in_flight = max_in_flight
        self.gpu_id = gpu_id
        self.threads = threads
        self.resources = resources
        self.startup_timeout = startup_timeout
        self.job = ""
        self.tasks = 0
        self._cluster: Optional["LocalCluster"] = None
        self._client: Optional["Client"] = None
        self._owns_client = False
        self._pending: Deque[Tuple[List[Any], Optional["Future"]]] = deque()

    def start(self, model: Model, *, component: Optional[str] = None) -> EngineInfo:
        _require_dask()
        plugin = PredictorPlugin(
            _model_for_workers(model),
            component=component,
            gpu_id=self.gpu_id,
            threads=self.threads,
        )
        self.job = KEY_PREFIX + uuid.uuid4().hex[:12]
        if self.scheduler is None:
            self._cluster = _local_cluster(self.n_workers)
            self._client = Client(self._cluster, set_as_default=False)
            self._owns_client = True
        elif isinstance(self.scheduler, str):
            try:
                self._client = Client(
                    self.scheduler, timeout=self.startup_timeout, set_as_default=False
                )
            except OSError as err:  # unreachable, refused, timed out
                raise PredictError(
                    f"--scheduler {self.scheduler}: cannot connect ({err}). Start the "
                    "scheduler, or leave --scheduler out for a local cluster."
                ) from err
            self._owns_client = True
        else:
            self._client = self.scheduler
        self._client.register_plugin(plugin, name=self.job)
        info = _warm_up_workers(
            self._client, self.job, self.resources, timeout=self.startup_timeout
        )
        if self.max_in_flight is None:
            n_threads = sum(
                w["nthreads"]
                for w in _eligible_workers(self._client, self.resources).values()
            )
            self.max_in_flight = max(2, 2 * n_threads)
        hashes = {i["model_hash"] for i in info}
        if len(hashes) > 1:
            raise PredictError(
                f"The workers loaded {len(hashes)} different models: "
                "give every worker the same pipeline."
            )
        return EngineInfo(
            info[0]["component"],
            info[0]["kind"],
            model_hash=info[0]["model_hash"],
            max_length=info[0]["max_length"],
            workers=len(info),
            details={
                "scheduler": self._client.scheduler_info(n_workers=0)["address"],
                "job": self.job,
            },
        )

    def run(
        self, jobs: Iterable[Tuple[K, List[Task]]]
    ) -> Iterator[Tuple[K, List[str]]]:
        """Submit one task per ``batches_per_task`` batches, at most
        ``max_in_flight`` tasks ahead of the one being yielded, and yield
        the batches with their lines in input order."""
        assert self._client is not None and self.max_in_flight is not None
        pending = self._pending
        index = 0
        group: List[Tuple[K, List[Task]]] = []
        for item in itertools.chain(jobs, [None]):
            if item is not None:
                group.append(item)
                if len(group) < self.batches_per_task:
                    continue
            if not group:
                break
            future = None
            if any(tasks for _, tasks in group):  # bad rows only: nothing to do
                # A fixed key per task: a retried task stays the same task,
                # and the dashboard shows which part of which job it is.
                future = self._client.submit(
                    _predict_batches,
                    self.job,
                    [tasks for _, tasks in group],
                    key=f"{self.job}-{index}",
                    pure=False,
                    resources=self.resources,
                )
                self.tasks += 1
            index += 1
            pending.append(([key for key, _ in group], future))
            group = []
            if len(pending) >= self.max_in_flight:
                yield from _collect(pending.popleft())
        while pending:
            yield from _collect(pending.popleft())

    def close(self, *, failed: bool = False) -> None:
        # Stopped early (a bad row, an error, Ctrl-C): drop the batches that
        # nobody will write.
        futures = [f for _, f in self._pending if f is not None]
        self._pending.clear()
        client, self._client = self._client, None
        if client is not None:
            if futures:
                try:
                    client.cancel(futures)
                except Exception:  # the cluster may be gone
                    pass
            try:
                client.unregister_worker_plugin(self.job)  # frees the models
            except Exception:
                pass
            if self._owns_client:
                client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def _collect(
    item: Tuple[List[Any], Optional["Future"]],
) -> Iterator[Tuple[Any, List[str]]]:
    keys, future = item
    if future is None:
        yield from ((key, []) for key in keys)
        return
    try:
        results = future.result()
    except distributed.KilledWorker as err:
        raise PredictError(
            f"Task {future.key} ({len(keys)} batches) killed the workers that ran it, "
            f"{dask.config.get('distributed.scheduler.allowed-failures')} + 1 times "
            f"(out of memory? lower --batch-size or --batches-per-task). The batches before "
            f"it are written; rerun with --resume. ({err})"
        ) from err
    # Releasing the future frees the result on the worker.
    future.release()
    yield from zip(keys, results)


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


__all__ = ["DaskEngine", "PredictorPlugin", "KEY_PREFIX"]
