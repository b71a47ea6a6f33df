"""A classifier is trained with a two-layer head (mlp_head=True) and its state_dict is saved; the inference
script builds the same class with its default configuration, a single linear head, and calls load_state_dict
with the default strict=True. Module.load_state_dict collects the names the model expects and the checkpoint
lacks (head.weight, head.bias) and the names nobody claims (head.fc1.weight, ...), and raises "Error(s) in
loading state_dict for Net: Missing key(s) ... Unexpected key(s) ..." at the end of the load
(torch/nn/modules/module.py). No DataParallel is involved: this is the ordinary key
mismatch, not the `module.` prefix (record state-dict-keys-have-module-prefix). The demonstrations: the model
built with the checkpoint's own configuration, the model entry taken out of a training checkpoint that also
holds the optimizer and the epoch, renamed layers mapped to their new names, and a deliberate partial load with
strict=False (a new head for fine-tuning) whose returned key lists are checked. Every loaded model must give the
trained model's outputs on the layers it shares. The exampleFix and validationCode run from the record's own
text. CPU only; torch 2.1 or later (a valid input uses torch.nn.utils.parametrizations.weight_norm).
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "same_configuration", 2: "model_entry_of_training_checkpoint", 3: "rename_keys", 4: "checked_partial_load"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "same-architecture": "valid_same_architecture",
    "old-batchnorm-checkpoint": "valid_old_batchnorm_checkpoint",
    "non-persistent-buffer": "valid_non_persistent_buffer",
    "tied-weights": "valid_tied_weights",
    "legacy-weight-norm-keys": "valid_legacy_weight_norm_keys",
}
CODE_NAMES = {"exampleFix": ["model"], "validationCode": ["model", "state_dict"]}
KEEP = ["model"]
WORDINGS = [
    {"text": 'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "head.weight", "head.bias". \n\t'
             'Unexpected key(s) in state_dict: "head.fc1.weight", "head.fc1.bias", "head.fc2.weight", "head.fc2.bias".',
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": 'Error(s) in loading state_dict for ActorCritic:\n\tUnexpected key(s) in state_dict: "affine.weight", '
             '"affine.bias".', "source": "nikhilbarhate99/PPO-PyTorch#32", "match": "matcher"},
    {"text": 'Error(s) in loading state_dict for BaselineFinetune:\n\tUnexpected key(s) in state_dict: '
             '"classifier.weight", "classifier.bias".', "source": "wyharveychen/CloserLookFewShot#36", "match": "matcher"},
    {"text": 'unexpected key "0.weight" in state_dict', "source": "amdegroot/ssd.pytorch#28", "match": "pattern"},
    {"text": "size mismatch for", "source": "potterhsu/easy-faster-rcnn.pytorch#29", "match": "none",
     "why": "same name, other shape: another check of load_state_dict, record state-dict-size-mismatch"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import io
import warnings
from collections import OrderedDict

import errkb_record as record

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, mlp_head=False):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU())
        if mlp_head:
            self.head = nn.Sequential(OrderedDict(fc1=nn.Linear(12, 12), act=nn.ReLU(), fc2=nn.Linear(12, 3)))
        else:
            self.head = nn.Linear(12, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def _trained():
    """A few training steps with the two-layer head; returns the trained model (eval mode) and its optimizer."""
    torch.manual_seed(0)
    model = Net(mlp_head=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval(), opt


def _saved(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf)


def _same_outputs(model, trained, part=lambda net: net):
    x = torch.randn(5, 6)
    model.eval()
    with torch.no_grad():
        assert torch.equal(part(model)(x), part(trained)(x)), "the loaded model does not give the trained outputs"


def trigger():
    trained, _ = _trained()
    state_dict = _saved(trained.state_dict())
    Net().load_state_dict(state_dict)  # Missing key(s): "head.weight", ... Unexpected key(s): "head.fc1.weight", ...


def same_configuration():
    """Solution 1: build the model with the configuration the checkpoint was saved with."""
    trained, _ = _trained()
    model = Net(mlp_head=True)
    result = model.load_state_dict(_saved(trained.state_dict()))
    assert not result.missing_keys and not result.unexpected_keys
    _same_outputs(model, trained)


def model_entry_of_training_checkpoint():
    """Solution 2: a training checkpoint is a dict of several things; load its model entry, not the whole dict."""
    trained, opt = _trained()
    checkpoint = _saved({"epoch": 3, "model": trained.state_dict(), "optimizer": opt.state_dict()})
    model = Net(mlp_head=True)
    try:
        model.load_state_dict(checkpoint)
        raise AssertionError("loading the whole training checkpoint should fail")
    except RuntimeError as exc:  # the whole dict: every weight missing, "epoch", "model", "optimizer" unexpected
        assert 'Unexpected key(s) in state_dict: "epoch", "model", "optimizer"' in str(exc), str(exc)
    model.load_state_dict(checkpoint["model"])
    _same_outputs(model, trained)


def rename_keys():
    """Solution 3: the code renamed a layer since the checkpoint was written (head -> classifier): map old names."""
    trained, _ = _trained()
    old = _saved(trained.state_dict())

    class Renamed(Net):
        def __init__(self):
            super().__init__(mlp_head=True)
            self.classifier = self.head
            del self.head

        def forward(self, x):
            return self.classifier(self.backbone(x))

    model = Renamed()
    try:
        model.load_state_dict(old)
        raise AssertionError("the renamed layer should not load under its old name")
    except RuntimeError as exc:
        assert 'Missing key(s) in state_dict: "classifier.fc1.weight"' in str(exc), str(exc)
    renamed = {("classifier." + k[len("head."):] if k.startswith("head.") else k): v for k, v in old.items()}
    result = model.load_state_dict(renamed)
    assert not result.missing_keys and not result.unexpected_keys
    _same_outputs(model, trained)


def checked_partial_load():
    """Solution 4: a deliberate partial load (the trained backbone under a new linear head for fine-tuning):
    strict=False, and check that what it skipped is exactly the head."""
    trained, _ = _trained()
    model = Net()
    new_head = model.head.weight.clone()
    result = model.load_state_dict(_saved(trained.state_dict()), strict=False)
    assert result.missing_keys == ["head.weight", "head.bias"], result.missing_keys
    assert result.unexpected_keys == ["head.fc1.weight", "head.fc1.bias", "head.fc2.weight", "head.fc2.bias"], result
    _same_outputs(model, trained, part=lambda net: net.backbone)
    assert torch.equal(model.head.weight, new_head)  # the new head keeps its fresh weights


def example_fix():
    """The record's exampleFix, its "after" part: the two-layer-head checkpoint into the model with a new head;
    the backbone must arrive, and the snippet's check must refuse a checkpoint that does not fit beyond the head."""
    trained, _ = _trained()
    torch.save(trained.state_dict(), "ckpt.pt")
    model = Net()
    record.run("exampleFix", {"model": model}, section="after")
    _same_outputs(model, trained, part=lambda net: net.backbone)
    torch.save({"model": trained.state_dict()}, "ckpt.pt")  # nothing matches: the check must not let it pass
    try:
        record.run("exampleFix", {"model": Net()}, section="after")
        raise AssertionError("the exampleFix's check let a checkpoint that loads nothing pass")
    except AssertionError as exc:
        assert "backbone" in str(exc), str(exc)


