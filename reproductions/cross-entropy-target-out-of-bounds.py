"""A 5-class classifier is trained on labels numbered 1 to 5 (the way a CSV or a folder of class names often
numbers them), so one batch holds the label 5 while the model's output has only the columns 0 to 4.
F.cross_entropy hands the log-probabilities to nll_loss, whose CPU kernel (nll_loss_out_frame in
aten/src/ATen/native/LossNLL.cpp) checks every target against the number of classes and raises
"IndexError: Target 5 is out of bounds." (on CUDA the same mistake is a device-side assert instead, not run
here). The demonstrations: an output layer sized from the labels (6 outputs for labels up to 5), the labels
remapped to 0..C-1 (1-based labels shifted, arbitrary label values mapped with torch.unique), and a padding
label (-1) excluded with ignore_index; the record's exampleFix and validationCode run from its own text.
CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "remap_labels", 2: "size_output_from_labels", 3: "ignore_index"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}

import math

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_CLASSES = 5


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 8, generator=g)
    labels = torch.arange(32) % NUM_CLASSES + 1  # 1..5: numbered from 1, as in the source file
    return x, labels


def _model(n_out=NUM_CLASSES):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, n_out))


def _train(model, x, y, steps=20, **loss_kwargs):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y, **loss_kwargs)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < losses[0], losses
    return losses


def trigger():
    x, labels = _data()
    model = _model()
    F.cross_entropy(model(x), labels)  # IndexError: Target 5 is out of bounds.


def remap_labels():
    """Solution 1: bring the labels to 0..C-1; shift 1-based labels, map arbitrary values with torch.unique."""
    x, labels = _data()
    shifted = labels - 1
    assert int(shifted.min()) == 0 and int(shifted.max()) == NUM_CLASSES - 1
    _train(_model(), x, shifted)
    odd = labels * 10 + 3  # 13, 23, ...: any label values at all
    classes, mapped = torch.unique(odd, return_inverse=True)
    assert len(classes) == NUM_CLASSES and torch.equal(mapped, shifted)
    _train(_model(len(classes)), x, mapped)


def size_output_from_labels():
    """Solution 2: size the output layer from the labels (max label + 1), when every label value is a real class."""
    x, labels = _data()
    n_out = int(labels.max()) + 1  # 6: column 0 is never a target and its score is simply learned down
    model = _model(n_out)
    _train(model, x, labels)
    assert model(x).shape == (32, n_out)


def ignore_index():
    """Solution 3: a padding/unknown label (-1 here) is not a class: give it to ignore_index."""
    x, labels = _data()
    y = labels - 1
    y[::7] = -1  # padded or unlabeled positions
    _train(_model(), x, y, ignore_index=-1)
    # the ignored positions contribute nothing: the loss equals the loss over the labelled rows only
    model = _model()
    out = model(x)
    keep = y != -1
    assert torch.allclose(F.cross_entropy(out, y, ignore_index=-1), F.cross_entropy(out[keep], y[keep]))


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's labels."""
    x, labels = _data()
    names = record.run("exampleFix", {"torch": torch, "labels": labels}, section="after")
    y, num_classes = names["targets"], names["num_classes"]
    assert num_classes == NUM_CLASSES
    _train(_model(num_classes), x, y)


def guard():
    """validationCode flags the 1-based labels and passes the remapped ones, before the loss runs."""
    x, labels = _data()
    logits = _model()(x)
    assert not record.check("validationCode", {"logits": logits, "targets": labels})
    assert record.check("validationCode", {"logits": logits, "targets": labels - 1})
