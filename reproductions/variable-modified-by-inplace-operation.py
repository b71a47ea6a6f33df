"""A residual block applies ReLU and then adds its skip connection in place (out += identity). ReLU's backward
needs its own output, which autograd saved together with the tensor's version counter; the += bumps the version,
and loss.backward() fails in SavedVariable::unpack (torch/csrc/autograd/saved_variable.cpp) with "one of the
variables needed for gradient computation has been modified by an inplace operation: [...], which is output 0 of
Relu (ReluBackward0 before 2.13), is at version 1; expected version 0 instead". Demonstrations: the out-of-place
add (gradients equal those of an independent functional computation); a GAN-style loop that steps the
discriminator's optimizer before the generator's backward (shown to raise the same error from torch with the
wrong order, then trained with every backward before any step); and clone() before the in-place write.
The record's exampleFix runs from its text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "out_of_place", 2: "backward_before_step", 3: "clone_first"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["torch", "conv", "x", "identity"]}
WORDINGS = [
    {"text": "one of the variables needed for gradient computation has been modified by an inplace operation: "
             "[torch.FloatTensor [8, 16]], which is output 0 of Relu, is at version 1; expected version 0 instead. Hint: "
             "enable anomaly detection to find the operation that failed to compute its gradient, with "
             "torch.autograd.set_detect_anomaly(True, check_nan=False).", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "one of the variables needed for gradient computation has been modified by an inplace operation: "
             "[torch.FloatTensor [8, 16]], which is output 0 of ReluBackward0, is at version 1; expected version 0 "
             "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
             "torch.autograd.set_detect_anomaly(True).", "source": "torch==2.9.1", "match": "pattern"},
    {"text": "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
             "operation", "source": "tamakoji/pytorch-syncbn#4", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "42bb714738bbd8ed3aaa0f0c61606b7a366ba934", "offset": 4}

import math

import errkb_record as record

import torch
import torch.nn as nn

MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _situation():
    torch.manual_seed(0)
    conv = nn.Linear(16, 16)  # stands in for the block's convolution
    x = torch.randn(8, 16)
    identity = torch.randn(8, 16)
    return conv, x, identity


def _reference_grad(conv, x, identity):
    """Gradient of the intended computation relu(conv(x)) + identity, computed without in-place ops."""
    w = conv.weight.detach().clone().requires_grad_(True)
    out = torch.relu(x @ w.t() + conv.bias.detach()) + identity
    (out ** 2).sum().backward()
    return w.grad


def trigger():
    conv, x, identity = _situation()
    out = torch.relu(conv(x))
    out += identity  # in-place on ReLU's saved output
    loss = (out ** 2).sum()
    loss.backward()  # RuntimeError from SavedVariable::unpack


def out_of_place():
    """Solution 1: out = out + identity; the gradient equals the reference."""
    conv, x, identity = _situation()
    out = torch.relu(conv(x))
    out = out + identity
    (out ** 2).sum().backward()
    assert torch.allclose(conv.weight.grad, _reference_grad(conv, x, identity))


def _gan(order_ok):
    torch.manual_seed(0)
    G = nn.Linear(4, 4)
    D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    bce = nn.BCEWithLogitsLoss()
    g_before = [p.detach().clone() for p in G.parameters()]
    d_before = [p.detach().clone() for p in D.parameters()]
    fake = G(torch.randn(16, 4))
    out = D(fake)
    d_loss = bce(out, torch.zeros(16, 1))
    g_loss = bce(out, torch.ones(16, 1))
    opt_d.zero_grad()
    opt_g.zero_grad()
    if order_ok:
        d_loss.backward(retain_graph=True)
        d_grads = [p.grad.clone() for p in D.parameters()]
        opt_d.zero_grad()
        g_loss.backward()  # every backward before any step
        for p, g in zip(D.parameters(), d_grads):
            p.grad = g  # the discriminator steps on its own loss only
        opt_d.step()
        opt_g.step()
    else:
        d_loss.backward(retain_graph=True)
        opt_d.step()  # updates D's weights in place ...
        g_loss.backward()  # ... which this backward still needs
    assert math.isfinite(d_loss.item()) and math.isfinite(g_loss.item())
    assert all(not torch.equal(a, b) for a, b in zip(g_before, G.parameters())), "generator did not change"
    assert all(not torch.equal(a, b) for a, b in zip(d_before, D.parameters())), "discriminator did not change"


def backward_before_step():
    """Solution 2: the wrong order raises the documented error inside torch; backward-then-step trains both nets."""
    try:
        _gan(order_ok=False)
    except RuntimeError as e:
        assert MESSAGE in str(e), e
    else:
        raise AssertionError("stepping before the second backward did not fail")
    _gan(order_ok=True)


def clone_first():
    """Solution 3: write into a clone; the gradient equals the reference."""
    conv, x, identity = _situation()
    out = torch.relu(conv(x))
    out = out.clone()
    out += identity
    (out ** 2).sum().backward()
    assert torch.allclose(conv.weight.grad, _reference_grad(conv, x, identity))


def example_fix():
    conv, x, identity = _situation()
    names = record.run("exampleFix", {"torch": torch, "conv": conv, "x": x, "identity": identity}, section="after")
    (names["out"] ** 2).sum().backward()
    assert torch.allclose(conv.weight.grad, _reference_grad(conv, x, identity))
