"""A map-style Dataset pairs 11 image entries with 10 labels (one annotation line is missing) and reports
len(images) as its length. A DataLoader with two worker processes hands index 10 to worker 0, whose
__getitem__ fails with "IndexError: list index out of range". The worker sends the exception home wrapped in an
ExceptionWrapper, and the main process re-raises it in torch/_utils.py (ExceptionWrapper.reraise) as
"IndexError: Caught IndexError in DataLoader worker process 0." followed by "Original Traceback" and the
worker's own traceback. The raise site is inside torch; the mistake is in the Dataset. The demonstrations: the
real error found (the last line of the original traceback, and the same error raised directly in the main
process with num_workers=0, its innermost frame in __getitem__), and the Dataset's length made to agree with the
data it reads, after which every batch loads with two workers. The exampleFix and validationCode run from the
record's own text; the validationCode passes over a copy of the user's loader in the main process, and its valid
situations include loaders whose samplers yield string keys or whole lists of indices. CPU only; two worker
processes.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "find_the_original_error", 2: "length_agrees_with_data"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "tensor-dataset": "valid_tensor_dataset",
    "dict-samples": "valid_dict_samples",
    "iterable-dataset": "valid_iterable_dataset",
    "empty-dataset": "valid_empty_dataset",
    "string-keys-custom-sampler": "valid_string_keys",
    "no-auto-batching-list-indices": "valid_list_indices",
}
CODE_NAMES = {"exampleFix": [], "validationCode": ["loader"]}
KEEP = ["loader"]
WORDINGS = [
    {"text": "Caught IndexError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Caught IndexError in DataLoader worker process 0.", "source": "nmhkahn/CARN-pytorch#58", "match": "matcher"},
    {"text": "Caught IndexError in DataLoader worker process 2", "source": "wenwenyu/PICK-pytorch#120", "match": "pattern"},
    {"text": "AttributeError: Caught AttributeError in DataLoader worker process 0.", "source": "Chiaraplizz/ST-TR#33",
     "match": "matcher"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import traceback

import errkb_record as record

import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, IterableDataset, Sampler, TensorDataset

IMAGES = [torch.full((3,), float(i)) for i in range(11)]
LABELS = list(range(10))  # one annotation line short


class Pairs(Dataset):
    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)  # the bug: 11, while only 10 labels exist

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def _loader(dataset):
    return DataLoader(dataset, batch_size=4, num_workers=2)


def trigger():
    for _ in _loader(Pairs(IMAGES, LABELS)):  # batch 2 (indices 8, 9, 10) goes to worker 0
        pass


def find_the_original_error():
    """Solution 1: the real error is the last line of the "Original Traceback"; num_workers=0 raises it directly."""
    try:
        trigger()
        raise AssertionError("the trigger should fail")
    except IndexError as wrapped:
        text = str(wrapped)
    assert text.startswith("Caught IndexError in DataLoader worker process 0."), text
    original = text.strip().splitlines()[-1]
    assert original == "IndexError: list index out of range", original
    assert "in __getitem__" in text and "self.labels[i]" in text  # the failing line of the Dataset is shown
    try:
        for _ in DataLoader(Pairs(IMAGES, LABELS), batch_size=4, num_workers=0):
            pass
        raise AssertionError("num_workers=0 should raise the same error")
    except IndexError as direct:
        assert str(direct) == "list index out of range"
        frame = traceback.extract_tb(direct.__traceback__)[-1]
        assert frame.name == "__getitem__" and "self.labels[i]" in frame.line, frame


class FixedPairs(Pairs):
    def __len__(self):
        return min(len(self.images), len(self.labels))


def length_agrees_with_data():
    """Solution 2: __len__ counts the samples __getitem__ can really build; every batch then loads in workers."""
    dataset = FixedPairs(IMAGES, LABELS)
    seen = torch.cat([labels for _, labels in _loader(dataset)])
    assert seen.tolist() == LABELS


def example_fix():
    """The record's exampleFix, its "after" part: the Dataset refuses mismatched lists and loads matched ones."""
    names = record.run("exampleFix", {}, section="after")
    fixed = names["LabelledImages"]
    try:
        fixed(IMAGES, LABELS)
        raise AssertionError("the fixed Dataset should refuse 11 images with 10 labels")
    except ValueError as exc:
        assert "11 images but 10 labels" in str(exc)
    dataset = fixed(IMAGES[:10], LABELS)
    seen = torch.cat([labels for _, labels in _loader(dataset)])
    assert seen.tolist() == LABELS


def guard():
    """validationCode passes over a copy of the loader in the main process: it flags the loader over the broken
    Dataset, passes the one over the fixed Dataset, and leaves the user's loader as it was (two workers)."""
    loader = _loader(Pairs(IMAGES, LABELS))
    assert not record.check("validationCode", {"loader": loader})
    assert loader.num_workers == 2
    assert record.check("validationCode", {"loader": _loader(FixedPairs(IMAGES, LABELS))})


def _loads(loader):
    """Proves a situation valid: the loader, with its two workers, goes through it."""
    return [batch for batch in loader]


def valid_tensor_dataset():
    dataset = TensorDataset(torch.randn(9, 3), torch.arange(9))
    loader = _loader(dataset)
    assert len(_loads(loader)) == 3
    return {"loader": loader}


class DictSamples(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return {"input_ids": torch.arange(4) + i, "label": i % 2}


def valid_dict_samples():
    dataset = DictSamples()
    loader = _loader(dataset)
    assert sum(len(batch["label"]) for batch in _loads(loader)) == 6
    return {"loader": loader}


class Stream(IterableDataset):
    """No __len__ and no indexing: samples come from iteration only."""

    def __iter__(self):
        return iter(torch.arange(8).split(1))


def valid_iterable_dataset():
    dataset = Stream()
    loader = _loader(dataset)
    assert _loads(loader)
    return {"loader": loader}


def valid_empty_dataset():
    dataset = TensorDataset(torch.empty(0, 3))
    loader = _loader(dataset)
    assert _loads(loader) == []
    return {"loader": loader}


class ByName(Dataset):
    """A map-style dataset keyed by strings: only a sampler that yields its keys can read it."""

    def __init__(self):
        self.items = {name: torch.tensor([float(len(name))]) for name in ("ant", "bee", "cat", "dingo")}

    def __len__(self):
        return len(self.items)

    def __getitem__(self, name):
        return self.items[name]


class Names(Sampler):
    def __init__(self, names):
        self.names = list(names)

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)


def valid_string_keys():
    dataset = ByName()
    loader = DataLoader(dataset, batch_size=2, sampler=Names(dataset.items), num_workers=2)
    assert len(_loads(loader)) == 2
    return {"loader": loader}


class Rows(Dataset):
    """Reads a whole batch per call: __getitem__ takes a list of indices (batch_size=None, a BatchSampler)."""

    def __init__(self):
        self.data = torch.arange(20.0).reshape(10, 2)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, indices):
        return self.data[indices]


def valid_list_indices():
    dataset = Rows()
    sampler = BatchSampler(range(len(dataset)), batch_size=4, drop_last=False)
    loader = DataLoader(dataset, batch_size=None, sampler=sampler, num_workers=2)
    assert [len(batch) for batch in _loads(loader)] == [4, 4, 2]
    return {"loader": loader}
