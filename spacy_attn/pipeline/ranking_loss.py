"""A listwise loss for answer selection: the candidates of one query compete
in one softmax (Cao et al. 2007, ListNet with a one-hot target; Wang & Jiang
2017 use it for answer selection). The pointwise cross-entropy judges each
row alone; this one only asks that the query's answers score above its
other candidates, which is what MAP rewards."""

from typing import Any, Dict, Hashable, List, Sequence, Tuple

import numpy
from spacy.training import Example

from ..pairs import GROUP_ID_KEY

EPS = 1e-8


def group_softmax_loss(
    examples: Sequence[Example],
    scores: numpy.ndarray,
    *,
    labels: Sequence[str],
    positive_label: str,
    multi_label: bool,
) -> Tuple[float, numpy.ndarray]:
    """The listwise loss of a batch and its gradient with respect to the
    output layer's logits (what ``get_loss`` returns for the pointwise loss).

    Each group (query) of the batch with at least one positive and one
    negative row contributes -sum_i t_i log softmax(z)_i over its rows,
    where z_i is the row's log-odds of the positive label and t is uniform
    over its positives; the loss is the mean over those groups (0.0 with
    none). Rows without a group or gold label take no part.

    examples (Sequence[Example]): The batch, in the order of ``scores``.
    scores (numpy.ndarray): (n, K) probabilities, K = len(labels): a
        softmax over two exclusive labels, or one sigmoid per label.
    labels (Sequence[str]): The component's labels.
    positive_label (str): The positive label (one of ``labels``).
    multi_label (bool): Whether ``scores`` are independent sigmoids.
    RETURNS (Tuple[float, numpy.ndarray]): The loss and (n, K) d_logits.
    """
    labels = list(labels)
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
    if not multi_label:
        neg = [i for i in range(len(labels)) if i != pos]
        if len(neg) != 1:
            raise ValueError(
                f"The ranking loss needs two exclusive labels or one sigmoid "
                f"per label; this component has {labels}."
            )
        d_logits[:, neg[0]] = -d_z
    return loss / len(groups), d_logits


def _groups_with_both(
    examples: Sequence[Example], positive_label: str
) -> List[Tuple[List[int], numpy.ndarray]]:
    """(row indices, gold 0/1 per row) of each group with both kinds."""
    found: Dict[Hashable, Tuple[List[int], List[float]]] = {}
    for i, eg in enumerate(examples):
        group: Any = eg.reference.user_data.get(GROUP_ID_KEY)
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
