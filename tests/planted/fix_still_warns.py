"""Planted defect for a warning record: fix() emits the documented warning again."""
NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fix"}

import torch
import torch.nn.functional as F


def trigger():
    F.softmax(torch.ones(2, 3))


def fix():
    F.softmax(torch.ones(2, 3))
