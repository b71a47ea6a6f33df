"""A model repository is cloned without git-lfs: weights/model.pth holds the three-line Git LFS pointer instead of
the checkpoint. torch.load sees no zip archive, takes the legacy pickle path (_legacy_load in
torch/serialization.py), and the unpickler stops at the first byte: "invalid load key, 'v'." (_pickle.UnpicklingError).
The trigger passes weights_only=False, as code written for releases before 2.6 does; torch 2.5.1 raises the same
by default. The demonstrations: the pointer recognised and replaced by the real file (what git lfs pull does; the
sandbox has no network, so the real checkpoint's bytes are written in its place) and the weights load equal to the
saved ones; an HTML page saved under the checkpoint's name ("invalid load key, '<'.") recognised and replaced by the
direct download, which loads. The record's exampleFix and validationCode run from its text. CPU only.

Drafted by `errkb draft` from lfs_pointer.py on torch 2.13.0+cpu, Python 3.11.7:
  _pickle.UnpicklingError: invalid load key, 'v'.
  raised at torch/serialization.py:1886
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author bounded the drafted
pattern's quoted key to a few characters (the byte as Python prints it: 'v', '<', '\\x00').
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "lfs_pull", 2: "direct_download"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model"], "validationCode": ["path"]}
KEEP = ["model"]
VALID = {"zip-checkpoint": "valid_zip_checkpoint", "legacy-format-checkpoint": "valid_legacy_checkpoint",
         "tensor-file-as-path": "valid_tensor_path"}
WORDINGS = [
    {'text': "invalid load key, 'v'.", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "invalid load key, 'v'.", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "invalid load key, 'v'.", 'source': 'hhj1897/face_parsing#3', 'match': 'pattern'},
    {'text': "invalid load key, '<'.", 'source': 'pytorch/pytorch#16203', 'match': 'pattern'},
    {'text': "WeightsUnpickler error: Unsupported operand 118", 'source': 'pytorch/pytorch#150998', 'match': 'none',
     'why': "the weights_only=True wording begins 'Weights only load failed.', which torch-load-weights-only-failed "
            "claims; the record explains the operand number instead"},
    {'text': "WeightsUnpickler error: Unsupported operand 60", 'source': 'gseg-ethz/CoFF#2', 'match': 'none',
     'why': "the same weights_only=True wording, for an HTML page ('<' is 60)"},
    {'text': "invalid load key, '\\x00'.", 'source': 'argusswift/YOLOv4-pytorch#30', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import hashlib
import io
import os
import pickle
from pathlib import Path

import errkb_record as record

import torch

POINTER = ("version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
           "size 102502400\n")
HTML = "<!DOCTYPE html>\n<html><head><title>Google Drive - Quota exceeded</title></head><body>...</body></html>\n"


def _saved_model():
    torch.manual_seed(0)
    return torch.nn.Linear(8, 4)


def _checkpoint_bytes():
    buf = io.BytesIO()
    torch.save(_saved_model().state_dict(), buf)
    return buf.getvalue()


def _default_load_refuses(path, key, operand):
    """torch.load with this release's default weights_only: releases from 2.6 read with weights_only=True and name
    the first byte as an unsupported operand; earlier ones unpickle and give the invalid load key."""
    release = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    try:
        torch.load(path)
    except pickle.UnpicklingError as exc:
        message = " ".join(str(exc).split())
        if release >= (2, 6):
            assert message.startswith("Weights only load failed"), message
            assert f"Unsupported operand {operand}" in message, message
        else:
            assert message == f"invalid load key, '{key}'.", message
    else:
        raise AssertionError(f"{path} loaded")


def _same_weights(model):
    for (name, a), b in zip(model.state_dict().items(), _saved_model().state_dict().values()):
        assert torch.equal(a, b), name


def trigger():
    # a clone made without git-lfs: weights/model.pth is the 3-line pointer file, not the checkpoint
    os.makedirs("weights", exist_ok=True)
    with open("weights/model.pth", "w") as f:
        f.write(POINTER)
    model = torch.nn.Linear(8, 4)
    model.load_state_dict(torch.load("weights/model.pth", weights_only=False))


def lfs_pull():
    """Solution 1: the file is a pointer (small, text, 'version https://git-lfs'); fetching the LFS object replaces
    it with the real checkpoint, whose size and sha256 are the ones the pointer names."""
    os.makedirs("weights", exist_ok=True)
    real = _checkpoint_bytes()
    pointer = POINTER.replace("4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393",
                              hashlib.sha256(real).hexdigest()).replace("102502400", str(len(real)))
    Path("weights/model.pth").write_text(pointer)
    head = Path("weights/model.pth").read_bytes()
    assert head.startswith(b"version https://git-lfs") and len(head) < 200
    _default_load_refuses("weights/model.pth", "v", 118)
    fields = dict(line.split(" ", 1) for line in head.decode().splitlines())
    Path("weights/model.pth").write_bytes(real)  # what git lfs pull writes: the object the pointer names
    assert hashlib.sha256(Path("weights/model.pth").read_bytes()).hexdigest() == fields["oid"].split(":")[1]
    assert os.path.getsize("weights/model.pth") == int(fields["size"])
    model = torch.nn.Linear(8, 4)
    model.load_state_dict(torch.load("weights/model.pth"))
    _same_weights(model)


def direct_download():
    """Solution 2: an HTML page saved as the checkpoint fails the same way (key '<'); the file itself loads."""
    Path("model.pth").write_text(HTML)
    try:
        torch.load("model.pth", weights_only=False)
    except Exception as exc:
        assert "invalid load key, '<'" in str(exc), exc
    else:
        raise AssertionError("the HTML page loaded")
    _default_load_refuses("model.pth", "<", 60)
    real = _checkpoint_bytes()
    Path("model.pth").write_bytes(real)  # the direct download
    assert not Path("model.pth").read_bytes().lstrip().startswith(b"<")
    assert os.path.getsize("model.pth") == len(real)  # the published size
    model = torch.nn.Linear(8, 4)
    model.load_state_dict(torch.load("model.pth"))
    _same_weights(model)


def example_fix():
    os.makedirs("weights", exist_ok=True)
    Path("weights/model.pth").write_bytes(_checkpoint_bytes())  # after git lfs pull
    model = torch.nn.Linear(8, 4)
    names = record.run("exampleFix", {"model": model}, section="after")
    assert names["model"] is model
    _same_weights(model)


def guard():
    Path("pointer.pth").write_text(POINTER)
    assert not record.check("validationCode", {"path": "pointer.pth"})
    Path("page.pth").write_text(HTML)
    assert not record.check("validationCode", {"path": "page.pth"})
    Path("real.pth").write_bytes(_checkpoint_bytes())
    assert record.check("validationCode", {"path": "real.pth"})


def valid_zip_checkpoint():
    Path("zip.pth").write_bytes(_checkpoint_bytes())
    torch.load("zip.pth")
    return {"path": "zip.pth"}


def valid_legacy_checkpoint():
    """The format before zip archives: a pickle stream, which the guard must not confuse with text."""
    torch.save(_saved_model().state_dict(), "legacy.pth", _use_new_zipfile_serialization=False)
    torch.load("legacy.pth")
    return {"path": "legacy.pth"}


def valid_tensor_path():
    path = Path("tensor.pt")
    torch.save(torch.arange(6), path)
    assert torch.equal(torch.load(path), torch.arange(6))
    return {"path": path}
