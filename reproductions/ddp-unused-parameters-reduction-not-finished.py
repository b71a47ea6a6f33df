"""A model wrapped in DistributedDataParallel owns a layer that its forward never uses (a head kept
for later, a branch switched off). DDP's reducer waits for a gradient from every parameter before it
finishes the gradient all-reduce; the unused layer never produces one, so the first backward leaves
the reduction unfinished and the second iteration's forward fails in C++
(Reducer::ensure_prior_reduction_finished, torch/csrc/distributed/c10d/reducer.cpp). Runs on CPU
with a one-process gloo group whose rendezvous is a file on local disk; the same happens with NCCL
on GPUs and with any world size."""
NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 90}

import os
import sys
import tempfile

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


def _init_group(tmp):
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # keep gloo on the loopback interface
    dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)


def _train(model, steps=2):
    """Plain training steps; returns the losses."""
    torch.manual_seed(1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        x, y = torch.randn(16, 8), torch.randint(3, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def trigger():
    with tempfile.TemporaryDirectory() as tmp:
        _init_group(tmp)
        try:
            torch.manual_seed(0)
            _train(DDP(TaggerWithSpareHead()))  # the second forward raises
        finally:
            dist.destroy_process_group()


def fix():
    with tempfile.TemporaryDirectory() as tmp:
        _init_group(tmp)
        try:
            # Preferred: every parameter DDP sees takes part in the loss.
            torch.manual_seed(0)
            losses = _train(DDP(Tagger()), steps=3)
            assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses))), losses

            # Or keep the layer but freeze it before wrapping: DDP only tracks parameters that require grad.
            torch.manual_seed(0)
            spare = TaggerWithSpareHead()
            spare.aux_head.requires_grad_(False)
            losses = _train(DDP(spare), steps=3)
            assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses))), losses

            # When the spare parameter must stay trainable: let DDP look for unused parameters each iteration.
            torch.manual_seed(0)
            model = DDP(TaggerWithSpareHead(), find_unused_parameters=True)
            losses = _train(model, steps=3)
            assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses))), losses
            assert model.module.aux_head.weight.grad is None
            assert model.module.head.weight.grad is not None

            # If the set of unused parameters is the same in every iteration, static_graph=True also works.
            torch.manual_seed(0)
            model = DDP(TaggerWithSpareHead(), static_graph=True)
            losses = _train(model, steps=3)
            assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses))), losses
        finally:
            dist.destroy_process_group()
