"""A classifier defines its computation in a method misspelt foward; the first call of the model reaches
nn.Module's placeholder forward (_forward_unimplemented, torch/nn/modules/module.py), which raises
NotImplementedError naming the class. Solution 1 renames the method (and shows the other slip, forward nested
inside __init__, raises the same error); solution 2 shows that calling an nn.ModuleList raises it as Module
[ModuleList] and that looping over the list, or an nn.Sequential, runs. The record's exampleFix and validationCode
run from its text; the guard's valid situations are an ordinary module, an nn.Sequential, a subclass inheriting its
parent's forward, and a module whose forward is set on the instance (as wrapping libraries do).

Drafted by `errkb draft` from a snippet on torch 2.13.0+cpu, Python 3.11.7 (raise site, excerpt, provenance,
message and pattern unchanged from the draft). NEEDS was widened to torch>=1.13 after the draft, and the
results name each release run (2.5.1, 2.13.0, 2.15.0).
"""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "named_forward", 2: "iterate_module_list"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn"], "validationCode": ["model", "nn"]}
VALID = {"ordinary": "valid_ordinary", "sequential": "valid_sequential", "inherited-forward": "valid_inherited",
         "instance-forward": "valid_instance_forward"}
WORDINGS = [
    {"text": 'Module [Classifier] is missing the required "forward" function', "source": "torch==2.13.0", "match": "pattern"},
    {"text": 'Module [ModuleList] is missing the required "forward" function', "source": "yuval-alaluf/Attend-and-Excite#5",
     "match": "pattern"},
    {"text": "forward() takes 1 positional argument but 2 were given", "source": "pytorch/pytorch#55459", "match": "none",
     "why": "ModuleList's own forward before 2021; another error class and words"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0+cpu"}

import errkb_record as record

import torch
from torch import nn

MESSAGE = 'is missing the required "forward" function'


def _raises(call, name):
    try:
        call()
    except NotImplementedError as exc:
        assert f"Module [{name}] {MESSAGE}" in str(exc), exc
    else:
        raise AssertionError("the broken variant did not raise")


class _Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def trigger():
    import torch
    from torch import nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def foward(self, x):
            return self.fc(x)

    model = Classifier()
    model(torch.randn(3, 4))


def named_forward():
    """Solution 1: forward spelt and placed right runs; nested inside __init__ it raises the same error."""
    class Nested(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

            def forward(x):  # indented one level too deep: a local function of __init__
                return self.fc(x)

    _raises(lambda: Nested()(torch.randn(3, 4)), "Nested")
    torch.manual_seed(0)
    model = _Classifier()
    out = model(torch.randn(3, 4))
    assert out.shape == (3, 2)
    out.sum().backward()
    assert model.fc.weight.grad is not None


def iterate_module_list():
    """Solution 2: calling a ModuleList raises Module [ModuleList]; looping over it, or nn.Sequential, runs."""
    layers = nn.ModuleList([nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)])
    x = torch.randn(3, 4)
    _raises(lambda: layers(x), "ModuleList")
    _raises(lambda: nn.ModuleDict({"a": nn.Linear(4, 2)})(x), "ModuleDict")
    out = x
    for layer in layers:
        out = layer(out)
    assert out.shape == (3, 2)
    assert torch.equal(nn.Sequential(*layers)(x), out)


def example_fix():
    names = record.run("exampleFix", {"nn": nn}, section="after")
    model = names["Classifier"]()
    assert model(torch.randn(3, 4)).shape == (3, 2)


def guard():
    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def foward(self, x):
            return self.fc(x)

    assert not record.check("validationCode", {"model": Classifier(), "nn": nn})
    assert not record.check("validationCode", {"model": nn.ModuleList([nn.Linear(4, 2)]), "nn": nn})
    assert record.check("validationCode", {"model": _Classifier(), "nn": nn})


def valid_ordinary():
    return {"model": _Classifier(), "nn": nn}


def valid_sequential():
    return {"model": nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), "nn": nn}


def valid_inherited():
    class Wider(_Classifier):  # forward comes from the parent class
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

    model = Wider()
    assert model(torch.randn(3, 4)).shape == (3, 2)
    return {"model": model, "nn": nn}


def valid_instance_forward():
    model = nn.Module()
    model.fc = nn.Linear(4, 2)
    model.forward = lambda x: model.fc(x)  # set on the instance: Module.__call__ finds it
    assert model(torch.randn(3, 4)).shape == (3, 2)
    return {"model": model, "nn": nn}
