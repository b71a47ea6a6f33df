"""A training function defines its Dataset class inside itself (a closure over its arguments) and
iterates a DataLoader with worker processes started by "spawn" (the default on Windows and macOS; on
Linux it is chosen explicitly here, as CUDA code and Python 3.14's forkserver default lead to the same
requirement). A spawned worker receives the dataset, collate_fn and worker_init_fn pickled, and pickle
can only refer to classes and functions that are importable by name: while DataLoader starts the first
worker (w.start() in torch/utils/data/dataloader.py) Python's pickler raises AttributeError "Can't pickle
local object 'train.<locals>.Squares'", after torch's UserWarning about unpicklable worker arguments.
Demonstrations: the class moved to an importable module (written to a temporary folder here, as a project
module would be), num_workers=0, and, on Linux, the fork start method; each loads every batch and checks
the values. The record's validationCode runs from its text. CPU only; worker start-up takes seconds.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "importable_class", 2: "no_workers", 3: "fork_on_linux"}
CODE = {"validationCode": "guard"}
CODE_NAMES = {"validationCode": ["loader"]}
VALID = {"no-workers": "valid_no_workers", "fork-workers": "valid_fork", "importable-spawn": "valid_importable_spawn"}
WORDINGS = [
    {"text": "Can't pickle local object '_local_dataset.<locals>.Squares'", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "Can't pickle local object '_local_dataset.<locals>.Squares'", "source": "torch==1.13.1",
     "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import importlib
import os
import pickle
import sys
import tempfile
import textwrap

import errkb_record as record

import torch
from torch.utils.data import DataLoader, Dataset

N = 8
EXPECTED = torch.tensor([[float(i * i)] for i in range(N)])

MODULE = textwrap.dedent('''
    import torch
    from torch.utils.data import Dataset


    class Squares(Dataset):
        """Defined at the top level of a module: pickled by reference, found again in the worker."""

        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return torch.tensor([float(i * i)])
''')


def _local_dataset(n):
    class Squares(Dataset):  # local class: not importable by name
        def __len__(self):
            return n

        def __getitem__(self, i):
            return torch.tensor([float(i * i)])

    return Squares()


def _collect(loader):
    batches = [b for b in loader]
    return torch.cat(batches)


def trigger():
    loader = DataLoader(_local_dataset(N), batch_size=4, num_workers=1, multiprocessing_context="spawn")
    _collect(loader)


def _importable_module(folder):
    with open(os.path.join(folder, "errkb_squares_data.py"), "w") as f:
        f.write(MODULE)
    sys.path.insert(0, folder)  # spawned workers get the parent's sys.path
    return importlib.import_module("errkb_squares_data")


def importable_class():
    with tempfile.TemporaryDirectory() as tmp:
        data = _importable_module(tmp)
        loader = DataLoader(data.Squares(N), batch_size=4, num_workers=1, multiprocessing_context="spawn")
        assert torch.equal(_collect(loader), EXPECTED)


def no_workers():
    loader = DataLoader(_local_dataset(N), batch_size=4, num_workers=0)
    assert torch.equal(_collect(loader), EXPECTED)


def fork_on_linux():
    if not sys.platform.startswith("linux"):
        variant = "skipped here: fork is only a fix on Linux"
        return variant
    loader = DataLoader(_local_dataset(N), batch_size=4, num_workers=1, multiprocessing_context="fork")
    assert torch.equal(_collect(loader), EXPECTED)
    return "linux: fork start method"


def _spawn_loader(dataset, **kwargs):
    return DataLoader(dataset, batch_size=4, num_workers=1, multiprocessing_context="spawn", **kwargs)


def guard():
    with tempfile.TemporaryDirectory() as tmp:
        data = _importable_module(tmp)
        assert not record.check("validationCode", {"loader": _spawn_loader(_local_dataset(N))})
        assert not record.check("validationCode", {"loader": _spawn_loader(data.Squares(N), collate_fn=lambda b: b)})
        assert record.check("validationCode", {"loader": _spawn_loader(data.Squares(N))})


def _loads(loader):
    """The situation is valid: every batch loads with the right values."""
    assert torch.equal(_collect(loader), EXPECTED)
    return {"loader": loader}


def valid_no_workers():
    """Solution 2's situation: the local class in the main process (num_workers=0)."""
    return _loads(DataLoader(_local_dataset(N), batch_size=4, num_workers=0))


def valid_fork():
    """Workers started by fork inherit the local class; nothing is pickled (fork exists on Linux only)."""
    if not sys.platform.startswith("linux"):
        raise AssertionError("fork start method: Linux only")
    return _loads(DataLoader(_local_dataset(N), batch_size=4, num_workers=1, multiprocessing_context="fork"))


def valid_importable_spawn():
    """Solution 1's situation: spawned workers and a class from an importable module."""
    tmp = tempfile.mkdtemp()
    return _loads(_spawn_loader(_importable_module(tmp).Squares(N)))
