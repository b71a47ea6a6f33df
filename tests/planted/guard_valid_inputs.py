"""Planted native record with a guard and its negative controls: 2-D lengths fail in C++ (checkLongTensor in
PackedSequence.cpp), while pack_padded_sequence accepts a Python list, int32 lengths and any 1-D batch. The
record's validationCode (set by the test case) must flag the trigger's 2-D lengths and pass every VALID input."""
NEEDS = {"packages": {"torch": ">=2.1", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "fix"}
CODE = {"validationCode": "guard"}
VALID = {"python-list": "valid_list", "int32-lengths": "valid_int32", "generated-batches": "valid_generated"}
CODE_NAMES = {"validationCode": ["torch", "lengths"]}

PROVENANCE = {"checked": "unverified", "why": "a planted record: its excerpt is not the point"}

import errkb_record as record
import torch
from hypothesis import strategies as st
from torch.nn.utils.rnn import pack_padded_sequence


def _accepted(names):
    """A valid input really is valid: pack_padded_sequence takes it."""
    lengths = names["lengths"]
    count = len(lengths)
    pack_padded_sequence(torch.zeros(count, 3, 1), lengths, batch_first=True, enforce_sorted=False)
    return names


def trigger():
    pack_padded_sequence(torch.zeros(2, 3, 1), torch.tensor([[3], [2]]), batch_first=True)


def fix():
    pack_padded_sequence(torch.zeros(2, 3, 1), torch.tensor([3, 2]), batch_first=True)


def guard():
    assert not record.check("validationCode", {"torch": torch, "lengths": torch.tensor([[3], [2]])})
    assert record.check("validationCode", {"torch": torch, "lengths": torch.tensor([3, 2])})


def valid_list():
    return _accepted({"torch": torch, "lengths": [3, 2]})


def valid_int32():
    return [_accepted({"torch": torch, "lengths": torch.tensor(values, dtype=torch.int32)}) for values in ([3, 2], [2, 2])]


def valid_generated():
    batches = st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=6)
    return batches.map(lambda values: _accepted({"torch": torch, "lengths": torch.tensor(values)}))
