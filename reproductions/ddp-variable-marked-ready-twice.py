"""A small encoder checkpoints each of its layers with reentrant activation checkpointing
(torch.utils.checkpoint(..., use_reentrant=True), the old default, and what Hugging Face's
gradient_checkpointing_enable() used by default) and is wrapped in DistributedDataParallel with
find_unused_parameters=True. After each forward, DDP walks the autograd graph from the outputs to find the
parameters that took no part; a reentrant checkpoint hides the layers' parameters from that graph (their
graph is only rebuilt inside backward), so DDP marks them ready at once as "unused", and when the
reentrant backward then produces their gradients, their hooks mark them ready a second time: the reducer
raises "Expected to mark a variable ready only once" from Reducer::checkAndRaiseMarkedTwiceError
(torch/csrc/distributed/c10d/reducer.cpp) in the first backward. Runs on CPU with a one-process gloo group
whose rendezvous is a file in a temporary directory; NCCL and any world size behave the same. The
demonstrations train three steps each and compare the gradients with the same model trained without DDP:
non-reentrant checkpointing with find_unused_parameters=True still on (solution 1), reentrant checkpointing
with static_graph=True (solution 2), and reentrant checkpointing with find_unused_parameters left False
(solution 3); solution 3 is also shown NOT to help when the same layer is checkpointed twice in one forward
(the reducer then raises the same error). The record's exampleFix "after" line runs as the layers' forward;
its validationCode flags the reentrant model and passes the non-reentrant one."""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "non_reentrant", 2: "static_graph", 3: "no_find_unused"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["checkpoint", "layer", "h"], "validationCode": ["model", "x", "ddp_kwargs"]}
VALID = {
    "non-reentrant-find-unused": "valid_non_reentrant",
    "reentrant-without-find-unused": "valid_reentrant_without_find_unused",
    "dict-output": "valid_dict_output",
}
WORDINGS = [
    {"text": "Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) "
             "Use of a module parameter outside the `forward` function.", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) "
             "Use of a module parameter outside the `forward` function.", "source": "torch==1.13.1",
     "match": "pattern"},
    {"text": "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the follow"
             "ing reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model par"
             "ameters are not shared across multiple concurrent forward-backward passes2) Reused parameters in mul"
             "tiple reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the"
             " same part of your model, it would result in the same set of parameters been used by different reent"
             "rant backward passes multiple times, and hence marking a variable ready multiple times. DDP does not"
             " support such use cases yet.",
     "source": "OFA-Sys/Chinese-CLIP#13", "match": "pattern"},
    {"text": "RuntimeError: Expected to mark a variable ready only once. This error is caused by use of a module "
             "parameter outside the `forward` function.", "source": "pytorch/pytorch#24005", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import contextlib
import copy
import math
import os
import sys
import tempfile
import warnings

import errkb_record as record

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint


class Encoder(nn.Module):
    """Embedding, two checkpointed layers, a head; `repeat` runs the layer stack that many times (weight sharing)."""

    def __init__(self, use_reentrant, repeat=1, forward_layer=None):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(2))
        self.head = nn.Linear(16, 3)
        self.use_reentrant = use_reentrant
        self.repeat = repeat
        self.forward_layer = forward_layer

    def forward(self, x):
        h = self.embed(x)
        for _ in range(self.repeat):
            for layer in self.layers:
                if self.forward_layer is not None:
                    h = self.forward_layer(layer, h)
                else:
                    h = checkpoint(layer, h, use_reentrant=self.use_reentrant)
        return self.head(h)


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


