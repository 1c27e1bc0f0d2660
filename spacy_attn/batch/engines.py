"""Engines, which turn batches of rows into output lines: in this process or
in a local pool of worker processes (the Dask engine: ``batch.dask_engine``)."""

import multiprocessing
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, TypeVar, Union

import torch
from spacy.language import Language

from ..loading import load_pipeline
from ..readers.columns import trained_columns
from .errors import PredictError
from .pool import WorkerPool
from .predictor import Predictor
from .rows import Task

K = TypeVar("K")
# A pipeline: a path or package name, or a loaded pipeline.
Model = Union[str, Path, Language]


@dataclass
class EngineInfo:
    """What an engine reports once its model is loaded.

    component (str): The spacy-attn component that predicts.
    kind (str): Its task: "pair", "doc" or "qa".
    model_hash (str): The identity of the model (``Predictor.model_hash``).
    max_length (int): The pipeline's ``nlp.max_length``.
    workers (int): Processes that predict.
    details (Dict[str, Any]): Engine-specific facts (a scheduler's address).
    score_threshold (Optional[float]): Span QA: the answer score below which
        answers are dropped (``Predictor``); None: none is.
    trained_columns (Dict[str, Any]): The column settings the pipeline was
        trained with (``readers.columns.trained_columns``).
    """

    component: str
    kind: str
    model_hash: str
    max_length: int
    workers: int = 1
    details: Dict[str, Any] = field(default_factory=dict)
    score_threshold: Optional[float] = None
    trained_columns: Dict[str, Any] = field(default_factory=dict)


def describe(predictor: Predictor, *, workers: int = 1) -> EngineInfo:
    """The ``EngineInfo`` of a loaded predictor.

    predictor (Predictor): The predictor.
    workers (int): Processes that predict with it.
    RETURNS (EngineInfo): Its component, task, model identity and limits.
    """
    return EngineInfo(
        predictor.component,
        predictor.kind,
        model_hash=predictor.model_hash(),
        max_length=predictor.nlp.max_length,
        workers=workers,
        score_threshold=predictor.score_threshold,
        trained_columns=trained_columns(predictor.nlp.config),
    )


