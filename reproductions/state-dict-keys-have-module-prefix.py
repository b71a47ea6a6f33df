"""A model is trained inside nn.DataParallel and its state_dict is saved from the wrapper, so every key
carries the wrapper's attribute name as a prefix ("module.fc.weight" instead of "fc.weight"). Loading that
file into the bare model with the default strict=True fails in Module.load_state_dict with
"Missing key(s) ... Unexpected key(s) ..." where every unexpected key starts with "module.". The prefix
comes only from the module tree, not from the hardware: without GPUs DataParallel still wraps the model
(it just calls it directly), so this CPU run produces exactly the keys a multi-GPU run writes. Each
solution is demonstrated on its own (strip the prefix with consume_prefix_in_state_dict_if_present, strip it by
hand, save model.module.state_dict(), and the mirror case of a plain checkpoint loaded into a wrapper); every
loaded model must give the trained model's outputs. The first demonstration also shows why strict=False, the
prevention tips' warning, is not a fix: it reports the keys but loads nothing. The record's exampleFix,
validationCode, typeGuard and tryCatchPattern run from its own text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "strip_prefix", 2: "manual_strip", 3: "save_inner", 4: "mirror_case"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard", "typeGuard": "type_guard", "tryCatchPattern": "try_catch"}
CODE_NAMES = {"exampleFix": ["torch", "Net", "model"], "validationCode": ["model", "state_dict"],
              "typeGuard": ["model", "state_dict"], "tryCatchPattern": ["model", "state_dict"]}
GUARD_CALL = {"typeGuard": "saves_plain_keys(model)"}
KEEP = ["model"]
VALID = {"matching-keys": "valid_matching_keys", "partial-load": "valid_partial_load",
         "submodule-named-module": "valid_submodule_named_module"}
WORDINGS = [
    {"text": "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"fc.weight\", \"fc.bias\", "
             "\"bn.weight\", \"bn.bias\", \"bn.running_mean\", \"bn.running_var\", \"head.weight\", \"head.bias\". \n\t"
             "Unexpected key(s) in state_dict: \"module.fc.weight\", \"module.fc.bias\", \"module.bn.weight\", "
             "\"module.bn.bias\", \"module.bn.running_mean\", \"module.bn.running_var\", "
             "\"module.bn.num_batches_tracked\", \"module.head.weight\", \"module.head.bias\". ",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"fc.weight\", \"fc.bias\", "
             "\"bn.weight\", \"bn.bias\", \"bn.running_mean\", \"bn.running_var\", \"head.weight\", \"head.bias\". \n\t"
             "Unexpected key(s) in state_dict: \"module.fc.weight\", \"module.fc.bias\", \"module.bn.weight\", "
             "\"module.bn.bias\", \"module.bn.running_mean\", \"module.bn.running_var\", "
             "\"module.bn.num_batches_tracked\", \"module.head.weight\", \"module.head.bias\". ",
     "source": "torch==1.13.1", "match": "pattern"},
    # Not in messagePattern: the 2017 KeyError shares no anchor word with the current wording, which the matcher's
    # prefilter needs of every alternative; the matcher still returns this record for it (by class and words).
    {"text": "KeyError: 'unexpected key \"module.cnn.conv0.weight\" in state_dict'", "source": "meijieru/crnn.pytorch#87",
     "match": "matcher"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import io
from pathlib import Path

import errkb_record as record

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


def _expected(wrapped, x):
    with torch.no_grad():
        return wrapped(x)


def _loads_like(model, wrapped):
    x = torch.randn(5, 4)
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(x), _expected(wrapped, x)), "the loaded model does not give the trained outputs"


def strip_prefix():
    """Solution 1: consume_prefix_in_state_dict_if_present, then a strict load."""
    wrapped, buf = _train_wrapped()
    state_dict = torch.load(buf)

    # Not a fix (a prevention tip says so): strict=False matches nothing and keeps the random initial weights.
    torch.manual_seed(1)
    fresh = Net()
    before = {k: v.clone() for k, v in fresh.state_dict().items()}
    result = fresh.load_state_dict(state_dict, strict=False)
    assert result.unexpected_keys and all(k.startswith("module.") for k in result.unexpected_keys)
    assert all(torch.equal(before[k], v) for k, v in fresh.state_dict().items()), "strict=False loaded something?"

    consume_prefix_in_state_dict_if_present(state_dict, "module.")
    model = Net()
    result = model.load_state_dict(state_dict)
    assert not result.missing_keys and not result.unexpected_keys
    _loads_like(model, wrapped)


def manual_strip():
    """Solution 2: the same with a dict comprehension."""
    wrapped, buf = _train_wrapped()
    state_dict = torch.load(buf)
    model = Net()
    model.load_state_dict({k[len("module."):] if k.startswith("module.") else k: v for k, v in state_dict.items()})
    _loads_like(model, wrapped)


def save_inner():
    """Solution 3: save the inner model's state_dict in the first place."""
    wrapped, _ = _train_wrapped()
    buf = io.BytesIO()
    torch.save(wrapped.module.state_dict(), buf)
    buf.seek(0)
    model = Net()
    model.load_state_dict(torch.load(buf))
    _loads_like(model, wrapped)


