"""A binary classifier ends in nn.Linear(4, 1), so its outputs are raw scores (logits) anywhere on the real line, and
they go straight into nn.BCELoss, which takes probabilities. The CPU kernel of binary_cross_entropy
(aten/src/ATen/native/Loss.cpp) checks every element and raises RuntimeError "all elements of input should be between
0 and 1". Demonstrations, on the trigger's model and data: nn.BCEWithLogitsLoss on the raw scores gives the loss and
gradient of a sigmoid followed by BCELoss, and stays exact where the sigmoid saturates (a score of 40 with target 0: 40
instead of BCELoss's clamped 100) (solution 1); ending the model with a sigmoid keeps BCELoss and gives the same loss
(solution 2); targets outside [0, 1] (a mask stored as 0/255) meet the sibling check "all elements of target should
be between 0 and 1", fixed by binarizing the mask (solution 3). The solution 1 stage also shows that a NaN in the
predictions (a diverged model) fails the same input check. The exampleFix and validationCode run from the record's
text; the guard is checked against probabilities from a sigmoid, exact 0 and 1 values, soft labels, a batch of one and
an empty batch, each accepted by BCELoss first.

Drafted by `errkb draft` on torch 2.13.0+cpu, Python 3.11.7: raised at aten/src/ATen/native/Loss.cpp:279 (the lambda's
operator()), commit cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version); 279 is the line the 2.13.0
build reports. No stored copy of Loss.cpp at that commit was available. The excerpt's text is the kernel as a stored,
line-numbered listing of the file shows it (a walkthrough whose repository and commit the store's string search does
not name), in which the input check's TORCH_CHECK stands at line 279, as in the build; the same text, unnumbered, is in
other stored copies. It was not compared with the file at the build's commit, hence "excerpt": "unverified". Other
builds report 284 (2.5.1) and 279 (2.15.0).
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "bce_with_logits", 2: "sigmoid_then_bce", 3: "binarize_targets"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "logits", "targets"], "validationCode": ["probs", "targets"]}
VALID = {
    "sigmoid-probabilities": "valid_sigmoid",
    "exact-0-and-1": "valid_exact_bounds",
    "soft-labels": "valid_soft_labels",
    "batch-of-one": "valid_batch_of_one",
    "empty-batch": "valid_empty",
}
WORDINGS = [
    {"text": "all elements of input should be between 0 and 1", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "all elements of input should be between 0 and 1", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "all elements of input should be between 0 and 1", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: all elements of input should be between 0 and 1", "source": "ray-project/ray#17117",
     "match": "matcher"},
    {"text": "RuntimeError: all elements of input should be between 0 and 1", "source": "zhaojw1998/Beat-Transformer#14",
     "match": "matcher"},
    {"text": "RuntimeError: all elements of target should be between 0 and 1", "source": "pytorch/pytorch#123339",
     "match": "matcher"},
    {"text": "Assertion `input >= 0. && input <= 1.` failed.", "source": "pytorch/pytorch#2209", "match": "none",
     "why": "a CUDA device-side assertion of old releases, worded without the message's words; the prose says it is not matched"},
    {"text": "Assertion `input_val >= zero && input_val <= one` failed.", "source": "WENGSYX/CMIVQA_Baseline#16",
     "match": "none",
     "why": "the CUDA kernel's device-side assertion (current sources too), worded without the message's words; the prose says it is not matched and that the device-side assert has its own record"},
    {"text": "Assertion `input_val >= zero && input_val <= one` failed.", "source": "Blealtan/efficient-kan#41",
     "match": "none",
     "why": "the same CUDA device-side assertion, from an issue title; not matched, as the prose says"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


def _setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    features = torch.randn(8, 4) * 3
    targets = torch.tensor([[1.], [0.], [1.], [1.], [0.], [0.], [1.], [0.]])
    return model, features, targets


def _refused(probs, targets, fragment):
    try:
        F.binary_cross_entropy(probs, targets)
    except RuntimeError as exc:
        assert fragment in str(exc), str(exc)
    else:
        raise AssertionError("binary_cross_entropy accepted the values")


def _steps(model, loss):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss) and not torch.equal(before, model.weight)


def trigger():
    model, features, targets = _setup()
    nn.BCELoss()(model(features), targets)  # raw scores, not probabilities


def bce_with_logits():
    """Solution 1: BCEWithLogitsLoss on the raw scores; same loss and gradient, exact where the sigmoid saturates."""
    model, features, targets = _setup()
    logits = model(features)
    assert logits.min() < 0 or logits.max() > 1  # the trigger's scores are outside [0, 1]
    loss = nn.BCEWithLogitsLoss()(logits, targets)
    reference = nn.BCELoss()(torch.sigmoid(logits), targets)
    assert torch.allclose(loss, reference, atol=1e-6)
    g1, = torch.autograd.grad(loss, model.weight, retain_graph=True)
    g2, = torch.autograd.grad(reference, model.weight, retain_graph=True)
    assert torch.allclose(g1, g2, atol=1e-6)
    big, zero = torch.tensor([40.0]), torch.tensor([0.0])
    assert F.binary_cross_entropy_with_logits(big, zero).item() == 40.0
    assert F.binary_cross_entropy(torch.sigmoid(big), zero).item() == 100.0  # sigmoid(40) rounds to 1: clamped log
    _steps(model, loss)
    # A NaN prediction (a diverged model) fails the same input check.
    _refused(torch.tensor([0.2, float("nan")]), torch.tensor([0.0, 1.0]), "all elements of input should be between 0 and 1")


def sigmoid_then_bce():
    """Solution 2: keep BCELoss and end the model with a sigmoid."""
    model, features, targets = _setup()
    with_sigmoid = nn.Sequential(model, nn.Sigmoid())
    probs = with_sigmoid(features)
    assert probs.min() >= 0 and probs.max() <= 1
    loss = nn.BCELoss()(probs, targets)
    assert torch.allclose(loss, nn.BCEWithLogitsLoss()(model(features), targets), atol=1e-6)
    _steps(model, loss)


def binarize_targets():
    """Solution 3: targets outside [0, 1] (a 0/255 mask) fail the sibling check; binarize them."""
    torch.manual_seed(0)
    head = nn.Conv2d(3, 1, 1)
    images = torch.randn(2, 3, 8, 8)
    mask = (torch.rand(2, 1, 8, 8) > 0.5).float() * 255  # a mask read from a PNG: 0 and 255
    probs = torch.sigmoid(head(images))
    _refused(probs, mask, "all elements of target should be between 0 and 1")
    targets = (mask > 0).float()
    loss = nn.BCELoss()(probs, targets)
    assert torch.allclose(loss, nn.BCEWithLogitsLoss()(head(images), targets), atol=1e-6)
    _steps(head, loss)


def example_fix():
    model, features, targets = _setup()
    logits = model(features)
    names = record.run("exampleFix", {"torch": torch, "logits": logits, "targets": targets}, section="after")
    assert torch.allclose(names["loss"], nn.BCELoss()(torch.sigmoid(logits), targets), atol=1e-6)
    _steps(model, names["loss"])


def guard():
    model, features, targets = _setup()
    with torch.no_grad():
        logits = model(features)
    assert not record.check("validationCode", {"probs": logits, "targets": targets})
    assert not record.check("validationCode", {"probs": torch.tensor([0.2, float("nan")]), "targets": torch.tensor([0.0, 1.0])})
    assert not record.check("validationCode", {"probs": torch.full((4,), 0.5), "targets": torch.tensor([0.0, 255.0, 0.0, 255.0])})
    assert record.check("validationCode", {"probs": torch.sigmoid(logits), "targets": targets})


def _accepted(probs, targets):
    """A valid situation is one BCELoss accepts."""
    F.binary_cross_entropy(probs, targets)
    return {"probs": probs, "targets": targets}


def valid_sigmoid():
    torch.manual_seed(1)
    return _accepted(torch.sigmoid(torch.randn(16, 3) * 10), (torch.rand(16, 3) > 0.5).float())


def valid_exact_bounds():
    return _accepted(torch.tensor([0.0, 1.0, 0.0, 1.0]), torch.tensor([0.0, 1.0, 1.0, 0.0]))


def valid_soft_labels():
    return _accepted(torch.tensor([0.3, 0.7]), torch.tensor([0.1, 0.9]))


def valid_batch_of_one():
    return _accepted(torch.tensor([[0.4]]), torch.tensor([[1.0]]))


def valid_empty():
    probs, targets = torch.empty(0), torch.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mean of no elements
        F.binary_cross_entropy(probs, targets)
    return {"probs": probs, "targets": targets}
