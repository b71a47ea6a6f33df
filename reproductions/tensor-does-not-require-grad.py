"""A training loop reuses a compute_loss helper written for validation, which runs the model under torch.no_grad().
The loss it returns has no grad_fn, and loss.backward() fails in THPEngine_run_backward
(torch/csrc/autograd/python_engine.cpp) with "element 0 of tensors does not require grad and does not have a
grad_fn". One demonstration per cause the record lists: the forward pass with grad enabled; a fine-tuning setup that
froze everything (shown to raise, from torch) fixed by freezing before attaching the head; a loss rebuilt from
.item() (shown to raise) replaced by the differentiable one, with a check that the popular loss.requires_grad = True
"fix" leaves every parameter without a gradient; and reentrant activation checkpointing over frozen embeddings
(shown to raise) replaced by use_reentrant=False. Every fix asserts that the trainable parameters change in one
SGD step. The record's exampleFix and validationCode run from its text.
Torch floor 2.5: older releases were not verified (their results are skipped).
"""

NEEDS = {"packages": {"torch": ">=2.5"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "grad_enabled", 2: "unfrozen_head", 3: "connected_loss", 4: "non_reentrant_checkpoint"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "training-loss": "valid_training_loss",
    "frozen-backbone": "valid_frozen_backbone",
    "eval-mode-with-grad": "valid_eval_mode",
}
CODE_NAMES = {"exampleFix": ["torch", "nn", "model", "x", "y"], "validationCode": ["loss"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "element 0 of tensors does not require grad and does not have a grad_fn", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
     "source": "davidmascharka/tbd-nets#8", "match": "pattern"},
    {"text": "RuntimeError: element 1 of tensors does not require grad and does not have a grad_fn",
     "source": "thu-coai/PPT#12", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math
import warnings

import errkb_record as record

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

MESSAGE = "does not require grad and does not have a grad_fn"


def _setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    x = torch.randn(32, 8)
    y = torch.randint(0, 3, (32,))
    return model, x, y


def _eval_style_loss(model, x, y):
    with torch.no_grad():  # written for validation
        return nn.functional.cross_entropy(model(x), y)


def _step(params, loss):
    params = [p for p in params if p.requires_grad]
    assert params, "nothing to train"
    before = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params, lr=0.5)
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert math.isfinite(loss.item())
    assert all(not torch.equal(a, p) for a, p in zip(before, params)), "a trainable parameter did not change"


def _expect_error(fn):
    try:
        fn()
    except RuntimeError as e:
        assert MESSAGE in str(e), e
    else:
        raise AssertionError("the broken variant did not fail")


def trigger():
    model, x, y = _setup()
    loss = _eval_style_loss(model, x, y)
    loss.backward()  # RuntimeError from THPEngine_run_backward


def grad_enabled():
    """Solution 1: the same loss computed with gradient recording on."""
    model, x, y = _setup()
    assert torch.is_grad_enabled()
    loss = nn.functional.cross_entropy(model(x), y)
    _step(model.parameters(), loss)


def unfrozen_head():
    """Solution 2: freezing after attaching the new head freezes everything (raises); freeze first, then attach."""
    def frozen_all():
        model, x, y = _setup()
        model[2] = nn.Linear(16, 3)  # new head attached first ...
        for p in model.parameters():
            p.requires_grad = False  # ... then the freeze loop catches it too
        nn.functional.cross_entropy(model(x), y).backward()

    _expect_error(frozen_all)
    model, x, y = _setup()
    for p in model.parameters():
        p.requires_grad = False
    model[2] = nn.Linear(16, 3)  # attached after the freeze: trainable
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == 16 * 3 + 3
    backbone = [p.detach().clone() for p in model[0].parameters()]
    _step(model.parameters(), nn.functional.cross_entropy(model(x), y))
    assert all(torch.equal(a, p) for a, p in zip(backbone, model[0].parameters())), "the frozen backbone changed"


def connected_loss():
    """Solution 3: a loss rebuilt from .item() raises; forcing requires_grad on it trains nothing; the real loss trains."""
    model, x, y = _setup()
    _expect_error(lambda: torch.tensor(nn.functional.cross_entropy(model(x), y).item()).backward())
    fake = torch.tensor(nn.functional.cross_entropy(model(x), y).item(), requires_grad=True)
    fake.backward()
    assert all(p.grad is None for p in model.parameters()), "the requires_grad 'fix' should reach no parameter"
    _step(model.parameters(), nn.functional.cross_entropy(model(x), y))


def non_reentrant_checkpoint():
    """Solution 4: frozen embeddings + reentrant checkpoint raises; use_reentrant=False trains the adapter inside."""
    def run(reentrant):
        torch.manual_seed(0)
        emb = nn.Embedding(10, 8)
        emb.weight.requires_grad_(False)  # frozen base model
        adapter = nn.Linear(8, 8)  # trainable, inside the checkpointed block
        ids = torch.randint(0, 10, (4, 5))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reentrant mode warns that no input requires grad
            out = checkpoint(adapter, emb(ids), use_reentrant=reentrant)
        return adapter, out.pow(2).mean()

    _expect_error(lambda: run(True)[1].backward())
    adapter, loss = run(False)
    _step(adapter.parameters(), loss)


def example_fix():
    model, x, y = _setup()
    names = record.run("exampleFix", {"torch": torch, "nn": nn, "model": model, "x": x, "y": y}, section="after")
    assert names["model"] is model
    _step(model.parameters(), names["loss"])


def guard():
    model, x, y = _setup()
    assert not record.check("validationCode", {"loss": _eval_style_loss(model, x, y)})
    assert record.check("validationCode", {"loss": nn.functional.cross_entropy(model(x), y)})


def _trains(model, loss):
    """A valid situation is a loss whose backward reaches a trainable parameter."""
    loss.backward(retain_graph=True)
    assert any(p.grad is not None for p in model.parameters())
    return {"loss": loss}


def valid_training_loss():
    model, x, y = _setup()
    return _trains(model, nn.functional.cross_entropy(model(x), y))


def valid_frozen_backbone():
    """Only the head trains: the loss still has a graph through it."""
    model, x, y = _setup()
    for p in model[0].parameters():
        p.requires_grad_(False)
    return _trains(model, nn.functional.cross_entropy(model(x), y))


def valid_eval_mode():
    """model.eval() changes dropout and batch norm, not gradient recording."""
    model, x, y = _setup()
    model.eval()
    return _trains(model, nn.functional.cross_entropy(model(x), y))
