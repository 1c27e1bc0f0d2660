"""What a ``spacy train`` config can name besides models and readers: a
length-bucketed batcher (``spacy-attn.batch_by_length.v1``) and a console
logger that also records where the time went (``spacy-attn.TimedLogger.v1``).

Both exist for GPU training, where a step costs little: padding a batch to
its longest doc wastes the device, and evaluation and checkpointing are a
large share of a short run, so training speed must be read without them.
"""

import json
import random
import sys
import time
from pathlib import Path
from typing import (
    IO,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from spacy.language import Language
from spacy.util import registry

T = TypeVar("T")

__all__ = ["batch_by_length", "configure_batch_by_length", "make_timed_logger"]


def batch_by_length(
    items: Iterable[T],
    *,
    size: int,
    buffer: int = 64,
    get_length: Callable[[Any], int] = len,
    rng: Optional[random.Random] = None,
) -> Iterator[List[T]]:
    """Batches of ``size`` items (the last of the stream may be smaller),
    each of items of similar length.

    ``buffer * size`` items are read at a time, sorted by length and cut into
    batches of ``size``, and those batches are yielded in a random order, so
    one batch pads little while the order of lengths stays random. Unlike
    spaCy's ``batch_by_padded.v1`` every batch holds the same number of
    items: a learning rate tuned for a batch size holds for every step, and
    a step's examples are a known count.

    items (Iterable[T]): The items, e.g. training ``Example``s.
    size (int): Items per batch.
    buffer (int): Batches' worth of items sorted together.
    get_length (Callable[[T], int]): An item's length (``len``: tokens of
        an ``Example``'s predicted doc).
    rng (Optional[random.Random]): The shuffle's generator; None uses the
        ``random`` module, which ``spacy train`` seeds.
    YIELDS (List[T]): The batches.
    """
    if size < 1 or buffer < 1:
        raise ValueError(f"size ({size}) and buffer ({buffer}) must be >= 1.")
    shuffle = (rng or random).shuffle
    window: List[T] = []
    for item in items:
        window.append(item)
        if len(window) == size * buffer:
            yield from _length_batches(window, size, get_length, shuffle)
            window = []
    if window:
        yield from _length_batches(window, size, get_length, shuffle)


def _length_batches(
    window: List[T],
    size: int,
    get_length: Callable[[T], int],
    shuffle: Callable[[List[Any]], None],
) -> List[List[T]]:
    ordered = sorted(window, key=get_length)
    batches = [ordered[i : i + size] for i in range(0, len(ordered), size)]
    shuffle(batches)
    return batches


@registry.batchers("spacy-attn.batch_by_length.v1")
def configure_batch_by_length(
    size: int,
    *,
    buffer: int = 64,
    get_length: Optional[Callable[[Any], int]] = None,
) -> Callable[[Iterable[Any]], Iterable[List[Any]]]:
    """Batches of ``size`` examples of similar length (see
    ``batch_by_length``): ``[training.batcher]`` of a config.

    size (int): Examples per batch.
    buffer (int): Batches' worth of examples sorted by length together.
    get_length (Optional[Callable[[Any], int]]): An example's length; None:
        ``len`` (tokens).
    RETURNS (Callable): The batcher.
    """
    length = get_length or len

    def batcher(items: Iterable[Any]) -> Iterable[List[Any]]:
        return batch_by_length(items, size=size, buffer=buffer, get_length=length)

    return batcher


@registry.loggers("spacy-attn.TimedLogger.v1")
def make_timed_logger(
    progress_bar: bool = False,
    output_file: Optional[Union[str, Path]] = None,
) -> Callable[
    [Language],
    Tuple[Callable[[Optional[Dict[str, Any]]], None], Callable[[], None]],
]:
    """spaCy's console logger (``spacy.ConsoleLogger.v3``'s console output), plus a JSON
    lines file with one record per evaluation that separates training time
    from the time of evaluating and saving checkpoints.

    spaCy calls the logger after every step (``None`` for a step without an
    evaluation), so the time from one call to the next is one step; a step
    that ends in an evaluation also holds the evaluation and the checkpoint.
    Each record: ``step``, ``epoch``, ``seconds`` (wall time since the first
    step, with spaCy's evaluation at step 0, ended; float),
    ``train_seconds`` and ``train_steps`` (the steps without an evaluation,
    after the first: the first holds start-up work),
    ``eval_seconds`` (the steps with one, their update included), ``words``
    (tokens trained on), ``score`` and ``scores`` (the evaluation's), and
    ``losses``. Training speed is ``train_steps * batch size / train_seconds``.

    progress_bar (bool): Show spaCy's progress bar.
    output_file (Optional[Union[str, Path]]): The JSON lines file (its folder
        made if needed); None: console only.
    RETURNS: The logger setup function ``spacy train`` calls.
    """
    from spacy.training.loggers import console_logger

    console = console_logger(progress_bar=progress_bar)

    def setup(
        nlp: Language, stdout: IO = sys.stdout, stderr: IO = sys.stderr
    ) -> Tuple[Callable[[Optional[Dict[str, Any]]], None], Callable[[], None]]:
        log_console, finalize_console = console(nlp, stdout, stderr)
        stream = _open_log(output_file)
        clock: Dict[str, float] = {"train": 0.0, "eval": 0.0, "steps": 0.0}
        marks: Dict[str, Optional[float]] = {"start": None, "last": None}

        def log_step(info: Optional[Dict[str, Any]]) -> None:
            now = time.perf_counter()
            last = marks["last"]
            if last is None:
                # The first step: spaCy evaluates at step 0, so its time is
                # start-up and evaluation, not training.
                marks["start"] = now
            elif info is None:
                clock["train"] += now - last
                clock["steps"] += 1
            else:
                clock["eval"] += now - last
            marks["last"] = now
            log_console(info)
            if info is None or stream is None:
                return
            start = marks["start"] if marks["start"] is not None else now
            record = {
                "step": info["step"],
                "epoch": info["epoch"],
                "seconds": round(now - start, 3),
                "train_seconds": round(clock["train"], 3),
                "train_steps": int(clock["steps"]),
                "eval_seconds": round(clock["eval"], 3),
                "words": info.get("words"),
                "score": info.get("score"),
                "scores": _floats(info.get("other_scores") or {}),
                "losses": _floats(info.get("losses") or {}),
            }
            stream.write(json.dumps(record) + "\n")
            stream.flush()

        def finalize() -> None:
            finalize_console()
            if stream is not None:
                stream.close()

        return log_step, finalize

    return setup


def _open_log(path: Optional[Union[str, Path]]) -> Optional[IO]:
    if path is None:
        return None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf8")


def _floats(values: Dict[str, Any]) -> Dict[str, Any]:
    # Scores may be nested dicts (per-type scores) or None: keep numbers only.
    return {k: float(v) for k, v in values.items() if isinstance(v, (int, float))}
