"""A batch of variable-length sequences is padded in dataset order (lengths 2, 5, 3) and packed with
pack_padded_sequence, whose enforce_sorted argument defaults to True. With enforce_sorted=True the Python
wrapper passes the batch straight to the C++ operator _pack_padded_sequence
(aten/src/ATen/native/PackedSequence.cpp), which walks the lengths and fails with "`lengths` array must
be sorted in decreasing order when `enforce_sorted` is True. ..." at the first increase. fix() packs the
same batch with enforce_sorted=False (the wrapper sorts and remembers the permutation) and, as a second
way, sorts the batch by length itself and restores the order afterwards; both must give back the input in
its original order, and the LSTM output for each sequence must equal running that sequence alone.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

LENGTHS = [2, 5, 3]  # dataset order, not sorted
FEATURES, HIDDEN = 4, 6


def _batch():
    g = torch.Generator().manual_seed(0)
    seqs = [torch.randn(n, FEATURES, generator=g) for n in LENGTHS]
    return seqs, pad_sequence(seqs, batch_first=True), torch.tensor(LENGTHS)


def trigger():
    _, x, lengths = _batch()
    pack_padded_sequence(x, lengths, batch_first=True)  # enforce_sorted=True by default


def fix():
    seqs, x, lengths = _batch()
    torch.manual_seed(0)
    lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=True)

    # Fix 1: let pack_padded_sequence sort (and later unsort) the batch.
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    unpacked, unpacked_lengths = pad_packed_sequence(packed, batch_first=True)
    assert torch.equal(unpacked, x), "unpacked batch is not in the input order"
    assert unpacked_lengths.tolist() == LENGTHS
    with torch.no_grad():
        out, _ = lstm(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True)
        assert out_lengths.tolist() == LENGTHS
        for i, seq in enumerate(seqs):
            alone, _ = lstm(seq.unsqueeze(0))
            assert torch.allclose(out[i, : LENGTHS[i]], alone[0], atol=1e-6)
            assert torch.all(out[i, LENGTHS[i]:] == 0)

    # Fix 2: sort by length yourself, pack with the default enforce_sorted=True, undo the sort after.
    sorted_lengths, order = torch.sort(lengths, descending=True)
    packed_sorted = pack_padded_sequence(x[order], sorted_lengths, batch_first=True)
    with torch.no_grad():
        out_sorted, _ = lstm(packed_sorted)
        out_sorted, _ = pad_packed_sequence(out_sorted, batch_first=True)
    restored = torch.empty_like(out_sorted)
    restored[order] = out_sorted
    assert torch.allclose(restored, out, atol=1e-6)