def guard():
    """validationCode flags the two-layer-head checkpoint for the linear-head model and passes the matching model."""
    trained, _ = _trained()
    state_dict = _saved(trained.state_dict())
    assert not record.check("validationCode", {"model": Net(), "state_dict": state_dict})
    assert record.check("validationCode", {"model": Net(mlp_head=True), "state_dict": state_dict})


def _loads(fresh_model, state_dict):
    """Proves a situation valid: a strict load into a fresh model of the same build succeeds."""
    result = fresh_model.load_state_dict(state_dict)
    assert not result.missing_keys and not result.unexpected_keys


def valid_same_architecture():
    trained, _ = _trained()
    state_dict = _saved(trained.state_dict())
    _loads(Net(mlp_head=True), state_dict)
    return {"model": Net(mlp_head=True), "state_dict": state_dict}


def valid_old_batchnorm_checkpoint():
    """A checkpoint without BatchNorm's num_batches_tracked, as a plain dict (no version metadata): a strict load
    accepts it, since BatchNorm fills the counter in when the checkpoint carries no version."""
    trained, _ = _trained()
    state_dict = {k: v for k, v in trained.state_dict().items() if not k.endswith("num_batches_tracked")}
    _loads(Net(mlp_head=True), state_dict)
    return {"model": Net(mlp_head=True), "state_dict": state_dict}


class WithMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("mask", torch.tril(torch.ones(4, 4)), persistent=False)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10, bias=False)
        self.out.weight = self.embed.weight


def valid_non_persistent_buffer():
    """A non-persistent buffer is neither saved nor expected."""
    state_dict = _saved(WithMask().state_dict())
    _loads(WithMask(), state_dict)
    return {"model": WithMask(), "state_dict": state_dict}


def valid_tied_weights():
    """Tied weights appear under both names in the state_dict and load under both."""
    state_dict = _saved(Tied().state_dict())
    assert {"embed.weight", "out.weight"} <= set(state_dict)
    _loads(Tied(), state_dict)
    return {"model": Tied(), "state_dict": state_dict}


def valid_legacy_weight_norm_keys():
    """An old torch.nn.utils.weight_norm checkpoint (weight_g, weight_v) into the parametrized weight_norm
    (parametrizations.weight.original0/1): the names differ, and a load-time hook translates them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the old weight_norm is deprecated
        old = torch.nn.utils.weight_norm(nn.Linear(4, 4))
    state_dict = _saved(old.state_dict())
    assert {"weight_g", "weight_v"} <= set(state_dict)

    def model():
        return torch.nn.utils.parametrizations.weight_norm(nn.Linear(4, 4))

    _loads(model(), state_dict)
    return {"model": model(), "state_dict": state_dict}
