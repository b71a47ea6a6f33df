"""A training loop calls a classifier as model(inputs, labels), as if its forward took the targets too,
but this model's forward(self, x) takes only the inputs. nn.Module.__call__ hands the
arguments to forward (torch/nn/modules/module.py, _call_impl: return forward_call(*args, **kwargs)), Python
cannot bind them, and the TypeError "Net.forward() takes 2 positional arguments but 3 were given" is raised at that
line inside torch, before any line of forward runs. The demonstrations: the model called with the arguments its
forward declares and the labels given to the loss (the model trains), and forward extended with an optional
argument where the module should really use it (both calls then work, and the extra input changes the output).
The record's exampleFix and validationCode run from its own text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "call_with_declared_arguments", 2: "extend_forward"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "optional-argument-left-out": "valid_optional_argument",
    "keyword-arguments": "valid_keyword_arguments",
    "var-positional": "valid_var_positional",
    "sequential": "valid_sequential",
}
CODE_NAMES = {"exampleFix": ["model", "criterion", "inputs", "labels"], "validationCode": ["model", "args", "kwargs"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "Net.forward() takes 2 positional arguments but 3 were given", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "TypeError: forward() takes 2 positional arguments but 13 were given", "source": "kuangliu/pytorch-cifar#111",
     "match": "matcher"},
    {"text": "TypeError: forward() missing 1 required positional argument: 'x'",
     "source": "penpaperkeycode/Binarized_Neural_Network_Pytorch#1", "match": "matcher"},
    {"text": "TypeError: forward() got an unexpected keyword argument 'past'", "source": "huggingface/transformers#8862",
     "match": "none", "why": "a keyword renamed by a library release: its own record, not this one"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import inspect

import errkb_record as record

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def _batch():
    g = torch.Generator().manual_seed(0)
    return torch.randn(16, 4, generator=g), torch.randint(0, 3, (16,), generator=g)


def _train(step):
    """Runs `step(model, criterion, inputs, labels) -> loss` a few times; the loss must go down."""
    torch.manual_seed(0)
    model, criterion = Net(), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    inputs, labels = _batch()
    losses = []
    for _ in range(10):
        loss = step(model, criterion, inputs, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses
    return model


def trigger():
    inputs, labels = _batch()
    model = Net()
    model(inputs, labels)  # TypeError: Net.forward() takes 2 positional arguments but 3 were given


def call_with_declared_arguments():
    """Solution 1: call the model with what forward declares (inspect.signature shows it); labels go to the loss."""
    assert list(inspect.signature(Net().forward).parameters) == ["x"]
    _train(lambda model, criterion, inputs, labels: criterion(model(inputs), labels))


class MaskedNet(Net):
    def forward(self, x, mask=None):
        out = self.fc(x)
        return out if mask is None else out.masked_fill(~mask, 0.0)


def extend_forward():
    """Solution 2: the module should use the extra input: declare it in forward, optional, so old calls still work."""
    inputs, _ = _batch()
    model = MaskedNet()
    mask = torch.ones(16, 3, dtype=torch.bool)
    mask[:, 0] = False
    plain, masked = model(inputs), model(inputs, mask)
    assert torch.equal(plain[:, 1:], masked[:, 1:]) and bool((masked[:, 0] == 0).all())
    assert not torch.equal(plain, masked)


def example_fix():
    """The record's exampleFix, its "after" part, as the training step."""

    def step(model, criterion, inputs, labels):
        names = record.run("exampleFix", {"model": model, "criterion": criterion, "inputs": inputs, "labels": labels},
                           section="after")
        return names["loss"]

    _train(step)


def guard():
    """validationCode flags (inputs, labels) for forward(x) and passes (inputs,)."""
    inputs, labels = _batch()
    model = Net()
    assert not record.check("validationCode", {"model": model, "args": (inputs, labels), "kwargs": {}})
    assert record.check("validationCode", {"model": model, "args": (inputs,), "kwargs": {}})


def _situation(model, args, kwargs):
    model(*args, **kwargs)  # proves the call valid
    return {"model": model, "args": args, "kwargs": kwargs}


def valid_optional_argument():
    inputs, _ = _batch()
    return [_situation(MaskedNet(), (inputs,), {}), _situation(MaskedNet(), (inputs, None), {})]


def valid_keyword_arguments():
    inputs, _ = _batch()
    return [_situation(Net(), (), {"x": inputs}), _situation(MaskedNet(), (inputs,), {"mask": None})]


class Concat(nn.Module):
    def forward(self, *tensors):
        return torch.cat(tensors, dim=1)


def valid_var_positional():
    inputs, _ = _batch()
    return [_situation(Concat(), (inputs,), {}), _situation(Concat(), (inputs, inputs, inputs), {})]


def valid_sequential():
    inputs, _ = _batch()
    return _situation(nn.Sequential(Net(), nn.ReLU()), (inputs,), {})
