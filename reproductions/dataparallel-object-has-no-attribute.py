"""A model with its own method (predict) and attribute (num_classes) is wrapped in nn.DataParallel, and
the code keeps calling model.predict(...) as before. DataParallel is a new Module that holds the real model
as its child "module"; it does not forward unknown attribute lookups to it, so Python falls back to
nn.Module.__getattr__, which only knows parameters, buffers and submodules and raises
"'DataParallel' object has no attribute 'predict'". The wrapping happens the same way without GPUs
(DataParallel then just calls the inner model), so this CPU run reaches the same raise site as a
multi-GPU run. The demonstrations reach the attribute through model.module, and through a reference to
the unwrapped network kept before wrapping; both check the results equal the inner model's and that the
wrapper's own forward still works. The record's exampleFix and typeGuard run from its own text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "through_module", 2: "keep_reference"}
CODE = {"exampleFix": "example_fix", "typeGuard": "type_guard"}
CODE_NAMES = {"exampleFix": ["nn", "Classifier", "x"], "typeGuard": ["model"]}
GUARD_CALL = {"typeGuard": "has_own_attributes(model)"}
VALID = {"unwrapped-models": "valid_unwrapped"}
WORDINGS = [
    {"text": "'DataParallel' object has no attribute 'predict'", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "'DataParallel' object has no attribute 'predict'", "source": "torch==1.13.1", "match": "pattern"},
    {"text": "AttributeError: 'DataParallel' object has no attribute 'train_model'",
     "source": "jytime/Mask_RCNN_Pytorch#2", "match": "pattern"},
    {"text": "torch.nn.modules.module.ModuleAttributeError: 'DataParallel' object has no attribute 'sim'",
     "source": "voidism/DiffCSE#5", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import errkb_record as record

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.num_classes = num_classes
        self.fc = nn.Linear(4, num_classes)

    def forward(self, x):
        return self.fc(x)

    def predict(self, x):
        with torch.no_grad():
            return self.forward(x).argmax(dim=-1)


def _wrapped():
    torch.manual_seed(0)
    return nn.DataParallel(Classifier())


def trigger():
    model = _wrapped()
    model.predict(torch.randn(2, 4))  # AttributeError from nn.Module.__getattr__


def through_module():
    """Solution 1: custom methods and attributes through the wrapper's .module."""
    model = _wrapped()
    x = torch.randn(6, 4)
    inner = model.module
    assert isinstance(inner, Classifier)
    preds = model.module.predict(x)
    assert preds.shape == (6,)
    assert torch.equal(preds, inner(x).argmax(dim=-1))
    assert model.module.num_classes == 3
    # Submodules of the inner model are also only reachable through .module; the wrapper's forward is unchanged.
    assert model.module.fc is inner.fc
    assert not hasattr(model, "fc")
    with torch.no_grad():
        assert torch.equal(model(x), inner(x))


def keep_reference():
    """Solution 2: keep the unwrapped network and use it for everything except the forward pass."""
    torch.manual_seed(0)
    net = Classifier()
    model = nn.DataParallel(net)
    x = torch.randn(6, 4)
    preds = net.predict(x)
    assert net.num_classes == 3 and preds.shape == (6,)
    with torch.no_grad():
        assert torch.equal(preds, model(x).argmax(dim=-1))  # the same weights as the wrapper's forward
    assert model.module is net


def example_fix():
    """The exampleFix's "after" part, with the reproduction's Classifier and a batch."""
    x = torch.randn(5, 4)
    names = record.run("exampleFix", {"nn": nn, "Classifier": Classifier, "x": x}, section="after")
    assert names["preds"].shape == (5,) and names["logits"].shape == (5, 3)
    assert torch.equal(names["preds"], names["logits"].argmax(dim=-1))


def type_guard():
    """typeGuard's predicate is false for the wrapper (the trigger's model) and true for the inner model."""
    model = _wrapped()
    assert not record.check("typeGuard", {"model": model}, expr="has_own_attributes(model)")
    assert record.check("typeGuard", {"model": model.module}, expr="has_own_attributes(model)")


def valid_unwrapped():
    """Models whose own attributes are reachable: the plain network, a Sequential, and the model inside the wrapper;
    each really answers .predict or indexing."""
    net = Classifier()
    assert net.predict(torch.randn(2, 4)).shape == (2,)
    inner = _wrapped().module
    assert inner.predict(torch.randn(2, 4)).shape == (2,)
    seq = nn.Sequential(nn.Linear(4, 3))
    assert seq[0].out_features == 3
    return [{"model": net}, {"model": inner}, {"model": seq}]
