"""A classifier's logits have shape (batch, classes), but the code that turns them into probabilities was written
for a sequence model's (batch, seq, classes) and calls torch.softmax(logits, dim=2). Operators that take one
dimension wrap it through c10::maybe_wrap_dim; for a dim outside [-ndim, ndim-1] maybe_wrap_dim_slow
(c10/core/WrapDimMinimal.cpp) raises IndexError "Dimension out of range (expected to be in range of [-2, 1], but
got 2)". The demonstrations: name the class axis as the last one (dim=-1), which holds for both layouts; and,
for a single sample that lost its batch dimension (a 1-D embedding compared along dim=1), restore the dimension
with unsqueeze(0). Reductions (sum over dim=2) raise the same wording from another check, shown in the
first demonstration. The record's exampleFix and validationCode run from its own text; the guard is checked against
negative dims, 0-dim tensors (which accept dim 0 and -1) and generated shapes. CPU only."""
NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "last_dim", 2: "restore_batch_dim"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "negative-dims": "valid_negative_dims",
    "zero-dim-tensor": "valid_zero_dim",
    "generated-shapes": "valid_generated",
    "tuple-of-dims-and-none": "valid_tuple_and_none",
}
CODE_NAMES = {"exampleFix": ["torch", "logits"], "validationCode": ["x", "dim"]}
KEEP = ["logits"]
WORDINGS = [
    {"text": "Dimension out of range (expected to be in range of [-2, 1], but got 2)", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
     "source": "huggingface/sentence-transformers#406", "match": "pattern"},
    {"text": "RuntimeError: Dimension out of range (expected to be in range of [-3, 2], but got 3)",
     "source": "Xt-Chen/SARPN#11", "match": "pattern"},
    {"text": "RuntimeError: dimension out of range (expected to be in range of [-2, 1], but got 2)",
     "source": "pytorch/pytorch#2406", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "06b24a9d8bc29d5600435f56c66abc8734a8f574", "offset": 0}

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import strategies as st


def _logits():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 5))
    return model(torch.randn(4, 8))  # (batch, classes)


def trigger():
    logits = _logits()
    torch.softmax(logits, dim=2)  # IndexError: Dimension out of range (expected ... [-2, 1], but got 2)


def last_dim():
    """Solution 1: the class axis is the last one: dim=-1 works for (batch, classes) and (batch, seq, classes)."""
    logits = _logits()
    probs = torch.softmax(logits, dim=-1)
    assert probs.shape == (4, 5) and torch.allclose(probs.sum(-1), torch.ones(4))
    sequence_logits = torch.randn(4, 7, 5)
    probs = torch.softmax(sequence_logits, dim=-1)
    assert torch.allclose(probs, torch.softmax(sequence_logits, dim=2))  # the same axis the old code meant
    # reductions over a list of dims check the range elsewhere, with the same wording
    try:
        logits.sum(dim=2)
    except IndexError as exc:
        assert "Dimension out of range (expected to be in range of [-2, 1], but got 2)" in str(exc), exc
    else:
        raise AssertionError("sum(dim=2) on 2-D logits was expected to fail")
    assert torch.allclose(logits.sum(dim=-1), logits.sum(dim=1))


def restore_batch_dim():
    """Solution 2: a single sample lost its batch dimension: unsqueeze(0) gives back the layout the code expects."""
    torch.manual_seed(0)
    query = torch.randn(16)  # one sentence's embedding: 1-D
    corpus = torch.randn(3, 16)
    try:
        F.cosine_similarity(query, corpus[0], dim=1)
    except IndexError as exc:
        assert "expected to be in range of [-1, 0], but got 1" in str(exc), exc
    else:
        raise AssertionError("a 1-D embedding compared along dim=1 was expected to fail")
    scores = F.cosine_similarity(query.unsqueeze(0), corpus, dim=1)
    assert scores.shape == (3,)
    assert torch.allclose(scores[0], F.cosine_similarity(query, corpus[0], dim=0))


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's logits."""
    logits = _logits()
    names = record.run("exampleFix", {"torch": torch, "logits": logits}, section="after")
    probs = names["probs"]
    assert probs.shape == logits.shape and torch.allclose(probs.sum(-1), torch.ones(4))


def guard():
    """validationCode flags dim=2 on the 2-D logits and passes dim=-1 and dim=1, before the operator runs."""
    logits = _logits()
    assert not record.check("validationCode", {"x": logits, "dim": 2})
    assert not record.check("validationCode", {"x": logits, "dim": -3})
    assert record.check("validationCode", {"x": logits, "dim": -1})
    assert record.check("validationCode", {"x": logits, "dim": 1})


def valid_negative_dims():
    out = []
    for shape in ((4, 5), (2, 3, 5)):
        x = torch.randn(*shape)
        for dim in range(-len(shape), 0):
            torch.softmax(x, dim=dim)  # accepted
            out.append({"x": x, "dim": dim})
    return out


def valid_zero_dim():
    """A 0-dim tensor: the operators wrap it as if it had one dimension, so dim 0 and -1 are accepted."""
    x = torch.tensor(2.5)
    for dim in (0, -1):
        torch.softmax(x, dim=dim)
    return [{"x": x, "dim": 0}, {"x": x, "dim": -1}]


def _accepted(shape, dim):
    x = torch.randn(shape)  # shape () gives a 0-dim tensor
    torch.softmax(x, dim=dim)  # proves the situation valid
    return {"x": x, "dim": dim}


def valid_generated():
    shapes = st.lists(st.integers(1, 3), min_size=0, max_size=4).map(tuple)
    return shapes.flatmap(
        lambda shape: st.integers(-max(len(shape), 1), max(len(shape), 1) - 1).map(lambda dim: _accepted(shape, dim))
    )


def valid_tuple_and_none():
    """Reductions take a tuple of dims, or None for all of them."""
    x = torch.randn(4, 5, 3)
    x.sum(dim=(0, -1))
    x.sum(dim=[1, 2])
    x.sum(dim=None)
    return [{"x": x, "dim": (0, -1)}, {"x": x, "dim": [1, 2]}, {"x": x, "dim": None}]
