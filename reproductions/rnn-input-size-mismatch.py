"""A tagger feeds the output of an encoder into an LSTM whose input_size was typed in by hand (8), while
the encoder actually produces 12 features per token (in real code: a BERT-large instead of a BERT-base,
300-d instead of 100-d embeddings, or a bidirectional layer's 2 * hidden). RNNBase.check_input compares
the last dimension of the input with input_size before any computation and raises "input.size(-1) must be
equal to input_size. Expected 8, got 12". Demonstrations: input_size derived from the encoder (the forward
runs and trains), a learned projection in front of an LSTM whose input_size must stay fixed, and, for the
other common cause, a Conv1d front end whose (batch, channels, time) output reaches the LSTM unpermuted
(the error is raised, then permuting the features last fixes it). The record's exampleFix and
validationCode run from its text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "derive_input_size", 2: "project_features", 3: "features_last"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn", "encoder", "HIDDEN"], "validationCode": ["x", "rnn"]}
KEEP = ["encoder"]
VALID = {"matching-width": "valid_matching_width", "packed-sequence": "valid_packed", "unbatched-input": "valid_unbatched"}
WORDINGS = [
    {"text": "input.size(-1) must be equal to input_size. Expected 8, got 12", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "input.size(-1) must be equal to input_size. Expected 8, got 12", "source": "torch==1.13.1",
     "match": "pattern"},
    {"text": "mat1 and mat2 shapes cannot be multiplied (8x12 and 8x64)", "source": "pytorch/pytorch#195803",
     "match": "none", "why": "nn.LSTM with a PackedSequence skips check_input; the kernel's matmul message belongs to "
                             "the mat1/mat2 record"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import math

import errkb_record as record

import hypothesis.strategies as st
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

VOCAB, ENCODER_DIM, CONFIGURED_DIM, HIDDEN, TAGS = 30, 12, 8, 16, 4
BATCH, STEPS = 3, 7


class Tagger(nn.Module):
    def __init__(self, encoder, lstm_input_size, project=False):
        super().__init__()
        self.encoder = encoder  # stands in for a pretrained encoder: (batch, steps, ENCODER_DIM)
        self.project = nn.Linear(encoder.embedding_dim, lstm_input_size) if project else nn.Identity()
        self.lstm = nn.LSTM(lstm_input_size, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, TAGS)

    def forward(self, tokens):
        y, _ = self.lstm(self.project(self.encoder(tokens)))
        return self.out(y)


def _batch():
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, VOCAB, (BATCH, STEPS), generator=g), torch.randint(0, TAGS, (BATCH, STEPS), generator=g)


def _train_steps(model, steps=3):
    tokens, tags = _batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(tokens).reshape(-1, TAGS), tags.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0], losses


def trigger():
    torch.manual_seed(0)
    model = Tagger(nn.Embedding(VOCAB, ENCODER_DIM), CONFIGURED_DIM)  # input_size typed in: 8
    model(_batch()[0])  # the encoder gives 12 features


def derive_input_size():
    torch.manual_seed(0)
    encoder = nn.Embedding(VOCAB, ENCODER_DIM)
    model = Tagger(encoder, encoder.embedding_dim)
    assert model.lstm.input_size == ENCODER_DIM
    assert model(_batch()[0]).shape == (BATCH, STEPS, TAGS)
    _train_steps(model)


def project_features():
    torch.manual_seed(0)
    model = Tagger(nn.Embedding(VOCAB, ENCODER_DIM), CONFIGURED_DIM, project=True)
    assert model.lstm.input_size == CONFIGURED_DIM  # the LSTM (e.g. pretrained) keeps its size
    _train_steps(model)


def features_last():
    torch.manual_seed(0)
    conv = nn.Conv1d(5, ENCODER_DIM, kernel_size=3, padding=1)
    lstm = nn.LSTM(ENCODER_DIM, HIDDEN, batch_first=True)
    signal = torch.randn(BATCH, 5, 20)  # (batch, channels, time)
    features = conv(signal)  # (batch, 12, 20): features in dim 1, time last
    try:
        lstm(features)
    except RuntimeError as exc:  # the same check, raised by the library
        assert "must be equal to input_size. Expected 12, got 20" in str(exc), exc
    else:
        raise AssertionError("the unpermuted Conv1d output was accepted")
    y, (h, _) = lstm(features.permute(0, 2, 1))  # (batch, time, features)
    assert y.shape == (BATCH, 20, HIDDEN) and h.shape == (1, BATCH, HIDDEN)


def example_fix():
    torch.manual_seed(0)
    names = record.run("exampleFix", {"nn": nn, "encoder": nn.Embedding(VOCAB, ENCODER_DIM), "HIDDEN": HIDDEN},
                       section="after")
    lstm = names["lstm"]
    y, _ = lstm(names["encoder"](_batch()[0]))
    assert y.shape == (BATCH, STEPS, HIDDEN)


def guard():
    tokens = _batch()[0]
    features = nn.Embedding(VOCAB, ENCODER_DIM)(tokens)
    assert not record.check("validationCode", {"x": features, "rnn": nn.LSTM(CONFIGURED_DIM, HIDDEN, batch_first=True)})
    assert record.check("validationCode", {"x": features, "rnn": nn.LSTM(ENCODER_DIM, HIDDEN, batch_first=True)})
    # A PackedSequence of the same features: nn.LSTM lets it through to the kernel, the guard flags it.
    packed = pack_padded_sequence(features, torch.tensor([STEPS] * BATCH), batch_first=True)
    assert not record.check("validationCode", {"x": packed, "rnn": nn.LSTM(CONFIGURED_DIM, HIDDEN, batch_first=True)})


def _accepted(rnn, x):
    """The situation is valid: the layer runs on it."""
    with torch.no_grad():
        rnn(x)
    return {"x": x, "rnn": rnn}


@st.composite
def _matching(draw):
    kind = draw(st.sampled_from([nn.LSTM, nn.GRU, nn.RNN]))
    width, batch_first = draw(st.integers(1, 6)), draw(st.booleans())
    rnn = kind(width, 3, num_layers=draw(st.integers(1, 2)), bidirectional=draw(st.booleans()), batch_first=batch_first)
    batch, steps = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return _accepted(rnn, torch.randn((batch, steps, width) if batch_first else (steps, batch, width)))


def valid_matching_width():
    """RNN, GRU, LSTM of any input_size, batch_first both ways, given that many features per step."""
    return _matching()


def valid_packed():
    """A PackedSequence of the right width (its .data is (total steps, features))."""
    return [_accepted(kind(4, 3, batch_first=True),
                      pack_padded_sequence(torch.randn(3, 5, 4), torch.tensor([2, 5, 3]), batch_first=True,
                                           enforce_sorted=False))
            for kind in (nn.LSTM, nn.GRU, nn.RNN)]


def valid_unbatched():
    """A 2-D (steps, features) input without a batch dimension."""
    return [_accepted(kind(4, 3), torch.randn(5, 4)) for kind in (nn.LSTM, nn.GRU, nn.RNN)]
