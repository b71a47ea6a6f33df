"""A per-pixel classifier works channels-last: a Linear head and log_softmax over the last dimension of
(N, H, W, features), then a permute to (N, C, H, W) for F.nll_loss. The forward pass succeeds; in backward,
nll_loss2d_backward (aten/src/ATen/native/LossNLL2d.cpp, the line the build reports with
TORCH_SHOW_CPP_STACKTRACES=1) allocates the input's gradient with zeros_like, which keeps the permuted layout, and
its check raises "grad_input must be contiguous". The demonstrations: log_probs.contiguous() before the loss (the
gradients equal a reference computed on a contiguous copy of the same log-probabilities) and cross_entropy on the
permuted logits (the same loss value, and the head trains). The record's exampleFix and validationCode run from its
text; the guard's valid situations include a transposed 2-D (N, C) input, which nll_loss's 1-D kernel accepts.
CPU only.

Drafted by `errkb draft` from gic.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: grad_input must be contiguous
  raised at aten/src/ATen/native/LossNLL2d.cpp:382 (C++)
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The drafted pattern (the message
itself) is kept.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "contiguous_before_loss", 2: "cross_entropy_on_permuted_logits"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["log_probs", "target"], "validationCode": ["log_probs"]}
KEEP = ["target"]
VALID = {"contiguous-4d": "valid_contiguous_4d", "transposed-2d": "valid_transposed_2d",
         "contiguous-3d-sequence": "valid_sequence", "ignore-index": "valid_ignore_index",
         "permuted-3d-sequence": "valid_permuted_sequence", "strided-4d": "valid_strided_4d",
         "expanded-4d": "valid_expanded_4d", "permuted-5d": "valid_permuted_5d"}
WORDINGS = [
    {'text': "grad_input must be contiguous", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "grad_input must be contiguous", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "grad_input must be contiguous", 'source': 'chaitjo/graph-convnet-tsp#21', 'match': 'matcher'},
    {'text': "grad_input must be contiguous", 'source': 'chaitjo/graph-convnet-tsp#19', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified'}

import errkb_record as record

import torch
import torch.nn.functional as F


def _situation():
    torch.manual_seed(0)
    head = torch.nn.Linear(8, 3)
    features = torch.randn(2, 4, 5, 8)
    target = torch.randint(0, 3, (2, 4, 5))
    return head, features, target


def _reference_grads(head, features, target):
    """Gradients of the same loss, with the log-probabilities copied into a fresh contiguous tensor."""
    log_probs = F.log_softmax(head(features), dim=-1).permute(0, 3, 1, 2)
    loss = F.nll_loss(torch.empty(log_probs.shape).copy_(log_probs), target)
    return loss, torch.autograd.grad(loss, [head.weight, head.bias])


def trigger():
    # per-pixel classifier: a Linear head over (N, H, W, features) and log_softmax over the classes (last dimension);
    # nll_loss wants the classes in dimension 1, so the log-probabilities are permuted (a non-contiguous view)
    torch.manual_seed(0)
    head = torch.nn.Linear(8, 3)
    features = torch.randn(2, 4, 5, 8)
    log_probs = F.log_softmax(head(features), dim=-1).permute(0, 3, 1, 2)   # (N, C, H, W)
    target = torch.randint(0, 3, (2, 4, 5))
    loss = F.nll_loss(log_probs, target)
    loss.backward()


def contiguous_before_loss():
    """Solution 1: .contiguous() before the loss: backward runs, gradients equal the reference."""
    head, features, target = _situation()
    ref_loss, ref_grads = _reference_grads(head, features, target)
    log_probs = F.log_softmax(head(features), dim=-1).permute(0, 3, 1, 2)
    assert not log_probs.is_contiguous()
    loss = F.nll_loss(log_probs.contiguous(), target)
    grads = torch.autograd.grad(loss, [head.weight, head.bias])
    assert torch.allclose(loss, ref_loss)
    assert all(torch.allclose(g, r, atol=1e-6) for g, r in zip(grads, ref_grads))


def cross_entropy_on_permuted_logits():
    """Solution 2: permute the logits and use cross_entropy: the same loss, and an SGD step lowers it."""
    head, features, target = _situation()
    ref_loss, _ = _reference_grads(head, features, target)
    loss = F.cross_entropy(head(features).permute(0, 3, 1, 2), target)
    assert torch.allclose(loss, ref_loss, atol=1e-6)
    optimizer = torch.optim.SGD(head.parameters(), lr=1.0)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    assert F.cross_entropy(head(features).permute(0, 3, 1, 2), target) < loss


def example_fix():
    head, features, target = _situation()
    ref_loss, ref_grads = _reference_grads(head, features, target)
    log_probs = F.log_softmax(head(features), dim=-1).permute(0, 3, 1, 2)
    names = record.run("exampleFix", {"log_probs": log_probs, "target": target}, section="after")
    assert names["target"] is target and torch.allclose(names["loss"], ref_loss)
    assert torch.allclose(head.weight.grad, ref_grads[0], atol=1e-6)


def guard():
    head, features, target = _situation()
    log_probs = F.log_softmax(head(features), dim=-1).permute(0, 3, 1, 2)
    assert not record.check("validationCode", {"log_probs": log_probs})
    assert record.check("validationCode", {"log_probs": log_probs.contiguous()})
    # a channels-last copy fails the same way in backward, and the guard flags it too
    channels_last = log_probs.detach().contiguous(memory_format=torch.channels_last).requires_grad_()
    try:
        F.nll_loss(channels_last, target).backward()
    except RuntimeError as exc:
        assert "grad_input must be contiguous" in str(exc), exc
    else:
        raise AssertionError("channels-last log-probabilities trained")
    assert not record.check("validationCode", {"log_probs": channels_last})


def _valid(log_probs, target):
    log_probs = log_probs.detach().requires_grad_()
    F.nll_loss(log_probs, target, ignore_index=-100).backward()  # forward and backward accept it
    return {"log_probs": log_probs}


def valid_contiguous_4d():
    return _valid(F.log_softmax(torch.randn(2, 3, 4, 5), dim=1), torch.randint(0, 3, (2, 4, 5)))


def valid_transposed_2d():
    """(N, C) as the transpose of (C, N): non-contiguous, and nll_loss's 2-D kernel trains on it."""
    log_probs = F.log_softmax(torch.randn(3, 6), dim=0).t()
    assert not log_probs.is_contiguous()
    return _valid(log_probs, torch.randint(0, 3, (6,)))


