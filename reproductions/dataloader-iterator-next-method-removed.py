"""Code from the Python 2 era (and tutorials copied from it) fetches one batch with `iter(loader).next()` or
`data_iter.next()`. The iterators a DataLoader returns (_SingleProcessDataLoaderIter with num_workers=0,
_MultiProcessingDataLoaderIter with workers) kept a `next = __next__  # Python 2 compatibility` alias on their base
class _BaseDataLoaderIter up to PyTorch 1.12; pytorch/pytorch#78594 ("Remove Python 2-related code from dataloader",
June 2022) deleted it, first released in 1.13. Since then the attribute lookup fails in the user's own line
with AttributeError "'_SingleProcessDataLoaderIter' object has no attribute 'next'". No frame of torch is on the
stack: the raise site is the module that defines the class without the name, torch/utils/data/dataloader.py (the
result shows `torch/utils/data/dataloader.py (lacks torch.utils.data.dataloader._SingleProcessDataLoaderIter.next)`).

The trigger builds a small TensorDataset, a DataLoader with batch_size 4, and calls iter(loader).next(). Solution 1
is the built-in next(): on the single-process iterator, on the multi-process one (num_workers=2, the
_MultiProcessingDataLoaderIter wording), and on a DataLoader itself through next(iter(loader)) (the
'DataLoader' object has no attribute 'next' wording: a DataLoader is an iterable, not an iterator, so it has neither
next nor __next__ and needs iter() first); each batch equals the dataset's first rows, and consecutive next() calls
walk the epoch until StopIteration. The stage also shows both iterator classes and DataLoader lack `next` on the
installed release. The exampleFix runs from its text.

Where the alias went: pytorch.org's rendered source of torch/utils/data/dataloader.py for 1.12
(pytorch/pytorch.github.io, docs/1.12/_modules/torch/utils/data/dataloader.html, stored copy at 4b16899c08ce) shows
`next = __next__  # Python 2 compatibility` after _BaseDataLoaderIter.__next__; the 1.13 page (stored copy at
617b97f15609) goes from __next__'s `return data` straight to __len__. pytorch/tutorials#2086 (a PyTorch maintainer)
names 1.13 as the release that contains #78594. Releases before 1.13 do not install on the Python 3.11 used here, so
no committed result shows the old side. Results: torch 2.13.0+cpu (installed), 2.5.1 and 2.15.0: verified.
Written by hand (errkb draft refuses a snippet with no library frame), from records/torch-six-import-removed.json.
"""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "builtin_next"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["train_loader"]}
KEEP = ["train_loader"]
WORDINGS = [
    {"text": "'_SingleProcessDataLoaderIter' object has no attribute 'next'", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "'_SingleProcessDataLoaderIter' object has no attribute 'next'", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "AttributeError: '_SingleProcessDataLoaderIter' object has no attribute 'next'",
     "source": "yonghanzhang94/A-Single-View-3D-Object-Point-Cloud-Reconstruction#1", "match": "matcher"},
    {"text": "AttributeError: '_MultiProcessingDataLoaderIter' object has no attribute 'next'",
     "source": "deepspeedai/DeepSpeedExamples#222", "match": "matcher"},
    {"text": "AttributeError: '_MultiProcessingDataLoaderIter' object has no attribute 'next'",
     "source": "pytorch/pytorch#80181", "match": "matcher"},
    {"text": "'DataLoader' object has no attribute 'next'", "source": "patrickloeber/pytorchTutorial#22", "match": "matcher"},
    {"text": "TypeError: 'DataLoader' object is not an iterator", "source": "pytorch/tutorials#2963", "match": "none",
     "why": "the neighbouring error of next(loader) on the DataLoader itself, a TypeError from Python's next(); the "
            "record warns about it and does not match it"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import errkb_record as record


def _loader(num_workers=0):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    images = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    labels = torch.arange(10)
    return DataLoader(TensorDataset(images, labels), batch_size=4, shuffle=False, num_workers=num_workers), images, labels


def trigger():
    train_loader, _, _ = _loader()
    images, labels = iter(train_loader).next()


def _walks_the_epoch(iterator, images, labels):
    import torch

    first_images, first_labels = next(iterator)
    assert torch.equal(first_images, images[:4]) and torch.equal(first_labels, labels[:4])
    second_images, _ = next(iterator)
    assert torch.equal(second_images, images[4:8])
    last_images, _ = next(iterator)
    assert last_images.shape == (2, 4)  # 10 rows in batches of 4: the last batch has 2
    try:
        next(iterator)
    except StopIteration:
        pass
    else:
        raise AssertionError("the epoch did not end after three batches")


def builtin_next():
    """Solution 1: the built-in next() on the iterator (next(iter(loader)) for a DataLoader)."""
    from torch.utils.data import DataLoader
    from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter, _SingleProcessDataLoaderIter

    for cls in (_SingleProcessDataLoaderIter, _MultiProcessingDataLoaderIter, DataLoader):
        assert not hasattr(cls, "next"), cls  # the name is gone from every class the wordings name
    assert not hasattr(DataLoader, "__next__")  # an iterable: iter() first

    train_loader, images, labels = _loader()
    iterator = iter(train_loader)
    assert type(iterator) is _SingleProcessDataLoaderIter
    _walks_the_epoch(iterator, images, labels)

    workers_loader, images, labels = _loader(num_workers=2)
    iterator = iter(workers_loader)
    assert type(iterator) is _MultiProcessingDataLoaderIter
    _walks_the_epoch(iterator, images, labels)
    del iterator

    import torch

    try:
        next(train_loader)  # the DataLoader itself is not an iterator: the neighbouring TypeError
    except TypeError as exc:
        assert "is not an iterator" in str(exc), exc
    else:
        raise AssertionError("next() on a DataLoader worked")
    batch_images, batch_labels = next(iter(train_loader))  # one batch straight from a DataLoader
    assert torch.equal(batch_images, images[:4]) and torch.equal(batch_labels, labels[:4])


def example_fix():
    import torch

    train_loader, images, labels = _loader()
    names = record.run("exampleFix", {"train_loader": train_loader}, section="after")
    assert torch.equal(names["images"], images[:4]) and torch.equal(names["labels"], labels[:4])
