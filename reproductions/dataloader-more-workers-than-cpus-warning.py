"""A DataLoader built with num_workers two more than the CPUs this process may use (len(os.sched_getaffinity(0)))
starts iterating; check_worker_number_rationality (torch/utils/data/dataloader.py) warns "This DataLoader will create
N worker processes in total. Our suggested max number of worker in current system is M, ...". A UserWarning: the
trigger returns after its first batch, and the harness takes the warning. The demonstrations: num_workers capped at
the available CPUs and num_workers=0, each iterating the whole dataset without that warning and giving the batches in
order. The record's exampleFix and validationCode run from its text. CPU only; starts a
few worker processes.

Drafted by `errkb draft` from workers.py on torch 2.13.0+cpu, Python 3.11.7 (the snippet turned this warning into an
exception so that the draft could capture it):
  UserWarning: This DataLoader will create 4 worker processes in total. Our suggested max number of worker in ...
  raised at torch/utils/data/dataloader.py:618
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author kept the drafted pattern
with the count as a plain integer.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 90}
SOLUTIONS = {1: "workers_from_available_cpus", 2: "no_worker_processes"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["dataset"], "validationCode": ["num_workers"]}
KEEP = ["dataset"]
VALID = {"main-process": "valid_zero", "one-worker": "valid_one", "all-available": "valid_all_available"}
WORDINGS = [
    {'text': "This DataLoader will create 4 worker processes in total.", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "This DataLoader will create 4 worker processes in total.", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current "
             "system is 4", 'source': 'AILab-CVC/YOLO-World#413', 'match': 'matcher'},
    {'text': "This DataLoader will create 12 worker processes in total. \nOur suggested max number of worker in "
             "current system is 8 (`cpuset` is not taken into account)", 'source': 'MIC-DKFZ/ParticleSeg3D#2',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import os
import warnings

import errkb_record as record

import torch
from torch.utils.data import DataLoader, TensorDataset


def _available():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _dataset():
    return TensorDataset(torch.arange(64.0).view(32, 2))


def _batches(loader):
    """All batches, and the worker-count warnings issued while iterating."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = [batch for (batch,) in loader]
    return batches, [w for w in caught if "worker processes in total" in str(w.message)]


def _expected():
    return list(torch.arange(64.0).view(32, 2).split(8))


def trigger():
    # a training script tuned on a 16-core workstation runs in a job that may use fewer CPUs
    available = len(os.sched_getaffinity(0))
    dataset = TensorDataset(torch.arange(64.0).view(32, 2))
    loader = DataLoader(dataset, batch_size=8, num_workers=available + 2)
    for (batch,) in loader:
        break


def workers_from_available_cpus():
    """Solution 1: num_workers capped at the CPUs the process may use: no warning, the same batches."""
    wanted = _available() + 2  # what the trigger asked for
    capped, warned = _batches(DataLoader(_dataset(), batch_size=8, num_workers=min(wanted, _available())))
    assert not warned, [str(w.message) for w in warned]
    assert len(capped) == 4 and all(torch.equal(a, b) for a, b in zip(capped, _expected()))


def no_worker_processes():
    """Solution 2: num_workers=0 loads in the main process: no warning, the same batches."""
    batches, warned = _batches(DataLoader(_dataset(), batch_size=8, num_workers=0))
    assert not warned
    assert len(batches) == 4 and all(torch.equal(a, b) for a, b in zip(batches, _expected()))


def example_fix():
    dataset = _dataset()
    names = record.run("exampleFix", {"dataset": dataset}, section="after")
    assert names["dataset"] is dataset
    assert names["loader"].num_workers <= _available()
    batches, warned = _batches(names["loader"])
    assert not warned and len(batches) == 4


def guard():
    assert not record.check("validationCode", {"num_workers": _available() + 2})
    assert record.check("validationCode", {"num_workers": _available()})


def _valid(num_workers):
    _, warned = _batches(DataLoader(_dataset(), batch_size=16, num_workers=num_workers))
    assert not warned  # the library does not warn for this count
    return {"num_workers": num_workers}


def valid_zero():
    return _valid(0)


def valid_one():
    return _valid(1)


def valid_all_available():
    return _valid(_available())