class Engine:
    """Turns batches of ``(id, texts)`` rows into output lines. An engine
    holds its own options and knows nothing of files, columns, rejects or
    resume: those are the driver's (``predict_file``).

    The driver calls ``start`` once, then ``run`` once, then ``close`` (also
    after an error). ``run`` yields the items it is given in their order,
    each with one line per task.
    """

    name = "local"

    def start(self, model: Model, *, component: Optional[str] = None) -> EngineInfo:
        """Load the model where it predicts.

        model (Union[str, Path, Language]): A pipeline path or package name,
            or a loaded pipeline.
        component (Optional[str]): The spacy-attn component, if several.
        RETURNS (EngineInfo): The component, its task and the workers.
        """
        raise NotImplementedError

    def run(
        self, jobs: Iterable[Tuple[K, List[Task]]]
    ) -> Iterator[Tuple[K, List[str]]]:
        """Predict every batch.

        jobs (Iterable[Tuple[K, List[Task]]]): ``(key, tasks)`` items,
            consumed lazily (a bounded number ahead of what is yielded).
        YIELDS (Tuple[K, List[str]]): ``(key, lines)`` in the jobs' order.
        """
        raise NotImplementedError

    def run_details(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): Engine-specific facts of the run so far,
        for ``PredictStats.details``."""
        return {}

    def close(self, *, failed: bool = False) -> None:
        """Free the workers and the model.

        failed (bool): The run stopped early: drop the work in flight.
        """


class InProcessEngine(Engine):
    """Predict in this process, on its CPU threads or one GPU."""

    def __init__(
        self,
        *,
        gpu_id: int = -1,
        threads: Optional[int] = None,
        score_threshold: Optional[float] = None,
    ) -> None:
        """Initialize the engine.

        gpu_id (int): GPU to use (-1: CPU).
        threads (Optional[int]): torch intra-op threads while it predicts;
            None: torch's.
        score_threshold (Optional[float]): Span QA: drop answers scoring
            below it (``Predictor``).
        """
        self.gpu_id = gpu_id
        self.threads = threads
        self.score_threshold = score_threshold
        self._predictor: Optional[Predictor] = None
        self._saved_threads: Optional[int] = None

    def start(self, model: Model, *, component: Optional[str] = None) -> EngineInfo:
        self._predictor = Predictor(
            load_pipeline(model, gpu_id=self.gpu_id),
            component=component,
            score_threshold=self.score_threshold,
        )
        if self.threads is not None:
            self._saved_threads = torch.get_num_threads()
            torch.set_num_threads(self.threads)
        return describe(self._predictor)

    def run(
        self, jobs: Iterable[Tuple[K, List[Task]]]
    ) -> Iterator[Tuple[K, List[str]]]:
        assert self._predictor is not None, "start() first"
        for key, tasks in jobs:
            yield key, self._predictor(tasks)

    def close(self, *, failed: bool = False) -> None:
        self._predictor = None
        if self._saved_threads is not None:
            torch.set_num_threads(self._saved_threads)
            self._saved_threads = None


def worker_predictor(
    predictor: Optional[Predictor],
    model: Optional[str],
    component: Optional[str],
    score_threshold: Optional[float] = None,
) -> Predictor:
    """The predictor of one worker process (``WorkerPool``'s ``make_worker``).

    predictor (Optional[Predictor]): The parent's, inherited under ``fork``.
    model (Optional[str]): The pipeline to load otherwise (``spawn``).
    component (Optional[str]): The spacy-attn component, if several.
    score_threshold (Optional[float]): Span QA: see ``Predictor`` (the
        inherited predictor has it already).
    RETURNS (Predictor): The predictor.
    """
    # One intra-op thread per worker, whatever the start method: N workers
    # fill N cores, and results do not depend on how the workers started.
    # (Forked workers already have it: spacy_attn.parallel.)
    torch.set_num_threads(1)
    if predictor is not None:
        return predictor
    if model is None:
        raise PredictError(
            "A worker started without the parent's pipeline needs a model path."
        )
    return Predictor(
        load_pipeline(model), component=component, score_threshold=score_threshold
    )


class LocalPoolEngine(Engine):
    """Predict in ``n_process`` worker processes on this machine, one torch
    thread each: each worker gets the texts of a batch and returns its output
    lines (see ``spacy_attn.batch.pool.WorkerPool`` for why this is faster than
    ``nlp.pipe(n_process=N)``). Workers die with this process."""

    def __init__(
        self,
        n_process: int,
        *,
        start_method: Optional[str] = None,
        score_threshold: Optional[float] = None,
    ) -> None:
        """Initialize the engine.

        n_process (int): Worker processes (1 runs the jobs in this process,
            as ``WorkerPool`` does).
        start_method (Optional[str]): "fork", "spawn" or "forkserver"; None:
            the platform's default.
        score_threshold (Optional[float]): Span QA: drop answers scoring
            below it (``Predictor``).
        RAISES (PredictError): If ``n_process`` < 1.
        """
        if n_process < 1:
            raise PredictError(f"--n-process must be >= 1, got {n_process}.")
        self.n_process = n_process
        self.start_method = start_method or multiprocessing.get_start_method()
        self.score_threshold = score_threshold
        self._pool: Optional[WorkerPool] = None

    def start(self, model: Model, *, component: Optional[str] = None) -> EngineInfo:
        fork = self.start_method == "fork"
        if not fork and isinstance(model, Language):
            raise PredictError(
                f"Workers started with {self.start_method!r} load the pipeline "
                "themselves: pass its path."
            )
        # Loaded here too: it names the task, and forked workers inherit it.
        predictor = Predictor(
            load_pipeline(model),
            component=component,
            score_threshold=self.score_threshold,
        )
        path = None if isinstance(model, Language) else str(model)
        self._pool = WorkerPool(
            self.n_process,
            make_worker=worker_predictor,
            worker_args=(
                predictor if fork else None,
                path,
                component,
                self.score_threshold,
            ),
            start_method=self.start_method,
        )
        start = time.perf_counter()
        self._pool.__enter__()
        info = describe(predictor, workers=self.n_process)
        info.details["pool_start_seconds"] = time.perf_counter() - start
        return info

    def run(
        self, jobs: Iterable[Tuple[K, List[Task]]]
    ) -> Iterator[Tuple[K, List[str]]]:
        assert self._pool is not None, "start() first"
        return self._pool.imap(jobs)

    def close(self, *, failed: bool = False) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.__exit__(RuntimeError if failed else None, None, None)


__all__ = [
    "Engine",
    "EngineInfo",
    "InProcessEngine",
    "LocalPoolEngine",
    "describe",
    "worker_predictor",
]
