"""An evaluation loop reads the rows of each batch of predictions with a loop over the configured batch size
(range(4)), but the dataset holds 10 samples, so the last batch has only 2 rows. Indexing the 2-row tensor with
the integer 2 fails in ATen's applySelect (aten/src/ATen/TensorIndexing.h, the line the build reports with
TORCH_SHOW_CPP_STACKTRACES=1): "IndexError: index 2 is out of bounds for dimension 0 with size 2". The
demonstrations: the loop bounded by the tensor's own size (every sample is read once), and drop_last=True where a
fixed batch size is really needed (every batch then has 4 rows and the incomplete one is skipped). The record's
exampleFix and validationCode run from its own text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "loop_over_actual_size", 2: "drop_last"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"negative-index": "valid_negative_index", "last-row": "valid_last_row", "zero-dim-index": "valid_zero_dim_index",
         "generated-indices": "valid_generated_indices"}
CODE_NAMES = {"exampleFix": ["preds"], "validationCode": ["tensor", "index", "dim"]}
KEEP = ["preds"]
WORDINGS = [
    {"text": "index 2 is out of bounds for dimension 0 with size 2", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "IndexError: index 1 is out of bounds for dimension 0 with size 1", "source": "xg-chu/CrowdDet#44",
     "match": "matcher"},
    {"text": "IndexError: index 87 is out of bounds for dimension 0 with size 87", "source": "wangyu/rethink-audio-fsl#4",
     "match": "matcher"},
    {"text": "IndexError: index 4 is out of bounds for axis 0 with size 4", "source": "varunagrawal/tiny-faces-pytorch#47",
     "match": "none", "why": "NumPy's wording (axis), raised by NumPy, not torch"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record
from hypothesis import strategies as st

import torch
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 4


def _loader(drop_last=False):
    x = torch.arange(10.0).unsqueeze(1)
    return DataLoader(TensorDataset(x, torch.arange(10)), batch_size=BATCH_SIZE, drop_last=drop_last)


def _model(x):
    return torch.cat([x, 2 * x], dim=1)  # 2 scores per sample


def trigger():
    for x, _ in _loader():
        preds = _model(x)
        for i in range(BATCH_SIZE):  # the last batch has 2 rows
            preds[i]


def loop_over_actual_size():
    """Solution 1: bound the loop by the tensor's own size; every sample is read exactly once."""
    seen = []
    for x, ids in _loader():
        preds = _model(x)
        for i in range(preds.shape[0]):
            seen.append(int(ids[i]))
            assert torch.equal(preds[i], torch.tensor([float(ids[i]), 2.0 * float(ids[i])]))
    assert seen == list(range(10))


def drop_last():
    """Solution 2: where every batch must have BATCH_SIZE rows, drop the incomplete last batch (its samples are
    not used in that epoch)."""
    sizes = []
    for x, _ in _loader(drop_last=True):
        preds = _model(x)
        for i in range(BATCH_SIZE):
            preds[i]
        sizes.append(preds.shape[0])
    assert sizes == [BATCH_SIZE, BATCH_SIZE]


def example_fix():
    """The record's exampleFix, its "after" part, on the last (2-row) batch."""
    *_, (x, _) = list(_loader())
    preds = _model(x)
    names = record.run("exampleFix", {"preds": preds}, section="after")
    assert len(names["rows"]) == 2 and torch.equal(torch.stack(names["rows"]), preds)


def guard():
    """validationCode flags index 2 in the 2-row batch and passes index 1."""
    *_, (x, _) = list(_loader())
    preds = _model(x)
    assert not record.check("validationCode", {"tensor": preds, "index": 2, "dim": 0})
    assert record.check("validationCode", {"tensor": preds, "index": 1, "dim": 0})


def valid_negative_index():
    """Negative indices count from the end: -size .. -1 are valid."""
    preds = _model(torch.arange(2.0).unsqueeze(1))
    situations = [{"tensor": preds, "index": i, "dim": 0} for i in (-1, -2)]
    for s in situations:
        s["tensor"].select(s["dim"], s["index"])
    return situations


def valid_last_row():
    preds = _model(torch.arange(3.0).unsqueeze(1))
    situations = [{"tensor": preds, "index": 2, "dim": 0}, {"tensor": preds, "index": 1, "dim": 1}]
    for s in situations:
        s["tensor"].select(s["dim"], s["index"])
    return situations


def valid_zero_dim_index():
    """An index held in a 0-dim tensor (e.g. from argmax) works like an int."""
    preds = _model(torch.arange(3.0).unsqueeze(1))
    index = preds[:, 0].argmax()
    preds[index]
    return {"tensor": preds, "index": index, "dim": 0}


def valid_generated_indices():
    """Generated: any index from -size to size - 1 of any dimension of any non-empty tensor, as select takes it."""
    def situation(shape, data):
        dim = data.draw(st.integers(0, len(shape) - 1))
        index = data.draw(st.integers(-shape[dim], shape[dim] - 1))
        tensor = torch.randn(shape)
        tensor.select(dim, index)  # proves the situation valid
        return {"tensor": tensor, "index": index, "dim": dim}

    return st.builds(situation, st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), st.data())
