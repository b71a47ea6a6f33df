"""A BiLSTM-CRF tagger trains on padded batches, but its predict path runs one sentence at a time and feeds the
token ids without a batch dimension. nn.Embedding, nn.LSTM (unbatched 2-D input is allowed since PyTorch 1.11) and
nn.Linear all accept that, so the emission scores come out as (seq_len, num_tags); pytorch-crf's CRF.decode (like
CRF.forward) needs a 3-D (batch, seq_len, num_tags) tensor (or (seq_len, batch, num_tags) with batch_first=False)
and CRF._validate raises "emissions must have dimension of 3, got 2" (torchcrf/__init__.py). The demonstrations:
the 2-D emissions given a batch axis of one with unsqueeze(0) for a batch_first CRF (and unsqueeze(1) for a
time-major one), decoding to the same path as the sentence decoded inside a batch (solution 1); and the
batch dimension kept through the model: the ids sent as a (1, seq_len) batch, and token-level logits flattened to
(batch * seq_len, num_tags) viewed back to (batch, seq_len, num_tags) for a training step (solution 2). The record's
exampleFix "after" part and validationCode run from its own text. CPU only: a pure argument check."""
NEEDS = {"packages": {"torch": ">=1.13", "pytorch-crf": "==0.7.2", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "unsqueeze_emissions", 2: "keep_batch_dimension"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["tagger", "crf", "token_ids"], "validationCode": ["crf", "emissions"]}
KEEP = ["tagger", "crf"]
VALID = {"batched-either-layout": "valid_batched"}
WORDINGS = [
    {"text": "emissions must have dimension of 3, got 2", "source": "pytorch-crf==0.7.2", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "pytorch-crf", "version": "0.7.2"}

import math

import errkb_record as record

import hypothesis.strategies as st
import torch
import torch.nn as nn
from torchcrf import CRF

NUM_TAGS = 5


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * dim, NUM_TAGS)
        self.crf = CRF(NUM_TAGS, batch_first=True)

    def emissions(self, token_ids):
        """(batch, seq_len) ids -> (batch, seq_len, num_tags); (seq_len,) ids -> (seq_len, num_tags)."""
        out, _ = self.lstm(self.embed(token_ids))
        return self.proj(out)


def _model():
    torch.manual_seed(0)
    return Tagger().eval()


def _sentence():
    return torch.tensor([5, 17, 3, 42, 8, 11])  # one sentence of 6 token ids, no batch dimension


def _batch():
    """The sentence as the first row of a batch with another sentence of the same length (no padding, so a
    bidirectional LSTM sees exactly the same tokens for it)."""
    return torch.stack([_sentence(), torch.tensor([9, 4, 4, 30, 2, 7])])


def _padded_batch():
    """A right-padded training batch (lengths 6, 8, 3) and its mask."""
    ids = torch.zeros(3, 8, dtype=torch.long)
    ids[0, :6] = _sentence()
    ids[1] = torch.tensor([9, 4, 4, 30, 2, 7, 19, 1])
    ids[2, :3] = torch.tensor([12, 6, 33])
    return ids, ids != 0


def trigger():
    model = _model()
    with torch.no_grad():
        emissions = model.emissions(_sentence())  # (6, 5): nothing before the CRF complains
        model.crf.decode(emissions)


def _reference_path(model):
    """The sentence decoded inside a batch, where the model has its usual shapes."""
    with torch.no_grad():
        return model.crf.decode(model.emissions(_batch()))[0]


def unsqueeze_emissions():
    """Solution 1: give the 2-D emissions a batch axis of one (dim 0 when batch_first, dim 1 when time-major)."""
    model = _model()
    with torch.no_grad():
        emissions = model.emissions(_sentence())
        path = model.crf.decode(emissions.unsqueeze(0))[0]
        time_major = CRF(NUM_TAGS)
        time_major.load_state_dict(model.crf.state_dict())
        path_tm = time_major.decode(emissions.unsqueeze(1))[0]
    assert len(path) == len(_sentence()) and all(0 <= t < NUM_TAGS for t in path), path
    assert path == path_tm == _reference_path(model), (path, path_tm)


def keep_batch_dimension():
    """Solution 2: keep (batch, seq_len, ...) through the model: a (1, seq_len) batch at prediction, and token-level
    logits viewed back to (batch, seq_len, num_tags) before the CRF when training."""
    model = _model()
    with torch.no_grad():
        emissions = model.emissions(_sentence().unsqueeze(0))
        assert emissions.shape == (1, 6, NUM_TAGS)
        path = model.crf.decode(emissions)[0]
    assert path == _reference_path(model), path

    model.train()
    ids, mask = _padded_batch()
    tags = torch.randint(NUM_TAGS, ids.shape, generator=torch.Generator().manual_seed(1))
    flat = model.emissions(ids).reshape(-1, NUM_TAGS)  # (24, 5), as a token-classification head would leave it
    emissions = flat.view(ids.size(0), ids.size(1), NUM_TAGS)
    loss = -model.crf(emissions, tags, mask=mask, reduction="mean")
    assert math.isfinite(loss.item()) and loss.item() > 0, loss
    loss.backward()
    assert model.proj.weight.grad is not None and torch.isfinite(model.proj.weight.grad).all()
    assert model.crf.transitions.grad is not None and model.crf.transitions.grad.abs().sum() > 0


def example_fix():
    """The exampleFix's "after" part on the trigger's sentence."""
    model = _model()
    with torch.no_grad():
        names = record.run("exampleFix", {"tagger": model, "crf": model.crf, "token_ids": _sentence()}, section="after")
    assert names["path"] == _reference_path(model), names["path"]


def guard():
    """validationCode flags the trigger's 2-D emissions and passes the batched ones."""
    model = _model()
    with torch.no_grad():
        flat = model.emissions(_sentence())
        batched = model.emissions(_sentence().unsqueeze(0))
    assert not record.check("validationCode", {"crf": model.crf, "emissions": flat})
    assert record.check("validationCode", {"crf": model.crf, "emissions": batched})


@st.composite
def _batched(draw):
    """3-D emissions in the CRF's own layout, batch of one included, for either batch_first; decode accepts them."""
    num_tags, batch, steps = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 5))
    crf = CRF(num_tags, batch_first=draw(st.booleans()))
    emissions = torch.randn((batch, steps, num_tags) if crf.batch_first else (steps, batch, num_tags))
    assert len(crf.decode(emissions)) == batch
    return {"crf": crf, "emissions": emissions}


def valid_batched():
    return _batched()
