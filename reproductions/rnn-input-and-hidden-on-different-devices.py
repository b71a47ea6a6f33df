"""An LSTM encoder is moved to a GPU together with its batch, but the initial state (h0, c0) is built
with torch.zeros(num_layers, batch, hidden) and no device=, so it is created on the CPU. Before any
computation, ATen's check_attributes (aten/src/ATen/native/RNN.h, called by both the cuDNN kernel
_cudnn_rnn and the generic ATen LSTM) compares the device of every hidden tensor with the input's and
raises RuntimeError "Input and hidden tensors are not at the same device, found input tensor at cuda:0
and hidden tensor at cpu". The real case needs one CUDA GPU and runs when torch.cuda.device_count() >= 1.
Without a GPU, the CPU variant puts the module and the batch on PyTorch's meta device and keeps the state
on the CPU: the generic ATen LSTM reaches the same check_attributes line and raises the same message with
"meta" in place of "cuda:0". Solution 1 builds the state from the batch (same device and dtype), solution 2
passes no state; each checks the forward runs and lands on the batch's device, and that the output equals the
other's and a backward pass gives finite gradients; meta tensors hold no values, so in the CPU variant the
value checks run the same code on the CPU. The record's exampleFix "after" init_hidden, validationCode and
tryCatchPattern run from its text in the trigger's situation.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "state_on_batch_device", 2: "no_state"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard", "tryCatchPattern": "try_catch"}
CODE_NAMES = {"exampleFix": [], "validationCode": ["x", "state"], "tryCatchPattern": ["rnn", "x", "state"]}
VALID = {"state-on-input-device": "valid_state_on_input_device", "no-state-yet": "valid_no_state"}
WORDINGS = [
    {"text": "Input and hidden tensors are not at the same device, found input tensor at meta and hidden tensor at cpu",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Input and hidden tensors are not at the same device, found input tensor at meta and hidden tensor at cpu",
     "source": "torch==2.1.2", "match": "pattern"},
    {"text": "RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
             "tensor at cpu", "source": "Lightning-AI/pytorch-lightning#3738", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import types

import errkb_record as record

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

FEATURES, HIDDEN, NUM_LAYERS = 8, 16, 2
BATCH, STEPS = 4, 5


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, HIDDEN, num_layers=NUM_LAYERS, batch_first=True)

    def forward(self, x, state):
        out, _ = self.lstm(x, state)
        return out


def _variant():
    """(device for the model and the batch, name of the variant that runs)."""
    if torch.cuda.device_count() >= 1:
        return torch.device("cuda:0"), "cuda: model and batch on cuda:0, initial state on the CPU"
    return torch.device("meta"), "cpu: meta-device stand-in (model and batch on meta, initial state on the CPU)"


def _model_and_batch(device):
    torch.manual_seed(0)
    model = Encoder().to(device)
    x = torch.randn(BATCH, STEPS, FEATURES).to(device)
    return model, x


def init_state(x):
    """Zero (h0, c0) on the batch's own device and dtype: the documented fix."""
    shape = (NUM_LAYERS, x.size(0), HIDDEN)
    return (
        torch.zeros(shape, device=x.device, dtype=x.dtype),
        torch.zeros(shape, device=x.device, dtype=x.dtype),
    )


def trigger():
    device, variant = _variant()
    model, x = _model_and_batch(device)
    h0 = torch.zeros(NUM_LAYERS, BATCH, HIDDEN)  # no device=: created on the CPU
    c0 = torch.zeros(NUM_LAYERS, BATCH, HIDDEN)
    model(x, (h0, c0))  # raises in ATen's check_attributes
    return variant


def _cpu_state():
    return torch.zeros(NUM_LAYERS, BATCH, HIDDEN), torch.zeros(NUM_LAYERS, BATCH, HIDDEN)  # no device=


