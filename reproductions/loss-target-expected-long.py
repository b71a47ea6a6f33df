"""A tabular classifier's dataset converts every column, the labels included, with .float(), so the class indices
reach nn.CrossEntropyLoss as float32 values 0.0, 1.0, 2.0. With a target of shape (N,) for logits of shape (N, C),
cross_entropy takes the class-index path, and nll_loss's meta function (TORCH_META_FUNC(nll_loss_forward) in
aten/src/ATen/native/LossNLL.cpp) raises "expected target dtype to be Long or Byte, but got Float". Releases up to
2.9.1 (at least) reject the same call later, in the kernel's typed data access (check_type in
aten/src/ATen/core/TensorMethods.cpp), as "expected scalar type Long but found Float"; the record's pattern accepts
that wording and the older "Expected object of scalar type Long but got scalar type Float for argument #2 'target'".
The up-front check came with pytorch/pytorch PR #175151 (February 2026; 2.10 to 2.12 were not run here); in the older
releases of the matrix the same trigger raises the older wording from TensorMethods.cpp, which the harness reports as
a moved raise site (drift) in a release built from another commit. The demonstrations: the labels converted to int64
(int32 labels too), float labels that really are class probabilities given in the logits' shape, and a binary task
with one logit trained with BCEWithLogitsLoss on float 0/1 targets. The record's exampleFix and validationCode run
from its own text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "long_targets", 2: "probability_targets", 3: "binary_bce"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "int64-indices": "valid_long",
    "uint8-indices": "valid_byte",
    "class-probabilities": "valid_probabilities",
    "segmentation-int64-masks": "valid_segmentation",
    "unbatched": "valid_unbatched",
    "generated-targets": "valid_generated_targets",
}
CODE_NAMES = {"exampleFix": ["nn", "labels", "model", "x"], "validationCode": ["torch", "logits", "targets"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "expected target dtype to be Long or Byte, but got Float", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "expected scalar type Long but found Float", "source": "torch==2.9.1", "match": "pattern"},
    {"text": "RuntimeError: Expected object of scalar type Long but got scalar type Int for argument #2 'target' in call "
             "to _thnn_nll_loss_forward", "source": "bethgelab/foolbox#647", "match": "pattern"},
    {"text": "RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Int'",
     "source": "ThilinaRajapakse/simpletransformers#1553", "match": "none",
     "why": "the CUDA kernel's dispatch error shares no words with the CPU wordings a pattern could anchor on"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn
import torch.nn.functional as F

C = 3


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 5, generator=g)
    labels = (torch.arange(48) % C).float()  # e.g. torch.tensor(df.values).float() applied to the label column too
    return x, labels


def _model(n_out=C):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, n_out))


def _train(model, x, y, loss_fn, steps=20):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < losses[0], losses
    return losses


def trigger():
    x, labels = _data()
    nn.CrossEntropyLoss()(_model()(x), labels)  # float class indices


def long_targets():
    """Solution 1: class indices as int64 (float labels and int32 labels alike)."""
    x, labels = _data()
    y = labels.long()
    assert y.dtype == torch.int64 and torch.equal(y.float(), labels)
    _train(_model(), x, y, nn.CrossEntropyLoss())
    y32 = labels.to(torch.int32)  # what NumPy int32 arrays become
    _train(_model(), x, y32.long(), nn.CrossEntropyLoss())


def probability_targets():
    """Solution 2: float targets that are class probabilities must have the logits' shape (N, C)."""
    x, labels = _data()
    probs = F.one_hot(labels.long(), C).float() * 0.9 + 0.1 / C  # soft labels, rows sum to 1
    assert probs.shape == (48, C) and torch.allclose(probs.sum(1), torch.ones(48))
    _train(_model(), x, probs, nn.CrossEntropyLoss())


def binary_bce():
    """Solution 3: a binary task with float 0/1 labels: one logit per sample and BCEWithLogitsLoss."""
    x, labels = _data()
    y = (labels > 0).float().unsqueeze(1)  # float 0/1, shape (N, 1) like the single-logit output
    _train(_model(1), x, y, nn.BCEWithLogitsLoss())


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's float labels."""
    x, labels = _data()
    model = _model()
    names = record.run("exampleFix", {"nn": nn, "labels": labels, "model": model, "x": x}, section="after")
    assert names["targets"].dtype == torch.int64 and names["model"] is model
    assert math.isfinite(names["loss"].item())


def guard():
    """validationCode flags the float labels (and int32 ones) and passes the int64 ones."""
    x, labels = _data()
    logits = _model()(x)
    assert not record.check("validationCode", {"torch": torch, "logits": logits, "targets": labels})
    assert not record.check("validationCode", {"torch": torch, "logits": logits, "targets": labels.to(torch.int32)})
    assert record.check("validationCode", {"torch": torch, "logits": logits, "targets": labels.long()})


def _accepted(logits, targets):
    """A valid situation is one cross_entropy accepts."""
    assert math.isfinite(nn.functional.cross_entropy(logits, targets).item())
    return {"torch": torch, "logits": logits, "targets": targets}


def valid_long():
    x, labels = _data()
    return _accepted(_model()(x), labels.long())


def valid_byte():
    x, labels = _data()
    return _accepted(_model()(x), labels.to(torch.uint8))


def valid_probabilities():
    x, labels = _data()
    return _accepted(_model()(x), nn.functional.one_hot(labels.long(), C).float())


def valid_segmentation():
    g = torch.Generator().manual_seed(2)
    return _accepted(torch.randn(2, C, 4, 4, generator=g), torch.randint(0, C, (2, 4, 4), generator=g))


def valid_unbatched():
    x, _ = _data()
    return _accepted(_model()(x[0]), torch.tensor(1))


def valid_generated_targets():
    """Generated: class-index targets (int64, or uint8 without spatial dims) or same-shape float probabilities, for
    logits of any batch, class count and optional spatial size, as cross_entropy takes them."""
    def pair(batch, classes, spatial, kind):
        shape = (batch, classes, spatial) if spatial else (batch, classes)
        logits = torch.randn(shape)
        if kind == "probabilities":
            return _accepted(logits, torch.softmax(torch.randn(shape), dim=1))
        targets = torch.randint(0, classes, (batch, spatial) if spatial else (batch,))
        return _accepted(logits, targets.to(torch.uint8) if kind == "byte" and not spatial else targets.long())

    return st.builds(pair, st.integers(1, 6), st.integers(2, 6), st.integers(0, 3),
                     st.sampled_from(["long", "byte", "probabilities"]))
