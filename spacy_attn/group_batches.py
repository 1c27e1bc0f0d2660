"""Batches of whole groups: every candidate of a query in the same batch, so
that a loss can compare them with each other (``attn_pair_classifier``'s
``ranking_loss``). spaCy's batchers cut the shuffled rows anywhere."""

import itertools
from typing import Any, Callable, Dict, Hashable, Iterable, Iterator, List, Union

from spacy.training import Example
from spacy.util import registry

from .pairs import GROUP_ID_KEY

Sizing = Union[int, Iterable[int]]
Batcher = Callable[[Iterable[Example]], Iterator[List[Example]]]


@registry.batchers("spacy-attn.batch_by_group.v1")
def configure_batch_by_group(*, size: Sizing, buffer: int = 0) -> Batcher:
    """Registered batcher: ``batch_by_group`` with these settings.

    size (Union[int, Iterable[int]]): The examples of a batch (a schedule,
        as for ``spacy.batch_by_sequence.v1``): a batch closes at the first
        group boundary at or after it, so a group is never split, and one
        group larger than ``size`` is a batch of its own.
    buffer (int): Group this many examples at a time (0: the whole stream).
        With ``max_epochs >= 0`` spaCy holds the epoch's shuffled examples in
        memory anyway, so 0 costs nothing more; a streamed corpus
        (``max_epochs = -1``) wants a bound, and a group that straddles two
        buffers is then split.
    RETURNS (Callable): The batcher.
    """
    if buffer < 0:
        raise ValueError(f"buffer must be 0 (the whole stream) or more, not {buffer}.")

    def batcher(items: Iterable[Example]) -> Iterator[List[Example]]:
        return batch_by_group(items, size=size, buffer=buffer)

    return batcher


def batch_by_group(
    items: Iterable[Example], *, size: Sizing, buffer: int = 0
) -> Iterator[List[Example]]:
    """Batches of whole groups, in the order each group first appears (which
    spaCy's per-epoch shuffle makes random), rows in their order within a
    group. An example without a group id is a group of its own.

    items (Iterable[Example]): The examples (pair docs with group ids in
        ``user_data``, as ``PairCorpus`` stores them from ``group_col``).
    size, buffer: As ``configure_batch_by_group``.
    YIELDS (List[Example]): One batch.
    """
    sizes = itertools.repeat(size) if isinstance(size, int) else iter(size)
    target = next(sizes)
    batch: List[Example] = []
    for window in _windows(iter(items), buffer):
        for group in _groups(window):
            batch.extend(group)
            if len(batch) >= target:
                yield batch
                batch = []
                target = next(sizes, target)
    if batch:
        yield batch


def _windows(items: Iterator[Example], buffer: int) -> Iterator[List[Example]]:
    if buffer == 0:
        yield list(items)
        return
    while True:
        window = list(itertools.islice(items, buffer))
        if not window:
            return
        yield window


def _groups(examples: List[Example]) -> Iterable[List[Example]]:
    groups: Dict[Hashable, List[Example]] = {}
    for i, eg in enumerate(examples):
        key: Any = eg.reference.user_data.get(GROUP_ID_KEY)
        # A row without a group is a group of its own (keyed by its position).
        groups.setdefault(("group", key) if key is not None else ("row", i), []).append(
            eg
        )
    return groups.values()