def _values_and_gradients(model, x, state):
    """The output with `state` equals the layer's default zero state, and a backward pass gives finite gradients."""
    out = model(x, state)
    default, _ = model.lstm(x)  # hx=None
    assert out.device == x.device
    assert torch.allclose(out, default, rtol=0, atol=1e-6)
    loss = out.pow(2).mean()
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def state_on_batch_device():
    """Solution 1: zeros on x.device with x.dtype."""
    device, variant = _variant()
    model, x = _model_and_batch(device)
    state = init_state(x)
    assert all(t.device == x.device for t in state)
    out = model(x, state)
    assert out.device == x.device and tuple(out.shape) == (BATCH, STEPS, HIDDEN)
    if device.type == "meta":
        model, x = _model_and_batch(torch.device("cpu"))
    _values_and_gradients(model, x, init_state(x))
    return variant


def no_state():
    """Solution 2: hx=None, the layer makes its zero state on the input's device."""
    device, variant = _variant()
    model, x = _model_and_batch(device)
    out = model(x, None)
    assert out.device == x.device and tuple(out.shape) == (BATCH, STEPS, HIDDEN)
    if device.type == "meta":
        model, x = _model_and_batch(torch.device("cpu"))
    out = model(x, None)
    assert torch.allclose(out, model(x, init_state(x)), rtol=0, atol=1e-6)
    out.pow(2).mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    return variant


def example_fix():
    """The exampleFix's "after" init_hidden, called as the model would (self with num_layers and hidden_size)."""
    device, variant = _variant()
    names = record.run("exampleFix", {}, section="after")
    owner = types.SimpleNamespace(num_layers=NUM_LAYERS, hidden_size=HIDDEN)
    model, x = _model_and_batch(device)
    state = names["init_hidden"](owner, x)
    assert all(t.device == x.device for t in state)
    assert model(x, state).device == x.device
    if device.type == "meta":
        model, x = _model_and_batch(torch.device("cpu"))
    _values_and_gradients(model, x, names["init_hidden"](owner, x))
    return variant


def guard():
    """validationCode flags the trigger's CPU state and passes one built on the batch's device."""
    device, variant = _variant()
    _, x = _model_and_batch(device)
    assert not record.check("validationCode", {"x": x, "state": _cpu_state()})
    assert record.check("validationCode", {"x": x, "state": init_state(x)})
    return variant


def try_catch():
    """tryCatchPattern catches the real error from the trigger's call and recovers with the state moved to x.device."""
    device, variant = _variant()
    model, x = _model_and_batch(device)
    names = record.run("tryCatchPattern", {"rnn": model.lstm, "x": x, "state": _cpu_state()})
    assert names["out"].device == x.device and tuple(names["out"].shape) == (BATCH, STEPS, HIDDEN)
    assert all(t.device == x.device for t in names["state"])
    return variant


def _runs(rnn, x, state):
    """The situation is valid: the layer runs on it (on the CPU and, where there is one, on the GPU)."""
    rnn(x, state)
    return {"x": x, "state": state}


def _situations(device):
    torch.manual_seed(0)
    lstm = nn.LSTM(FEATURES, HIDDEN, num_layers=NUM_LAYERS, batch_first=True).to(device)
    gru = nn.GRU(FEATURES, HIDDEN, num_layers=NUM_LAYERS, batch_first=True).to(device)
    x = torch.randn(BATCH, STEPS, FEATURES, device=device)
    packed = pack_padded_sequence(x, torch.tensor([STEPS, 3, 2, 1]), batch_first=True)
    return [_runs(lstm, x, init_state(x)), _runs(lstm, packed, init_state(x)),
            _runs(gru, x, init_state(x)[0]), _runs(lstm, x[0], tuple(t[:, 0] for t in init_state(x)))]


def valid_state_on_input_device():
    """LSTM (h, c) and GRU h built on the input's device; a PackedSequence input; an unbatched input."""
    devices = [torch.device("cpu")] + ([torch.device("cuda:0")] if torch.cuda.is_available() else [])
    return [ns for device in devices for ns in _situations(device)]


def valid_no_state():
    """hidden=None before the first batch: the layer makes zeros on the input's device."""
    torch.manual_seed(0)
    lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
    return _runs(lstm, torch.randn(BATCH, STEPS, FEATURES), None)
