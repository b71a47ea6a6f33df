"""A training loop keeps a running total of the loss with float(loss), but the loss was computed with
reduction="none", so it holds one value per sample (8x2 here). Python's float() calls Tensor.__float__, whose
C++ helper (dispatch_to in the generated torch/csrc/autograd/generated/python_variable_methods.cpp) refuses any
tensor whose element count is not 1 and raises ValueError "only one element tensors can be converted to Python
scalars". The demonstrations reduce the loss to one number before converting it, convert every element with
.tolist() when the per-sample values are wanted, and build a tensor from a list of tensors with torch.stack
instead of torch.tensor (which converts each element with the same helper and fails the same way). The record's
exampleFix and validationCode run from its own text; the guard passes 0-d, one-element 1-d and 2-d, integer and
boolean tensors and a loss that is already a Python float, each converted by float() first.
"""
NEEDS = {"packages": {"torch": ">=2.5", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "reduce_first", 2: "tolist_all_values", 3: "stack_tensor_list"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["loss", "running_loss"], "validationCode": ["loss"]}
VALID = {
    "zero-dim-loss": "valid_zero_dim",
    "one-element-shapes": "valid_one_element_shapes",
    "integer-and-bool": "valid_integer_and_bool",
    "generated-one-element": "valid_generated",
    "already-a-python-number": "valid_python_number",
}
WORDINGS = [
    {"text": "only one element tensors can be converted to Python scalars", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "only one element tensors can be converted to Python scalars", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "only one element tensors can be converted to Python scalars", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "ValueError: only one element tensors can be converted to Python scalars.",
     "source": "jd730/OICR-pytorch#26", "match": "pattern"},
    {"text": "a Tensor with 5 elements cannot be converted to Scalar", "source": "Clybius/ComfyUI-Latent-Modifiers#9",
     "match": "none",
     "why": "Tensor.item() in current releases: a RuntimeError from another raise site (ATen's item), not this check"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record
from hypothesis import strategies as st

import torch


def _per_sample_loss():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    inputs = torch.randn(8, 4)
    targets = torch.randn(8, 2)
    return torch.nn.functional.mse_loss(model(inputs), targets, reduction="none")


def trigger():
    loss = _per_sample_loss()  # shape (8, 2): one value per sample and output
    running_loss = 0.0
    running_loss += float(loss)  # ValueError from Tensor.__float__


def reduce_first():
    """Solution 1: reduce the loss to one number (here its mean), then convert it."""
    loss = _per_sample_loss()
    try:  # .item() on the unreduced loss is no way out: in current releases it raises a RuntimeError of its own
        loss.item()
    except RuntimeError as error:
        assert "a Tensor with 16 elements cannot be converted to Scalar" in str(error), str(error)
    else:
        raise AssertionError("loss.item() on 16 elements was expected to fail")
    running_loss = 0.0
    running_loss += loss.mean().item()
    assert math.isclose(running_loss, float(loss.detach().mean()), rel_tol=1e-6)
    assert isinstance(running_loss, float) and math.isfinite(running_loss)


def tolist_all_values():
    """Solution 2: when every value is wanted, convert the whole tensor with .tolist()."""
    loss = _per_sample_loss()
    values = loss.detach().tolist()
    assert len(values) == 8 and all(len(row) == 2 for row in values)
    assert all(isinstance(v, float) for row in values for v in row)
    assert math.isclose(sum(sum(row) for row in values), float(loss.detach().sum()), rel_tol=1e-5)


def stack_tensor_list():
    """Solution 3: a list of tensors becomes one tensor with torch.stack, not torch.tensor(list)."""
    losses = [_per_sample_loss().detach() for _ in range(3)]
    try:
        torch.tensor(losses)
    except ValueError as error:
        assert "only one element tensors can be converted to Python scalars" in str(error)
    else:
        raise AssertionError("torch.tensor on a list of multi-element tensors was expected to fail")
    stacked = torch.stack(losses)
    assert stacked.shape == (3, 8, 2)
    assert torch.equal(stacked[1], losses[1])
    # per-sample tensors of different lengths: pad them to one shape first (stack alone refuses them)
    ragged = [torch.arange(n, dtype=torch.float32) for n in (3, 5, 2)]
    try:
        torch.stack(ragged)
    except RuntimeError:
        pass
    else:
        raise AssertionError("torch.stack on tensors of different lengths was expected to fail")
    padded = torch.nn.utils.rnn.pad_sequence(ragged, batch_first=True)
    assert padded.shape == (3, 5) and torch.equal(padded[1], ragged[1]) and float(padded[2, 2:].abs().sum()) == 0.0


def example_fix():
    """The record's exampleFix, its "after" part, adds the batch's mean loss to the running total."""
    loss = _per_sample_loss()
    names = record.run("exampleFix", {"loss": loss, "running_loss": 0.0}, section="after")
    assert math.isclose(names["running_loss"], float(loss.detach().mean()), rel_tol=1e-6)


def guard():
    """validationCode flags the per-sample loss and passes the reduced one."""
    loss = _per_sample_loss()
    assert not record.check("validationCode", {"loss": loss})
    assert record.check("validationCode", {"loss": loss.mean()})


def _converts(t):
    """A valid situation is a tensor float() accepts."""
    float(t)
    return {"loss": t}


def valid_zero_dim():
    return _converts(_per_sample_loss().mean())


def valid_one_element_shapes():
    return [_converts(torch.tensor([0.5])), _converts(torch.tensor([[0.5]])), _converts(torch.ones(1, 1, 1))]


def valid_integer_and_bool():
    return [_converts(torch.tensor(3)), _converts(torch.tensor([7], dtype=torch.int32)),
            _converts(torch.tensor(True))]


def valid_python_number():
    """The loss was already converted (loss.mean().item()): a Python float, which float() accepts."""
    return _converts(_per_sample_loss().mean().item())


def valid_generated():
    """Generated: any number of size-1 dimensions, any floating or integer dtype."""
    dtypes = st.sampled_from([torch.float32, torch.float64, torch.float16, torch.int64, torch.uint8])
    return st.builds(lambda ndim, dtype: _converts(torch.ones([1] * ndim, dtype=dtype)), st.integers(0, 5), dtypes)
