"""A classifier's labels are stored as 1..5 while cross_entropy expects class indices 0..4 for a model with
five outputs. On the GPU the out-of-range target is caught inside the nll_loss kernel by a device-side
assert; the kernel launch itself succeeds, and the failure is reported by the next CUDA call that checks
for errors: here torch.cuda.synchronize() (in a training loop usually loss.item() or loss.backward()).
C10_CUDA_CHECK builds the message in c10_cuda_check_implementation (c10/cuda/CUDAException.cpp) and raises
"CUDA error: device-side assert triggered" (torch.AcceleratorError in recent releases, a plain RuntimeError before pytorch/pytorch#152023) with the
caller's source location, c10::cuda::device_synchronize in c10/cuda/CUDAFunctions.cpp (before pytorch/pytorch#162808
releases reported CUDAException.cpp instead). On the CPU the same mistake raises a readable IndexError, which is
another record (cross-entropy-target-out-of-bounds). GPU-only: NEEDS one CUDA device, every stage is
skipped without one. Not run on a GPU when written (no GPU was available): each stage was run once with
DEVICE="cpu" in a scratch copy to catch Python errors only. Each stage runs in a fresh process, which
matters: after a device-side assert the CUDA context is unusable. Demonstrations: labels shifted to 0..4;
an output layer sized to cover the labels; locating the bad value by running the failing step on the CPU
(the error names the target). The record's exampleFix and validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=2.9"}, "cuda_devices": 1, "timeout_s": 60}
SOLUTIONS = {1: "labels_from_zero", 2: "head_covers_labels", 3: "locate_on_cpu"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "labels-from-zero": "valid_labels_from_zero",
    "ignore-index-padding": "valid_ignore_index",
    "class-probabilities": "valid_class_probabilities",
}
CODE_NAMES = {"exampleFix": ["F", "model", "x", "y"], "validationCode": ["y", "num_classes", "ignore_index"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "CUDA error: device-side assert triggered", "source": "pytorch/pytorch#152023", "match": "pattern"},
    {"text": "RuntimeError: cuda runtime error (59) : device-side assert triggered at "
             "/opt/conda/conda-bld/pytorch_1549630534704/work/aten/src/THCUNN/generic/ClassNLLCriterion.cu:111",
     "source": "pytorch/pytorch#21825", "match": "pattern"},
    {"text": "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: "
             "block: [4,0,0], thread: [614,0,0] Assertion `t >= 0 && t < n_classes` failed.",
     "source": "cfzd/Ultra-Fast-Lane-Detection#94", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "pytorch/pytorch", "commit": "68e217b9e71fcecbd34d831dd3e3e5a4ea9028fd",
              "path": "c10/cuda/CUDAFunctions.cpp", "line": 143, "offset": 0}

import math

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda:0"
NUM_CLASSES = 5


def _sync():
    if torch.device(DEVICE).type == "cuda":
        torch.cuda.synchronize()


def _batch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 8, generator=g)
    y = torch.randint(1, NUM_CLASSES + 1, (16,), generator=g)  # labels 1..5, as written in the dataset
    y[0] = NUM_CLASSES
    return x, y


def _model(out_features=NUM_CLASSES):
    torch.manual_seed(0)
    return nn.Linear(8, out_features)


def _step(model, x, y, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = F.cross_entropy(model(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    _sync()
    assert math.isfinite(loss.item())
    assert any(not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))


def trigger():
    model = _model().to(DEVICE)
    x, y = _batch()
    loss = F.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))
    _sync()  # where the asynchronous kernel failure is reported
    loss.item()


def labels_from_zero():
    x, y = _batch()
    y = y - 1
    assert int(y.min()) >= 0 and int(y.max()) < NUM_CLASSES
    _step(_model(), x, y, DEVICE)


def head_covers_labels():
    x, y = _batch()
    _step(_model(out_features=int(y.max()) + 1), x, y, DEVICE)  # class 0 is simply never a target


def locate_on_cpu():
    """Rerun the failing step on the CPU: the same mistake there raises an error that names the value."""
    x, y = _batch()
    model = _model()
    try:
        F.cross_entropy(model(x), y)
    except IndexError as exc:
        assert f"Target {NUM_CLASSES} is out of bounds" in str(exc)
        return f"cpu rerun: {exc}"
    raise AssertionError("the CPU rerun did not point at the bad target")


def example_fix():
    x, y = _batch()
    model = _model().to(DEVICE)
    names = record.run("exampleFix", {"F": F, "model": model, "x": x.to(DEVICE), "y": y.to(DEVICE)}, section="after")
    _sync()
    assert names["model"] is model and math.isfinite(names["loss"].item())


def guard():
    _, y = _batch()
    assert not record.check("validationCode", {"y": y, "num_classes": NUM_CLASSES, "ignore_index": -100})
    assert record.check("validationCode", {"y": y - 1, "num_classes": NUM_CLASSES, "ignore_index": -100})


def _accepted(y, ignore_index=-100):
    """A valid situation is one cross_entropy accepts (checked on the CPU, where a bad target raises, not asserts)."""
    x, _ = _batch()
    loss = F.cross_entropy(_model()(x), y, ignore_index=ignore_index)
    assert math.isfinite(loss.item())
    return {"y": y, "num_classes": NUM_CLASSES, "ignore_index": ignore_index}


def valid_labels_from_zero():
    return _accepted(_batch()[1] - 1)


def valid_ignore_index():
    y = _batch()[1] - 1
    y[::3] = -100  # padded positions
    return _accepted(y)


def valid_class_probabilities():
    y = _batch()[1] - 1
    return _accepted(F.one_hot(y, NUM_CLASSES).float())
