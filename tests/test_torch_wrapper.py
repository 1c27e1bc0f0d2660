"""The in-place optimizer step of ``spacy_attn.layers.torch_wrapper``."""

import gc

import numpy
import pytest
import torch
from thinc.api import SGD, Adam, PyTorchWrapper_v2

from spacy_attn.layers.torch_wrapper import InPlacePyTorchShim, wrap_torch_module


def _module() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)
    )


def _train(layer, optimizer, steps: int) -> None:
    rng = numpy.random.default_rng(0)
    for _ in range(steps):
        X = rng.normal(size=(5, 4)).astype("float32")
        Y, backprop = layer.begin_update(X)
        backprop(Y - 1.0)
        layer.finish_update(optimizer)


def _tensor_count() -> int:
    gc.collect()
    # type(), not isinstance(): a deprecated torch proxy warns on __class__.
    return sum(issubclass(type(obj), torch.Tensor) for obj in gc.get_objects())


@pytest.mark.parametrize(
    "make_optimizer", [lambda: Adam(0.01, grad_clip=1.0), lambda: SGD(0.1)]
)
def test_same_weights_as_thincs_wrapper(make_optimizer):
    ours = wrap_torch_module(_module())
    thincs = PyTorchWrapper_v2(_module())
    assert isinstance(ours.shims[0], InPlacePyTorchShim)
    _train(ours, make_optimizer(), 6)
    _train(thincs, make_optimizer(), 6)
    for (name, a), (_, b) in zip(
        ours.shims[0]._model.named_parameters(),
        thincs.shims[0]._model.named_parameters(),
    ):
        assert torch.equal(a, b), name
    # The step changed the weights (the comparison above is not of two
    # untrained copies).
    assert not torch.equal(ours.shims[0]._model[0].weight, _module()[0].weight)


def test_parameters_keep_their_tensors_and_nothing_accumulates():
    layer = wrap_torch_module(_module())
    optimizer = Adam(0.01)
    params = list(layer.shims[0]._model.parameters())
    before = [(p.data_ptr(), p.data.untyped_storage().data_ptr()) for p in params]
    _train(layer, optimizer, 2)
    count = _tensor_count()
    _train(layer, optimizer, 10)
    # Thinc's own shim leaves one more tensor per parameter per step alive.
    assert _tensor_count() == count
    assert [
        (p.data_ptr(), p.data.untyped_storage().data_ptr()) for p in params
    ] == before


def test_thincs_shim_accumulates_tensors():
    # What the in-place shim avoids; if Thinc stops chaining, this fails and
    # the module's reason to exist should be looked at again.
    layer = PyTorchWrapper_v2(_module())
    optimizer = Adam(0.01)
    _train(layer, optimizer, 2)
    count = _tensor_count()
    _train(layer, optimizer, 10)
    assert _tensor_count() >= count + 10 * len(list(layer.shims[0]._model.parameters()))


def test_round_trip_keeps_the_shim_and_weights():
    layer = wrap_torch_module(_module())
    _train(layer, Adam(0.01), 3)
    # An untrained twin: only from_bytes can give it the trained weights.
    copy = wrap_torch_module(_module())
    copy.from_bytes(layer.to_bytes())
    assert isinstance(copy.shims[0], InPlacePyTorchShim)
    X = numpy.ones((3, 4), dtype="float32")
    numpy.testing.assert_array_equal(layer.predict(X), copy.predict(X))
