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

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "state_per_batch", 2: "drop_last"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}

import math

import errkb_record as record

import torch
import torch.nn as nn
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
    x_last = _dataset().tensors[0][8:]  # the short last batch: 2 sequences
    stale = StatefulTagger().hidden
    fresh = Tagger().init_hidden(x_last)
    assert not record.check("validationCode", {"x": x_last, "hidden": stale, "batch_first": True})
    assert record.check("validationCode", {"x": x_last, "hidden": fresh, "batch_first": True})
