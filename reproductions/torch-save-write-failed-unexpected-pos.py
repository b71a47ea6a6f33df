"""torch.save writes a Linear layer's state_dict to a destination where every write fails with 'No space left on
device': /dev/full, which behaves exactly like a full disk. The first data record fails inside _save (the chained
exception; its wording differs between builds), then the writer's __exit__ (torch/serialization.py) calls write_end_of_file, whose position check in
caffe2/serialize/inline_container.cc raises the RuntimeError the traceback ends with: "[enforce fail at
inline_container.cc:672] . unexpected pos 832 vs 726". The demonstrations: the checkpoint's size compared with the
free space of the destination, and the save done where it fits (the weights load back equal); a save through a
temporary file and os.replace, shown to keep the previous checkpoint loadable when the new save fails for lack of
space. The record's exampleFix runs from its text. CPU only; needs /dev/full (Linux).

Drafted by `errkb draft` from save_full.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos 832 vs 726
  raised at torch/serialization.py:834
  chained from: RuntimeError: basic_ios::clear: iostream error
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author dropped the enforce prefix
(its line number changes with every build) from the pattern and added the first failure's PytorchStreamWriter
wording. At landing the pattern was anchored on the file name both wordings carry ("inline_container.cc"): its two
alternatives share no word, and the matcher's prefilter needs one that every match contains.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "save_where_it_fits", 2: "atomic_save_keeps_previous"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["model", "path"]}
KEEP = ["model"]
WORDINGS = [
    {'text': "[enforce fail at inline_container.cc:672] . unexpected pos 832 vs 726", 'source': 'torch==2.13.0',
     'match': 'pattern'},
    {'text': "[enforce fail at inline_container.cc:603] . unexpected pos 576 vs 470", 'source': 'torch==2.5.1',
     'match': 'pattern'},
    {'text': "[enforce fail at inline_container.cc:593] . PytorchStreamWriter failed writing file data/1: file write failed",
     'source': 'pytorch/pytorch#121833', 'match': 'pattern'},
    {'text': "[enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file data/3: file write failed",
     'source': 'zai-org/ChatGLM-6B#1166', 'match': 'pattern'},
    {'text': "[enforce fail at C:\\cb\\pytorch_1000000000000\\work\\caffe2\\serialize\\inline_container.cc:450] . "
             "PytorchStreamWriter failed writing file data/10: file write failed",
     'source': '152334H/DL-Art-School#49', 'match': 'pattern'},
    {'text': "[inline_container.cc] PytorchStreamWriter failed writing file data/271: file write failed",
     'source': 'innnky/so-vits-svc#46', 'match': 'pattern'},
    {'text': "unexpected pos 190007680 vs 190007572", 'source': 'innnky/so-vits-svc#46', 'match': 'matcher'},
    {'text': "PytorchStreamWriter failed writing file data/3: file write failed", 'source': 'zai-org/ChatGLM-6B#1166',
     'match': 'none', 'why': "the issue's title, without the inline_container.cc prefix: it shares no word with the "
                             "record's message and the pattern needs the prefix; the documentation says so"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import io
import os
import resource
import shutil
import signal

import errkb_record as record

import torch


def _model():
    torch.manual_seed(0)
    return torch.nn.Linear(256, 256)


def _same(state, model):
    for name, value in model.state_dict().items():
        assert torch.equal(state[name], value), name


def trigger():
    # the checkpoint directory's disk is full: /dev/full fails every write with ENOSPC, as a full disk does
    model = torch.nn.Linear(256, 256)
    torch.save(model.state_dict(), "/dev/full")


def save_where_it_fits():
    """Solution 1: measure the checkpoint, check the destination's free space, save where it fits."""
    model = _model()
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    size = buffer.tell()
    # the estimate for checkpoints too large to serialize in memory: the tensors' bytes, which the file exceeds
    # only by the archive's small overhead
    estimate = sum(v.numel() * v.element_size() for v in model.state_dict().values())
    assert estimate <= size <= estimate + 4096, (estimate, size)
    try:
        torch.save(model.state_dict(), "/dev/full")  # the full disk
    except RuntimeError as exc:
        assert "unexpected pos" in str(exc) or "file write failed" in str(exc), exc
    else:
        raise AssertionError("the save to a full disk succeeded")
    os.makedirs("checkpoints", exist_ok=True)
    assert shutil.disk_usage("checkpoints").free > 2 * size  # room for it here
    torch.save(model.state_dict(), "checkpoints/model.pt")
    _same(torch.load("checkpoints/model.pt"), model)


def _save_with_disk_full(state, path):
    """torch.save while writes stop part-way, as on a disk that fills up during the save: RLIMIT_FSIZE makes every
    write past 100 kB fail (SIGXFSZ ignored, so the write returns an error as ENOSPC would)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, hard))
    try:
        torch.save(state, path)
    except RuntimeError as exc:
        assert "unexpected pos" in str(exc) or "file write failed" in str(exc), exc
    else:
        raise AssertionError("the save succeeded although the writes failed")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def atomic_save_keeps_previous():
    """Solution 2: save to a temporary file, replace only after success; a failed save keeps the old checkpoint,
    while the same failure in place ruins it."""
    previous = _model()
    newer = torch.nn.Linear(256, 256)
    # in place: the failed save leaves a half-written file that no longer loads
    torch.save(previous.state_dict(), "inplace.pt")
    _save_with_disk_full(newer.state_dict(), "inplace.pt")
    try:
        torch.load("inplace.pt")
    except RuntimeError:
        pass
    else:
        raise AssertionError("the half-written checkpoint loaded")
    # through a temporary file: the same failure leaves the previous checkpoint intact
    torch.save(previous.state_dict(), "last.pt")
    _save_with_disk_full(newer.state_dict(), "last.pt.tmp")
    _same(torch.load("last.pt"), previous)
    # with room again, the temporary file is completed and replaces the old checkpoint
    torch.save(newer.state_dict(), "last.pt.tmp")
    os.replace("last.pt.tmp", "last.pt")
    _same(torch.load("last.pt"), newer)


def example_fix():
    model = _model()
    names = record.run("exampleFix", {"model": model, "path": "model.pt"}, section="after")
    assert names["model"] is model
    assert not os.path.exists("model.pt.tmp")
    _same(torch.load("model.pt"), model)
