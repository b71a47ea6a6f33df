"""A state_dict saved during a GPU run is loaded with a plain torch.load(path) on a machine without CUDA.
torch.save's zip format records, for every storage, a persistent id ("storage", storage_type, key,
location, numel) in archive/data.pkl, and the location is whatever torch.serialization.location_tag
returned for the storage: "cuda:0" for a tensor on the first GPU. torch.load hands that location to
default_restore_location, whose CUDA deserializer calls _validate_device, and with
torch.cuda.is_available() False it raises RuntimeError "Attempting to deserialize object on a CUDA device
but torch.cuda.is_available() is False. ...". The default weights_only=True unpickler (PyTorch >= 2.6)
calls the same persistent_load and lets this RuntimeError through unchanged (torch.load only rewrites
pickle.UnpicklingError), so the class and message are the same with weights_only True or False.

How the checkpoint is made without a GPU: _cuda_checkpoint() registers an extra tagger with
torch.serialization.register_package (priority 1, ahead of the built-in CPU tagger) that answers
"cuda:0" for exactly the storages of the tensors being saved and None for anything else, then calls the
ordinary torch.save. torch.save's own persistent_id therefore writes ("storage", torch.FloatStorage, "0",
"cuda:0", numel) just as it does on a GPU, where the built-in CUDA tagger returns "cuda:0"; the tensor
bytes under archive/data/<key> are written from CPU memory here and from a device-to-host copy on a GPU,
which gives the same bytes. The rest of the archive (.format_version, .storage_alignment, byteorder,
version, .data/serialization_id) is written by the same code either way. The function reads data.pkl
back with a plain pickle.Unpickler and checks every persistent id is ("storage", torch.FloatStorage, key,
"cuda:0", numel) before the file is used. The extra
tagger's deserializer always returns None, so loading goes through PyTorch's own deserializers. The
tensors are never on a GPU and no CUDA call is faked: the error comes from the real
torch.cuda.is_available() of this machine. Solution 1 loads the same file with map_location="cpu" (and
torch.device("cpu")) and checks the tensors' values, dtype and device; solution 2 converts the file once
(load with map_location="cpu", save again) and checks the new file records "cpu" and loads without
map_location. The record's exampleFix "after" part runs on a ckpt.pt written the same way, into an
nn.Linear(3, 2) whose state_dict has these shapes. Every stage first sets CUDA_VISIBLE_DEVICES='' (a listed
real cause), so that on a GPU machine it runs as on a machine without CUDA; on a CPU-only one nothing changes.
"""

NEEDS = {"packages": {"torch": ">=2.6"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "map_location_cpu", 2: "convert_once"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["torch", "model"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
             "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
             "storages to the CPU.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
     "source": "seoungwugoh/STM#16", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import io
import os
import pickle
import tempfile
import zipfile
from collections import OrderedDict

import errkb_record as record

import torch
import torch.serialization


def _state_dict():
    return OrderedDict(
        weight=torch.arange(6, dtype=torch.float32).reshape(2, 3),
        bias=torch.tensor([0.5, -1.5]),
    )


class _PersistentIdRecorder(pickle.Unpickler):
    """Reads data.pkl without building tensors; collects the persistent ids in order."""

    def __init__(self, f):
        super().__init__(f)
        self.ids = []

    def persistent_load(self, pid):
        self.ids.append(pid)
        return None

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return lambda *args: None
        return f"{module}.{name}"  # storage types such as torch.FloatStorage


def _persistent_ids(pkl):
    recorder = _PersistentIdRecorder(io.BytesIO(pkl))
    recorder.load()
    return recorder.ids


_AS_CUDA0 = set()  # _cdata of the storages the extra tagger reports as "cuda:0"
_REGISTERED = []


def _tag_as_cuda0(storage):
    return "cuda:0" if getattr(storage, "_cdata", None) in _AS_CUDA0 else None


def _no_deserialize(storage, location):
    return None  # never handles anything: loading goes through PyTorch's own deserializers


def _cuda_checkpoint(state_dict):
    """Bytes of a torch.save zip whose storages are recorded on cuda:0, as a GPU run writes them."""
    if not _REGISTERED:  # register once per process (equal priorities would make the registry sort fail)
        torch.serialization.register_package(1, _tag_as_cuda0, _no_deserialize)
        _REGISTERED.append(True)
    _AS_CUDA0.clear()
    _AS_CUDA0.update(t.untyped_storage()._cdata for t in state_dict.values())
    buf = io.BytesIO()
    torch.save(state_dict, buf)
    data = buf.getvalue()
    _AS_CUDA0.clear()

    with zipfile.ZipFile(io.BytesIO(data)) as z:
        (pkl_name,) = [n for n in z.namelist() if n.endswith("/data.pkl")]
        persistent_ids = _persistent_ids(z.read(pkl_name))
    assert persistent_ids == [
        ("storage", "torch.FloatStorage", str(i), "cuda:0", t.numel())
        for i, t in enumerate(state_dict.values())
    ], persistent_ids
    return data


def _no_visible_gpu():
    """Hide any GPU the way a job script with CUDA_VISIBLE_DEVICES='' does, before the first CUDA call of this
    stage's process; on a CPU-only machine (or a CPU build) nothing changes. The error is then the real
    torch.cuda.is_available() being False."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    return "no CUDA device visible (CUDA_VISIBLE_DEVICES='')"


def trigger():
    variant = _no_visible_gpu()
    data = _cuda_checkpoint(_state_dict())
    torch.load(io.BytesIO(data))  # no map_location; weights_only defaults to True


def _equal_on_cpu(loaded, expected):
    assert list(loaded) == list(expected)
    for name, tensor in expected.items():
        assert loaded[name].device.type == "cpu" and loaded[name].dtype == tensor.dtype
        assert torch.equal(loaded[name], tensor)


def map_location_cpu():
    """Solution 1: torch.load(..., map_location='cpu') (or torch.device('cpu'))."""
    _no_visible_gpu()
    expected = _state_dict()
    data = _cuda_checkpoint(expected)
    for kwargs in ({"map_location": "cpu"}, {"map_location": torch.device("cpu"), "weights_only": True}):
        _equal_on_cpu(torch.load(io.BytesIO(data), **kwargs), expected)


def convert_once():
    """Solution 2: load with map_location='cpu', save again; the new file records 'cpu' and loads plainly."""
    _no_visible_gpu()
    expected = _state_dict()
    converted = io.BytesIO()
    torch.save(torch.load(io.BytesIO(_cuda_checkpoint(expected)), map_location="cpu"), converted)
    with zipfile.ZipFile(io.BytesIO(converted.getvalue())) as z:
        (pkl_name,) = [n for n in z.namelist() if n.endswith("/data.pkl")]
        assert [pid[3] for pid in _persistent_ids(z.read(pkl_name))] == ["cpu"] * len(expected)
    converted.seek(0)
    _equal_on_cpu(torch.load(converted), expected)  # no map_location


def example_fix():
    """The exampleFix's "after" part on a ckpt.pt saved from cuda:0, loaded into a model with those shapes."""
    _no_visible_gpu()
    expected = _state_dict()
    model = torch.nn.Linear(3, 2)
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "ckpt.pt"), "wb") as f:
            f.write(_cuda_checkpoint(expected))
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            names = record.run("exampleFix", {"torch": torch, "model": model}, section="after")
        finally:
            os.chdir(cwd)
    assert names["model"] is model
    assert next(model.parameters()).device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    _equal_on_cpu(OrderedDict((k, v.cpu()) for k, v in model.state_dict().items()), expected)
