"""After training a small regression model, a script plots its predictions: preds = model(x) is computed with
gradients on, so it requires grad, and np.asarray(preds) (what matplotlib, scikit-learn and pandas do with a tensor)
goes through Tensor.__array__ to tensor_to_numpy (torch/csrc/utils/tensor_numpy.cpp), which raises "Can't call
numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.". Demonstrations: .detach().cpu().numpy()
(and .item() for the loss), predictions computed under torch.no_grad(), and numpy(force=True); each asserts the
array equals the tensor's values and that the model still trains afterwards where the graph matters. The record's
exampleFix and validationCode run from its text.
Torch releases before 2.3 were built against NumPy 1.x and cannot load NumPy 2 ("Numpy is not available" instead of
the documented error): run them with NumPy 1.26, e.g. errkb reproduce SLUG --with torch==1.13.1,numpy==1.26.4.
"""

NEEDS = {"packages": {"torch": ">=1.13", "numpy": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "detach_first", 2: "under_no_grad", 3: "numpy_force"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "detached": "valid_detached",
    "predictions-under-no-grad": "valid_under_no_grad",
    "plain-tensor": "valid_plain_tensor",
    "numpy-array": "valid_numpy_array",
}
CODE_NAMES = {"exampleFix": ["np", "model", "x"], "validationCode": ["torch", "t"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: Can't call `numpy()` on Tensor that requires grad. Use `tensor.detach().numpy()` instead.",
     "source": "zhuangdizhu/FedGen#15", "match": "pattern"},
    {"text": "RuntimeError: Can't call numpy() on Variable that requires grad. Use var.detach().numpy() instead.",
     "source": "GuHY777/SS-VAE-pytorch#1", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import numpy as np

import errkb_record as record

import torch
import torch.nn as nn


def _situation():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x = torch.randn(16, 3)
    return model, x


def _expected(model, x):
    w = model.weight.detach().clone()
    b = model.bias.detach().clone()
    return (x @ w.t() + b).tolist()


def trigger():
    model, x = _situation()
    preds = model(x)
    np.asarray(preds)  # Tensor.__array__ -> numpy(): RuntimeError


def detach_first():
    """Solution 1: detach (and cpu) before NumPy; .item() for the loss; the graph still trains the model."""
    model, x = _situation()
    preds = model(x)
    arr = preds.detach().cpu().numpy()
    assert isinstance(arr, np.ndarray) and np.allclose(arr, _expected(model, x))
    loss = preds.pow(2).mean()
    loss_value = loss.item()
    assert isinstance(loss_value, float) and math.isfinite(loss_value)
    loss.backward()  # the detach did not cut the original graph
    assert model.weight.grad is not None


def under_no_grad():
    """Solution 2: predictions for plotting computed under torch.no_grad() convert directly."""
    model, x = _situation()
    with torch.no_grad():
        preds = model(x)
    assert not preds.requires_grad
    arr = np.asarray(preds)
    assert np.allclose(arr, _expected(model, x))


def numpy_force():
    """Solution 3: numpy(force=True) on the graph-attached tensor."""
    model, x = _situation()
    preds = model(x)
    arr = preds.numpy(force=True)
    assert np.allclose(arr, _expected(model, x))
    assert preds.requires_grad  # the original stays in the graph


def example_fix():
    model, x = _situation()
    names = record.run("exampleFix", {"np": np, "model": model, "x": x}, section="after")
    assert np.allclose(names["plot_values"], _expected(model, x))


def guard():
    model, x = _situation()
    preds = model(x)
    assert not record.check("validationCode", {"torch": torch, "t": preds})
    assert record.check("validationCode", {"torch": torch, "t": preds.detach()})


def _converts(t):
    """A valid situation is one NumPy conversion accepts."""
    np.asarray(t)
    return {"torch": torch, "t": t}


def valid_detached():
    model, x = _situation()
    return _converts(model(x).detach())


def valid_under_no_grad():
    """Solution 2: predictions computed under torch.no_grad() do not require grad."""
    model, x = _situation()
    with torch.no_grad():
        preds = model(x)
    return _converts(preds)


def valid_plain_tensor():
    return _converts(torch.randn(4))


def valid_numpy_array():
    return _converts(np.arange(4.0))
