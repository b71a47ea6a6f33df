"""A network keeps its layers in a plain Python list; model.parameters() yields nothing, and building the optimizer
raises ValueError from Optimizer.__init__ (torch/optim/optimizer.py). Solution 1 registers the layers with
nn.ModuleList (and a plain-tensor weight, which raises the same way, with nn.Parameter); solution 2 shows a freezing
filter that leaves nothing raises, and one that keeps the head trainable works; solution 3 shows a parameters()
generator used up before the optimizer raises, and a list works. Every fix takes an SGD step and checks the weights
change. The record's exampleFix and validationCode run from its text; the guard's valid situations are an ordinary
model, a partly frozen model, a bare nn.Parameter attribute and a ModuleDict model.

Drafted by `errkb draft` from a snippet on torch 2.13.0+cpu, Python 3.11.7 (raise site, excerpt, provenance,
message and pattern unchanged from the draft). NEEDS was widened to torch>=1.13 after the draft, and the
results name each release run (2.5.1, 2.13.0, 2.15.0).
"""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "registered_layers", 2: "something_trainable", 3: "fresh_parameters"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn"], "validationCode": ["model"]}
VALID = {"ordinary": "valid_ordinary", "partly-frozen": "valid_partly_frozen", "bare-parameter": "valid_bare_parameter",
         "module-dict": "valid_module_dict"}
WORDINGS = [
    {"text": "optimizer got an empty parameter list", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "optimizer got an empty parameter list", "source": "kyegomez/LiqudNet#6", "match": "pattern"},
    {"text": "optimizer got an empty parameter list", "source": "danieltan07/learning-to-reweight-examples#6", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0+cpu"}

import errkb_record as record

import torch
from torch import nn

MESSAGE = "optimizer got an empty parameter list"


def _raises(call):
    try:
        call()
    except ValueError as exc:
        assert MESSAGE in str(exc), exc
    else:
        raise AssertionError("the broken variant did not raise")


def _trains(model, params):
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(params, lr=0.1)
    before = [p.detach().clone() for p in model.parameters() if p.requires_grad]
    loss = model(torch.randn(16, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    after = [p for p in model.parameters() if p.requires_grad]
    assert after and all(not torch.equal(a, b) for a, b in zip(before, after)), "a trainable weight did not change"


class ListNet(nn.Module):
    def __init__(self, registered):
        super().__init__()
        layers = [nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)]
        self.layers = nn.ModuleList(layers) if registered else layers

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def trigger():
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)]

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def registered_layers():
    """Solution 1: nn.ModuleList registers the layers; a plain tensor weight raises, an nn.Parameter trains."""
    assert ListNet(registered=False).state_dict() == {}  # a plain list is not saved either
    model = ListNet(registered=True)
    assert sum(p.numel() for p in model.parameters()) == 4 * 8 + 8 + 8 * 2 + 2
    assert set(model.state_dict()) == {"layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"}
    _trains(model, model.parameters())

    class Scale(nn.Module):
        def __init__(self, as_parameter):
            super().__init__()
            weight = torch.ones(4)
            self.weight = nn.Parameter(weight) if as_parameter else weight.requires_grad_()

        def forward(self, x):
            return x * self.weight

    _raises(lambda: torch.optim.SGD(Scale(as_parameter=False).parameters(), lr=0.1))
    scale = Scale(as_parameter=True)
    _trains(scale, scale.parameters())


def something_trainable():
    """Solution 2: freezing everything then filtering raises; keeping the head trainable works."""
    model = ListNet(registered=True)
    for p in model.parameters():
        p.requires_grad = False
    _raises(lambda: torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1))
    for p in model.layers[2].parameters():
        p.requires_grad = True  # the head
    params = [p for p in model.parameters() if p.requires_grad]
    assert params
    _trains(model, params)


def fresh_parameters():
    """Solution 3: a generator counted first is empty for the optimizer; a list (or a new call) works."""
    model = ListNet(registered=True)
    params = model.parameters()
    assert sum(p.numel() for p in params) > 0  # uses the generator up
    _raises(lambda: torch.optim.SGD(params, lr=0.1))
    params = list(model.parameters())
    assert sum(p.numel() for p in params) > 0
    _trains(model, params)


def example_fix():
    names = record.run("exampleFix", {"nn": nn}, section="after")
    model = names["Net"]()
    _trains(model, model.parameters())


def guard():
    assert not record.check("validationCode", {"model": ListNet(registered=False)})
    frozen = ListNet(registered=True).requires_grad_(False)
    assert not record.check("validationCode", {"model": frozen})
    assert record.check("validationCode", {"model": ListNet(registered=True)})


def valid_ordinary():
    return {"model": nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))}


def valid_partly_frozen():
    model = ListNet(registered=True)
    for p in model.layers[0].parameters():
        p.requires_grad = False
    return {"model": model}


def valid_bare_parameter():
    model = nn.Module()
    model.weight = nn.Parameter(torch.ones(3))
    return {"model": model}


def valid_module_dict():
    model = nn.Module()
    model.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})
    return {"model": model}
