"""A sequence tagger keeps its LSTM state on the module, as in the third seed: __init__ builds
(h0, c0) once for the configured batch size and every forward feeds that stored state to the LSTM.
The DataLoader has 10 sequences and batch_size=4, so the epoch's last batch holds 2 and
torch.nn.modules.rnn.RNNBase.check_hidden_size raises "Expected hidden[0] size (1, 2, 16), got
[1, 4, 16]" before any computation. The same mismatch appears under nn.DataParallel on N GPUs (each
replica sees batch/N rows while the stored state still has the full batch) and when an evaluation loop
uses another batch size; those variants are not run here (the split needs several GPUs). The
demonstrations: the state built per batch from the input's own batch size (every batch of the epoch runs,
including the short last one), drop_last=True for a model that really carries its state across batches
(truncated BPTT; every step runs and the carried state is detached), and the record's exampleFix and
validationCode run from its text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "state_per_batch", 2: "drop_last"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn", "torch", "VOCAB", "EMBED", "HIDDEN", "TAGS"], "validationCode": ["x", "hidden", "rnn"]}
VALID = {
    "state-built-per-batch": "valid_state_per_batch",
    "packed-sequence": "valid_packed",
    "no-state-yet": "valid_no_state",
    "unbatched-input": "valid_unbatched",
}
WORDINGS = [
    {"text": "Expected hidden[0] size (1, 2, 16), got [1, 4, 16]", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Expected hidden[0] size (1, 2, 16), got [1, 4, 16]", "source": "torch==1.13.1", "match": "pattern"},
    {"text": "RuntimeError: Expected hidden[0] size (1, 32, 32), got (2, 32, 32)",
     "source": "ngarneau/understanding-pytorch-batching-lstm#1", "match": "pattern"},
    {"text": "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0",
     "source": "pytorch/pytorch#195803", "match": "none",
     "why": "nn.LSTM with a PackedSequence skips the state check; the kernel's broadcasting message is shared by every "
            "broadcasting mismatch"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import math

import errkb_record as record

import hypothesis.strategies as st
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, TensorDataset

VOCAB, EMBED, HIDDEN, TAGS = 20, 8, 16, 3
BATCH, STEPS, SAMPLES = 4, 6, 10  # 10 % 4 == 2: the last batch holds 2 sequences


class StatefulTagger(nn.Module):
    """The pattern that breaks: the state is sized once, for BATCH, and kept on the module."""

    def __init__(self, batch_size=BATCH):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, TAGS)
        self.hidden = (torch.zeros(1, batch_size, HIDDEN), torch.zeros(1, batch_size, HIDDEN))

    def forward(self, x):
        y, hidden = self.lstm(self.embed(x), self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)  # carried into the next batch
        return self.out(y)


class Tagger(nn.Module):
    """Solution 1: the initial state is built in forward, from the batch it is for."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, TAGS)

    def init_hidden(self, x):
        shape = (self.lstm.num_layers, x.size(0), self.lstm.hidden_size)
        return (x.new_zeros(shape, dtype=torch.float), x.new_zeros(shape, dtype=torch.float))

    def forward(self, x):
        y, _ = self.lstm(self.embed(x), self.init_hidden(x))
        return self.out(y)


def _dataset():
    g = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randint(0, VOCAB, (SAMPLES, STEPS), generator=g),
                         torch.randint(0, TAGS, (SAMPLES, STEPS), generator=g))


def _train_epoch(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sizes, losses = [], []
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x).reshape(-1, TAGS), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sizes.append(x.size(0))
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses), losses
    return sizes


def trigger():
    torch.manual_seed(0)
    _train_epoch(StatefulTagger(), DataLoader(_dataset(), batch_size=BATCH))  # batches 4, 4, 2


def state_per_batch():
    torch.manual_seed(0)
    model = Tagger()
    sizes = _train_epoch(model, DataLoader(_dataset(), batch_size=BATCH))
    assert sizes == [4, 4, 2], sizes
    x = _dataset().tensors[0][:3]  # another batch size, as in evaluation
    with torch.no_grad():
        assert model(x).shape == (3, STEPS, TAGS)
        # a zero state built per batch is what the layer does by itself with hx=None
        y_default, _ = model.lstm(model.embed(x))
        y_built, _ = model.lstm(model.embed(x), model.init_hidden(x))
    assert torch.equal(y_default, y_built)
    # The same for a PackedSequence: the batch is batch_sizes[0], the number of sequences.
    packed = pack_padded_sequence(model.embed(x), torch.tensor([STEPS, 4, 2]), batch_first=True)
    shape = (model.lstm.num_layers, int(packed.batch_sizes[0]), model.lstm.hidden_size)
    out, _ = model.lstm(packed, (torch.zeros(shape), torch.zeros(shape)))
    assert out.data.shape == (STEPS + 4 + 2, HIDDEN)


