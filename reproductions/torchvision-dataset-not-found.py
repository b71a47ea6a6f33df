"""datasets.MNIST(root="./data", download=False) where ./data holds no MNIST/raw files: MNIST.__init__ finds the IDX files
missing (_check_exists) and raises RuntimeError "Dataset not found. You can use download=True to download it"
(torchvision/datasets/mnist.py). Nothing is downloaded: the demonstrations write a tiny MNIST in the real IDX format
(20 training and 10 test images of 28x28, made up) in a temporary folder. They show that root must be the folder that
contains MNIST/raw (root pointing at .../MNIST itself raises the same error, the parent loads), and that archives copied
by hand as .gz are not read until they are decompressed into MNIST/raw. Solution 1's stage also shows that FashionMNIST
and KMNIST raise the same message from the same line, looking in a folder named after the class, and that DTD and Food101
raise the same sentence for an empty root. The record's exampleFix and validationCode run from the record's text; the
guard passes roots given as str, pathlib.Path and with a trailing slash, the test split, and the processed/training.pt
layout MNIST keeps for backward compatibility, which it loads without raw files.
Environments: the PyPI torchvision wheels link libtorch_cuda, so each torchvision release runs beside the CUDA torch
it was built for (torchvision 0.20.1 with torch 2.5.1, 0.29.1 and 0.29.2 with torch 2.15.0); the installed torch
2.13.0+cpu has no torchvision and skips the record.

Drafted by `errkb draft` from tv_ds.py on torchvision 0.29.2 (torch 2.15.0), Python 3.11.7:
  RuntimeError: Dataset not found. You can use download=True to download it
  raised at torchvision/datasets/mnist.py:103
The draft left the commit unresolved; the wheel's torchvision.version.git_version names f12281517f1b, used as analyzedSha;
the excerpt is the installed 0.29.2 file's lines 84-105 (PROVENANCE installed).
"""
NEEDS = {'packages': {'torchvision': '', 'torch': ''}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "root_is_the_parent_of_mnist", 2: "decompress_hand_copied_archives"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["data_dir"], "validationCode": ["root", "download"]}
VALID = {"root-forms": "valid_root_forms", "test-split": "valid_test_split", "legacy-processed": "valid_legacy_processed"}
WORDINGS = [
    {'text': 'Dataset not found. You can use download=True to download it', 'source': 'torchvision==0.29.2', 'match': 'pattern'},
    {'text': 'Dataset not found. You can use download=True to download it', 'source': 'torchvision==0.20.1', 'match': 'pattern'},
    {'text': 'Dataset not found. You can use download=True to download it', 'source': 'Lightning-Universe/lightning-bolts#353', 'match': 'pattern'},
    {'text': 'Dataset not found or corrupted. You can use download=True to download it', 'source': 'HanxunH/SCELoss-Reproduce#2', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torchvision', 'version': '0.29.2'}

import gzip
import os
import struct
import tempfile
from pathlib import Path

import errkb_record as record

FILES = {"train-images-idx3-ubyte": (2051, 20), "train-labels-idx1-ubyte": (2049, 20),
         "t10k-images-idx3-ubyte": (2051, 10), "t10k-labels-idx1-ubyte": (2049, 10)}


def _idx_bytes(magic, count):
    """The IDX format MNIST reads: a big-endian header, then uint8 pixels (28x28 each) or labels."""
    if magic == 2051:
        return struct.pack(">IIII", magic, count, 28, 28) + bytes((i * 7) % 256 for i in range(count * 28 * 28))
    return struct.pack(">II", magic, count) + bytes(i % 10 for i in range(count))


def _data_dir(compressed=False, folder="MNIST"):
    """A data folder holding <folder>/raw with the four files (or only their .gz archives)."""
    data = Path(tempfile.mkdtemp()) / "data"
    raw = data / folder / "raw"
    raw.mkdir(parents=True)
    for name, (magic, count) in FILES.items():
        payload = _idx_bytes(magic, count)
        if compressed:
            (raw / f"{name}.gz").write_bytes(gzip.compress(payload))
        else:
            (raw / name).write_bytes(payload)
    return data


def _loads(dataset, count):
    image, label = dataset[0]
    assert len(dataset) == count and tuple(image.shape) == (1, 28, 28) and 0 <= label <= 9, (len(dataset), image.shape, label)


def trigger():
    from torchvision import datasets, transforms

    train_set = datasets.MNIST(root="./data", train=True, download=False, transform=transforms.ToTensor())


def root_is_the_parent_of_mnist():
    """Solution 1: root=<...>/MNIST raises the same error; its parent, as an absolute path, loads from any cwd."""
    from torchvision import datasets, transforms

    data = _data_dir()
    os.chdir(tempfile.mkdtemp())  # a notebook started elsewhere
    try:
        datasets.MNIST(root=str(data / "MNIST"), train=True, download=False)
    except RuntimeError as exc:
        assert "Dataset not found" in str(exc), exc
    else:
        raise AssertionError("root=.../MNIST was accepted")
    _loads(datasets.MNIST(root=str(data.resolve()), train=True, download=False, transform=transforms.ToTensor()), 20)
    for cls in (datasets.FashionMNIST, datasets.KMNIST):  # same check, inherited; the folder is named after the class
        try:
            cls(root=str(data), train=True, download=False)
        except RuntimeError as exc:
            assert str(exc) == "Dataset not found. You can use download=True to download it", exc
        else:
            raise AssertionError(f"{cls.__name__} read MNIST/raw")
        own = _data_dir(folder=cls.__name__)
        _loads(cls(root=str(own.resolve()), train=True, download=False, transform=transforms.ToTensor()), 20)
    for cls in (datasets.DTD, datasets.Food101):  # other classes, other layouts, the same sentence
        try:
            cls(root=tempfile.mkdtemp(), download=False)
        except RuntimeError as exc:
            assert str(exc) == "Dataset not found. You can use download=True to download it", exc
        else:
            raise AssertionError(f"{cls.__name__} accepted an empty root")


def decompress_hand_copied_archives():
    """Solution 2: .gz archives alone are not read; decompressed under their own names they load offline."""
    from torchvision import datasets, transforms

    data = _data_dir(compressed=True)
    try:
        datasets.MNIST(root=str(data), train=True, download=False)
    except RuntimeError as exc:
        assert "Dataset not found" in str(exc), exc
    else:
        raise AssertionError("the .gz archives were read without being decompressed")
    raw = data / "MNIST" / "raw"
    for archive in raw.glob("*.gz"):
        (raw / archive.stem).write_bytes(gzip.decompress(archive.read_bytes()))
    _loads(datasets.MNIST(root=str(data), train=True, download=False, transform=transforms.ToTensor()), 20)
    _loads(datasets.MNIST(root=str(data), train=False, download=False, transform=transforms.ToTensor()), 10)


def example_fix():
    data = _data_dir()
    os.chdir(tempfile.mkdtemp())
    names = record.run("exampleFix", {"data_dir": str(data)}, section="after")
    _loads(names["train_set"], 20)


def guard():
    os.chdir(tempfile.mkdtemp())
    assert not record.check("validationCode", {"root": "./data", "download": False})
    data = _data_dir()
    assert not record.check("validationCode", {"root": str(data / "MNIST"), "download": False})
    assert record.check("validationCode", {"root": str(data), "download": False})


def _accepted(root, train=True):
    from torchvision import datasets

    datasets.MNIST(root=root, train=train, download=False)
    return {"root": root, "download": False}


def valid_root_forms():
    data = _data_dir()
    return [_accepted(root) for root in (str(data), data, str(data) + "/")]


def valid_test_split():
    return _accepted(str(_data_dir()), train=False)


def valid_legacy_processed():
    """MNIST/processed/{training,test}.pt, the cached layout MNIST keeps for backward compatibility: it loads without raw files."""
    import torch

    data = Path(tempfile.mkdtemp()) / "data"
    processed = data / "MNIST" / "processed"
    processed.mkdir(parents=True)
    for name, count in (("training.pt", 20), ("test.pt", 10)):
        images = torch.arange(count * 28 * 28, dtype=torch.int64).remainder(256).to(torch.uint8).reshape(count, 28, 28)
        torch.save((images, torch.arange(count) % 10), processed / name)
    situation = _accepted(str(data))
    from torchvision import datasets

    assert len(datasets.MNIST(root=str(data), train=False, download=False)) == 10
    return situation
