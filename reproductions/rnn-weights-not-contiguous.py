"""A two-layer LSTM is moved to cuda:0, which packs its weights into one cuDNN weight buffer
(flatten_parameters). Weights from another copy of the model (standing in for a checkpoint kept on the
CPU) are then loaded by assigning param.data = tensor.to(device): the Parameter objects stay the same, so
the module does not notice, but each weight now has storage of its own outside the buffer. At the next
forward, ATen's cuDNN path (try_get_weight_buf) finds the weights are not the views it expects and
_cudnn_rnn emits, through TORCH_WARN, the UserWarning "RNN module weights are not part of single
contiguous chunk of memory. This means they need to be compacted at every call, possibly greatly
increasing memory usage. To compact weights again call flatten_parameters()." (with "(Triggered internally
at .../aten/src/ATen/native/cudnn/RNN.cpp:LINE.)" appended), then copies the weights for that call.
Needs one CUDA GPU with cuDNN: on the CPU flatten_parameters() is a no-op and the warning does not exist,
so there is no CPU variant. float64 keeps TF32 out of the output comparison.
fix() calls flatten_parameters() after the load and checks that the next forward gives no warning, that
every weight is a view of one storage again, that the output equals the CPU source model's, and that
changing a weight in place (copy_ under no_grad) keeps it that way.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 1, "timeout_s": 120}

import warnings

import torch
import torch.nn as nn

WARNING_TEXT = "RNN module weights are not part of single contiguous chunk of memory"


def _lstm():
    return nn.LSTM(8, 16, num_layers=2, batch_first=True).double()


def _loaded_through_data():
    assert torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled
    torch.manual_seed(0)
    source = _lstm()  # the weights to load, on the CPU
    lstm = _lstm().to("cuda:0")  # moving it flattens its weights into one cuDNN buffer
    for name, param in lstm.named_parameters():
        param.data = getattr(source, name).detach().to(param.device)  # new storage, same Parameter
    x = torch.randn(4, 5, 8, dtype=torch.float64)
    return source, lstm, x


def _forward_without_the_warning(lstm, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, _ = lstm(x)
    assert not [w for w in caught if WARNING_TEXT in str(w.message)], "cuDNN still compacts the weights"
    return out


def _one_storage(module):
    return len({p.untyped_storage().data_ptr() for p in module.parameters()}) == 1


def trigger():
    source, lstm, x = _loaded_through_data()
    lstm(x.to("cuda:0"))  # warns from ATen's _cudnn_rnn
    return "cuda: LSTM weights loaded through param.data after .to('cuda:0')"


def fix():
    source, lstm, x = _loaded_through_data()
    assert not _one_storage(lstm)
    lstm.flatten_parameters()  # the documented fix
    assert _one_storage(lstm)
    out = _forward_without_the_warning(lstm, x.to("cuda:0"))
    expected, _ = source(x)
    assert torch.allclose(out.cpu(), expected, rtol=1e-9, atol=1e-12)

    with torch.no_grad():  # later weight changes made in place keep the weights inside the buffer
        lstm.weight_hh_l0.copy_(lstm.weight_hh_l0.flip(0))
        source.weight_hh_l0.copy_(source.weight_hh_l0.flip(0))
    assert _one_storage(lstm)
    out = _forward_without_the_warning(lstm, x.to("cuda:0"))
    expected, _ = source(x)
    assert torch.allclose(out.cpu(), expected, rtol=1e-9, atol=1e-12)
    return "cuda: flatten_parameters() after loading the weights"
