"""A word-level GRU tagger gets character embeddings of shape (batch, words, chars, char_dim) packed
with pack_padded_sequence: each time step still carries a (chars, char_dim) matrix instead of a feature
vector, the PackedSequence's data is 3-D, and RNNBase.check_input raises "input must have 2 dimensions,
got 3" (a packed input must be (total steps, features); an unpacked one (batch, steps, features), which
PyTorch before 1.11 reported as "input must have 3 dimensions, got N"). Since 1.11 a 2-D unpacked input
is taken as one unbatched sequence and a 4-D one is refused earlier with a ValueError, so in 2.13 this
raise site is reached by packed input to nn.RNN and nn.GRU (nn.LSTM skips this check for packed
input and fails later in a matrix product). Demonstrations: flattening each step's extra dimensions into one feature vector before packing
(the GRU runs and trains), and, for the old "got 2" case, adding the missing dimension explicitly, with a
check that in 2.13 a (batch, features) tensor given without it is silently read as one long sequence.
The record's exampleFix and validationCode run from its text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "one_vector_per_step", 2: "explicit_batch_dimension"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["x", "pack_padded_sequence", "lengths", "rnn"], "validationCode": ["x"]}
VALID = {"one-vector-per-step": "valid_one_vector_per_step"}
WORDINGS = [
    {"text": "input must have 2 dimensions, got 3", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "input must have 2 dimensions, got 3", "source": "torch==1.13.1", "match": "pattern"},
    {"text": "RuntimeError: input must have 3 dimensions, got 2", "source": "rdemedrano/crann_traffic#2",
     "match": "pattern"},
    {"text": "RuntimeError: input must have 3 dimensions, got 5", "source": "pytorch/pytorch#86576", "match": "pattern"},
    {"text": "mat1 and mat2 shapes cannot be multiplied (18x5 and 15x16)", "source": "pytorch/pytorch#195803",
     "match": "none", "why": "nn.LSTM skips check_input for a PackedSequence; the kernel's matmul message belongs to the "
                             "mat1/mat2 record"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import math

import errkb_record as record

import hypothesis.strategies as st
import torch
import torch.nn as nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

BATCH, WORDS, CHARS, CHAR_DIM, HIDDEN = 3, 5, 4, 6, 8
LENGTHS = [5, 3, 2]


def _chars():
    g = torch.Generator().manual_seed(0)
    return torch.randn(BATCH, WORDS, CHARS, CHAR_DIM, generator=g)  # (batch, words, chars, char_dim)


def trigger():
    torch.manual_seed(0)
    gru = nn.GRU(CHARS * CHAR_DIM, HIDDEN, batch_first=True)
    packed = pack_padded_sequence(_chars(), LENGTHS, batch_first=True)  # data: (10, 4, 6)
    gru(packed)


def one_vector_per_step():
    torch.manual_seed(0)
    gru = nn.GRU(CHARS * CHAR_DIM, HIDDEN, batch_first=True)
    x = _chars()
    words = x.reshape(BATCH, WORDS, CHARS * CHAR_DIM)  # one feature vector per word
    packed = pack_padded_sequence(words, LENGTHS, batch_first=True)
    assert packed.data.dim() == 2
    out, h = gru(packed)
    y, lengths = pad_packed_sequence(out, batch_first=True)
    assert y.shape == (BATCH, WORDS, HIDDEN) and lengths.tolist() == LENGTHS
    loss = y.pow(2).sum()
    loss.backward()
    assert math.isfinite(loss.item()) and all(p.grad is not None for p in gru.parameters())


def explicit_batch_dimension():
    torch.manual_seed(0)
    gru = nn.GRU(CHAR_DIM, HIDDEN, batch_first=True)
    steps = torch.randn(BATCH, CHAR_DIM)  # meant as BATCH samples of one step each
    with torch.no_grad():
        per_sample = torch.cat([gru(steps[i:i + 1].unsqueeze(1))[0] for i in range(BATCH)])
        batched, _ = gru(steps.unsqueeze(1))  # (batch, 1 step, features): the explicit form
        unbatched, _ = gru(steps)  # 2-D: accepted since 1.11 as ONE sequence of BATCH steps
    assert batched.shape == (BATCH, 1, HIDDEN)
    assert torch.allclose(batched, per_sample, atol=1e-6)
    assert unbatched.shape == (BATCH, HIDDEN)
    assert not torch.allclose(unbatched, per_sample.squeeze(1), atol=1e-4)  # silently something else


def example_fix():
    torch.manual_seed(0)
    gru = nn.GRU(CHARS * CHAR_DIM, HIDDEN, batch_first=True)
    x = _chars()
    names = record.run("exampleFix", {"x": x, "lengths": LENGTHS, "rnn": gru,
                                      "pack_padded_sequence": pack_padded_sequence}, section="after")
    out, _ = names["out"], names["h"]
    assert isinstance(out, PackedSequence) and out.data.shape == (sum(LENGTHS), HIDDEN)


def guard():
    x = _chars()
    bad = pack_padded_sequence(x, LENGTHS, batch_first=True)
    good = pack_padded_sequence(x.flatten(2), LENGTHS, batch_first=True)
    assert not record.check("validationCode", {"x": bad})
    assert record.check("validationCode", {"x": good})
    assert record.check("validationCode", {"x": x.flatten(2)})  # unpacked (batch, steps, features)


@st.composite
def _one_vector_per_step(draw):
    """Input an RNN, GRU or LSTM accepts: batched 3-D in either layout, unbatched 2-D, or packed; each run first."""
    rnn = draw(st.sampled_from([nn.RNN, nn.GRU, nn.LSTM]))(3, 4, batch_first=draw(st.booleans()))
    batch, steps = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    form = draw(st.sampled_from(["batched", "unbatched", "packed"]))
    padded = torch.randn(batch, steps, 3)
    if form == "batched":
        x = padded if rnn.batch_first else padded.transpose(0, 1)
    elif form == "unbatched":
        x = padded[0]
    else:
        lengths = sorted(draw(st.lists(st.integers(1, steps), min_size=batch, max_size=batch)), reverse=True)
        x = pack_padded_sequence(padded, lengths, batch_first=True)
    rnn(x)
    return {"x": x}


def valid_one_vector_per_step():
    return _one_vector_per_step()
