"""Planted native record whose exampleFix must stand alone: 2-D lengths fail in C++ (checkLongTensor in
PackedSequence.cpp). The record's exampleFix (set by the test case) runs from its own text with only the names
CODE_NAMES declares, and must leave the user's padded batch in place (KEEP)."""
NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fix"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["torch", "pack_padded_sequence", "padded", "lengths"]}
KEEP = ["padded"]

PROVENANCE = {"checked": "unverified", "why": "a planted record: its excerpt is not the point"}

import errkb_record as record
import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence


def trigger():
    pack_padded_sequence(torch.zeros(2, 3, 1), torch.tensor([[3], [2]]), batch_first=True)


def fix():
    pack_padded_sequence(torch.zeros(2, 3, 1), torch.tensor([3, 2]), batch_first=True)


def example_fix():
    names = {"torch": torch, "pack_padded_sequence": pack_padded_sequence, "padded": torch.zeros(2, 3, 1),
             "lengths": torch.tensor([[3], [2]])}
    names = record.run("exampleFix", names, section="after")
    assert isinstance(names["packed"], PackedSequence)
