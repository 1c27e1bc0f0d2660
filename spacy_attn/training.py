"""What a ``spacy train`` config can name besides models and readers: a
length-bucketed batcher (``spacy-attn.batch_by_length.v1``), a console
logger that also records where the time went (``spacy-attn.TimedLogger.v1``),
and a deadline for a run that must end by a given time: a batcher that stops
there (``spacy-attn.deadline_batcher.v1``) and a warm-up and linear decay
that reaches zero there (``spacy-attn.warmup_linear.v1``).

All exist for GPU training, where a step costs little: padding a batch to
its longest doc wastes the device, and evaluation and checkpointing are a
large share of a short run, so training speed must be read without them.
A GPU is often held for a fixed time, and how many steps fit in it is not
known before the run: its start-up (reading the corpus, initializing) and
its speed vary by machine, so a step count chosen beforehand either stops
early or is cut off before its learning rate has decayed.
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
from wasabi import msg

T = TypeVar("T")
_END: Any = object()
Batcher = Callable[[Iterable[Any]], Iterable[List[Any]]]

__all__ = [
    "batch_by_length",
    "configure_batch_by_length",
    "configure_deadline_batcher",
    "configure_warmup_linear",
    "make_timed_logger",
    "until_deadline",
    "warmup_linear",
]


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
) -> Batcher:
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


def until_deadline(
    batches: Iterable[T],
    deadline: float,
    *,
    clock: Optional[Callable[[], float]] = None,
) -> Iterator[T]:
    """The items of ``batches`` until the clock reaches ``deadline``.

    The clock is read before each item is taken, i.e. when the training loop
    asks for its next batch, after the last step (and its evaluation) ended.

    batches (Iterable[T]): The batches.
    deadline (float): POSIX time (``time.time()``, ``date +%s``) after which
        no batch is given; 0: none.
    clock (Optional[Callable[[], float]]): The time; None: ``time.time``.
    YIELDS (T): The batches before the deadline.
    """
    now = clock or time.time
    items = iter(batches)
    # Read before the batch is made: after the deadline an epoch costs
    # nothing here, not even its first batch.
    while not (deadline > 0 and now() >= deadline):
        batch = next(items, _END)
        if batch is _END:
            return
        yield batch


@registry.batchers("spacy-attn.deadline_batcher.v1")
def configure_deadline_batcher(
    batcher: Batcher,
    *,
    deadline: float = 0.0,
    max_epochs: int,
) -> Batcher:
    """``batcher``'s batches until ``deadline``: ``[training.batcher]`` of a
    run that must end by a given time, with the batcher it wraps in
    ``[training.batcher.batcher]``. When the deadline passes, each epoch
    gets no batch, so ``spacy train`` runs out of epochs, saves
    ``model-last`` and exits normally; it prints the steps and epochs it
    trained.

    spaCy asks for the batches of one epoch after another until
    ``[training] max_epochs``; at 0 (or -1) it never stops asking, so a
    deadline needs ``max_epochs >= 1``, above the epochs the time allows
    (an epoch without batches costs only the shuffle of the corpus). Pass
    ``max_epochs = ${training.max_epochs}`` so that this is checked. Pair it
    with ``spacy-attn.warmup_linear.v1`` at the same deadline, so that the
    learning rate has decayed when the batches stop.

    batcher (Callable): The batcher whose batches are given.
    deadline (float): POSIX time after which no batch is given (e.g.
        ``--training.batcher.deadline $(( $(date +%s) + 600 ))``); 0: none,
        the batches of ``batcher`` unchanged.
    max_epochs (int): ``[training] max_epochs``.
    RETURNS (Callable): The batcher.
    """
    if deadline > 0 and max_epochs < 1:
        raise ValueError(
            f"spacy-attn.deadline_batcher.v1 with a deadline needs [training] "
            f"max_epochs >= 1, not {max_epochs}: spaCy asks for the batches of "
            "epoch after epoch until max_epochs, so at 0 or -1 a run whose "
            "batches have stopped would never end. Set it above the epochs the "
            "time allows (e.g. 100)."
        )
    count = {"batches": 0, "epochs": 0, "told": 0}

    def batches(items: Iterable[Any]) -> Iterator[List[Any]]:
        count["epochs"] += 1
        for batch in until_deadline(batcher(items), deadline):
            count["batches"] += 1
            yield batch
        if deadline > 0 and time.time() >= deadline and not count["told"]:
            count["told"] = 1
            # Short enough for one line: the report reads it back.
            msg.info(
                f"Deadline reached after {count['batches']:,} steps "
                f"(epoch {count['epochs']}): no more batches"
            )

    return batches


def warmup_linear(
    initial_rate: float,
    warmup_steps: int,
    total_steps: int = 0,
    *,
    deadline: float = 0.0,
    clock: Optional[Callable[[], float]] = None,
) -> Iterator[float]:
    """Learning rates: a linear warm-up over ``warmup_steps`` steps to
    ``initial_rate``, then a linear decay that reaches zero at step
    ``total_steps`` or at the POSIX time ``deadline``, whichever comes first.

    Without a deadline the rates are those of Thinc's ``warmup_linear.v1``.
    With one, the decay runs in wall time, from the end of the warm-up to
    the deadline, so it ends when a run held for a fixed time must stop,
    however fast its steps are. Thinc's optimizer takes the first rate when
    it is built and the next after each step, so the clock is read once per
    step.

    initial_rate (float): The rate at the end of the warm-up.
    warmup_steps (int): Steps of the warm-up.
    total_steps (int): The step at which the rate reaches zero; 0: none
        (then a deadline is needed).
    deadline (float): POSIX time at which the rate reaches zero; 0: none.
    clock (Optional[Callable[[], float]]): The time; None: ``time.time``.
    YIELDS (float): The rate of each step.
    """
    if total_steps <= 0 and deadline <= 0:
        raise ValueError(
            "spacy-attn.warmup_linear.v1 needs total_steps > 0 or a deadline: "
            "without either the rate would never decay."
        )
    return _warmup_linear_rates(
        initial_rate, warmup_steps, total_steps, deadline, clock or time.time
    )


def _warmup_linear_rates(
    initial_rate: float,
    warmup_steps: int,
    total_steps: int,
    deadline: float,
    clock: Callable[[], float],
) -> Iterator[float]:
    decay_start: Optional[float] = None
    step = 0
    while True:
        if step < warmup_steps:
            factor = step / max(1, warmup_steps)
        else:
            factor = 1.0
            if total_steps > 0:
                # Thinc's formula, so that the rates are its rates.
                factor = max(
                    0.0, (total_steps - step) / max(1.0, total_steps - warmup_steps)
                )
            if deadline > 0:
                now = clock()
                decay_start = now if decay_start is None else decay_start
                left = (deadline - now) / max(1e-9, deadline - decay_start)
                factor = min(factor, max(0.0, left))
        yield factor * initial_rate
        step += 1


@registry.schedules("spacy-attn.warmup_linear.v1")
def configure_warmup_linear(
    initial_rate: float,
    warmup_steps: int,
    total_steps: int = 0,
    deadline: float = 0.0,
) -> Iterator[float]:
    """Thinc's ``warmup_linear.v1`` with an optional deadline (see
    ``warmup_linear``): ``[training.optimizer.learn_rate]`` of a config.

    initial_rate (float): The rate at the end of the warm-up.
    warmup_steps (int): Steps of the warm-up.
    total_steps (int): The step at which the rate reaches zero (e.g.
        ``${training.max_steps}``); 0: none.
    deadline (float): POSIX time at which it reaches zero (e.g.
        ``${training.batcher.deadline}``); 0: none.
    RETURNS (Iterator[float]): The rates.
    """
    return warmup_linear(initial_rate, warmup_steps, total_steps, deadline=deadline)


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
