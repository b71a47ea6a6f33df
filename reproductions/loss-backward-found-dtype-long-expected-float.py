"""A small regression model (nn.Linear(4, 1)) predicts counts, and the targets are the counts as int64, the dtype
torch.tensor gives Python integers. nn.HuberLoss accepts the mixed dtypes in its forward pass, but its backward builds
a TensorIterator over the float32 gradient and the int64 target and requires one dtype for all of them, so
loss.backward() raises RuntimeError "Found dtype Long but expected Float" from TensorIterator's compute_types
(aten/src/ATen/TensorIterator.cpp). Demonstrations, on the trigger's model and data: casting the targets to the
prediction's dtype at the loss (int64, int32 and float64 targets alike) gives the gradient that float32 targets give,
and one SGD step changes the weights; the stage also shows that casting the loss instead changes nothing, that
F.binary_cross_entropy with int64 labels raises the same message in its forward pass and is fixed the same way, and it
reports, per release, whether nn.MSELoss's backward accepts int64 targets (its result's variant) (solution 1). Building
float32 targets where the dataset is made (from int64 and float64 numpy columns) lets a DataLoader epoch train without
any cast at the loss (solution 2). The exampleFix runs from the record's text on the trigger's model and data.

Drafted by `errkb draft` on torch 2.13.0+cpu, Python 3.11.7: raised at aten/src/ATen/TensorIterator.cpp:437
(compute_types), commit cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version); 437 is the line the
2.13.0 build reports. No stored copy of TensorIterator.cpp at that commit was available. The excerpt's text is the
check as a stored copy of the file writes it (a copy whose repository and commit the store's string search does not
name; the same lines, with op.tensor_base(), appear in more than one stored copy), numbered so that its TORCH_CHECK
stands at the build's line 437; hence "excerpt": "unverified". Other builds report 437 (2.5.1), 438 (2.9.1) and 432 (2.15.0).
"""
NEEDS = {"packages": {"torch": ">=2.0", "numpy": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "cast_targets_at_the_loss", 2: "float_targets_in_the_dataset"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["criterion", "pred", "targets"]}
KEEP = ["criterion"]
WORDINGS = [
    {"text": "Found dtype Long but expected Float", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Found dtype Long but expected Float", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Found dtype Long but expected Float", "source": "torch==2.9.1", "match": "pattern"},
    {"text": "Found dtype Long but expected Float", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Found dtype Long but expected Float", "source": "keonlee9420/PortaSpeech#28", "match": "matcher"},
    {"text": "RuntimeError: Found dtype Long but expected Float", "source": "pytorch/pytorch#45373", "match": "matcher"},
    {"text": "RuntimeError: Found dtype Float but expected Double", "source": "mo-vic/BezierLaneNet#3", "match": "matcher"},
    {"text": "RuntimeError: Found dtype Double but expected Float", "source": "Rickyyy-zh/yolov7_3d#8", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

COUNTS = [[3], [0], [5], [1], [2], [4], [0], [6]]


def _setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    features = torch.randn(8, 4)
    counts = torch.tensor(COUNTS)  # int64: torch.tensor of Python ints
    return model, features, counts


def _backward_raises(loss, fragment):
    try:
        loss.backward()
    except RuntimeError as exc:
        assert fragment in str(exc), str(exc)
        return str(exc).splitlines()[0]
    raise AssertionError("backward ran")


def _grad_with(model, features, targets, criterion=None):
    criterion = criterion or nn.HuberLoss()
    model.zero_grad()
    criterion(model(features), targets).backward()
    return model.weight.grad.clone()


def trigger():
    model, features, counts = _setup()
    loss = nn.HuberLoss()(model(features), counts)  # the forward pass accepts int64 targets
    loss.backward()


def cast_targets_at_the_loss():
    """Solution 1: criterion(pred, targets.to(pred.dtype)) for int64, int32 and float64 targets."""
    import numpy as np

    model, features, counts = _setup()
    reference = _grad_with(model, features, torch.tensor(COUNTS, dtype=torch.float32))
    for targets, name in ((counts, "Long"), (counts.int(), "Int"), (torch.from_numpy(np.array(COUNTS, dtype=np.float64)), "Double")):
        model.zero_grad()
        pred = model(features)
        _backward_raises(nn.HuberLoss()(pred, targets), f"Found dtype {name} but expected Float")
        assert torch.allclose(_grad_with(model, features, targets.to(pred.dtype)), reference)
    # Casting the loss instead changes nothing: it is float32 already, the int64 target is what backward reads.
    model.zero_grad()
    loss = nn.HuberLoss()(model(features), counts)
    assert loss.dtype == torch.float32
    _backward_raises(loss.float(), "Found dtype Long but expected Float")
    # Nor does loss.type(torch.FloatTensor) (keonlee9420/PortaSpeech#28's reported fix): on a float32 CPU loss it
    # returns the same tensor.
    assert loss.type(torch.FloatTensor) is loss
    _backward_raises(loss.type(torch.FloatTensor), "Found dtype Long but expected Float")
    # The message names the odd operand first and the prediction's dtype second: a float64 model given float32
    # targets reads "Found dtype Float but expected Double"; the same cast, to the prediction's dtype, fixes it.
    model64 = nn.Linear(4, 1).double()
    pred64 = model64(features.double())
    _backward_raises(nn.HuberLoss()(pred64, counts.float()), "Found dtype Float but expected Double")
    model64.zero_grad()
    pred64 = model64(features.double())
    nn.HuberLoss()(pred64, counts.float().to(pred64.dtype)).backward()
    assert model64.weight.grad is not None and model64.weight.grad.dtype == torch.float64
    # binary_cross_entropy with int64 labels: the same message, in the forward pass; float labels fix it.
    probs = torch.sigmoid(model(features)).squeeze(1)
    labels = (counts.squeeze(1) > 2).long()
    try:
        F.binary_cross_entropy(probs, labels)
    except RuntimeError as exc:
        assert "Found dtype Long but expected Float" in str(exc), str(exc)
    else:
        raise AssertionError("binary_cross_entropy accepted int64 labels")
    F.binary_cross_entropy(probs, labels.to(probs.dtype)).backward()
    # One training step with the cast targets changes the weights.
    model.zero_grad()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    pred = model(features)
    nn.HuberLoss()(pred, counts.to(pred.dtype)).backward()
    opt.step()
    assert not torch.equal(before, model.weight)
    # What this release does with int64 targets in nn.MSELoss (reported, not asserted: it differs between releases).
    model.zero_grad()
    try:
        nn.MSELoss()(model(features), counts).backward()
        mse = "nn.MSELoss backward with int64 targets ran"
    except RuntimeError as exc:
        mse = f"nn.MSELoss backward with int64 targets raised: {str(exc).splitlines()[0]}"
    return f"torch {torch.__version__}: {mse}"


def float_targets_in_the_dataset():
    """Solution 2: make the targets float32 where the data is built, so every batch has the model's dtype."""
    import numpy as np
    from torch.utils.data import DataLoader, TensorDataset

    model, features, _ = _setup()
    columns = {"int64 column": np.array(COUNTS, dtype=np.int64), "float64 column": np.array(COUNTS, dtype=np.float64)}
    for name, column in columns.items():
        assert torch.from_numpy(column).dtype in (torch.int64, torch.float64)  # what from_numpy would hand the loss
        targets = torch.as_tensor(column, dtype=torch.float32)
        loader = DataLoader(TensorDataset(features, targets), batch_size=4)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        before = model.weight.detach().clone()
        for x, y in loader:
            assert y.dtype == torch.float32, (name, y.dtype)
            opt.zero_grad()
            loss = nn.HuberLoss()(model(x), y)
            loss.backward()
            opt.step()
            assert torch.isfinite(loss)
        assert not torch.equal(before, model.weight), name


def example_fix():
    model, features, counts = _setup()
    criterion = nn.HuberLoss()
    pred = model(features)
    names = record.run("exampleFix", {"criterion": criterion, "pred": pred, "targets": counts}, section="after")
    assert names["loss"].dtype == torch.float32
    model.zero_grad()
    names["loss"].backward()
    got = model.weight.grad.clone()
    assert torch.allclose(got, _grad_with(model, features, torch.tensor(COUNTS, dtype=torch.float32)))
