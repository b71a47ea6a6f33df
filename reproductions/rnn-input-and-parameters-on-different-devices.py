"""A tagger keeps its LSTM layers in a plain Python list instead of an nn.ModuleList, so model.to(device)
(and model.cuda(), and nn.DataParallel's replication) never sees them: the embedding moves to the GPU
with the batch, the LSTM's weights stay on the CPU. Before any computation ATen's check_attributes
(aten/src/ATen/native/RNN.h), reached by the generic LSTM and by cuDNN's, compares every weight's device
with the input's and raises RuntimeError "Input and parameter tensors are not at the same device, found
input tensor at cuda:0 and parameter tensor at cpu". The real case needs one CUDA GPU and runs when one
is present. Without a GPU, the CPU variant moves the model and the batch to PyTorch's meta device
instead: the unregistered LSTM stays on the CPU and the same check_attributes line raises the same
message with "meta" in place of "cuda:0" (a stand-in, named as such in the returned variant).
Demonstrations: registering the layers in nn.ModuleList so that .to() moves them (every parameter lands
on the device and the forward runs), and moving an RNN that was simply never moved; meta tensors hold
no values, so in the CPU variant the outputs are also compared on the CPU. The record's exampleFix and
validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "register_submodules", 2: "move_model_to_input_device"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn", "VOCAB", "EMBED", "HIDDEN"], "validationCode": ["rnn", "x"]}
VALID = {"layer-on-input-device": "valid_layer_on_input_device"}
WORDINGS = [
    {"text": "Input and parameter tensors are not at the same device, found input tensor at meta and parameter tensor "
             "at cpu", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Input and parameter tensors are not at the same device, found input tensor at meta and parameter tensor "
             "at cpu", "source": "torch==2.1.2", "match": "pattern"},
    {"text": "RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cuda:0 and "
             "parameter tensor at cpu", "source": "NatLabRockies/Wattile#243", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

VOCAB, EMBED, HIDDEN, BATCH, STEPS = 20, 8, 16, 3, 5


class ListTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.layers = [nn.LSTM(EMBED, HIDDEN, batch_first=True)]  # plain list: not registered

    def forward(self, tokens):
        y = self.embed(tokens)
        for lstm in self.layers:
            y, _ = lstm(y)
        return y


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.layers = nn.ModuleList([nn.LSTM(EMBED, HIDDEN, batch_first=True)])  # registered

    def forward(self, tokens):
        y = self.embed(tokens)
        for lstm in self.layers:
            y, _ = lstm(y)
        return y


def _variant():
    if torch.cuda.device_count() >= 1:
        return torch.device("cuda:0"), "cuda: model and batch on cuda:0, the unregistered LSTM on the CPU"
    return torch.device("meta"), "cpu: meta-device stand-in (model and batch on meta, the unregistered LSTM on the CPU)"


def _tokens(device):
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, VOCAB, (BATCH, STEPS), generator=g).to(device)


def trigger():
    device, variant = _variant()
    torch.manual_seed(0)
    model = ListTagger().to(device)  # moves the embedding only
    model(_tokens(device))
    return variant


def register_submodules():
    device, variant = _variant()
    torch.manual_seed(0)
    model = Tagger().to(device)
    assert all(p.device == device for p in model.parameters())
    assert len(list(model.parameters())) == 5  # embedding + 4 LSTM tensors: the LSTM is registered now
    out = model(_tokens(device))
    assert out.device == device and tuple(out.shape) == (BATCH, STEPS, HIDDEN)
    if device.type == "meta":  # same code on the CPU, where values exist
        torch.manual_seed(0)
        cpu = Tagger()
        torch.manual_seed(0)
        listed = ListTagger()
        assert torch.allclose(cpu(_tokens("cpu")), listed(_tokens("cpu")))
    return variant


def move_model_to_input_device():
    device, variant = _variant()
    torch.manual_seed(0)
    lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)  # built on the CPU and never moved
    x = torch.randn(BATCH, STEPS, EMBED).to(device)
    lstm.to(x.device)
    assert all(p.device == x.device for p in lstm.parameters())
    y, (h, _) = lstm(x)
    assert y.device == x.device and tuple(h.shape) == (1, BATCH, HIDDEN)
    return variant


def example_fix():
    device, variant = _variant()
    names = record.run("exampleFix", {"nn": nn, "VOCAB": VOCAB, "EMBED": EMBED, "HIDDEN": HIDDEN}, section="after")
    model = names["Tagger"]().to(device)
    assert all(p.device == device for p in model.parameters())
    assert model(_tokens(device)).device == device
    return variant


def guard():
    device, variant = _variant()
    x = torch.randn(BATCH, STEPS, EMBED).to(device)
    stray = ListTagger().to(device).layers[0]
    assert not record.check("validationCode", {"rnn": stray, "x": x})
    assert record.check("validationCode", {"rnn": Tagger().to(device).layers[0], "x": x})
    return variant


def valid_layer_on_input_device():
    """Registered layers moved with the model (LSTM, GRU; padded, packed and unbatched input), on the CPU and, where
    there is one, on the GPU - each run on its input."""
    out = []
    for device in [torch.device("cpu")] + ([torch.device("cuda:0")] if torch.cuda.is_available() else []):
        model = Tagger().to(device)
        x = model.embed(_tokens(device))
        packed = pack_padded_sequence(x, torch.tensor([STEPS] + [2] * (BATCH - 1)), batch_first=True)
        gru = nn.GRU(EMBED, HIDDEN).to(device)
        for rnn, given in ((model.layers[0], x), (model.layers[0], packed), (gru, x[0])):
            rnn(given)
            out.append({"rnn": rnn, "x": given})
    return out
