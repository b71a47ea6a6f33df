"""A model with its own method (predict) and attribute (num_classes) is wrapped in nn.DataParallel, and
the code keeps calling model.predict(...) as before. DataParallel is a new Module that holds the real model
as its child "module"; it does not forward unknown attribute lookups to it, so Python falls back to
nn.Module.__getattr__, which only knows parameters, buffers and submodules and raises
"'DataParallel' object has no attribute 'predict'". The wrapping happens the same way without GPUs
(DataParallel then just calls the inner model), so this CPU run reaches the same raise site as a
multi-GPU run. fix() reaches the attribute through model.module and checks the results equal the
unwrapped model's, and that the wrapper's own forward still works.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}

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


def fix():
    model = _wrapped()
    x = torch.randn(6, 4)
    inner = model.module
    assert isinstance(inner, Classifier)
    preds = model.module.predict(x)
    assert preds.shape == (6,)
    assert torch.equal(preds, inner(x).argmax(dim=-1))
    assert model.module.num_classes == 3
    # Submodules of the inner model are also only reachable through .module (model.fc would fail the
    # same way); calling the wrapper itself is unchanged.
    assert model.module.fc is inner.fc
    assert not hasattr(model, "fc")
    with torch.no_grad():
        assert torch.equal(model(x), inner(x))
