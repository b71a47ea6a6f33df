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
Solution 1 calls flatten_parameters() after the load and checks that the next forward gives no warning, that
every weight is a view of one storage again, that the output equals the CPU source model's, and that a
second call allocates a new buffer (the cost of calling it in every forward). Solution 2 loads the same
weights in place (copy_ under no_grad) into a freshly moved LSTM: the weights stay flat, the forward is
silent and equal. The record's exampleFix "after" part runs as the load; its validationCode flags the
trigger's LSTM and passes the flattened one.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 1, "timeout_s": 120}
SOLUTIONS = {1: "flatten_after_swap", 2: "copy_in_place"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "lstm", "pretrained"], "validationCode": ["rnn"]}
KEEP = ["lstm"]
VALID = {"flat-on-gpu": "valid_flat_on_gpu", "no-cudnn-path": "valid_no_cudnn_path"}
WORDINGS = [
    {"text": "/pytorch/aten/src/ATen/native/cudnn/RNN.cpp:1266: UserWarning: RNN module weights are not part of single "
             "contiguous chunk of memory. This means they need to be compacted at every call, possibly greatly "
             "increasing memory usage. To compact weights again call flatten_parameters().",
     "source": "ayumiymk/aster.pytorch#59", "match": "pattern"},
    {"text": "UserWarning: RNN module weights are not part of single contiguous chunk of memory. This means they need "
             "to be compacted at every call, possibly greately increasing memory usage. To compact weights again call "
             "flatten_parameters().", "source": "pytorch/examples#248", "match": "pattern"},
]
PROVENANCE = {"checked": "unverified",
              "why": "GPU-only raise site: no CPU build reports its line, no GPU run is committed, and the stored "
                     "upstream copy (00fc08aa) the excerpt came from was not re-counted here"}

import warnings

import errkb_record as record

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


def _storage(module):
    return next(module.parameters()).untyped_storage().data_ptr()


def flatten_after_swap():
    """Solution 1: flatten_parameters() once after the storage swap."""
    source, lstm, x = _loaded_through_data()
    assert not _one_storage(lstm)
    lstm.flatten_parameters()
    assert _one_storage(lstm)
    out = _forward_without_the_warning(lstm, x.to("cuda:0"))
    expected, _ = source(x)
    assert torch.allclose(out.cpu(), expected, rtol=1e-9, atol=1e-12)
    buffer = _storage(lstm)
    lstm.flatten_parameters()  # calling it again (e.g. in every forward) builds and fills a new buffer
    assert _one_storage(lstm) and _storage(lstm) != buffer, "flatten_parameters() did not copy into a new buffer"
    return "cuda: flatten_parameters() after loading the weights"


def copy_in_place():
    """Solution 2: load the same weights with copy_ under no_grad; the cuDNN buffer is kept."""
    torch.manual_seed(0)
    source = _lstm()
    lstm = _lstm().to("cuda:0")
    buffer = _storage(lstm)
    with torch.no_grad():
        for name, param in lstm.named_parameters():
            param.copy_(getattr(source, name))
    assert _one_storage(lstm) and _storage(lstm) == buffer
    x = torch.randn(4, 5, 8, dtype=torch.float64)
    out = _forward_without_the_warning(lstm, x.to("cuda:0"))
    expected, _ = source(x)
    assert torch.allclose(out.cpu(), expected, rtol=1e-9, atol=1e-12)
    return "cuda: weights loaded with copy_ under no_grad"


def example_fix():
    """The exampleFix's "after" part: copy a CPU state dict in place into the moved LSTM, then flatten."""
    torch.manual_seed(0)
    source = _lstm()
    lstm = _lstm().to("cuda:0")
    record.run("exampleFix", {"torch": torch, "lstm": lstm, "pretrained": source.state_dict()}, section="after")
    assert _one_storage(lstm)
    x = torch.randn(4, 5, 8, dtype=torch.float64)
    out = _forward_without_the_warning(lstm, x.to("cuda:0"))
    expected, _ = source(x)
    assert torch.allclose(out.cpu(), expected, rtol=1e-9, atol=1e-12)
    return "cuda: exampleFix after part"


def guard():
    """validationCode flags the LSTM loaded through param.data and passes it once flattened."""
    _, lstm, _ = _loaded_through_data()
    assert not record.check("validationCode", {"rnn": lstm})
    lstm.flatten_parameters()
    assert record.check("validationCode", {"rnn": lstm})
    return "cuda: validationCode on the trigger's LSTM"


def _warns(lstm, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lstm(x)
    return any(WARNING_TEXT in str(w.message) for w in caught)


def valid_flat_on_gpu():
    """An LSTM moved to the GPU, and one loaded with load_state_dict (an in-place copy): no warning."""
    torch.manual_seed(0)
    moved = _lstm().to("cuda:0")
    loaded = _lstm().to("cuda:0")
    loaded.load_state_dict(_lstm().state_dict())
    x = torch.randn(4, 5, 8, dtype=torch.float64, device="cuda:0")
    assert not _warns(moved, x) and not _warns(loaded, x)
    return [{"rnn": moved}, {"rnn": loaded}]


def valid_no_cudnn_path():
    """Where cuDNN does not run the layer nothing is compacted: on the CPU, and on the GPU with cuDNN switched off
    (weights swapped through param.data in both)."""
    source, on_gpu, x = _loaded_through_data()
    torch.backends.cudnn.enabled = False  # stays off for the guard check in this stage's process
    assert not _warns(on_gpu, x.to("cuda:0"))
    on_cpu = _lstm()
    for name, param in on_cpu.named_parameters():
        param.data = getattr(source, name).detach().clone()
    assert not _warns(on_cpu, x)
    return [{"rnn": on_gpu}, {"rnn": on_cpu}]
