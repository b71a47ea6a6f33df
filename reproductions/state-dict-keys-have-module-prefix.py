"""A model is trained inside nn.DataParallel and its state_dict is saved from the wrapper, so every key
carries the wrapper's attribute name as a prefix ("module.fc.weight" instead of "fc.weight"). Loading that
file into the bare model with the default strict=True fails in Module.load_state_dict with
"Missing key(s) ... Unexpected key(s) ..." where every unexpected key starts with "module.". The prefix
comes only from the module tree, not from the hardware: without GPUs DataParallel still wraps the model
(it just calls it directly), so this CPU run produces exactly the keys a multi-GPU run writes. fix()
first shows why strict=False is not a fix (it reports the keys but loads nothing), then strips the prefix
with torch.nn.modules.utils.consume_prefix_in_state_dict_if_present and, separately, saves
model.module.state_dict(); in both cases the loaded bare model must give the same outputs as the trained one.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}

import io

import torch
import torch.nn as nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.fc(x))))


def _train_wrapped():
    """Train a few steps under DataParallel; return the wrapper and the checkpoint it saved (BytesIO)."""
    torch.manual_seed(0)
    model = nn.DataParallel(Net())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)  # keys: "module.fc.weight", ...
    buf.seek(0)
    return model, buf


def trigger():
    _, buf = _train_wrapped()
    state_dict = torch.load(buf)
    Net().load_state_dict(state_dict)  # raises: keys are "module.*", the bare model expects "*"


def fix():
    wrapped, buf = _train_wrapped()
    state_dict = torch.load(buf)
    x = torch.randn(5, 4)
    with torch.no_grad():
        expected = wrapped(x)

    # Not a fix: strict=False only turns the error into a return value. Nothing matches, nothing is
    # copied, and the model keeps its random initial weights.
    torch.manual_seed(1)
    fresh = Net()
    before = {k: v.clone() for k, v in fresh.state_dict().items()}
    result = fresh.load_state_dict(state_dict, strict=False)
    assert result.unexpected_keys and all(k.startswith("module.") for k in result.unexpected_keys)
    assert set(result.missing_keys) >= {"fc.weight", "fc.bias", "head.weight"}
    assert all(torch.equal(before[k], v) for k, v in fresh.state_dict().items()), "strict=False loaded something?"
    fresh.eval()
    with torch.no_grad():
        assert not torch.allclose(fresh(x), expected), "strict=False model should NOT match the trained one"

    # Fix 1: strip the prefix from the saved dict (in place), then load strictly.
    consume_prefix_in_state_dict_if_present(state_dict, "module.")
    model = Net()
    result = model.load_state_dict(state_dict)
    assert not result.missing_keys and not result.unexpected_keys
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(x), expected)

    # Fix 2: save the inner model's state_dict in the first place.
    buf2 = io.BytesIO()
    torch.save(wrapped.module.state_dict(), buf2)
    buf2.seek(0)
    model2 = Net()
    model2.load_state_dict(torch.load(buf2))
    model2.eval()
    with torch.no_grad():
        assert torch.equal(model2(x), expected)
