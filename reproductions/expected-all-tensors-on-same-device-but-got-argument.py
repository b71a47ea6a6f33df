"""A small token model (a token nn.Embedding, a position nn.Embedding and an nn.Linear head) is moved to
cuda:0, but the batch of token ids is left on the CPU. nn.Embedding's forward calls torch.embedding, which
looks rows up with weight.index_select(0, ids); the CUDA kernel wrapper that PyTorch generates for
index_select first checks that all its tensor arguments share one device, finds the weight on cuda:0 and the
index on the CPU, and c10::impl::common_device_check_failure (aten/src/ATen/core/adaption.cpp) raises
RuntimeError "Expected all tensors to be on the same device, but got index is on cpu, different from other
tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)".
Needs one CUDA GPU: the generated device check exists only in the wrappers of backends with device guards
(CUDA and the like); the CPU and Meta wrappers have none, so a CPU-only build has no path to this raise
site (meta weights with CPU ids simply give a meta result) and there is no CPU variant.
fix() moves the ids to the embedding's device and builds the position ids inside forward with
device=ids.device: the output then equals the same model's output on the CPU, and a backward pass runs.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 1, "timeout_s": 60}

import torch
import torch.nn as nn


class TinyTokenModel(nn.Module):
    def __init__(self, vocab=50, max_len=16, dim=8, classes=3):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        # created where the ids are, not with the CPU default
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.head(self.tok(ids) + self.pos(positions))


def _model_and_ids():
    torch.manual_seed(0)
    model = TinyTokenModel()
    ids = torch.randint(0, 50, (4, 10))  # a batch of token ids, as a DataLoader yields it: on the CPU
    return model, ids


def _fixed_run(device):
    """The documented fix on `device`; the output is checked against the same model on the CPU."""
    model, ids = _model_and_ids()
    expected = model(ids).detach()  # reference: everything on the CPU
    model = model.to(device)
    ids = ids.to(model.tok.weight.device)  # the fix: the ids go where the embedding is
    out = model(ids)
    assert out.device == model.tok.weight.device
    assert torch.allclose(out.detach().cpu(), expected, rtol=1e-5, atol=1e-6)
    out.float().pow(2).mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    # the rows looked up are exactly the CPU rows
    assert torch.equal(model.tok(ids).detach().cpu(), _model_and_ids()[0].tok(ids.cpu()).detach())


def trigger():
    variant = "cuda: nn.Embedding on cuda:0, token ids left on the CPU"
    model, ids = _model_and_ids()
    model = model.to("cuda:0")
    model(ids)  # ids are still on the CPU: index_select's CUDA wrapper refuses them
    return variant


def fix():
    _fixed_run("cuda:0")
    return "cuda: ids moved to the embedding's device, position ids made with device=ids.device"
