"""The Dask engine of batch prediction (``--engine dask``): the client side,
which submits batches to a Dask cluster and yields their lines in input order."""

import itertools
import logging
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Deque, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language

from .dask_worker import PredictorPlugin, SerializedModel, predict_batches, warm_up
from .engines import Engine, EngineInfo, K, Model
from .errors import PredictError
from .rows import Task

try:  # the "distributed" extra
    import dask
    import distributed
    from distributed import Client, Future, LocalCluster
except ImportError:  # pragma: no cover - exercised without the extra only
    dask = distributed = None  # type: ignore[assignment]
    Client = Future = LocalCluster = None  # type: ignore


KEY_PREFIX = "spacy-attn-predict-"


def _require_dask() -> None:
    if distributed is None:
        # A PredictError: the commands show it as one line.
        raise PredictError(
            "--engine dask needs Dask distributed: pip install 'spacy-attn[distributed]' "
            "(or 'dask[distributed]')."
        )


class DaskEngine(Engine):
    """Predict on the workers of a Dask distributed cluster: one model per
    worker, tasks retried on worker failure, bounded tasks in flight (design:
    docs/batch.md, "The Dask engine")."""

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
        score_threshold: Optional[float] = None,
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
        score_threshold (Optional[float]): Span QA: drop answers scoring
            below it (``Predictor``).
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
        self.score_threshold = score_threshold
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
            score_threshold=self.score_threshold,
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
            score_threshold=self.score_threshold,
            trained_columns=info[0].get("trained_columns", {}),
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
                    predict_batches,
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

    def run_details(self) -> Dict[str, Any]:
        return {"tasks": self.tasks}

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
            warm_up,
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
