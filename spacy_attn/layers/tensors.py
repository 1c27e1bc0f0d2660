"""Tensors between Thinc and PyTorch for the layers of this package.

``xp2torch`` / ``torch2xp`` do what
Thinc's functions of the same names do, through the DLPack protocol
(``torch.from_dlpack(array)``, ``cupy.from_dlpack(tensor)``) instead of the
legacy capsule calls (``cupy.ndarray.toDlpack``, ``cupy.fromDlpack``) that
CuPy deprecates and warns about on every GPU step.
"""

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    import torch


def xp2torch(
    xp_tensor, requires_grad: bool = False, device: Optional["torch.device"] = None
):
    """Thinc's ``xp2torch`` without CuPy's deprecated ``toDlpack``: a numpy or
    cupy array to a torch tensor (zero-copy where the devices agree).

    xp_tensor (ArrayXd): The array.
    requires_grad (bool): Whether the tensor takes part in autograd.
    device (Optional[torch.device]): Where to put it; by default Thinc's
        current device (``get_torch_default_device``).
    RETURNS (torch.Tensor): The tensor.
    """
    import torch
    from thinc.api import get_torch_default_device

    if device is None:
        device = get_torch_default_device()
    if hasattr(xp_tensor, "__dlpack__"):
        # numpy >= 1.22 and every supported cupy implement the protocol.
        torch_tensor = torch.from_dlpack(xp_tensor)
    else:
        torch_tensor = torch.from_numpy(xp_tensor)
    torch_tensor = torch_tensor.to(device)
    if requires_grad:
        torch_tensor.requires_grad_()
    return torch_tensor


def torch2xp(torch_tensor, *, ops=None):
    """Thinc's ``torch2xp`` without the legacy DLPack capsule: a torch tensor
    to a numpy array, or a cupy array for a CUDA tensor unless ``ops`` is
    ``NumpyOps``.

    torch_tensor (torch.Tensor): The tensor.
    ops (Optional[Ops]): The ops whose array type to return.
    RETURNS (ArrayXd): The array.
    """
    from thinc.api import NumpyOps

    if torch_tensor.is_cuda and not isinstance(ops, NumpyOps):
        import cupy

        # detach(): torch refuses to export a tensor that requires grad.
        return cupy.from_dlpack(torch_tensor.detach())
    if ops is None or isinstance(ops, NumpyOps):
        return torch_tensor.detach().cpu().numpy()
    import cupy

    return cupy.asarray(torch_tensor)


__all__ = ["xp2torch", "torch2xp"]
