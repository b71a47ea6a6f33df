"""A checkpoint is copied (or downloaded) only in part: the first half of the bytes torch.save wrote reach the
disk. torch.save writes a zip archive whose central directory sits at the end of the file, so torch.load sees the
zip signature at the start, opens the file with PyTorchFileReader, and miniz cannot find the central directory:
"PytorchStreamReader failed reading zip archive: failed finding central directory", raised by
PyTorchStreamReader::valid (caffe2/serialize/inline_container.cc, the line the build reports with
TORCH_SHOW_CPP_STACKTRACES=1). The demonstrations: the complete file fetched again after a checksum shows the copy
differs from the source, and checkpoints written atomically (a temporary file renamed into place) so that an
interrupted save leaves the previous checkpoint intact; and, for the second wording ('Expected hasRecord("version")
to be true'), a whole zip archive around the checkpoint, which torch.load refuses until the checkpoint inside is
extracted. The record's exampleFix and validationCode run from its own
text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fetch_complete_copy", 2: "atomic_save", 3: "unpack_wrapper_archive"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "complete-checkpoint": "valid_complete_checkpoint",
    "legacy-format-checkpoint": "valid_legacy_format_checkpoint",
    "tensor-checkpoint": "valid_tensor_checkpoint",
}
CODE_NAMES = {"exampleFix": ["model"], "validationCode": ["path"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "PytorchStreamReader failed reading zip archive: failed finding central directory. This is an internal "
             "miniz error. If you are seeing this error, there is a high likelihood that your checkpoint file is "
             "corrupted.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "PytorchStreamReader failed reading zip archive: failed finding central directory",
     "source": "thisserand/tortoise_local#2", "match": "matcher"},
    {"text": "[enforce fail at inline_container.cc:145] . PytorchStreamReader failed reading zip archive: failed "
             "finding central directory", "source": "NVIDIA/pix2pixHD#243", "match": "pattern"},
    {"text": 'Expected hasRecord("version") to be true, but got false.', "source": "Victorwz/LongMem#15",
     "match": "matcher"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import hashlib
import io
import os
import traceback
import zipfile
from pathlib import Path

import errkb_record as record

import torch
import torch.nn as nn


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def _checkpoint_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getvalue()


def _truncated(path="model.pt"):
    """The source checkpoint (bytes) and a local copy of its first half."""
    source = _checkpoint_bytes(_model())
    Path(path).write_bytes(source[: len(source) // 2])
    return source, path


def _same_weights(model, reference):
    for (name, a), (_, b) in zip(model.state_dict().items(), reference.state_dict().items()):
        assert torch.equal(a, b), name


def trigger():
    _, path = _truncated()
    torch.load(path)  # RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory


def fetch_complete_copy():
    """Solution 1: compare the copy with the source (size, sha256), fetch it again, then it loads."""
    source, path = _truncated()
    expected = hashlib.sha256(source).hexdigest()  # what a model page or the saving side publishes
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() != expected
    assert os.path.getsize(path) < len(source)
    Path(path).write_bytes(source)  # the copy done again, completely
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == expected
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    model.load_state_dict(torch.load(path))
    _same_weights(model, _model())


def _atomic_save(obj, path):
    tmp = f"{path}.tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)  # a rename: readers see the old file or the new one, never half of one


def atomic_save():
    """Solution 2: write to a temporary file and rename it over the checkpoint; an interrupted save loses only
    the new checkpoint, and the previous one still loads."""
    previous = _model()
    _atomic_save(previous.state_dict(), "last.pt")
    newer = _checkpoint_bytes(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)))
    Path("last.pt.tmp").write_bytes(newer[: len(newer) // 3])  # the process dies while writing the next one
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    model.load_state_dict(torch.load("last.pt"))
    _same_weights(model, previous)
    try:
        torch.load("last.pt.tmp")
        raise AssertionError("the interrupted file should not load")
    except RuntimeError as exc:  # what a direct, non-atomic save would have left as the checkpoint
        assert "failed finding central directory" in str(exc)


def unpack_wrapper_archive():
    """Solution 3: a zip archive holding the checkpoint (a downloaded folder) is refused by torch.load with the
    second wording, raised inside torch; extracting the checkpoint it holds and loading that gives the weights."""
    Path("model.pt").write_bytes(_checkpoint_bytes(_model()))
    with zipfile.ZipFile("download.pt", "w") as archive:
        archive.write("model.pt", "weights/model.pt")
    os.remove("model.pt")
    try:
        torch.load("download.pt")
        raise AssertionError("a zip archive around the checkpoint should not load")
    except RuntimeError as exc:
        assert 'Expected hasRecord("version") to be true, but got false' in str(exc), str(exc)
        assert traceback.extract_tb(exc.__traceback__)[-1].filename.endswith("serialization.py")  # raised in torch
    with zipfile.ZipFile("download.pt") as archive:
        inner = [name for name in archive.namelist() if name.endswith(".pt")]
        assert inner == ["weights/model.pt"], archive.namelist()
        archive.extract(inner[0], "unpacked")
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    model.load_state_dict(torch.load(Path("unpacked") / inner[0]))
    _same_weights(model, _model())


def example_fix():
    """The record's exampleFix, its "after" part: the atomic save, then a load that gives the saved weights."""
    model = _model()
    names = record.run("exampleFix", {"model": model}, section="after")
    assert Path("checkpoint.pt").exists() and not Path("checkpoint.pt.tmp").exists()
    loaded = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    loaded.load_state_dict(torch.load("checkpoint.pt"))
    _same_weights(loaded, model)
    assert names["model"] is model


def guard():
    """validationCode flags the truncated copy and passes the complete one."""
    source, path = _truncated()
    assert not record.check("validationCode", {"path": path})
    Path(path).write_bytes(source)
    assert record.check("validationCode", {"path": path})


def valid_complete_checkpoint():
    Path("complete.pt").write_bytes(_checkpoint_bytes(_model()))
    torch.load("complete.pt")
    return {"path": "complete.pt"}


def valid_legacy_format_checkpoint():
    """A checkpoint in the format before zip archives (still written with _use_new_zipfile_serialization=False)."""
    torch.save(_model().state_dict(), "legacy.pt", _use_new_zipfile_serialization=False)
    assert not Path("legacy.pt").read_bytes().startswith(b"PK")
    torch.load("legacy.pt")
    return {"path": "legacy.pt"}


def valid_tensor_checkpoint():
    """A bare tensor, saved to a path given as a pathlib.Path."""
    path = Path("tensor.pt")
    torch.save(torch.arange(5), path)
    assert torch.equal(torch.load(path), torch.arange(5))
    return {"path": path}
