"""A residual block (Linear, then + x) is built inside `with torch.device("meta")` so that a checkpoint could be
loaded into it without allocating weights, and is called on a CPU batch before its weights were materialized. The
Linear layer's addmm mixes the meta weight and bias with the CPU input, and the reference implementation's device
check (check_same_device in torch/_prims_common/__init__.py) raises
"Tensor on device meta is not on the expected device cpu!". The demonstrations: the checkpoint loaded with
assign=True, and to_empty() followed by load_state_dict (each gives the outputs of a normally built block with the
same weights; a plain load_state_dict into the meta parameters is shown to leave them on meta), and a check that
finds the parameters still on meta. The record's exampleFix and validationCode run from its text. CPU only.

Drafted by `errkb draft` from meta.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: Tensor on device meta is not on the expected device cpu!
  raised at torch/_prims_common/__init__.py:931
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author made the pattern accept
meta on either side of the message and any real device on the other.
"""
NEEDS = {'packages': {'torch': '>=2.1'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "materialize_weights", 2: "find_meta_parameters"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["Block", "checkpoint", "x"], "validationCode": ["model"]}
KEEP = ["checkpoint", "x"]
VALID = {"built-on-cpu": "valid_cpu_model", "loaded-with-assign": "valid_assigned", "with-buffers": "valid_buffers"}
WORDINGS = [
    {'text': "Tensor on device meta is not on the expected device cpu!", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "Tensor on device meta is not on the expected device cpu!", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "Tensor on device cpu is not on the expected device meta!", 'source': 'lm-sys/FastChat#580',
     'match': 'matcher'},
    {'text': "Tensor on device meta is not on the expected device cuda:0!", 'source': 'zai-org/ChatGLM2-6B#254',
     'match': 'pattern'},
    {'text': "Tensor on device cuda:0 is not on the expected device meta!", 'source': 'meta-pytorch/opacus#737',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import warnings

import errkb_record as record

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x) + x  # residual connection


def _checkpoint_and_reference():
    torch.manual_seed(0)
    reference = Block()
    return reference.state_dict(), reference


def trigger():
    # the model is built on the meta device (no memory allocated) so that a checkpoint can be loaded into it later,
    # but it is called before its weights were ever materialized
    with torch.device("meta"):
        model = Block()
    out = model(torch.randn(2, 4))


def materialize_weights():
    """Solution 1: load_state_dict(assign=True), or to_empty() then load_state_dict: outputs equal the reference;
    a plain load_state_dict into meta parameters leaves them on meta."""
    checkpoint, reference = _checkpoint_and_reference()
    x = torch.randn(3, 4)
    with torch.device("meta"):
        plain = Block()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch says the copy into a meta parameter is a no-op
        plain.load_state_dict(checkpoint)
    assert plain.proj.weight.is_meta
    with torch.device("meta"):
        assigned = Block()
    assigned.load_state_dict(checkpoint, assign=True)
    with torch.device("meta"):
        emptied = Block()
    emptied.to_empty(device="cpu")
    emptied.load_state_dict(checkpoint)
    for model in (assigned, emptied):
        assert not any(p.is_meta for p in model.parameters())
        assert torch.allclose(model(x), reference(x))


def find_meta_parameters():
    """Solution 2: list what is still on meta, load exactly that, then run."""
    checkpoint, reference = _checkpoint_and_reference()
    with torch.device("meta"):
        model = Block()
    missing = [name for name, p in model.named_parameters() if p.is_meta]
    assert missing == ["proj.weight", "proj.bias"]
    model.load_state_dict({name: checkpoint[name] for name in missing}, assign=True)
    assert not any(p.is_meta for p in model.parameters())
    x = torch.randn(2, 4)
    assert torch.allclose(model(x), reference(x))


def example_fix():
    checkpoint, reference = _checkpoint_and_reference()
    x = torch.randn(5, 4)
    names = record.run("exampleFix", {"Block": Block, "checkpoint": checkpoint, "x": x}, section="after")
    assert names["checkpoint"] is checkpoint and names["x"] is x
    assert torch.allclose(names["out"], reference(x))


def guard():
    checkpoint, _ = _checkpoint_and_reference()
    with torch.device("meta"):
        model = Block()
    assert not record.check("validationCode", {"model": model})
    model.load_state_dict(checkpoint, assign=True)
    assert record.check("validationCode", {"model": model})


def _valid(model):
    model(torch.randn(2, 4))  # runs on real data
    return {"model": model}


def valid_cpu_model():
    return _valid(Block())


def valid_assigned():
    checkpoint, _ = _checkpoint_and_reference()
    with torch.device("meta"):
        model = Block()
    model.load_state_dict(checkpoint, assign=True)
    return _valid(model)


def valid_buffers():
    """A model with a buffer (BatchNorm running statistics), built on the CPU."""
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    model(torch.randn(3, 4))
    return {"model": model}
