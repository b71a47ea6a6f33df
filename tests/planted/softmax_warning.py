"""Planted warning record: F.softmax without dim= warns (UserWarning) from torch/nn/functional.py, in Python.
The warning's own location is the caller's (stacklevel); the harness must find torch's frame all the same."""
NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fix"}

import warnings

import torch
import torch.nn.functional as F


def trigger():
    F.softmax(torch.ones(2, 3))
    return "cpu"


def fix():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = F.softmax(torch.ones(2, 3), dim=1)
    assert torch.allclose(out.sum(dim=1), torch.ones(2))
    return "cpu: dim=1"
