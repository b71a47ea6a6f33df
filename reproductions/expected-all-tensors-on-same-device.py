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
fix() puts every operand on one device: on the GPU, the loss then equals the same loss computed on the CPU
and a training step runs; in the CPU variant, the kernel's result equals autograd's SiLU gradient.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}

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


def trigger():
    if _on_gpu():
        variant = CUDA
        model, x, target = _regression_batch()
        model = model.to("cuda:0")
        pred = model(x.to("cuda:0"))
        loss = ((pred - target) ** 2).mean()  # target is still on the CPU
        return variant
    variant = META
    grad = torch.ones(8, 4, device="meta")
    saved_input = torch.randn(8, 4)  # on the CPU
    torch.ops.aten.silu_backward(grad, saved_input)
    return variant


def fix():
    if _on_gpu():
        model, x, target = _regression_batch()
        reference = F.mse_loss(model(x), target)  # the same loss, all on the CPU
        model = model.to("cuda:0")
        pred = model(x.to("cuda:0"))
        target = target.to(pred.device)  # the fix: every operand on the model's device
        loss = ((pred - target) ** 2).mean()
        assert loss.device == pred.device
        assert torch.allclose(loss.cpu(), reference.detach(), rtol=1e-5, atol=1e-6)
        loss.backward()
        assert torch.isfinite(loss)
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        return CUDA
    torch.manual_seed(0)
    x = torch.randn(8, 4)
    grad = torch.rand(8, 4)
    on_meta = torch.ops.aten.silu_backward(grad.to("meta"), x.to("meta"))  # both on one device
    assert on_meta.device.type == "meta" and on_meta.shape == x.shape
    result = torch.ops.aten.silu_backward(grad, x)  # both on the CPU: real values to check
    leaf = x.clone().requires_grad_(True)
    (expected,) = torch.autograd.grad(F.silu(leaf), leaf, grad_outputs=grad)
    assert torch.allclose(result, expected, rtol=1e-6, atol=1e-7)
    return META
