"""A dataset returns each padded sequence with its length as a one-element tensor, torch.tensor([n]); the
default collate function stacks those into a (batch, 1) tensor, which is then passed to
pack_padded_sequence as `lengths`. The Python wrapper (torch/nn/utils/rnn.py) casts tensor lengths to
int64 but does not reshape them or move them to the CPU, and the C++ operator
(aten/src/ATen/native/PackedSequence.cpp, checkLongTensor) rejects anything that is not a 1-D CPU int64
tensor: "... but got 2D cpu Long tensor". Two variants, chosen by the hardware at hand:
- with a CUDA device, the usual cause: the batch and its 1-D lengths moved to the GPU together
  ("... but got 1D cuda:0 Long tensor");
- without one, the 2-D case above, a real cause on a CPU-only machine.
The demonstrations pass the lengths as a 1-D CPU tensor (solution 1: flattened, `.cpu()`) and as a plain list
(solution 2), then check that an LSTM runs on the packed batch and that unpacking gives back the input and
lengths. The record's exampleFix "after" part runs on the trigger's batch; its validationCode and typeGuard flag
the trigger's lengths and pass the fixed ones.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "flat_cpu_tensor", 2: "python_list"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard", "typeGuard": "type_guard"}
CODE_NAMES = {"exampleFix": ["batch", "pack_padded_sequence"], "validationCode": ["lengths"],
              "typeGuard": ["lengths"]}
GUARD_CALL = {"typeGuard": "is_valid_lengths(lengths)"}
VALID = {"lengths-the-wrapper-accepts": "valid_lengths"}
WORDINGS = [
    {"text": "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor", "source": "torch==1.13.1",
     "match": "pattern"},
    {"text": "RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor",
     "source": "rwth-i6/returnn#1406", "match": "pattern"},
    {"text": "'lengths' argument should be a 1D CPU int64 tensor", "source": "pytorch/pytorch#13214", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import hypothesis.strategies as st

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, Dataset

LENGTHS = [5, 3, 2]  # already in decreasing order, so only the lengths' shape is wrong
MAX_LEN, FEATURES = 5, 4


class PaddedSequences(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.items = []
        for n in LENGTHS:
            x = torch.zeros(MAX_LEN, FEATURES)
            x[:n] = torch.randn(n, FEATURES, generator=g)
            self.items.append((x, torch.tensor([n])))  # length as a 1-element tensor

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def _batch():
    x, lengths = next(iter(DataLoader(PaddedSequences(), batch_size=len(LENGTHS))))
    assert lengths.shape == (len(LENGTHS), 1)  # collated to 2-D
    return x, lengths


def _device():
    return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")


def trigger():
    x, lengths = _batch()
    if _device().type == "cuda":
        variant = "cuda: batch and 1-D lengths moved to cuda:0 together"
        x, lengths = x.to(_device()), lengths.view(-1).to(_device())
    else:
        variant = "cpu: 2-D lengths from the default collate"  # the harness reads `variant`
    pack_padded_sequence(x, lengths, batch_first=True)  # RuntimeError from the C++ op


def _trigger_situation():
    """The trigger's batch and lengths: 2-D lengths on CPU, or 1-D lengths moved to the GPU with the batch."""
    x, lengths = _batch()
    if _device().type == "cuda":
        return x.to(_device()), lengths.view(-1).to(_device())
    return x, lengths


def _packs(x, lengths):
    """Assert the batch packs, an LSTM runs on it, and unpacking gives back the input and lengths."""
    lstm = nn.LSTM(FEATURES, 6, batch_first=True).to(x.device)
    packed = pack_padded_sequence(x, lengths, batch_first=True)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1, 1]
    out, _ = lstm(packed)
    padded_out, out_lengths = pad_packed_sequence(out, batch_first=True)
    assert padded_out.shape == (len(LENGTHS), MAX_LEN, 6) and torch.isfinite(padded_out).all()
    unpacked, unpacked_lengths = pad_packed_sequence(packed, batch_first=True, total_length=MAX_LEN)
    assert torch.equal(unpacked, x)
    assert unpacked_lengths.tolist() == LENGTHS == out_lengths.tolist()


def trigger():
    x, lengths = _trigger_situation()
    variant = f"{_device().type}: lengths {tuple(lengths.shape)} on {lengths.device}"  # the harness reads `variant`
    pack_padded_sequence(x, lengths, batch_first=True)  # RuntimeError from the C++ op


def flat_cpu_tensor():
    """Solution 1: lengths.view(-1).cpu()."""
    x, lengths = _trigger_situation()
    _packs(x, lengths.view(-1).cpu())
    return f"{_device().type}: lengths.view(-1).cpu()"


def python_list():
    """Solution 2: lengths as a list of ints."""
    x, lengths = _trigger_situation()
    _packs(x, lengths.view(-1).tolist())
    return f"{_device().type}: lengths.view(-1).tolist()"


def example_fix():
    """The exampleFix's "after" part on the trigger's batch."""
    x, lengths = _trigger_situation()
    names = record.run("exampleFix", {"batch": (x, lengths), "pack_padded_sequence": pack_padded_sequence}, section="after")
    unpacked, unpacked_lengths = pad_packed_sequence(names["packed"], batch_first=True, total_length=MAX_LEN)
    assert torch.equal(unpacked, x) and unpacked_lengths.tolist() == LENGTHS


def guard():
    """validationCode flags the trigger's lengths and passes the fixed ones."""
    x, lengths = _trigger_situation()
    assert not record.check("validationCode", {"lengths": lengths})
    assert record.check("validationCode", {"lengths": lengths.view(-1).cpu()})


def type_guard():
    """typeGuard's predicate is false for the trigger's lengths, true for the fixed tensor and for a list."""
    x, lengths = _trigger_situation()
    assert not record.check("typeGuard", {"lengths": lengths}, expr="is_valid_lengths(lengths)")
    assert record.check("typeGuard", {"lengths": lengths.view(-1).cpu()}, expr="is_valid_lengths(lengths)")
    assert record.check("typeGuard", {"lengths": lengths.view(-1).tolist()}, expr="is_valid_lengths(lengths)")


@st.composite
def _accepted_lengths(draw):
    """Lengths in every form pack_padded_sequence takes: a 1-D CPU tensor of any integer or float dtype, a list, a
    tuple; sorted longest first (enforce_sorted's default), batch of one included. Each is packed first."""
    lengths = sorted(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)), reverse=True)
    form = draw(st.sampled_from(["int64", "int32", "float32", "list", "tuple"]))
    given = {"list": list, "tuple": tuple}.get(form, lambda v: torch.tensor(v, dtype=getattr(torch, form)))(lengths)
    x = torch.randn(len(lengths), max(lengths), FEATURES)
    packed = pack_padded_sequence(x, given, batch_first=True)
    assert int(packed.batch_sizes[0]) == len(lengths)
    return {"lengths": given}


def valid_lengths():
    return _accepted_lengths()
