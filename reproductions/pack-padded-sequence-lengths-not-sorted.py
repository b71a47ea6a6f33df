"""A batch of variable-length sequences is padded in dataset order (lengths 2, 5, 3) and packed with
pack_padded_sequence, whose enforce_sorted argument defaults to True. With enforce_sorted=True the Python
wrapper passes the batch straight to the C++ operator _pack_padded_sequence
(aten/src/ATen/native/PackedSequence.cpp), which walks the lengths and fails with "`lengths` array must
be sorted in decreasing order when `enforce_sorted` is True. ..." at the first increase. The demonstrations
pack the same batch with enforce_sorted=False (solution 1: the wrapper sorts and remembers the permutation,
so outputs and final hidden states come back in the caller's order) and sort the batch by length by hand,
restoring the order afterwards (solution 2); the LSTM output for each sequence must equal running that
sequence alone. The record's exampleFix "after" part runs on the trigger's batch; its validationCode flags
the trigger's call and passes the enforce_sorted=False one.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "enforce_sorted_false", 2: "sort_by_hand"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["x", "lengths", "lstm", "pack_padded_sequence", "pad_packed_sequence"],
              "validationCode": ["lengths", "enforce_sorted"]}
KEEP = ["lstm"]
VALID = {"sorted-or-unenforced": "valid_sorted_or_unenforced"}
WORDINGS = [
    {"text": "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
             "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
             "do not need ONNX exportability.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
             "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
             "do not need ONNX exportability.", "source": "torch==1.13.1", "match": "pattern"},
    {"text": "ValueError: lengths array has to be sorted in decreasing order", "source": "pytorch/pytorch#8026",
     "match": "pattern"},
    {"text": "RuntimeError: 'lengths' array has to be sorted in decreasing order",
     "source": "bentrevett/pytorch-sentiment-analysis#37", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import hypothesis.strategies as st

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


def _alone(lstm, seqs):
    """Each sequence run through the LSTM on its own: (outputs, final hidden states)."""
    with torch.no_grad():
        runs = [lstm(seq.unsqueeze(0)) for seq in seqs]
    return [out[0] for out, _ in runs], [h[0, 0] for _, (h, _) in runs]


def enforce_sorted_false():
    """Solution 1: enforce_sorted=False; outputs and h_n come back in the input order."""
    seqs, x, lengths = _batch()
    torch.manual_seed(0)
    lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    unpacked, unpacked_lengths = pad_packed_sequence(packed, batch_first=True)
    assert torch.equal(unpacked, x) and unpacked_lengths.tolist() == LENGTHS, "unpacked batch is not in the input order"
    with torch.no_grad():
        out, (h_n, _) = lstm(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True)
    assert out_lengths.tolist() == LENGTHS
    outs, finals = _alone(lstm, seqs)
    for i, n in enumerate(LENGTHS):
        assert torch.allclose(out[i, :n], outs[i], atol=1e-6) and torch.all(out[i, n:] == 0)
        assert torch.allclose(h_n[0, i], finals[i], atol=1e-6), "final hidden state not in the input order"


def sort_by_hand():
    """Solution 2: sort by length, pack with enforce_sorted=True, scatter the outputs back."""
    seqs, x, lengths = _batch()
    torch.manual_seed(0)
    lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
    sorted_lengths, order = torch.sort(lengths, descending=True)
    packed = pack_padded_sequence(x[order], sorted_lengths, batch_first=True)
    with torch.no_grad():
        out_sorted, (h_sorted, _) = lstm(packed)
        out_sorted, _ = pad_packed_sequence(out_sorted, batch_first=True)
    out, h_n = torch.empty_like(out_sorted), torch.empty_like(h_sorted)
    out[order], h_n[:, order] = out_sorted, h_sorted
    outs, finals = _alone(lstm, seqs)
    for i, n in enumerate(LENGTHS):
        assert torch.allclose(out[i, :n], outs[i], atol=1e-6)
        assert torch.allclose(h_n[0, i], finals[i], atol=1e-6)


def example_fix():
    """The exampleFix's "after" part on the trigger's batch."""
    seqs, x, lengths = _batch()
    torch.manual_seed(0)
    lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
    with torch.no_grad():
        names = record.run("exampleFix", {"x": x, "lengths": lengths, "lstm": lstm, "pack_padded_sequence": pack_padded_sequence,
                                          "pad_packed_sequence": pad_packed_sequence}, section="after")
    assert names["out_lengths"].tolist() == LENGTHS
    outs, _ = _alone(lstm, seqs)
    for i, n in enumerate(LENGTHS):
        assert torch.allclose(names["out"][i, :n], outs[i], atol=1e-6)


def guard():
    """validationCode flags the trigger's call (enforce_sorted=True, lengths 2, 5, 3) and passes enforce_sorted=False."""
    _, x, lengths = _batch()
    assert not record.check("validationCode", {"lengths": lengths, "enforce_sorted": True})
    assert record.check("validationCode", {"lengths": lengths, "enforce_sorted": False})


@st.composite
def _packable(draw):
    """Lengths that pack: sorted longest first (ties and one sequence included) with enforce_sorted=True, or in any
    order with enforce_sorted=False; as a list, a tuple or a tensor. Each is packed first."""
    lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=5))
    enforce_sorted = draw(st.booleans())
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    given = draw(st.sampled_from([list, tuple, torch.tensor]))(lengths)
    x = torch.randn(len(lengths), max(lengths), FEATURES)
    pack_padded_sequence(x, given, batch_first=True, enforce_sorted=enforce_sorted)
    return {"lengths": given, "enforce_sorted": enforce_sorted}


def valid_sorted_or_unenforced():
    return _packable()
