"""Planted native record: 2-D lengths fail in C++ (checkLongTensor in PackedSequence.cpp)."""
NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fix"}

import torch
from torch.nn.utils.rnn import pack_padded_sequence


def trigger():
    pack_padded_sequence(torch.zeros(2, 3, 1), torch.tensor([[3], [2]]), batch_first=True)


def fix():
    pack_padded_sequence(torch.zeros(2, 3, 1), torch.tensor([3, 2]), batch_first=True)
