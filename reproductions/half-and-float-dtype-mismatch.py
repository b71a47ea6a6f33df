"""An attention step in a model converted with .half() multiplies its float16 queries with a memory tensor created
by torch.randn without a dtype (float32). torch.bmm's CPU kernel takes its element type from the first operand and
asks the second for float16 data: check_type (aten/src/ATen/core/TensorMethods.cpp, generated from
aten/src/ATen/templates/TensorMethods.cpp; the line the build reports with TORCH_SHOW_CPP_STACKTRACES=1) raises
"expected scalar type Half but found Float". The demonstrations: the memory converted to the queries' dtype (the
scores equal the float32 computation within half precision; F.cross_entropy with float32 class weights on float16
logits raises the same message and works once the weights are converted), and a float32 model under CPU autocast,
where bmm casts both operands itself. The record's exampleFix and validationCode run from its text. CPU only.

Drafted by `errkb draft` from half_bmm.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: expected scalar type Half but found Float
  raised at aten/src/ATen/core/TensorMethods.cpp:12 (C++)
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The draft's pattern took any pair of
dtypes; the author kept the pairs where Half or BFloat16 is expected (float-and-double-dtype-mismatch covers the
Float/Double ones).
"""
NEEDS = {'packages': {'torch': '>=2.0', 'hypothesis': ''}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "same_dtype", 2: "autocast_instead_of_half"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["queries", "memory"], "validationCode": ["queries", "memory"]}
KEEP = ["queries"]
VALID = {"both-half": "valid_both_half", "both-float32": "valid_both_float32", "both-bfloat16": "valid_both_bfloat16",
         "shapes": "valid_shapes"}
WORDINGS = [
    {'text': "expected scalar type Half but found Float", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "expected scalar type Half but found Float", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "expected scalar type Half but found Float", 'source': 'CompVis/stable-diffusion#466', 'match': 'matcher'},
    {'text': "expected m1 and m2 to have the same dtype, but got: c10::Half != float",
     'source': 'Vaibhavs10/fast-whisper-finetuning#14', 'match': 'none',
     'why': "a matrix product's own wording of the mismatch, claimed by float-and-double-dtype-mismatch"},
    {'text': "mat1 and mat2 must have the same dtype, but got Float and Half", 'source': 'OpenBMB/MiniCPM-V#234',
     'match': 'none', 'why': "a matrix product's own wording of the mismatch, claimed by float-and-double-dtype-mismatch"},
    {'text': "expected scalar type Float but found Half", 'source': 'wusuozhi/stable-diffusion-learning#2',
     'match': 'none', 'why': "Float expected (the float32 operand first): float-and-double-dtype-mismatch claims it"},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified'}

import errkb_record as record

import torch
import torch.nn.functional as F
from hypothesis import strategies as st


def _situation():
    torch.manual_seed(0)
    proj = torch.nn.Linear(8, 8)
    inputs = torch.randn(2, 5, 8)
    memory = torch.randn(2, 6, 8)
    reference = torch.bmm(proj(inputs), memory.transpose(1, 2))  # all float32
    proj = proj.half()
    return proj(inputs.half()), memory, reference


def trigger():
    # an attention step in a model converted with .half(); the memory tensor was created without a dtype (float32)
    torch.manual_seed(0)
    proj = torch.nn.Linear(8, 8).half()
    queries = proj(torch.randn(2, 5, 8).half())        # float16
    memory = torch.randn(2, 6, 8)                     # float32: torch.randn's default dtype
    scores = torch.bmm(queries, memory.transpose(1, 2))


def same_dtype():
    """Solution 1: convert the float32 tensor to the activations' dtype; the same fix for a loss's class weights."""
    queries, memory, reference = _situation()
    scores = torch.bmm(queries, memory.to(queries.dtype).transpose(1, 2))
    assert scores.dtype == torch.float16
    assert torch.allclose(scores.float(), reference, atol=2e-2, rtol=2e-2)
    logits = queries[:, 0, :5]                           # float16 logits, 5 classes
    labels = torch.tensor([0, 3])
    weight = torch.tensor([1.0, 2.0, 1.0, 0.5, 1.0])    # float32 class weights
    try:
        F.cross_entropy(logits, labels, weight=weight)
    except RuntimeError as exc:
        assert "expected scalar type Half but found Float" in str(exc), exc
    else:
        raise AssertionError("float32 weights on float16 logits were accepted")
    loss = F.cross_entropy(logits, labels, weight=weight.to(logits.dtype))
    expected = F.cross_entropy(logits.float(), labels, weight=weight)
    assert torch.isfinite(loss) and abs(loss.item() - expected.item()) < 1e-2


def autocast_instead_of_half():
    """Solution 2: float32 model and tensors, low precision from autocast: bmm casts both operands."""
    torch.manual_seed(0)
    proj = torch.nn.Linear(8, 8)
    inputs = torch.randn(2, 5, 8)
    memory = torch.randn(2, 6, 8)
    reference = torch.bmm(proj(inputs), memory.transpose(1, 2))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        scores = torch.bmm(proj(inputs), memory.transpose(1, 2))
    assert scores.dtype == torch.bfloat16
    assert torch.allclose(scores.float(), reference, atol=1e-1, rtol=5e-2)
    assert proj.weight.dtype == torch.float32


def example_fix():
    queries, memory, reference = _situation()
    names = record.run("exampleFix", {"queries": queries, "memory": memory}, section="after")
    assert names["queries"] is queries
    assert torch.allclose(names["scores"].float(), reference, atol=2e-2, rtol=2e-2)


def guard():
    queries, memory, _ = _situation()
    assert not record.check("validationCode", {"queries": queries, "memory": memory})
    assert record.check("validationCode", {"queries": queries, "memory": memory.half()})
    # solution 2's situation: under CPU autocast bfloat16 activations meet a float32 tensor, and bmm accepts them
    torch.manual_seed(0)
    proj = torch.nn.Linear(8, 8)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        queries = proj(torch.randn(2, 5, 8))
        memory = torch.randn(2, 6, 8)
        assert queries.dtype == torch.bfloat16 and memory.dtype == torch.float32
        torch.bmm(queries, memory.transpose(1, 2))
        assert record.check("validationCode", {"queries": queries, "memory": memory})


def _valid(queries, memory):
    torch.bmm(queries, memory.transpose(1, 2))  # the library accepts the pair
    return {"queries": queries, "memory": memory}


def valid_both_half():
    queries, memory, _ = _situation()
    return _valid(queries, memory.half())


def valid_both_float32():
    return _valid(torch.randn(2, 5, 8), torch.randn(2, 6, 8))


def valid_both_bfloat16():
    return _valid(torch.randn(1, 3, 4, dtype=torch.bfloat16), torch.randn(1, 2, 4, dtype=torch.bfloat16))


def valid_shapes():
    dtypes = st.sampled_from([torch.float16, torch.bfloat16, torch.float32, torch.float64])
    return st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(1, 5), st.integers(1, 6), dtypes).map(
        lambda t: _valid(torch.randn(t[0], t[1], t[3]).to(t[4]), torch.randn(t[0], t[2], t[3]).to(t[4])))
