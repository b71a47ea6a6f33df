"""A regression model and its inputs are on cuda:0, but the target tensor was never moved and is still
on the CPU. The hand-written loss ((pred - target) ** 2).mean() runs the CUDA subtraction kernel, whose
TensorIterator takes cuda:0 (the first non-CPU operand) as the common device; the CPU target is neither on
it nor a 0-dim scalar, so TensorIteratorBase::compute_types (aten/src/ATen/TensorIterator.cpp) raises
RuntimeError "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and
cpu!". The real case needs one CUDA GPU and runs when torch.cuda.device_count() >= 1.
CPU variant: ordinary operations on meta and CPU tensors are stopped earlier by PyTorch's Python meta
functions, with another message, so the stand-in calls ATen's structured SiLU backward kernel directly
(torch.ops.aten.silu_backward) with the gradient on the meta device and the saved input on the CPU; its
TensorIterator reaches the same compute_types check and raises the same message with "meta and cpu".
The demonstrations: move the stray operand to the other's device (solution 1), and create the helper
tensor on the device of the tensor it is combined with (solution 2); on the GPU the loss equals the same
loss computed on the CPU and a backward pass runs, in the CPU variant the kernel runs on one device and
its result equals autograd's SiLU gradient. The record's exampleFix and validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "move_operand", 2: "create_on_device"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"same-device": "valid_same_device", "cpu-scalar-tensor": "valid_cpu_scalar", "python-number": "valid_number"}
CODE_NAMES = {"exampleFix": ["loader", "model", "device"], "validationCode": ["torch", "pred", "target"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
             "cpu! (when checking argument for argument index in method wrapper__index_select)",
     "source": "facebookresearch/detr#524", "match": "pattern"},
    {"text": "Expected all tensors to be on the same device, but found at least two devices, cuda:2 and cuda:0!",
     "source": "fcjian/TOOD#8", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

CUDA = "cuda: model output on cuda:0, target left on the CPU"
META = "cpu: meta-device stand-in (aten.silu_backward with the gradient on meta, the input on the CPU)"


def _on_gpu():
    return torch.cuda.device_count() >= 1


def _regression_batch():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x = torch.randn(8, 4)
    target = torch.randn(8, 1)
    return model, x, target


def _stand_in():
    """The CPU variant's operands: the gradient on meta, the saved input on the CPU."""
    torch.manual_seed(0)
    return torch.rand(8, 4).to("meta"), torch.randn(8, 4)


def _silu_grad_matches(grad, x):
    """The kernel's values on one device equal autograd's SiLU gradient."""
    result = torch.ops.aten.silu_backward(grad, x)
    leaf = x.clone().requires_grad_(True)
    (expected,) = torch.autograd.grad(F.silu(leaf), leaf, grad_outputs=grad)
    assert torch.allclose(result, expected, rtol=1e-6, atol=1e-7)


def trigger():
    if _on_gpu():
        variant = CUDA
        model, x, target = _regression_batch()
        model = model.to("cuda:0")
        pred = model(x.to("cuda:0"))
        loss = ((pred - target) ** 2).mean()  # target is still on the CPU
        return variant
    variant = META
    grad, saved_input = _stand_in()
    torch.ops.aten.silu_backward(grad, saved_input)
    return variant


def move_operand():
    """Solution 1: the stray operand goes to the device of the other one."""
    if _on_gpu():
        model, x, target = _regression_batch()
        reference = F.mse_loss(model(x), target)  # the same loss, all on the CPU
        model = model.to("cuda:0")
        pred = model(x.to("cuda:0"))
        target = target.to(pred.device)
        loss = ((pred - target) ** 2).mean()
        assert loss.device == pred.device
        assert torch.allclose(loss.cpu(), reference.detach(), rtol=1e-5, atol=1e-6)
        loss.backward()
        assert torch.isfinite(loss)
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        return CUDA
    grad, saved_input = _stand_in()
    out = torch.ops.aten.silu_backward(grad, saved_input.to(grad.device))
    assert out.device == grad.device and out.shape == saved_input.shape
    torch.manual_seed(0)
    _silu_grad_matches(torch.rand(8, 4), saved_input)  # the same call with real values on one device
    return META


def create_on_device():
    """Solution 2: a constant weight tensor is made on the device of the tensor it multiplies."""
    values = [1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0, 0.25]
    if _on_gpu():
        model, x, target = _regression_batch()
        reference = (((model(x) - target) ** 2).squeeze(1) * torch.tensor(values)).mean()  # all on the CPU
        model = model.to("cuda:0")
        pred = model(x.to("cuda:0"))
        target = target.to(pred.device)
        weight = torch.tensor(values, device=pred.device)  # created where pred is
        assert torch.equal(pred.new_tensor(values), weight)
        loss = (((pred - target) ** 2).squeeze(1) * weight).mean()
        assert torch.allclose(loss.cpu(), reference.detach(), rtol=1e-5, atol=1e-6)
        loss.backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        return CUDA
    grad, _ = _stand_in()
    table = [values] * 4
    helper = torch.tensor(table, device=grad.device).t()  # made on the gradient's device, not the CPU default
    assert helper.device == grad.device == grad.new_tensor(table).device
    out = torch.ops.aten.silu_backward(grad, helper)
    assert out.device == grad.device and out.shape == grad.shape
    torch.manual_seed(0)
    _silu_grad_matches(torch.rand(8, 4), torch.tensor(table).t())
    return META


def example_fix():
    """The exampleFix's "after" loop over a loader of CPU batches, with the model on the device."""
    model, x, target = _regression_batch()
    loader = [(x[:4], target[:4]), (x[4:], target[4:])]
    device = "cuda:0" if _on_gpu() else "meta"
    reference = F.mse_loss(model(x[4:]), target[4:]).detach()
    names = record.run("exampleFix", {"loader": loader, "model": model.to(device), "device": device}, section="after")
    loss = names["loss"]
    assert names["model"] is model
    assert loss.device == torch.device(device) and loss.shape == ()
    if _on_gpu():
        assert torch.allclose(loss.cpu(), reference, rtol=1e-5, atol=1e-6)
        return CUDA
    return "cpu: meta-device stand-in (model and batches moved to meta)"


def guard():
    """validationCode flags operands on two devices and passes them once on one device."""
    if _on_gpu():
        model, x, target = _regression_batch()
        pred = model.to("cuda:0")(x.to("cuda:0"))
        variant = CUDA
    else:
        pred, target = _stand_in()
        variant = META
    assert not record.check("validationCode", {"torch": torch, "pred": pred, "target": target})
    assert record.check("validationCode", {"torch": torch, "pred": pred, "target": target.to(pred.device)})
    return variant


def _device():
    return "cuda:0" if _on_gpu() else "meta"


def _subtracts(pred, target):
    """A valid situation is one the element-wise operator accepts."""
    ((pred - target) ** 2).mean()
    return {"torch": torch, "pred": pred, "target": target}


def valid_same_device():
    return _subtracts(torch.randn(8, 1).to(_device()), torch.randn(8, 1).to(_device()))


def valid_cpu_scalar():
    """A 0-d CPU tensor is passed to add/sub as a scalar."""
    return _subtracts(torch.randn(8, 1).to(_device()), torch.tensor(0.5))


def valid_number():
    return _subtracts(torch.randn(8, 1).to(_device()), 0.5)
