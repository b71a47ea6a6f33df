"""Tabular features arrive as float64 (NumPy's default dtype, kept by torch.from_numpy and torch.tensor) and go
into a model whose parameters are float32 (PyTorch's default). nn.Linear calls addmm with the float64 batch as
mat1 and the float32 weight as mat2, and addmm's dtype check (the ADDMM_META macro in
aten/src/ATen/native/LinearAlgebra.cpp) raises "mat1 and mat2 must have the same dtype, but got Double and Float".
The reproduction builds the float64 tensor with torch directly (what torch.from_numpy returns for a default NumPy
array) so that it does not depend on NumPy's ABI across PyTorch releases. The demonstrations convert the data to
float32 (the loss falls over a few steps) and, as the alternative, convert the model to float64; the record's
exampleFix and validationCode run from its own text. Releases before 2.1 raise the same check without the dtypes
("mat1 and mat2 must have the same dtype"), which the record's pattern does not accept: hence torch>=2.1.
"""

NEEDS = {"packages": {"torch": ">=2.1", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "cast_input", 2: "double_model"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "float32-batch": "valid_float32_batch",
    "token-ids-into-embedding": "valid_token_ids",
    "bfloat16-model-bfloat16-input": "valid_bfloat16_pair",
    "double-model-double-input": "valid_double_pair",
    "generated-matching-dtypes": "valid_generated_dtypes",
}
CODE_NAMES = {"exampleFix": ["torch", "model", "features", "targets"], "validationCode": ["model", "x"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "mat1 and mat2 must have the same dtype, but got Double and Float", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "RuntimeError: expected m1 and m2 to have the same dtype, but got: double != float",
     "source": "bqth29/simulated-bifurcation-algorithm#36", "match": "pattern"},
    {"text": "RuntimeError: Expected object of scalar type Double but got scalar type Float for argument #2 'mat2'",
     "source": "pytorch/pytorch#11951", "match": "pattern"},
    {"text": "RuntimeError: expected scalar type Double but found Float", "source": "OUCMachineLearning/OUCML#24",
     "match": "pattern"},
    {"text": "RuntimeError: mat1 and mat2 must have the same dtype", "source": "pytorch/pytorch#100083", "match": "none",
     "why": "names no dtypes: the same words come from other causes; pastes of it are matched by their words only"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 5, generator=g, dtype=torch.float64)  # = torch.from_numpy(np.random.randn(32, 5))
    y = x @ torch.arange(1.0, 6.0, dtype=torch.float64).unsqueeze(1)
    return x, y


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))


def _fit(model, x, y, steps=20):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0], losses
    return losses


def trigger():
    x, _ = _data()
    _model()(x)  # float64 input, float32 weights


def cast_input():
    """Solution 1: convert the data to the model's dtype (float32); it also fixes the bias-free product paths
    (torch.mm, matmul, Linear(bias=False)), which word the same mistake differently."""
    x, y = _data()
    x, y = x.float(), y.float()
    model = _model()
    _fit(model, x, y)
    assert model(x).dtype == torch.float32
    no_bias = nn.Linear(5, 1, bias=False)
    assert no_bias(x).dtype == torch.float32 and torch.mm(x, no_bias.weight.t()).shape == (32, 1)


def double_model():
    """Solution 2: convert the model to float64 instead (when the precision is really needed)."""
    x, y = _data()
    model = _model().double()
    _fit(model, x, y)
    assert model(x).dtype == torch.float64


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's data and model."""
    x64, y64 = _data()
    model = _model()
    names = record.run("exampleFix", {"torch": torch, "model": model, "features": x64, "targets": y64}, section="after")
    assert names["x"].dtype == torch.float32 and names["out"].dtype == torch.float32
    _fit(model, names["x"], names["y"])


def guard():
    """validationCode flags the float64 batch and passes the float32 one."""
    x, _ = _data()
    model = _model()
    assert not record.check("validationCode", {"model": model, "x": x})
    assert record.check("validationCode", {"model": model, "x": x.float()})


def _accepted(model, x):
    """A valid situation is one the model itself runs."""
    model(x)
    return {"model": model, "x": x}


def valid_float32_batch():
    x, _ = _data()
    return _accepted(_model(), x.float())


def valid_token_ids():
    """Integer token ids into a model whose first parameter is an embedding: ids are not a float dtype to match."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 1))
    return _accepted(model, torch.randint(0, 10, (2, 3)))


def valid_bfloat16_pair():
    x, _ = _data()
    model = _model().to(torch.bfloat16)  # bfloat16: CPU matmuls support it in every release of the matrix
    return _accepted(model, x.to(torch.bfloat16))


def valid_double_pair():
    x, _ = _data()
    return _accepted(_model().double(), x)


def valid_generated_dtypes():
    """Generated: a Linear model and a batch of any shape in the same floating dtype is a pair the model runs."""
    def pair(dtype, features, batch):
        model = nn.Linear(features, 2).to(dtype)
        return _accepted(model, torch.randn(batch, features, dtype=dtype))

    return st.builds(pair, st.sampled_from([torch.float32, torch.float64, torch.bfloat16]), st.integers(1, 8), st.integers(1, 6))
