"""Class labels are read from a table as a column, so the target batch has shape (N, 1) instead of (N,);
nn.CrossEntropyLoss passes it on to nll_loss, whose meta function (TORCH_META_FUNC(nll_loss_forward) in
aten/src/ATen/native/LossNLL.cpp) accepts only 0-D or 1-D class-index targets and raises "0D or 1D target tensor
expected, multi-target not supported". One-hot rows given to nll_loss (or, before 1.10, to cross_entropy) hit the
same check. The demonstrations: the column squeezed to shape (N,); one-hot rows turned back into indices with argmax
(and, as the equivalent since 1.10, given to cross_entropy as float class probabilities: the same loss); and
genuinely multi-label rows trained with BCEWithLogitsLoss. The record's exampleFix and validationCode run from its
own text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "squeeze_target", 2: "one_hot_to_indices", 3: "multi_label_bce"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "class-indices": "valid_indices",
    "unbatched": "valid_unbatched",
    "segmentation-masks": "valid_segmentation",
    "class-probabilities": "valid_probabilities",
    "generated-targets": "valid_generated_targets",
}
CODE_NAMES = {"exampleFix": ["nn", "labels", "model", "x"], "validationCode": ["logits", "targets"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "0D or 1D target tensor expected, multi-target not supported", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "RuntimeError: multi-target not supported at "
             "d:\\projects\\pytorch\\torch\\lib\\thnn\\generic/ClassNLLCriterion.c:22",
     "source": "pytorch/pytorch#3670", "match": "pattern"},
    {"text": "1D target tensor expected, multi-target not supported", "source": "pytorch/pytorch#62651",
     "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn
import torch.nn.functional as F

C = 4


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 6, generator=g)
    labels = (torch.arange(32) % C).unsqueeze(1)  # (32, 1): e.g. torch.tensor(df[["label"]].values)
    return x, labels


def _model(n_out=C):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, n_out))


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
    nn.CrossEntropyLoss()(_model()(x), labels)  # target (32, 1) -> multi-target not supported


def squeeze_target():
    """Solution 1: a column of class indices becomes a 1-D tensor of shape (N,)."""
    x, labels = _data()
    y = labels.squeeze(1)
    assert y.shape == (32,) and y.dtype == torch.long
    _train(_model(), x, y, nn.CrossEntropyLoss())


def one_hot_to_indices():
    """Solution 2: one-hot rows back to indices with argmax; float probabilities to cross_entropy give the same loss."""
    x, labels = _data()
    one_hot = F.one_hot(labels.squeeze(1), C)  # (32, 4) long: nll_loss rejects it as multi-target
    y = one_hot.argmax(dim=1)
    _train(_model(), x, y, nn.CrossEntropyLoss())
    logits = _model()(x)
    assert torch.allclose(F.cross_entropy(logits, y), F.cross_entropy(logits, one_hot.float()), atol=1e-6)


def multi_label_bce():
    """Solution 3: rows with several positive classes are multi-label: BCEWithLogitsLoss on float targets."""
    x, labels = _data()
    multi = F.one_hot(labels.squeeze(1), C)
    multi[:, 0] = 1  # every row also has class 0: several labels per row
    assert (multi.sum(1) > 1).any()
    _train(_model(), x, multi.float(), nn.BCEWithLogitsLoss())


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's (N, 1) labels."""
    x, labels = _data()
    model = _model()
    names = record.run("exampleFix", {"nn": nn, "labels": labels, "model": model, "x": x}, section="after")
    assert names["targets"].shape == (32,) and names["model"] is model
    assert math.isfinite(names["loss"].item())
    _train(model, x, names["targets"], nn.CrossEntropyLoss())


def guard():
    """validationCode flags the (N, 1) and the one-hot targets and passes the 1-D ones."""
    x, labels = _data()
    logits = _model()(x)
    assert not record.check("validationCode", {"logits": logits, "targets": labels})
    assert not record.check("validationCode", {"logits": logits, "targets": F.one_hot(labels.squeeze(1), C)})
    assert record.check("validationCode", {"logits": logits, "targets": labels.squeeze(1)})


def _accepted(logits, targets):
    """A valid situation is one cross_entropy accepts."""
    assert math.isfinite(F.cross_entropy(logits, targets).item())
    return {"logits": logits, "targets": targets}


def valid_indices():
    x, labels = _data()
    return _accepted(_model()(x), labels.squeeze(1))


def valid_unbatched():
    x, _ = _data()
    return _accepted(_model()(x[0]), torch.tensor(2))


def valid_segmentation():
    g = torch.Generator().manual_seed(3)
    return _accepted(torch.randn(2, C, 4, 4, generator=g), torch.randint(0, C, (2, 4, 4), generator=g))


def valid_probabilities():
    x, labels = _data()
    return _accepted(_model()(x), F.one_hot(labels.squeeze(1), C).float())


def valid_generated_targets():
    """Generated: targets with one dimension fewer than the logits (class indices), or float probabilities of the
    logits' shape, for batched or unbatched logits with or without spatial dimensions."""
    def pair(batch, classes, spatial, probabilities):
        spatial = spatial if batch else 0  # an unbatched input has no spatial dimensions: (C, d) reads as (N, C)
        shape = ((batch,) if batch else ()) + (classes,) + ((spatial,) if spatial else ())
        logits = torch.randn(shape)
        if probabilities:
            return _accepted(logits, torch.softmax(torch.randn(shape), dim=1 if batch else 0))
        return _accepted(logits, torch.randint(0, classes, shape[:1] + shape[2:] if batch else shape[1:]))

    return st.builds(pair, st.integers(0, 5), st.integers(2, 6), st.integers(0, 3), st.booleans())
