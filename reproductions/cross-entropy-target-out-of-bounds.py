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
VALID = {
    "ignore-index-default": "valid_ignore_index_default",
    "ignore-index-255-segmentation": "valid_ignore_index_255",
    "class-probabilities": "valid_class_probabilities",
    "unbatched": "valid_unbatched",
    "byte-targets": "valid_byte_targets",
}
CODE_NAMES = {"exampleFix": ["torch", "labels"], "validationCode": ["logits", "targets", "ignore_index"]}
WORDINGS = [
    {"text": "Target 5 is out of bounds.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "IndexError: Target 192 is out of bounds", "source": "milesial/Pytorch-UNet#291", "match": "pattern"},
    {"text": "RuntimeError: Target 100 out of bounds at /.../pytorch/aten/src/THNN/generic/ClassNLLCriterion.c:56",
     "source": "pytorch/pytorch#5299", "match": "pattern"},
    {"text": "RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at "
             "c:\\new-builder_3\\win-wheel\\pytorch\\aten\\src\\thnn\\generic/ClassNLLCriterion.c:93",
     "source": "xiaojunxu/SQLNet#41", "match": "none",
     "why": "the old THNN assertion names no target value and shares no word with the current wording"},
    {"text": "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: "
             "block: [4,0,0], thread: [614,0,0] Assertion `t >= 0 && t < n_classes` failed.",
     "source": "cfzd/Ultra-Fast-Lane-Detection#94", "match": "none",
     "why": "a CUDA kernel assertion: it prints no target value, and cuda-device-side-assert-triggered covers it"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

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
    assert not record.check("validationCode", {"logits": logits, "targets": labels, "ignore_index": -100})
    assert record.check("validationCode", {"logits": logits, "targets": labels - 1, "ignore_index": -100})


def _accepted(logits, targets, ignore_index=-100):
    """A valid situation is one cross_entropy itself accepts: the loss is computed and finite."""
    loss = F.cross_entropy(logits, targets, ignore_index=ignore_index)
    assert math.isfinite(loss.item()), loss
    return {"logits": logits, "targets": targets, "ignore_index": ignore_index}


def valid_ignore_index_default():
    """Padded token labels with the default ignore_index -100 (the Hugging Face convention)."""
    x, labels = _data()
    y = labels - 1
    y[::4] = -100
    return _accepted(_model()(x), y)


def valid_ignore_index_255():
    """A segmentation batch whose void pixels are 255, with ignore_index=255 (solution 3's advice)."""
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(2, NUM_CLASSES, 4, 4, generator=g)
    masks = torch.randint(0, NUM_CLASSES, (2, 4, 4), generator=g)
    masks[:, 0, :] = 255
    return _accepted(logits, masks, ignore_index=255)  # int64 masks: nll_loss2d rejects uint8 ('expected scalar type Long')


def valid_class_probabilities():
    """Soft targets (class probabilities in the logits' shape), e.g. after mixup or label smoothing by hand."""
    x, labels = _data()
    probs = F.one_hot(labels - 1, NUM_CLASSES).float() * 0.9 + 0.1 / NUM_CLASSES
    return _accepted(_model()(x), probs)


def valid_unbatched():
    """One sample: logits of shape (C,) and a 0-d target."""
    x, _ = _data()
    return _accepted(_model()(x[0]), torch.tensor(NUM_CLASSES - 1))


def valid_byte_targets():
    """uint8 class indices, which nll_loss accepts as well as int64."""
    x, labels = _data()
    return _accepted(_model()(x), (labels - 1).to(torch.uint8))