def _batch(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(16, 8, generator=g), torch.randint(3, (16,), generator=g)


def _train(ddp_model, steps=3):
    """Train the DDP model and an undistributed copy side by side; with one rank their gradients must agree."""
    reference = copy.deepcopy(ddp_model.module)
    params = list(ddp_model.module.parameters())
    before = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params, lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    for step in range(steps):
        x, y = _batch(step)
        loss = nn.functional.cross_entropy(ddp_model(x), y)
        opt.zero_grad()
        loss.backward()
        ref_loss = nn.functional.cross_entropy(reference(x), y)
        ref_opt.zero_grad()
        ref_loss.backward()
        assert math.isfinite(loss.item()) and torch.isclose(loss, ref_loss), (loss, ref_loss)
        for (name, p), q in zip(ddp_model.module.named_parameters(), reference.parameters()):
            assert p.grad is not None and torch.allclose(p.grad, q.grad, atol=1e-6), f"gradient of {name} differs"
        opt.step()
        ref_opt.step()
    assert all(not torch.equal(b, p) for b, p in zip(before, params)), "a parameter did not train"


def trigger():
    with _group():
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # older releases warn that use_reentrant should be passed explicitly
            _train(DDP(Encoder(use_reentrant=True), find_unused_parameters=True))  # the first backward raises


def non_reentrant():
    """Solution 1: use_reentrant=False; find_unused_parameters=True can stay (and the layers may even repeat)."""
    with _group():
        torch.manual_seed(0)
        _train(DDP(Encoder(use_reentrant=False), find_unused_parameters=True))
        torch.manual_seed(0)
        _train(DDP(Encoder(use_reentrant=False, repeat=2), find_unused_parameters=True))


def static_graph():
    """Solution 2: keep reentrant checkpointing, tell DDP the graph is static (static_graph=True)."""
    with _group(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        _train(DDP(Encoder(use_reentrant=True), static_graph=True))
        torch.manual_seed(0)
        _train(DDP(Encoder(use_reentrant=True, repeat=2), static_graph=True))  # also with a layer used twice


def no_find_unused():
    """Solution 3: every parameter is used in every step, so find_unused_parameters is not needed; but not for a
    layer checkpointed twice in one forward, where the reducer raises the same error."""
    with _group(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        _train(DDP(Encoder(use_reentrant=True)))
        torch.manual_seed(0)
        try:
            _train(DDP(Encoder(use_reentrant=True, repeat=2)))
        except RuntimeError as exc:
            assert "mark a variable ready only once" in str(exc), exc
        else:
            raise AssertionError("a reentrant layer used twice trained without static_graph")


def example_fix():
    """The exampleFix's "after" line is the layers' forward; the model trains under DDP with find_unused_parameters."""

    def forward_layer(layer, h):
        return record.run("exampleFix", {"checkpoint": checkpoint, "layer": layer, "h": h}, section="after")["h"]

    with _group():
        torch.manual_seed(0)
        model = Encoder(use_reentrant=None, forward_layer=forward_layer)
        _train(DDP(model, find_unused_parameters=True), steps=2)


def guard():
    """validationCode (run without DDP) flags the reentrant model and passes the non-reentrant one."""
    x, _ = _batch(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        assert not record.check("validationCode", {"model": Encoder(use_reentrant=True), "x": x, "ddp_kwargs": FIND})
    torch.manual_seed(0)
    assert record.check("validationCode", {"model": Encoder(use_reentrant=False), "x": x, "ddp_kwargs": FIND})


FIND = {"find_unused_parameters": True}


def _trains_under_ddp(model, ddp_kwargs):
    """The situation is valid: DDP with these arguments trains it, gradients equal to training without DDP."""
    with _group(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _train(DDP(model, **ddp_kwargs))
    return {"model": model, "x": _batch(0)[0], "ddp_kwargs": ddp_kwargs}


def valid_non_reentrant():
    """Solution 1: use_reentrant=False with find_unused_parameters=True, layers used once or twice."""
    torch.manual_seed(0)
    return [_trains_under_ddp(Encoder(use_reentrant=False), FIND),
            _trains_under_ddp(Encoder(use_reentrant=False, repeat=2), FIND)]


def valid_reentrant_without_find_unused():
    """Solutions 2 and 3: reentrant checkpointing under static_graph=True, or without find_unused_parameters."""
    torch.manual_seed(0)
    return [_trains_under_ddp(Encoder(use_reentrant=True), {"static_graph": True, **FIND}),
            _trains_under_ddp(Encoder(use_reentrant=True), {})]


class DictOutput(nn.Module):
    """A model returning a dict (as Hugging Face models do), non-reentrant checkpointing inside."""

    def __init__(self):
        super().__init__()
        self.encoder = Encoder(use_reentrant=False)

    def forward(self, x):
        return {"logits": self.encoder(x), "hidden": self.encoder.embed(x)}


def valid_dict_output():
    model = DictOutput()
    out = model(_batch(0)[0])
    sum(t.sum() for t in out.values()).backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=True)
    return {"model": model, "x": _batch(0)[0], "ddp_kwargs": FIND}