def drop_last():
    torch.manual_seed(0)
    model = StatefulTagger()
    before = model.hidden[0].clone()
    sizes = _train_epoch(model, DataLoader(_dataset(), batch_size=BATCH, drop_last=True))
    assert sizes == [4, 4], sizes
    assert not torch.equal(model.hidden[0], before)  # the state really was carried
    assert not model.hidden[0].requires_grad


def example_fix():
    names = record.run("exampleFix", {"nn": nn, "torch": torch, "VOCAB": VOCAB, "EMBED": EMBED,
                                      "HIDDEN": HIDDEN, "TAGS": TAGS}, section="after")
    torch.manual_seed(0)
    model = names["Tagger"]()
    assert _train_epoch(model, DataLoader(_dataset(), batch_size=BATCH)) == [4, 4, 2]


def guard():
    model = StatefulTagger()
    x_last = model.embed(_dataset().tensors[0][8:])  # what the LSTM gets for the short last batch: 2 sequences
    stale = model.hidden
    fresh = Tagger().init_hidden(x_last)
    assert not record.check("validationCode", {"x": x_last, "hidden": stale, "rnn": model.lstm})
    assert record.check("validationCode", {"x": x_last, "hidden": fresh, "rnn": model.lstm})
    # The same stale state with a PackedSequence: nn.LSTM itself does not check it there, the guard does.
    packed = pack_padded_sequence(x_last, torch.tensor([STEPS, 3]), batch_first=True)
    assert not record.check("validationCode", {"x": packed, "hidden": stale, "rnn": model.lstm})


def _accepted(rnn, x, hidden):
    """The situation is valid: the layer runs on it."""
    with torch.no_grad():
        rnn(x, hidden)
    return {"x": x, "hidden": hidden, "rnn": rnn}


def _state(rnn, *batch):
    layers = rnn.num_layers * (2 if rnn.bidirectional else 1)
    h = torch.zeros(layers, *batch, rnn.proj_size or rnn.hidden_size)
    return (h, torch.zeros(layers, *batch, rnn.hidden_size)) if isinstance(rnn, nn.LSTM) else h


@st.composite
def _layers(draw):
    kind = draw(st.sampled_from([nn.LSTM, nn.GRU, nn.RNN]))
    hidden = draw(st.integers(2, 6))
    extra = {"proj_size": draw(st.integers(0, hidden - 1))} if kind is nn.LSTM else {}
    return kind(3, hidden, num_layers=draw(st.integers(1, 2)), bidirectional=draw(st.booleans()),
                batch_first=draw(st.booleans()), **extra)


@st.composite
def _per_batch(draw):
    rnn = draw(_layers())
    batch, steps = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    x = torch.randn((batch, steps, 3) if rnn.batch_first else (steps, batch, 3))
    return _accepted(rnn, x, _state(rnn, batch))


def valid_state_per_batch():
    """RNN, GRU, LSTM (with and without proj_size), 1-2 layers, bidirectional or not, batch_first both ways,
    any batch size, with a state built for that batch."""
    return _per_batch()


def valid_packed():
    """A PackedSequence (sorted and unsorted lengths) with a state for its batch_sizes[0] sequences."""
    out = []
    for kind in (nn.LSTM, nn.GRU, nn.RNN):
        rnn = kind(3, 4, batch_first=True)
        for lengths, enforce_sorted in (([5, 3, 2], True), ([2, 5, 3], False)):
            packed = pack_padded_sequence(torch.randn(3, 5, 3), torch.tensor(lengths), batch_first=True,
                                          enforce_sorted=enforce_sorted)
            out.append(_accepted(rnn, packed, _state(rnn, 3)))
    return out


def valid_no_state():
    """hidden=None before the first batch: the layer builds zeros itself."""
    lstm = nn.LSTM(3, 4)
    packed = pack_padded_sequence(torch.randn(5, 2, 3), torch.tensor([5, 2]))
    return [_accepted(lstm, torch.randn(5, 2, 3), None), _accepted(lstm, packed, None)]


def valid_unbatched():
    """A 2-D (steps, features) input with a 2-D state, as nn.RNN/GRU/LSTM accept since unbatched support."""
    return [_accepted(rnn, torch.randn(5, 3), _state(rnn)) for rnn in (nn.LSTM(3, 4), nn.GRU(3, 4, batch_first=True))]
