"""A small CNN for 28x28 grey images has its classifier written as nn.Linear(28 * 28, 10): the author counted
input pixels, but after a 16-channel convolution and a 2x2 max-pool each sample flattens to 16 * 14 * 14 = 3136
features. nn.Linear calls addmm with the batch (64x3136) as mat1 and the transposed weight (784x10) as mat2, and
addmm's shape check (the ADDMM_META macro in aten/src/ATen/native/LinearAlgebra.cpp) raises "mat1 and mat2 shapes
cannot be multiplied (64x3136 and 784x10)". The demonstrations fix the same model three ways: in_features computed
from a dummy forward pass, nn.LazyLinear inferring it on the first batch, and an nn.AdaptiveAvgPool2d that makes
the flattened size independent of the image size (28x28 and 32x32 batches both train). The record's exampleFix and
validationCode run from its own text.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "computed_in_features", 2: "lazy_linear", 3: "adaptive_pool"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "matching-head": "valid_matching_head",
    "batch-of-one": "valid_batch_of_one",
    "adaptive-pool": "valid_adaptive_pool",
    "generated-shapes": "valid_generated_shapes",
}
CODE_NAMES = {"exampleFix": ["nn", "torch", "features"], "validationCode": ["torch", "features", "fc", "x"]}
WORDINGS = [
    {"text": "mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "addmm: mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "RuntimeError: size mismatch, m1: [2394 x 7], m2: [16758 x 2] at "
             "/opt/conda/conda-bld/pytorch_1532502421238/work/aten/src/TH/generic/THTensorMath.cpp:2070",
     "source": "bamos/densenet.pytorch#19", "match": "none",
     "why": "the TH wording lays the sizes out differently and 'size mismatch' alone is too common to anchor on"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn


def _features():
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())


def _batch(size=28):
    g = torch.Generator().manual_seed(0)
    return torch.randn(64, 1, size, size, generator=g), torch.randint(0, 10, (64,), generator=g)


def _train_step(model, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert math.isfinite(loss.item())
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters())), "no parameter changed"
    return loss.item()


def trigger():
    torch.manual_seed(0)
    model = nn.Sequential(_features(), nn.Linear(28 * 28, 10))  # counts pixels, not flattened features
    x, y = _batch()
    model(x)  # RuntimeError from addmm's shape check


def computed_in_features():
    """Solution 1: size the Linear from a dummy forward pass through the feature extractor."""
    torch.manual_seed(0)
    features = _features()
    with torch.no_grad():
        n = features(torch.zeros(1, 1, 28, 28)).shape[1]
    assert n == 16 * 14 * 14
    model = nn.Sequential(features, nn.Linear(n, 10))
    _train_step(model, *_batch())


def lazy_linear():
    """Solution 2: nn.LazyLinear infers in_features from the first batch."""
    torch.manual_seed(0)
    model = nn.Sequential(_features(), nn.LazyLinear(10))
    x, y = _batch()
    with torch.no_grad():
        model(x[:1])  # materialise the lazy weight before the optimizer sees the parameters
    assert model[1].in_features == 3136
    _train_step(model, x, y)


def adaptive_pool():
    """Solution 3: a fixed-size adaptive pool before the flatten; in_features no longer depends on the image size."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((7, 7)), nn.Flatten(), nn.Linear(16 * 7 * 7, 10)
    )
    for size in (28, 32):
        out = model(_batch(size)[0])
        assert out.shape == (64, 10)
    _train_step(model, *_batch(32))


def example_fix():
    """The record's exampleFix, its "after" part, trains on the trigger's batch."""
    torch.manual_seed(0)
    names = record.run("exampleFix", {"nn": nn, "torch": torch, "features": _features()}, section="after")
    _train_step(names["model"], *_batch())


def guard():
    """validationCode flags the trigger's model and passes the fixed one, before any addmm runs."""
    x, _ = _batch()
    features = _features()
    assert not record.check("validationCode", {"torch": torch, "features": features, "fc": nn.Linear(28 * 28, 10), "x": x})
    assert record.check("validationCode", {"torch": torch, "features": features, "fc": nn.Linear(16 * 14 * 14, 10), "x": x})


def _runs(features, fc, x):
    """A valid situation is one the model runs."""
    with torch.no_grad():
        fc(features(x))
    return {"torch": torch, "features": features, "fc": fc, "x": x}


def valid_matching_head():
    return _runs(_features(), nn.Linear(16 * 14 * 14, 10), _batch()[0])


def valid_batch_of_one():
    return _runs(_features(), nn.Linear(16 * 14 * 14, 10), _batch()[0][:1])


def valid_adaptive_pool():
    """Solution 3: with adaptive pooling the same head fits images of another size."""
    features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((7, 7)), nn.Flatten())
    return _runs(features, nn.Linear(16 * 7 * 7, 10), _batch(size=40)[0])


def valid_generated_shapes():
    """Generated: any channel count, image size and batch size, with the head sized from them, is a model that runs."""
    def model(channels, size, batch):
        features = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
        return _runs(features, nn.Linear(channels * (size // 2) ** 2, 3), torch.randn(batch, 1, size, size))

    return st.builds(model, st.integers(1, 8), st.integers(2, 20), st.integers(1, 5))
