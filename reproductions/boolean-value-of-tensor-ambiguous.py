"""An evaluation step compares a batch of predictions with the targets and writes `if correct:` to count a hit, as
it would for one sample. `correct` is a tensor of eight booleans, and Python asks it for one truth value: Tensor's
__bool__ calls is_nonzero (aten/src/ATen/native/prim_native_functions.cpp), which refuses any tensor with more than
one element and raises "Boolean value of Tensor with more than one value is ambiguous". The same error comes from
`and` / `or` / `not` between tensors and from chained comparisons such as `0 < x < 1`, which Python evaluates as
`(0 < x) and (x < 1)`; the second demonstration shows that case. The demonstrations: reduce the comparison to one
value on purpose (.all(), .any(), or count with .sum().item()); and write elementwise logic with & and | (and ~)
instead of Python's `and`, `or`, `not` and chained comparisons; the first also shows `assert a == b` on whole tensors
refused and torch.equal, torch.allclose and torch.testing.assert_close, which the preventionTips name, answering. The record's exampleFix and validationCode run from its own text; the
guard is checked against a one-element tensor, a 0-dim boolean tensor and a Python bool, which `if` accepts. The
excerpt is a stored upstream copy of prim_native_functions.cpp at commit 02f1c1a5852be2d335281472fcaf641649841b6d,
where the TORCH_CHECK is at line 16; the torch 2.13.0 build reports line 17, so the copy's lines are numbered one
higher (offset 1); the copy was not compared with the file at the build's commit.
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "reduce_explicitly", 2: "elementwise_operators"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["logits", "targets"], "validationCode": ["torch", "cond"]}
VALID = {"one-element": "valid_one_element", "zero-dim-bool": "valid_zero_dim_bool", "python-bool": "valid_python_bool"}
WORDINGS = [
    {"text": "Boolean value of Tensor with more than one value is ambiguous", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "Boolean value of Tensor with more than one value is ambiguous", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "Boolean value of Tensor with more than one value is ambiguous", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "RuntimeError: bool value of Tensor with more than one value is ambiguous",
     "source": "zijundeng/pytorch-semantic-segmentation#41", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "02f1c1a5852be2d335281472fcaf641649841b6d", "offset": 1}

import errkb_record as record

import torch


def _batch():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 3, generator=g), torch.randint(0, 3, (8,), generator=g)


def trigger():
    logits, targets = _batch()
    hits = 0
    correct = logits.argmax(dim=1) == targets
    if correct:  # eight booleans asked for one truth value: RuntimeError from is_nonzero
        hits += 1


def reduce_explicitly():
    """Solution 1: say which single value you mean: .all() / .any() for a condition, .sum().item() to count."""
    logits, targets = _batch()
    correct = logits.argmax(dim=1) == targets
    flags = [bool(p == t) for p, t in zip(logits.argmax(dim=1).tolist(), targets.tolist())]
    assert bool(correct.all()) == all(flags)
    assert bool(correct.any()) == any(flags)
    hits = correct.sum().item()
    assert isinstance(hits, int) and hits == sum(flags)
    if correct.any():
        assert hits > 0
    # comparing whole tensors: == in an assert asks for one truth value; torch.equal / allclose / assert_close answer
    a = torch.tensor([1.0, 2.0, 3.0])
    b = a.clone()
    try:
        assert a == b
    except RuntimeError as error:
        assert "Boolean value of Tensor with more than one value is ambiguous" in str(error)
    else:
        raise AssertionError("assert a == b on 3-element tensors should have been refused")
    assert torch.equal(a, b) and not torch.equal(a, b + 1)
    assert torch.allclose(a, b + 1e-9) and not torch.allclose(a, b + 1)
    torch.testing.assert_close(a, b)


def elementwise_operators():
    """Solution 2: a chained comparison on a tensor raises the same error; & gives the elementwise mask."""
    x = torch.tensor([-0.5, 0.2, 0.7, 1.5])
    try:
        0 < x < 1
    except RuntimeError as error:
        assert "Boolean value of Tensor with more than one value is ambiguous" in str(error)
    else:
        raise AssertionError("the chained comparison should have been refused")
    mask = (0 < x) & (x < 1)
    assert mask.tolist() == [False, True, True, False]
    assert ((x < 0) | (x > 1)).tolist() == [True, False, False, True]
    try:
        not (x > 0)
    except RuntimeError as error:
        assert "Boolean value of Tensor with more than one value is ambiguous" in str(error)
    else:
        raise AssertionError("`not` on a 4-element tensor should have been refused")
    assert (~(x > 0)).tolist() == [True, False, False, False]


def example_fix():
    """The record's exampleFix, its "after" part, counts the hits of the trigger's batch."""
    logits, targets = _batch()
    names = record.run("exampleFix", {"logits": logits, "targets": targets}, section="after")
    expected = sum(int(p == t) for p, t in zip(logits.argmax(dim=1).tolist(), targets.tolist()))
    assert names["hits"] == expected and isinstance(names["hits"], int)


def guard():
    """validationCode flags the trigger's 8-element comparison and passes its reduction."""
    logits, targets = _batch()
    correct = logits.argmax(dim=1) == targets
    assert not record.check("validationCode", {"torch": torch, "cond": correct})
    assert record.check("validationCode", {"torch": torch, "cond": correct.all()})


def _usable(cond):
    """A valid situation is one `if` accepts."""
    if cond:
        pass
    return {"torch": torch, "cond": cond}


def valid_one_element():
    return _usable(torch.tensor([True]))


def valid_zero_dim_bool():
    logits, targets = _batch()
    return _usable(logits[0].argmax() == targets[0])


def valid_python_bool():
    return _usable(True)
