"""A model wrapped in DistributedDataParallel owns a layer that its forward never uses (a head kept
for later, a branch switched off). DDP's reducer waits for a gradient from every parameter before it
finishes the gradient all-reduce; the unused layer never produces one, so the first backward leaves
the reduction unfinished and the second iteration's forward fails in C++
(Reducer::ensure_prior_reduction_finished, torch/csrc/distributed/c10d/reducer.cpp). Runs on CPU
with a one-process gloo group whose rendezvous is a file in a temporary directory; the same happens
with NCCL on GPUs and with any world size. The demonstrations train three steps each: without the
unused layer and with it frozen (solution 1), with find_unused_parameters=True (solution 2), and with
static_graph=True (solution 3). The record's exampleFix and validationCode run from its own text."""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "remove_or_freeze", 2: "find_unused", 3: "static_graph"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["DDP", "Tagger", "TaggerWithSpareHead"],
              "validationCode": ["model", "batch", "compute_loss", "ddp_kwargs"]}
VALID = {"every-parameter-used-or-frozen": "valid_used_or_frozen", "ddp-told-about-unused": "valid_ddp_told"}
WORDINGS = [
    {"text": "Expected to have finished reduction in the prior iteration before starting a new one. This error "
             "indicates that your module has parameters that were not used in producing loss.",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Expected to have finished reduction in the prior iteration before starting a new one. This error "
             "indicates that your module has parameters that were not used in producing loss.",
     "source": "torch==1.13.1", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import contextlib
import math
import os
import sys
import tempfile

import errkb_record as record

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class TaggerWithSpareHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)
        self.aux_head = nn.Linear(8, 3)  # registered, never called in forward

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


class Tagger(nn.Module):
    """The same model without the parameter that takes no part in the loss."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


@contextlib.contextmanager
def _group():
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # keep gloo on the loopback interface
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)
        try:
            yield
        finally:
            dist.destroy_process_group()


def _batch():
    return torch.randn(16, 8), torch.randint(3, (16,))


def _compute_loss(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y)


def _train(model, steps=2):
    """Plain training steps; returns the losses and checks the trained parameters changed."""
    torch.manual_seed(1)
    trainable = [p for p in model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in trainable]
    optimizer = torch.optim.SGD(trainable, lr=0.1)
    losses = []
    for _ in range(steps):
        loss = _compute_loss(model, _batch())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert len(losses) == steps and all(math.isfinite(v) for v in losses), losses
    assert any(not torch.equal(b, p) for b, p in zip(before, trainable)), "the steps changed nothing"
    return losses


def trigger():
    with _group():
        torch.manual_seed(0)
        _train(DDP(TaggerWithSpareHead()))  # the second forward raises


def remove_or_freeze():
    """Solution 1: every parameter DDP sees takes part in the loss: drop the layer, or freeze it before wrapping."""
    with _group():
        torch.manual_seed(0)
        _train(DDP(Tagger()), steps=3)

        torch.manual_seed(0)
        spare = TaggerWithSpareHead()
        spare.aux_head.requires_grad_(False)  # DDP only tracks parameters that require grad
        frozen = spare.aux_head.weight.detach().clone()
        _train(DDP(spare), steps=3)
        assert torch.equal(spare.aux_head.weight, frozen)


def find_unused():
    """Solution 2: find_unused_parameters=True marks the unused layer ready after each forward."""
    with _group():
        torch.manual_seed(0)
        model = DDP(TaggerWithSpareHead(), find_unused_parameters=True)
        _train(model, steps=3)
        assert model.module.aux_head.weight.grad is None
        assert model.module.head.weight.grad is not None


def static_graph():
    """Solution 3: static_graph=True, for a set of unused parameters that is the same in every iteration."""
    with _group():
        torch.manual_seed(0)
        model = DDP(TaggerWithSpareHead(), static_graph=True)
        _train(model, steps=3)
        assert model.module.aux_head.weight.grad is None


def example_fix():
    """The exampleFix's two "after" lines (preferred, then the fallback); the model it leaves trains."""
    with _group():
        torch.manual_seed(0)
        names = record.run(
            "exampleFix", {"DDP": DDP, "Tagger": Tagger, "TaggerWithSpareHead": TaggerWithSpareHead}, section="after"
        )
        _train(names["model"], steps=3)


def guard():
    """validationCode flags the model with the spare head and passes the model without it."""
    torch.manual_seed(0)
    names = {"compute_loss": _compute_loss, "batch": _batch(), "ddp_kwargs": {}}
    assert not record.check("validationCode", dict(names, model=TaggerWithSpareHead()))
    assert record.check("validationCode", dict(names, model=Tagger()))


def _trains_under_ddp(model, ddp_kwargs):
    """The situation is valid: three DDP steps run (the error would come at the second forward)."""
    with _group():
        _train(DDP(model, **ddp_kwargs), steps=3)
    for p in model.parameters():
        p.grad = None
    return {"model": model, "batch": _batch(), "compute_loss": _compute_loss, "ddp_kwargs": ddp_kwargs}


def valid_used_or_frozen():
    """Every trainable parameter used; and the spare head frozen before wrapping (solution 1)."""
    torch.manual_seed(0)
    spare = TaggerWithSpareHead()
    spare.aux_head.requires_grad_(False)
    return [_trains_under_ddp(Tagger(), {}), _trains_under_ddp(spare, {})]


def valid_ddp_told():
    """The spare head kept, with find_unused_parameters=True or static_graph=True (solutions 2 and 3)."""
    torch.manual_seed(0)
    return [_trains_under_ddp(TaggerWithSpareHead(), {"find_unused_parameters": True}),
            _trains_under_ddp(TaggerWithSpareHead(), {"static_graph": True})]
