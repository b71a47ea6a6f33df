"""A small speech model is converted with .half() and run on the CPU. Its Linear layer and log_softmax run in
float16, and F.ctc_loss on the float16 log-probabilities reaches ctc_loss_cpu, whose AT_DISPATCH_FLOATING_TYPES
(aten/src/ATen/native/LossCTC.cpp, the line the build reports with TORCH_SHOW_CPP_STACKTRACES=1) has kernels for
float32 and float64 only: "\"ctc_loss_cpu\" not implemented for 'Half'" (NotImplementedError in torch 2.13 and 2.15,
RuntimeError in 2.5.1). The demonstrations: the loss computed from log_probs.float() (equal to the float32
computation; bfloat16 is shown to fail the same way), CPU autocast over a float32 model (ctc_loss runs in float32),
and the model kept in float32. The record's exampleFix and validationCode run from its text. CPU only.

Drafted by `errkb draft` from half_ctc.py on torch 2.13.0+cpu, Python 3.11.7:
  NotImplementedError: "ctc_loss_cpu" not implemented for 'Half'
  raised at aten/src/ATen/native/LossCTC.cpp:429 (C++)
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author limited the drafted
pattern's dtype to Half and BFloat16 (a missing integer kernel is another error) and named the base class
RuntimeError, which 2.5.1 raises.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "op_in_float32", 2: "cpu_autocast", 3: "model_in_float32"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["log_probs", "targets", "input_lengths", "target_lengths"], "validationCode": ["log_probs"]}
KEEP = ["targets"]
VALID = {"float32": "valid_float32", "float64": "valid_float64", "unbatched": "valid_unbatched",
         "concatenated-int32-targets": "valid_concatenated_targets"}
WORDINGS = [
    {'text': "\"ctc_loss_cpu\" not implemented for 'Half'", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "\"ctc_loss_cpu\" not implemented for 'Half'", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "\"addmm_impl_cpu_\" not implemented for 'Half'", 'source': 'zai-org/ChatGLM3#628', 'match': 'matcher'},
    {'text': "\"slow_conv2d_cpu\" not implemented for 'Half'", 'source': 'zai-org/VisualGLM-6B#30', 'match': 'pattern'},
    {'text': "\"triu_tril_cuda_template\" not implemented for 'BFloat16'", 'source': 'pytorch/pytorch#101932',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified'}

import errkb_record as record

import torch
import torch.nn.functional as F

TARGETS = [[1, 2, 3], [2, 4, 1]]


def _situation(dtype=torch.float16):
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 5)
    features = torch.randn(50, 2, 16)
    return model.to(dtype), features.to(dtype)


def _reference_loss():
    model, features = _situation(torch.float32)
    return F.ctc_loss(model(features).log_softmax(2), torch.tensor(TARGETS), [50, 50], [3, 3])


def trigger():
    # a speech model converted to half precision to save memory, run on the CPU
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 5).half()
    features = torch.randn(50, 2, 16).half()          # (time, batch, features)
    log_probs = model(features).log_softmax(2)         # Half on CPU: the Linear layer itself runs
    targets = torch.tensor([[1, 2, 3], [2, 4, 1]])
    loss = F.ctc_loss(log_probs, targets, input_lengths=[50, 50], target_lengths=[3, 3])


def op_in_float32():
    """Solution 1: the loss from log_probs.float() is finite and close to the all-float32 loss; bfloat16 has no
    kernel either."""
    model, features = _situation()
    log_probs = model(features).log_softmax(2)
    assert log_probs.dtype == torch.float16
    loss = F.ctc_loss(log_probs.float(), torch.tensor(TARGETS), [50, 50], [3, 3])
    assert loss.dtype == torch.float32 and torch.isfinite(loss)
    assert torch.allclose(loss, _reference_loss(), rtol=1e-2), (loss, _reference_loss())
    try:
        F.ctc_loss(log_probs.bfloat16(), torch.tensor(TARGETS), [50, 50], [3, 3])
    except RuntimeError as exc:
        assert "not implemented for 'BFloat16'" in str(exc), exc
    else:
        raise AssertionError("bfloat16 ctc_loss ran on the CPU")


def cpu_autocast():
    """Solution 2: a float32 model under CPU autocast: the Linear layer runs in low precision, ctc_loss in float32,
    and the backward pass reaches the weights."""
    model, features = _situation(torch.float32)
    for dtype in (torch.bfloat16, torch.float16):
        model.zero_grad()
        with torch.autocast(device_type="cpu", dtype=dtype):
            log_probs = model(features).log_softmax(2)
            loss = F.ctc_loss(log_probs, torch.tensor(TARGETS), [50, 50], [3, 3])
        assert loss.dtype == torch.float32 and torch.isfinite(loss)
        assert torch.allclose(loss, _reference_loss(), rtol=5e-2), (dtype, loss)
        loss.backward()
        assert model.weight.grad is not None and torch.isfinite(model.weight.grad).all()


def model_in_float32():
    """Solution 3: the half model converted back with .float() computes the float32 loss."""
    model, features = _situation()
    model = model.float()
    loss = F.ctc_loss(model(features.float()).log_softmax(2), torch.tensor(TARGETS), [50, 50], [3, 3])
    assert torch.allclose(loss, _reference_loss(), rtol=1e-2)


def example_fix():
    model, features = _situation()
    names = {"log_probs": model(features).log_softmax(2), "targets": torch.tensor(TARGETS),
             "input_lengths": [50, 50], "target_lengths": [3, 3]}
    out = record.run("exampleFix", names, section="after")
    assert out["targets"] is names["targets"]
    assert torch.allclose(out["loss"], _reference_loss(), rtol=1e-2)


def guard():
    model, features = _situation()
    log_probs = model(features).log_softmax(2)
    assert not record.check("validationCode", {"log_probs": log_probs})
    assert not record.check("validationCode", {"log_probs": log_probs.bfloat16()})
    assert record.check("validationCode", {"log_probs": log_probs.float()})


def valid_float32():
    model, features = _situation(torch.float32)
    log_probs = model(features).log_softmax(2)
    F.ctc_loss(log_probs, torch.tensor(TARGETS), [50, 50], [3, 3])
    return {"log_probs": log_probs}


def valid_float64():
    model, features = _situation(torch.float64)
    log_probs = model(features).log_softmax(2)
    F.ctc_loss(log_probs, torch.tensor(TARGETS), [50, 50], [3, 3])
    return {"log_probs": log_probs}


def valid_unbatched():
    """A single utterance: (time, classes) log-probabilities and 1-D targets."""
    log_probs = torch.randn(30, 5).log_softmax(1)
    F.ctc_loss(log_probs, torch.tensor([1, 2]), torch.tensor(30), torch.tensor(2))
    return {"log_probs": log_probs}


def valid_concatenated_targets():
    """Targets concatenated into one int32 vector, lengths as tensors."""
    log_probs = torch.randn(20, 2, 5).log_softmax(2)
    F.ctc_loss(log_probs, torch.tensor([1, 2, 3, 4], dtype=torch.int32), torch.tensor([20, 18]), torch.tensor([3, 1]))
    return {"log_probs": log_probs}
