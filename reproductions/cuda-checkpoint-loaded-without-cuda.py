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
torch.cuda.is_available() of this machine. fix() loads the same file with map_location="cpu" (and torch.device("cpu"))
and checks the tensors' values, dtype and device, then re-saves them and checks the new file records "cpu"
and loads without map_location.
"""

NEEDS = {"packages": {"torch": ">=2.6"}, "cuda_devices": 0, "timeout_s": 60}

import io
import pickle
import zipfile
from collections import OrderedDict

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


def trigger():
    data = _cuda_checkpoint(_state_dict())
    torch.load(io.BytesIO(data))  # no map_location; weights_only defaults to True


def fix():
    expected = _state_dict()
    data = _cuda_checkpoint(expected)
    loaded = None
    for kwargs in ({"map_location": "cpu"}, {"map_location": torch.device("cpu"), "weights_only": True}):
        loaded = torch.load(io.BytesIO(data), **kwargs)
        assert list(loaded) == list(expected)
        for name, tensor in expected.items():
            assert loaded[name].device.type == "cpu"
            assert loaded[name].dtype == tensor.dtype
            assert torch.equal(loaded[name], tensor)

    # Converting the file once: re-saving the CPU-mapped tensors records them as "cpu", so a plain
    # torch.load (no map_location) then works on this machine.
    buf = io.BytesIO()
    torch.save(loaded, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        (pkl_name,) = [n for n in z.namelist() if n.endswith("/data.pkl")]
        assert [pid[3] for pid in _persistent_ids(z.read(pkl_name))] == ["cpu"] * len(expected)
    buf.seek(0)
    reloaded = torch.load(buf)
    assert all(torch.equal(reloaded[name], tensor) for name, tensor in expected.items())
