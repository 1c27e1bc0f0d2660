"""spacy_attn.layers.tensors: the conversions between Thinc arrays and torch
tensors that avoid CuPy's deprecated DLPack calls."""

import warnings

import numpy
import pytest
import torch

from spacy_attn.layers import tensors


class _LegacyDLPackArray(numpy.ndarray):
    """A numpy array that, like a cupy array, also has the legacy
    ``toDlpack`` (deprecated by CuPy) next to the ``__dlpack__`` protocol."""

    def toDlpack(self):
        warnings.warn(
            "toDlpack is deprecated, use __dlpack__", DeprecationWarning, stacklevel=2
        )
        return numpy.asarray(self).__dlpack__()


def test_xp2torch_uses_the_dlpack_protocol():
    x = numpy.arange(6, dtype="float32").reshape(2, 3).view(_LegacyDLPackArray)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = tensors.xp2torch(x, requires_grad=True, device=torch.device("cpu"))
    assert t.requires_grad and t.dtype == torch.float32
    assert t.detach().numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    # Thinc's own xp2torch takes the legacy path on such an array.
    from thinc.api import xp2torch as thinc_xp2torch

    with pytest.warns(DeprecationWarning, match="toDlpack"):
        thinc_xp2torch(x, device=torch.device("cpu"))


def test_conversions_round_trip_like_thincs():
    from thinc.api import NumpyOps
    from thinc.api import torch2xp as thinc_torch2xp
    from thinc.api import xp2torch as thinc_xp2torch

    x = numpy.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    ours, theirs = tensors.xp2torch(x), thinc_xp2torch(x)
    assert ours.device == theirs.device and torch.equal(ours, theirs)
    t = torch.tensor(x, requires_grad=True)
    for ops in (None, NumpyOps()):
        y = tensors.torch2xp(t * 2, ops=ops)
        assert isinstance(y, numpy.ndarray)
        numpy.testing.assert_array_equal(y, thinc_torch2xp(t * 2, ops=ops))


def test_layers_use_these_conversions():
    # The layers must not fall back to Thinc's versions (import-time binding).
    from spacy_attn.layers import coattention, decomposable_attention, self_attention

    for module in (coattention, decomposable_attention, self_attention):
        assert module.xp2torch is tensors.xp2torch, module.__name__
        assert module.torch2xp is tensors.torch2xp, module.__name__
