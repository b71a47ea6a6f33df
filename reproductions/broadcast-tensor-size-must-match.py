"""A tabular model's 4 input features are standardized with a mean and a standard deviation that were computed over
another table of 8 columns. (x - mean), with x of shape (32, 4) and mean of shape (8,), is an ordinary element-wise
operator: before it runs, infer_size (aten/src/ATen/ExpandUtils.cpp) pairs the sizes from the last dimension, finds 4
against 8, and raises "The size of tensor a (4) must match the size of tensor b (8) at non-singleton dimension 1".
Demonstrations: statistics computed from the same 4 features (the standardized batch has mean 0 and standard deviation
1 per feature, and a model trains on it), and the second cause, per-sample weights of shape (N,) against per-class
losses (N, C), fixed with an explicit singleton dimension (shown first to raise the same error, from torch; the
weighted loss then equals the per-sample loop). exampleFix runs from the record's text on the trigger's batch;
validationCode is checked on the trigger's operands, and on every pair of shapes that broadcast: a few named ones
(equal shapes, a singleton dimension, a 0-d scalar, a missing leading dimension, a zero-size dimension) and pairs that
Hypothesis generates, each first run through torch's own addition. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "same_features", 2: "explicit_singleton"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"named-shape-pairs": "valid_named_pairs", "generated-shape-pairs": "valid_generated_pairs"}
CODE_NAMES = {"exampleFix": ["train_x", "x"], "validationCode": ["a", "b"]}
WORDINGS = [
    {"text": "The size of tensor a (4) must match the size of tensor b (8) at non-singleton dimension 1",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 0",
     "source": "StoryMY/take-off-eyeglasses#1", "match": "pattern"},
    {"text": "RuntimeError: The size of tensor a (128) must match the size of tensor b (1024) at non-singleton "
             "dimension 3", "source": "surajdakua/Crowd-Counting-Using-Pytorch#4", "match": "pattern"},
    {"text": "RuntimeError: The size of tensor a (226) must match the size of tensor b (227) at non-singleton "
             "dimension 2", "source": "ruthcfong/invert#1", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import strategies as st

FEATURES = 4
OTHER_TABLE_COLUMNS = 8
MESSAGE = "must match the size of tensor b"


def _tables():
    g = torch.Generator().manual_seed(0)
    train_x = torch.randn(256, FEATURES, generator=g) * torch.tensor([1.0, 10.0, 100.0, 0.1]) + 5.0
    x = train_x[:32]
    other_table = torch.randn(100, OTHER_TABLE_COLUMNS, generator=g)  # the 8-column table the statistics came from
    y = (x[:, 1] > 5.0).long()
    return train_x, x, y, other_table


def trigger():
    _, x, _, other_table = _tables()
    mean, std = other_table.mean(dim=0), other_table.std(dim=0)
    (x - mean) / std  # RuntimeError from infer_size: 4 against 8 at dimension 1


def _trains(x, y):
    torch.manual_seed(0)
    model = nn.Linear(FEATURES, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0], losses


def same_features():
    """Solution 1: the statistics come from the same 4 features as the batch they standardize."""
    train_x, x, y, _ = _tables()
    mean, std = train_x.mean(dim=0), train_x.std(dim=0)
    train_norm = (train_x - mean) / std
    assert torch.allclose(train_norm.mean(dim=0), torch.zeros(FEATURES), atol=1e-5)
    assert torch.allclose(train_norm.std(dim=0), torch.ones(FEATURES), atol=1e-5)
    _trains((x - mean) / std, y)


def explicit_singleton():
    """Solution 2: per-sample weights (N,) against per-class losses (N, C) need weights[:, None]."""
    g = torch.Generator().manual_seed(1)
    losses = torch.rand(32, FEATURES, generator=g)
    weights = torch.rand(32, generator=g)
    try:
        weights * losses  # aligns N with C
    except RuntimeError as exc:
        assert MESSAGE in str(exc), exc
    else:
        raise AssertionError("(N,) * (N, C) did not fail")
    weighted = weights[:, None] * losses
    expected = torch.stack([weights[i] * losses[i] for i in range(32)])
    assert torch.equal(weighted, expected)


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's batch and the training table of the same columns."""
    train_x, x, y, _ = _tables()
    names = record.run("exampleFix", {"train_x": train_x, "x": x}, section="after")
    assert names["x_norm"].shape == x.shape
    _trains(names["x_norm"], y)


def guard():
    """validationCode flags the trigger's operands and passes the fixed ones, before the operator runs."""
    train_x, x, _, other_table = _tables()
    assert not record.check("validationCode", {"a": x, "b": other_table.mean(dim=0)})
    assert record.check("validationCode", {"a": x, "b": train_x.mean(dim=0)})
    assert not record.check("validationCode", {"a": torch.rand(32), "b": torch.rand(32, FEATURES)})


def _broadcast(shape_a, shape_b):
    """A valid situation is a pair torch itself broadcasts."""
    a, b = torch.zeros(shape_a), torch.zeros(shape_b)
    a + b
    return {"a": a, "b": b}


def valid_named_pairs():
    return [
        _broadcast((32, 4), (32, 4)),  # equal shapes
        _broadcast((32, 1), (32, 4)),  # a singleton dimension
        _broadcast((), (32, 4)),  # a 0-d scalar
        _broadcast((4,), (32, 4)),  # a missing leading dimension
        _broadcast((0, 4), (4,)),  # an empty batch
        _broadcast((2, 1, 5), (3, 1)),  # both sides expand
    ]


@st.composite
def _broadcastable_pair(draw):
    """Two shapes cut from one: each size kept or set to 1, leading dimensions dropped."""
    shape = draw(st.lists(st.integers(0, 4), max_size=4))

    def variant():
        sizes = [draw(st.sampled_from([size, 1])) for size in shape]
        return tuple(sizes[draw(st.integers(0, len(sizes))):])

    return _broadcast(variant(), variant())


def valid_generated_pairs():
    return _broadcastable_pair()