def valid_sequence():
    """(N, C, L) token classification, contiguous."""
    return _valid(F.log_softmax(torch.randn(2, 4, 7), dim=1), torch.randint(0, 4, (2, 7)))


def valid_permuted_sequence():
    """(N, L, C) token scores with log_softmax over the classes, permuted to (N, C, L): non-contiguous, and
    nll_loss's 3-D path trains on it."""
    log_probs = F.log_softmax(torch.randn(2, 7, 4), dim=-1).permute(0, 2, 1)
    assert not log_probs.is_contiguous()
    return _valid(log_probs, torch.randint(0, 4, (2, 7)))


def valid_strided_4d():
    """A strided slice of (N, C, H, W): non-contiguous but not dense, so its gradient is allocated contiguous."""
    log_probs = F.log_softmax(torch.randn(2, 3, 4, 10), dim=1)[..., ::2]
    assert not log_probs.is_contiguous()
    return _valid(log_probs, torch.randint(0, 3, (2, 4, 5)))


def valid_expanded_4d():
    """One image's log-probabilities expanded over a batch of two."""
    log_probs = F.log_softmax(torch.randn(1, 3, 4, 5), dim=1).expand(2, 3, 4, 5)
    assert not log_probs.is_contiguous()
    return _valid(log_probs, torch.randint(0, 3, (2, 4, 5)))


def valid_permuted_5d():
    """Volumetric (N, C, D, H, W) log-probabilities permuted from channels-last: nll_loss reshapes 5-D input."""
    log_probs = F.log_softmax(torch.randn(2, 2, 4, 5, 3), dim=-1).permute(0, 4, 1, 2, 3)
    assert not log_probs.is_contiguous()
    return _valid(log_probs, torch.randint(0, 3, (2, 2, 4, 5)))


def valid_ignore_index():
    target = torch.randint(0, 3, (2, 4, 5))
    target[0, 0, 0] = -100
    return _valid(F.log_softmax(torch.randn(2, 3, 4, 5), dim=1), target)