def mirror_case():
    """Solution 4: a plain checkpoint and a wrapped model: the mirror error, then loading into model.module."""
    trained, _ = _train_wrapped()
    buf = io.BytesIO()
    torch.save(trained.module.state_dict(), buf)  # a plain checkpoint
    buf.seek(0)
    state_dict = torch.load(buf)
    wrapped = nn.DataParallel(Net())
    try:
        wrapped.load_state_dict(state_dict)
        raise AssertionError("loading a plain checkpoint into the wrapper should fail")
    except RuntimeError as exc:
        assert 'Missing key(s) in state_dict: "module.' in str(exc)
    wrapped.module.load_state_dict(state_dict)
    _loads_like(wrapped.module, trained)
    bare = Net()  # or: load before wrapping
    bare.load_state_dict(state_dict)
    _loads_like(nn.DataParallel(bare).module, trained)


def example_fix():
    """The record's exampleFix, both "after" parts, on a checkpoint saved from the wrapper."""
    wrapped, buf = _train_wrapped()
    Path("ckpt.pt").write_bytes(buf.getvalue())
    names = record.run("exampleFix", {"torch": torch, "Net": Net, "model": wrapped}, section="after")
    _loads_like(names["net"], wrapped)
    reloaded = Net()
    reloaded.load_state_dict(torch.load("ckpt.pt"))  # saved by the second part: plain keys
    _loads_like(reloaded, wrapped)


def guard():
    """validationCode flags a prefix-only mismatch (both directions) and passes matching keys."""
    wrapped, buf = _train_wrapped()
    state_dict = torch.load(buf)
    assert not record.check("validationCode", {"model": Net(), "state_dict": state_dict})
    assert not record.check("validationCode", {"model": nn.DataParallel(Net()), "state_dict": wrapped.module.state_dict()})
    assert record.check("validationCode", {"model": Net(), "state_dict": wrapped.module.state_dict()})


def type_guard():
    """typeGuard says a wrapped model saves prefixed keys and its inner model does not."""
    wrapped, _ = _train_wrapped()
    assert not record.check("typeGuard", {"model": wrapped}, expr="saves_plain_keys(model)")
    assert record.check("typeGuard", {"model": wrapped.module}, expr="saves_plain_keys(model)")


def try_catch():
    """tryCatchPattern catches the real error from the bare model's load and loads after stripping."""
    wrapped, buf = _train_wrapped()
    model = Net()
    record.run("tryCatchPattern", {"model": model, "state_dict": torch.load(buf)})
    _loads_like(model, wrapped)


def _loads(model, state_dict, strict=True):
    """The situation is valid: load_state_dict accepts it (strict=False: everything the model shares is copied)."""
    result = model.load_state_dict(state_dict, strict=strict)
    assert strict or not result.missing_keys, result
    return {"model": model, "state_dict": state_dict}


def valid_matching_keys():
    """A checkpoint saved from the inner model (solution 3) loaded into a plain model."""
    wrapped, _ = _train_wrapped()
    return _loads(Net(), wrapped.module.state_dict())


def valid_partial_load():
    """Fine-tuning: a checkpoint with an extra head of its own, loaded with strict=False into a plain model."""
    state_dict = dict(Net().state_dict(), **{"aux.weight": torch.zeros(3, 8)})
    return _loads(Net(), state_dict, strict=False)


class Holder(nn.Module):
    """A network whose own submodule is called `module`: its keys start with 'module.' legitimately."""

    def __init__(self):
        super().__init__()
        self.module = nn.Linear(4, 2)


def valid_submodule_named_module():
    return _loads(Holder(), Holder().state_dict())
