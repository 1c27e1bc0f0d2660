"""Optimizers the papers trained with that Thinc does not ship.

``spacy-attn.Adagrad.v1``: Adagrad (Duchi, Hazan & Singer 2011), the
optimizer of Parikh et al. (2016, learning rate 0.05, 0.025 with
intra-attention, initial accumulator 0.1) and of Lin et al. (2017) on SNLI
(learning rate 0.01). Usable in ``[training.optimizer]``:

    [training.optimizer]
    @optimizers = "spacy-attn.Adagrad.v1"
    learn_rate = 0.05
    initial_accumulator_value = 0.1

It follows ``torch.optim.Adagrad`` step for step (same accumulator, same
epsilon outside the square root, L2 added to the gradient like torch's
``weight_decay``), and Thinc's ``Optimizer`` for everything spaCy's training
loop touches (``__call__(key, weights, gradient, lr_scale=...)``,
``step_schedules``, ``learn_rate``, ``averages``, gradient clipping).
"""

from typing import Tuple

import numpy
import torch
from thinc.api import Optimizer, get_array_module
from thinc.backends import get_array_ops
from thinc.config import registry
from thinc.optimizers import FloatOrSeq, KeyT
from thinc.types import FloatsXd
from torch.optim.adagrad import adagrad as torch_adagrad


# The class itself is the registered optimizer: its parameters are the
# config's, so they are written once.
@registry.optimizers("spacy-attn.Adagrad.v1")
class AdagradOptimizer(Optimizer):
    """Thinc ``Optimizer`` doing Adagrad updates: each weight's step is the
    learning rate divided by the root of the sum of its squared gradients so
    far (plus the initial value). The per-weight sums of squared gradients
    live in ``mom2`` (keyed like Thinc's Adam moments).

    learn_rate (FloatOrSeq): Learning rate (or a schedule).
    initial_accumulator_value (float): Starting value of the sum of squared
        gradients (0.1 in Parikh et al. 2016; torch's default is 0).
    eps (float): Added to the root of the accumulator (torch's default).
    L2 (FloatOrSeq): L2 regularization. With ``L2_is_weight_decay = false``
        (the default) ``L2 * weights`` is added to the gradient before it
        enters the accumulator, as torch's ``weight_decay`` does; with true,
        the weights decay by ``learn_rate * L2`` after the step (AdamW style).
    L2_is_weight_decay (bool): See ``L2``.
    grad_clip (FloatOrSeq): Clip each parameter's gradient to this L2 norm
        before the step, as Thinc's optimizers do (0 = off).
    use_averages (bool): Keep moving averages of the weights (Thinc's
        ``averages``; spaCy evaluates and saves them when set).
    """

    __slots__ = ["initial_accumulator_value"]

    def __init__(
        self,
        learn_rate: FloatOrSeq = 0.01,
        *,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        L2: FloatOrSeq = 0.0,
        L2_is_weight_decay: bool = False,
        grad_clip: FloatOrSeq = 0.0,
        use_averages: bool = False,
    ) -> None:
        if initial_accumulator_value < 0:
            raise ValueError(
                f"Adagrad: initial_accumulator_value must be >= 0, got {initial_accumulator_value}"
            )
        # beta1 = beta2 = 0: nothing in the base class takes the Adam path.
        super().__init__(
            learn_rate,
            L2=L2,
            beta1=0.0,
            beta2=0.0,
            eps=eps,
            grad_clip=grad_clip,
            use_averages=use_averages,
            use_radam=False,
            L2_is_weight_decay=L2_is_weight_decay,
        )
        self.initial_accumulator_value = float(initial_accumulator_value)

    def __call__(
        self,
        key: KeyT,
        weights: FloatsXd,
        gradient: FloatsXd,
        *,
        lr_scale: float = 1.0,
    ) -> Tuple[FloatsXd, FloatsXd]:
        """Update ``weights`` in place with ``gradient`` (then zeroed, as
        Thinc's optimizers do); ``key`` identifies the parameter."""
        if len(gradient) < 1:
            return weights, gradient
        xp = get_array_module(weights)
        self.nr_update[key] += 1
        nr_upd = self.nr_update[key]
        # The same order as Thinc's Optimizer: coupled L2, then clipping.
        if self.L2 != 0 and not self.L2_is_weight_decay:
            gradient += self.L2 * weights
        if self.grad_clip:
            norm = xp.linalg.norm(gradient)
            if norm >= self.grad_clip:
                gradient *= self.grad_clip / norm
        if key not in self.mom2:
            acc = xp.empty(weights.shape, dtype=weights.dtype)
            acc.fill(self.initial_accumulator_value)
            self.mom2[key] = acc
        acc = self.mom2[key]
        lr = lr_scale * self.learn_rate
        if _fusable(xp, weights, gradient, acc):
            _fused_step(weights, gradient, acc, lr=lr, eps=self.eps)
        else:
            acc += gradient * gradient
            weights -= lr * gradient / (xp.sqrt(acc) + self.eps)
        gradient *= 0
        if self.L2 != 0 and self.L2_is_weight_decay:
            weights -= lr * self.L2 * weights
        if self.averages is not None:
            if key not in self.averages:
                self.averages[key] = xp.zeros(weights.shape, dtype="float32")
            get_array_ops(weights).update_averages(self.averages[key], weights, nr_upd)
        return weights, gradient


def _fusable(xp, weights, gradient, acc) -> bool:
    """Whether torch's fused CPU kernel can update these arrays in place:
    numpy arrays (not cupy) of one float dtype."""
    return xp is numpy and weights.dtype == gradient.dtype == acc.dtype


def _fused_step(
    weights: FloatsXd,
    gradient: FloatsXd,
    acc: FloatsXd,
    *,
    lr: float,
    eps: float,
) -> None:
    """One Adagrad step in place on CPU arrays, by torch's fused kernel.

    Why: the numpy expression makes five full-size temporaries. On the
    siamese SNLI setting (105M weights) that was ~45% of a training step
    (cProfile); the fused kernel reads and writes each array once and was 4x
    faster on a 72M-weight array (one thread). The arrays are shared with the
    tensors, not copied. L2 and clipping were applied to the gradient before.
    """
    step = torch.zeros((), dtype=torch.float32)
    torch_adagrad(
        # numpy.asarray returns the same numpy array: no copy.
        [torch.from_numpy(numpy.asarray(weights))],
        [torch.from_numpy(numpy.asarray(gradient))],
        [torch.from_numpy(numpy.asarray(acc))],
        [step],
        fused=True,
        lr=lr,
        weight_decay=0.0,
        lr_decay=0.0,
        eps=eps,
        maximize=False,
    )


# ``spacy-attn.Adagrad.v1``'s entry point: the class, under the name it had
# as a function (``Adagrad(...)`` returns an ``AdagradOptimizer``).
Adagrad = AdagradOptimizer

__all__ = ["Adagrad", "AdagradOptimizer"]
