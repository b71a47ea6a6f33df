"""A training script saved its checkpoint as {"state_dict": ..., "args": argparse.Namespace(...)}, as many
repositories do. Since PyTorch 2.6 torch.load defaults to weights_only=True, whose restricted unpickler
accepts tensors, containers and primitive types but not arbitrary classes: loading the same file with a
plain torch.load(path) raises _pickle.UnpicklingError "Weights only load failed. ... Unsupported global:
GLOBAL argparse.Namespace was not an allowed global by default ..." from torch/serialization.py. Before
2.6 the same call loaded the file (2.4 and 2.5 warned with a FutureWarning), so the trigger needs
torch>=2.6. Demonstrations: weights_only=False for a trusted file, an allowlist with
torch.serialization.safe_globals, re-saving the checkpoint with plain data so the default load works,
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 for a torch.load call inside code one cannot edit, and, for the
"Unsupported operand 118" form, a Git LFS pointer file in place of the checkpoint (the error and the
'invalid load key' of weights_only=False are shown, then the real file loads); each checks the loaded
weights equal the saved ones. The record's exampleFix and tryCatchPattern run from its text.
CPU only; the checkpoint is written to a temporary directory.
"""

NEEDS = {"packages": {"torch": ">=2.6"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "trusted_weights_only_false", 2: "allowlist_globals", 3: "resave_plain", 4: "env_override", 5: "not_a_checkpoint"}
CODE = {"exampleFix": "example_fix", "tryCatchPattern": "try_catch"}
CODE_NAMES = {"exampleFix": ["torch", "argparse", "path"], "tryCatchPattern": ["torch", "pickle", "argparse", "path"]}
WORDINGS = [
    {"text": "Weights only load failed. This file can still be loaded, to do so you have two options",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Weights only load failed. In PyTorch 2.6, we changed the default value of the weights_only argument in "
             "torch.load from False to True.", "source": "cubiq/ComfyUI_InstantID#255", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import argparse
import os
import pickle
import tempfile

import errkb_record as record

import torch
import torch.nn as nn


def _model():
    torch.manual_seed(0)
    return nn.LSTM(4, 8)


def _write_checkpoint(folder):
    model = _model()
    path = os.path.join(folder, "checkpoint.pt")
    torch.save({"state_dict": model.state_dict(), "args": argparse.Namespace(hidden=8, lr=0.1)}, path)
    return path, model.state_dict()


def _same(state_dict, expected):
    assert state_dict.keys() == expected.keys()
    assert all(torch.equal(state_dict[k], expected[k]) for k in expected)


def trigger():
    with tempfile.TemporaryDirectory() as tmp:
        path, _ = _write_checkpoint(tmp)
        torch.load(path)  # default weights_only=True since 2.6


def trusted_weights_only_false():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        ckpt = torch.load(path, weights_only=False)  # only for files from a trusted source
        _same(ckpt["state_dict"], expected)
        assert ckpt["args"].hidden == 8


def allowlist_globals():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        with torch.serialization.safe_globals([argparse.Namespace]):
            ckpt = torch.load(path)  # still weights_only=True
        _same(ckpt["state_dict"], expected)
        assert ckpt["args"].lr == 0.1


def resave_plain():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        old = torch.load(path, weights_only=False)  # once, for a trusted file
        plain = os.path.join(tmp, "checkpoint-plain.pt")
        torch.save({"state_dict": old["state_dict"], "args": vars(old["args"])}, plain)
        ckpt = torch.load(plain)  # the default now works
        _same(ckpt["state_dict"], expected)
        assert ckpt["args"] == {"hidden": 8, "lr": 0.1}
        model = _model()
        model.load_state_dict(ckpt["state_dict"])


def env_override():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"  # read by torch.load at each call
        try:
            ckpt = torch.load(path)  # stands for a call inside a library one cannot change
        finally:
            del os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"]
        _same(ckpt["state_dict"], expected)


def not_a_checkpoint():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        real = open(path, "rb").read()
        with open(path, "w") as f:  # what a clone without git-lfs leaves in place of the weights
            f.write("version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 4096\n")
        for weights_only, expected_text in ((True, "Unsupported operand 118"), (False, "invalid load key, 'v'")):
            try:
                torch.load(path, weights_only=weights_only)
            except pickle.UnpicklingError as exc:
                assert expected_text in str(exc), exc
            else:
                raise AssertionError("a Git LFS pointer was loaded")
        assert open(path, "rb").read(7) == b"version"  # the check the advice gives
        with open(path, "wb") as f:  # git lfs pull / a fresh download
            f.write(real)
        _same(torch.load(path, weights_only=False)["state_dict"], expected)


def example_fix():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        names = record.run("exampleFix", {"torch": torch, "argparse": argparse, "path": path}, section="after")
        _same(names["ckpt"]["state_dict"], expected)


def try_catch():
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = _write_checkpoint(tmp)
        names = record.run("tryCatchPattern", {"torch": torch, "pickle": pickle, "argparse": argparse, "path": path})
        _same(names["ckpt"]["state_dict"], expected)
