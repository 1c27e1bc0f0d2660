"""Reading the soft alignment of a trained Decomposable Attention model
(``spacy-attn.DecomposableAttention.v1`` and later): which tokens of the
second text each token of the first attends to, for inspection."""

from typing import List, Tuple, cast

import numpy
import torch
from spacy.tokens import Doc
from thinc.api import Model, PyTorchShim
from thinc.types import Ints2d

from .tensors import xp2torch

# The label of the NULL token's row and column in an alignment that includes
# it (``predict_soft_alignment(..., include_null=True)``).
NULL_TOKEN_LABEL = "NULL"


def has_soft_alignment(model: Model) -> bool:
    """Whether ``model`` (a pair model) exposes a soft alignment: a
    ``segments`` ref and an ``attention`` ref wrapping a torch module with an
    ``attention()`` method, as ``spacy-attn.DecomposableAttention.v1`` does."""
    if not (model.has_ref("segments") and model.has_ref("attention")):
        return False
    shims = model.get_ref("attention").shims
    return bool(shims) and callable(
        getattr(getattr(shims[0], "_model", None), "attention", None)
    )


def has_null_token(model: Model) -> bool:
    """Whether ``model`` (a pair model with a soft alignment) puts a NULL
    token before each text (``spacy-attn.DecomposableAttention.v3``'s
    ``null_token``), so that its alignment can include it."""
    if not has_soft_alignment(model):
        return False
    module = model.get_ref("attention").shims[0]._model
    return bool(getattr(module, "null_token", False))


def predict_soft_alignment(
    model: Model, docs: List[Doc], *, include_null: bool = False
) -> List[numpy.ndarray]:
    """The soft alignment of each pair doc's first segment over its second,
    computed in prediction mode (no dropout, no gradients).

    model (Model): A pair model for which ``has_soft_alignment`` is True.
    docs (List[Doc]): Pair docs. Nothing is written to them.
    include_null (bool): For a model with a NULL token (``has_null_token``):
        keep its row and column, the first of each (``NULL_TOKEN_LABEL``).
        False gives the tokens' block only, whose rows then sum to one minus
        what each token gave to NULL.
    RETURNS (List[numpy.ndarray]): One float32 array per doc, (La, Lb), or
        (La + 1, Lb + 1) with ``include_null``. Without a NULL token each row
        sums to one over the second segment's tokens (all-zero rows when the
        second segment is empty); with one, over NULL and those tokens.
    RAISES (ValueError): ``include_null`` for a model without a NULL token.
    """
    null = has_null_token(model)
    if include_null and not null:
        raise ValueError(
            "include_null=True needs a model with a NULL token "
            "(spacy-attn.DecomposableAttention.v3, null_token = true)."
        )
    if not docs:
        return []
    A, lengths_a, B, lengths_b = model.get_ref("segments").predict(docs)
    shim = cast(PyTorchShim, model.get_ref("attention").shims[0])
    module = shim._model
    device = shim.device
    ids: Tuple[Ints2d, ...] = ()
    if model.has_ref("exact_match"):
        ids = model.get_ref("exact_match").predict(docs)[4:]
    was_training = module.training
    # PyTorchShim.predict leaves the module in train mode whatever it was
    # before; here the caller's mode is restored instead.
    module.eval()
    try:
        with torch.no_grad():
            weights = module.attention(
                xp2torch(A, device=device),
                xp2torch(lengths_a, device=device),
                xp2torch(B, device=device),
                xp2torch(lengths_b, device=device),
                *(xp2torch(x, device=device) for x in ids),
            )
    finally:
        module.train(was_training)
    weights = weights.float().cpu().numpy()
    ops = model.ops
    lengths_a = ops.to_numpy(lengths_a)
    lengths_b = ops.to_numpy(lengths_b)
    # With a NULL token, row and column 0 are its own and the tokens follow.
    start = 1 if null and not include_null else 0
    end = 1 if null else 0
    return [
        numpy.ascontiguousarray(
            weights[i, start : int(lengths_a[i]) + end, start : int(lengths_b[i]) + end]
        )
        for i in range(len(docs))
    ]
