"""Thinc's ``PyTorchWrapper_v2``, with an optimizer step that updates each
torch parameter in place.

Why: Thinc's ``PyTorchShim.finish_update`` gives every parameter a new
tensor after each step (``param.data = xp2torch(param_array)``). On a CPU
(and through DLPack on a GPU) that tensor wraps the optimizer's array, which
is a view of the parameter's previous tensor, so every step adds one link per
parameter to a chain that is never freed. Memory-wise the links are small,
but they are long-lived allocations scattered between the large, short-lived
activations of each step, so glibc's heap cannot reuse its freed space and
keeps growing: a CPU ``spacy train`` of the DCN grew by gigabytes over a few
thousand steps, and a bare PyTorch loop of the same module did not
(``benchmarks/results/notes_span_qa.md``, "A tensor chain per optimizer
step"). It also splits the flat cuDNN weight buffer of an LSTM after every
step (see ``spacy_attn.models.rnn``).

The optimizer's arrays are views of the parameters (NumPy on a CPU, CuPy on a
GPU), so Thinc's optimizers have already written the new values in place; the
values are copied only when they are not (an optimizer that returns a new
array, or a device Thinc's ops do not share memory with).
"""

from typing import Any, Callable, Optional, cast

from thinc.api import Model, Optimizer, PyTorchGradScaler, PyTorchShim
from thinc.layers.pytorchwrapper import (
    convert_pytorch_default_inputs,
    convert_pytorch_default_outputs,
)
from thinc.layers.pytorchwrapper import forward as pytorch_forward
from thinc.types import FloatsXd

from .tensors import torch2xp, xp2torch  # not Thinc's: no deprecated DLPack calls

__all__ = ["InPlacePyTorchShim", "wrap_torch_module"]


class InPlacePyTorchShim(PyTorchShim):
    """``PyTorchShim`` whose ``finish_update`` keeps each parameter's tensor
    and storage: the optimizer's result is written into it, not swapped in.
    Serialization and everything else are Thinc's."""

    def finish_update(self, optimizer: Optimizer) -> None:
        import torch

        for name, param in self._model.named_parameters():
            if param.grad is None:
                continue
            # Skip the weight update if any gradient overflowed (as Thinc).
            if not self._grad_scaler.found_inf:
                weights, _ = optimizer(
                    (self.id, name),
                    cast(FloatsXd, torch2xp(param.data)),
                    cast(FloatsXd, torch2xp(param.grad)),
                )
                if _data_ptr(weights) != param.data_ptr():
                    with torch.no_grad():
                        param.copy_(xp2torch(weights, device=param.device))
            param.grad.zero_()
        self._grad_scaler.update()


def _data_ptr(array: Any) -> int:
    """The address of a NumPy or CuPy array's first element."""
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is None:
        interface = array.__array_interface__
    return int(interface["data"][0])


def wrap_torch_module(
    module: Any,
    *,
    convert_inputs: Optional[Callable] = None,
    convert_outputs: Optional[Callable] = None,
    mixed_precision: bool = False,
    grad_scaler: Optional[PyTorchGradScaler] = None,
) -> Model[Any, Any]:
    """Wrap a torch module as Thinc's ``PyTorchWrapper_v2`` does (same
    forward, attributes, dims and serialization), with an
    ``InPlacePyTorchShim``.

    module (torch.nn.Module): The module to wrap.
    convert_inputs (Optional[Callable]): Thinc's input converter.
    convert_outputs (Optional[Callable]): Thinc's output converter.
    mixed_precision (bool): Autocast the forward pass (GPU only).
    grad_scaler (Optional[PyTorchGradScaler]): The gradient scaler of mixed
        precision (Thinc's default when None).
    RETURNS (Model): The Thinc layer.
    """
    return Model(
        "pytorch",
        pytorch_forward,
        attrs={
            "convert_inputs": convert_inputs or convert_pytorch_default_inputs,
            "convert_outputs": convert_outputs or convert_pytorch_default_outputs,
        },
        shims=[
            InPlacePyTorchShim(
                module, mixed_precision=mixed_precision, grad_scaler=grad_scaler
            )
        ],
        dims={"nI": None, "nO": None},
    )
