"""The output layer of the pair classifier."""

from typing import Callable, Optional, Tuple, cast

from thinc.api import Model, glorot_uniform_init, zero_init
from thinc.types import Floats1d, Floats2d


def pair_output(
    nO: Optional[int] = None, nI: Optional[int] = None, *, multi_label: bool = False
) -> Model[Floats2d, Floats2d]:
    """Affine layer followed by softmax (mutually exclusive classes) or a
    sigmoid per label (multi-label / single binary score).

    The backward pass takes the gradient with respect to the *logits*, i.e.
    ``probabilities - truth``, which is the exact gradient of the softmax
    cross-entropy (or per-label binary cross-entropy). The component's
    ``get_loss`` returns exactly that, so no saturating activation derivative
    slows learning (the convention of Thinc's Softmax layer).

    nO (Optional[int]): Number of labels; set by the component from its labels.
    nI (Optional[int]): Input width; inferred at initialization.
    multi_label (bool): Sigmoid per label instead of softmax.
    """
    return Model(
        "pair_output",
        forward,
        init=init,
        dims={"nO": nO, "nI": nI},
        params={"W": None, "b": None},
        attrs={"multi_label": multi_label},
    )


def init(
    model: Model, X: Optional[Floats2d] = None, Y: Optional[Floats2d] = None
) -> None:
    if X is not None and model.has_dim("nI") is None:
        model.set_dim("nI", X.shape[1])
    if Y is not None and model.has_dim("nO") is None:
        model.set_dim("nO", Y.shape[1])
    nO, nI = model.get_dim("nO"), model.get_dim("nI")
    model.set_param("W", glorot_uniform_init(model.ops, (nO, nI)))
    model.set_param("b", zero_init(model.ops, (nO,)))


def forward(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    W = cast(Floats2d, model.get_param("W"))
    b = cast(Floats1d, model.get_param("b"))
    logits = model.ops.affine(X, W, b)
    if model.attrs["multi_label"]:
        Y = model.ops.sigmoid(logits)
    else:
        Y = model.ops.softmax(logits)

    def backprop(d_logits: Floats2d) -> Floats2d:
        model.inc_grad("b", d_logits.sum(axis=0))
        model.inc_grad("W", model.ops.gemm(d_logits, X, trans1=True))
        return model.ops.gemm(d_logits, W)

    return Y, backprop
