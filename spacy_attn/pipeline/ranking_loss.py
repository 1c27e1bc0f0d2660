"""A listwise loss for answer selection: the candidates of one query compete
in one softmax (Cao et al. 2007, ListNet with a one-hot target; Wang & Jiang
2017 use it for answer selection). The pointwise cross-entropy judges each
row alone; this one only asks that the query's answers score above its
other candidates, which is what MAP rewards."""

from typing import Dict, Hashable, List, Sequence, Tuple

import numpy
from spacy.training import Example

from ..scorers import group_id

EPS = 1e-8


def group_softmax_loss(
    examples: Sequence[Example],
    scores: numpy.ndarray,
    *,
    labels: Sequence[str],
    positive_label: str,
) -> Tuple[float, numpy.ndarray]:
    """The listwise loss of a batch and its gradient with respect to the
    output layer's logits (what ``get_loss`` returns for the pointwise loss).

    Each group (query) of the batch with at least one positive and one
    negative row contributes -sum_i t_i log softmax(z)_i over its rows,
    where z_i is the row's log-odds of the positive label and t is uniform
    over its positives; the loss is the mean over those groups (0.0 with
    none). Rows without a group or gold label take no part.

    examples (Sequence[Example]): The batch, in the order of ``scores``.
    scores (numpy.ndarray): (n, 2) probabilities, a softmax over two
        exclusive labels (what ``AttnClassifier.is_binary`` means).
    labels (Sequence[str]): The component's labels.
    positive_label (str): The positive label (one of ``labels``).
    RETURNS (Tuple[float, numpy.ndarray]): The loss and (n, 2) d_logits.
    RAISES (ValueError): Unless there are two labels.
    """
    labels = list(labels)
    if len(labels) != 2:
        raise ValueError(
            f"The ranking loss needs two exclusive labels; this component has {labels}."
        )
    pos = labels.index(positive_label)
    p = numpy.clip(scores[:, pos].astype("float64"), EPS, 1.0 - EPS)
    # log-odds of the positive label; for a two-way softmax this is the
    # difference of the two logits, so its gradient goes +dz / -dz to them.
    z = numpy.log(p) - numpy.log1p(-p)
    d_z = numpy.zeros_like(z)
    loss = 0.0
    groups = _groups_with_both(examples, positive_label)
    for rows, gold in groups:
        zs = z[rows] - z[rows].max()
        q = numpy.exp(zs) / numpy.exp(zs).sum()
        t = gold / gold.sum()
        loss -= float((t * numpy.log(q + EPS)).sum())
        d_z[rows] += q - t
    d_logits = numpy.zeros(scores.shape, dtype="float32")
    if not groups:
        return 0.0, d_logits
    d_z /= len(groups)
    d_logits[:, pos] = d_z
    d_logits[:, 1 - pos] = -d_z
    return loss / len(groups), d_logits


def _groups_with_both(
    examples: Sequence[Example], positive_label: str
) -> List[Tuple[List[int], numpy.ndarray]]:
    """(row indices, gold 0/1 per row) of each group with both kinds."""
    found: Dict[Hashable, Tuple[List[int], List[float]]] = {}
    for i, eg in enumerate(examples):
        group = group_id(eg.reference)
        gold = eg.reference.cats.get(positive_label)
        if group is None or gold is None:
            continue
        rows, golds = found.setdefault(group, ([], []))
        rows.append(i)
        golds.append(float(gold))
    return [
        (rows, numpy.asarray(golds))
        for rows, golds in found.values()
        if 0.0 < sum(golds) < len(golds)
    ]
