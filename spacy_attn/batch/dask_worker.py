"""The worker side of the Dask engine: the plugin that holds a job's model on
each worker, and the tasks that run there."""

import gc
import os
import threading
import time
from typing import Any, Dict, List, Optional, Tuple, Union

from ..loading import load_pipeline
from ..readers.columns import trained_columns
from .predictor import Predictor
from .rows import Task

try:  # the "distributed" extra
    import distributed
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover - exercised without the extra only
    distributed = None  # type: ignore[assignment]

    class WorkerPlugin:  # type: ignore[no-redef]
        """Stand-in so that this module imports without Dask."""


# A pipeline passed as a Language object travels as its config and bytes.
SerializedModel = Tuple[str, bytes]


class PredictorPlugin(WorkerPlugin):
    """The model of one prediction job on one worker, loaded by the first
    task that needs it (in the worker's task thread) and dropped when the
    plugin is removed at the end of the job. Why the model is not loaded in
    ``setup``: docs/batch.md, "How the model gets to the workers"."""

    idempotent = False

    def __init__(
        self,
        model: Union[str, SerializedModel],
        *,
        component: Optional[str] = None,
        gpu_id: int = -1,
        threads: Optional[int] = 1,
        score_threshold: Optional[float] = None,
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
        score_threshold (Optional[float]): Span QA: drop answers scoring
            below it (``Predictor``).
        """
        self.model = model
        self.component = component
        self.gpu_id = gpu_id
        self.threads = threads
        self.score_threshold = score_threshold
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
        return Predictor(
            nlp, component=self.component, score_threshold=self.score_threshold
        )


def job_plugin(name: str) -> PredictorPlugin:
    """The plugin of job ``name`` on the worker that runs this task."""
    worker = distributed.get_worker()
    plugin = worker.plugins.get(name)
    if not isinstance(plugin, PredictorPlugin):
        raise RuntimeError(
            f"Worker {worker.address} has no plugin {name!r}: the job was cancelled?"
        )
    return plugin


def warm_up(name: str) -> Dict[str, Any]:
    """Load the job's model on this worker (a pinned task, one per worker).

    name (str): The job's plugin name.
    RETURNS (Dict[str, Any]): The component, its task, and load facts.
    """
    import torch

    start = time.perf_counter()
    predictor = job_plugin(name).predictor()
    return {
        "component": predictor.component,
        "kind": predictor.kind,
        "model_hash": predictor.model_hash(),
        "max_length": predictor.nlp.max_length,
        "trained_columns": trained_columns(predictor.nlp.config),
        "pid": os.getpid(),
        "threads": torch.get_num_threads(),
        "seconds": time.perf_counter() - start,
    }


def predict_batches(name: str, batches: List[List[Task]]) -> List[List[str]]:
    """One task on a worker: ``Predictor(tasks)`` for each batch, as
    the local engines do for one batch (several batches per task spread
    Dask's per-task cost; each batch is still predicted alone, so that the
    numbers do not depend on the grouping).

    name (str): The job's plugin name.
    batches (List[List[Tuple[Any, Tuple[str, ...]]]]): ``(id, texts)`` per row,
        per batch.
    RETURNS (List[List[str]]): One output line (no newline) per row, per batch.
    """
    predictor = job_plugin(name).predictor()
    return [predictor(tasks) for tasks in batches]


__all__ = [
    "PredictorPlugin",
    "SerializedModel",
    "job_plugin",
    "predict_batches",
    "warm_up",
]
