"""A training loop written in the style of old PyTorch tutorials reads the batch loss with loss.data[0]. A reduced
loss (mean or sum) is a 0-dim tensor, which has no dimension to index: integer indexing reaches applySelect in
aten/src/ATen/TensorIndexing.h, whose first check refuses index 0 on a tensor without dimensions and raises
IndexError "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert
a 0-dim tensor to a number". The trigger trains one step of a small classifier on CPU and adds loss.data[0] to a
running total. The demonstrations fix the same loop two ways: loss.item() gives the Python number; a running total
kept as a detached tensor and read with .item() once at the end gives the same value. The record's exampleFix and
validationCode run from its own text; the guard is checked against a 1-element 1-D tensor, per-sample losses
(reduction='none') and a Python list of losses, all of which [0] indexing accepts. The excerpt was read from the header the
torch 2.13.0 wheel ships (torch/include/ATen/TensorIndexing.h), the build's own copy of the file, which
starts with a one-line '#if !defined(TORCH_STABLE_ONLY) ...' guard: installed line N+1 is line N of the source
the build compiled (the build reports the raise at line 245; TORCH_CHECK_INDEX( is line 246 of the installed
header), so the excerpt is the installed lines 236-252 numbered 235-251. No stored upstream copy at the build's commit
was available to compare it with, so PROVENANCE says "unverified".
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "use_item", 2: "detached_running_total"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["running_loss", "loss"], "validationCode": ["torch", "loss"]}
VALID = {
    "one-element-1d": "valid_one_element_1d",
    "per-sample-losses": "valid_per_sample_losses",
    "python-list": "valid_python_list",
}
WORDINGS = [
    {"text": "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
             "a 0-dim tensor to a number", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
             "a 0-dim tensor to a number", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
             "a 0-dim tensor to a number", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor to a Python "
             "number", "source": "xbresson/spectral_graph_convnets#6", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record

import torch
import torch.nn as nn


def _batches():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(8, 4, generator=g), torch.randint(0, 3, (8,), generator=g)) for _ in range(3)]


def _step(model, opt, x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def _setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def trigger():
    model, opt = _setup()
    running_loss = 0.0
    for x, y in _batches():
        loss = _step(model, opt, x, y)
        running_loss += loss.data[0]  # the old idiom: IndexError from applySelect


def _reference_losses():
    """The loss values of the same three steps, read one by one (float(loss) is the Python number)."""
    model, opt = _setup()
    return [float(_step(model, opt, x, y).detach()) for x, y in _batches()]


def use_item():
    """Solution 1: loss.item() returns the Python number the old loss.data[0] gave."""
    model, opt = _setup()
    running_loss = 0.0
    for x, y in _batches():
        loss = _step(model, opt, x, y)
        value = loss.item()
        assert isinstance(value, float) and math.isfinite(value)
        running_loss += value
    assert isinstance(running_loss, float)
    assert math.isclose(running_loss, sum(_reference_losses()), rel_tol=1e-6)


def detached_running_total():
    """Solution 2: keep the running total as a detached tensor and call .item() once, after the loop."""
    model, opt = _setup()
    total = torch.zeros(())
    for x, y in _batches():
        loss = _step(model, opt, x, y)
        total += loss.detach()
    assert not total.requires_grad and total.dim() == 0
    assert math.isclose(total.item(), sum(_reference_losses()), rel_tol=1e-6)


def example_fix():
    """The record's exampleFix, its "after" part, applied to one step of the trigger's loop."""
    model, opt = _setup()
    x, y = _batches()[0]
    loss = _step(model, opt, x, y)
    names = record.run("exampleFix", {"running_loss": 0.0, "loss": loss}, section="after")
    assert isinstance(names["running_loss"], float)
    assert math.isclose(names["running_loss"], _reference_losses()[0], rel_tol=1e-6)


def guard():
    """validationCode flags the trigger's 0-dim loss and passes the same loss made 1-D."""
    model, opt = _setup()
    x, y = _batches()[0]
    loss = _step(model, opt, x, y)
    assert not record.check("validationCode", {"torch": torch, "loss": loss})
    assert record.check("validationCode", {"torch": torch, "loss": loss.reshape(1)})
    # only index 0 reaches this wording: another integer index on the same 0-dim loss fails with another message
    try:
        loss[1]
    except IndexError as error:
        assert "0-dim" not in str(error), str(error)
    else:
        raise AssertionError("loss[1] on a 0-dim tensor should have been refused")


def _indexable(loss):
    """A valid situation is one where loss[0] works."""
    loss[0]
    return {"torch": torch, "loss": loss}


def valid_one_element_1d():
    return _indexable(torch.tensor([0.25]))


def valid_per_sample_losses():
    model, _ = _setup()
    x, y = _batches()[0]
    return _indexable(nn.functional.cross_entropy(model(x), y, reduction="none"))


def valid_python_list():
    return _indexable([0.25])
