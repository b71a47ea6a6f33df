"""A small classifier with BatchNorm1d is trained with a DataLoader whose dataset size (9) is not a
multiple of the batch size (4), so the last batch of the epoch holds a single sample. In training mode
batch norm needs more than one value per channel to compute a batch variance, and
torch.nn.functional.batch_norm checks this up front (_verify_batch_size), raising "Expected more than 1
value per channel when training, got input size torch.Size([1, 8])". The same check fires for a single
sample pushed through a model still in train mode, and, on multi-GPU machines, when nn.DataParallel's
torch.chunk split leaves one sample on a replica (10 on 4 GPUs: 3, 3, 3, 1; not run here: it needs GPUs). The
demonstrations train the same epoch with drop_last=True (every step runs, losses are finite) and run
single-sample inference after model.eval(), where the running statistics are used and the result equals
the batched result for that sample; the record's exampleFix and validationCode run from its own text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "drop_last", 2: "eval_mode"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["DataLoader", "dataset", "model", "torch", "x"], "validationCode": ["model", "loader"]}
KEEP = ["model", "dataset"]
VALID = {
    "cnn-batch-of-one": "valid_cnn_batch_of_one",
    "eval-mode": "valid_eval_mode",
    "even-split-or-no-batchnorm": "valid_even_split_or_no_batchnorm",
    "batch-sampler": "valid_batch_sampler",
}
WORDINGS = [
    {"text": "Expected more than 1 value per channel when training, got input size torch.Size([1, 8])",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Expected more than 1 value per channel when training, got input size torch.Size([1, 8])",
     "source": "torch==1.13.1", "match": "pattern"},
    {"text": "ValueError: Expected more than 1 value per channel when training, got input size [1, 128, 1, 1]",
     "source": "GOATmessi8/RFBNet#64", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import math

import errkb_record as record

import torch
import torch.nn as nn
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler, TensorDataset


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def _dataset():
    g = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randn(9, 4, generator=g), torch.randint(0, 2, (9,), generator=g))


def _train_one_epoch(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    losses = []
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def trigger():
    loader = DataLoader(_dataset(), batch_size=4)  # batches of 4, 4, 1
    _train_one_epoch(_model(), loader)  # ValueError on the last batch


def drop_last():
    """Solution 1: drop the incomplete last batch while training."""
    loader = DataLoader(_dataset(), batch_size=4, drop_last=True)
    losses = _train_one_epoch(_model(), loader)
    assert len(losses) == 2 and all(math.isfinite(v) for v in losses)


def eval_mode():
    """Solution 2: single-sample inference in eval mode (running statistics instead of batch statistics)."""
    model = _model()
    _train_one_epoch(model, DataLoader(_dataset(), batch_size=4, drop_last=True))
    model.eval()
    x_all, _ = _dataset().tensors
    with torch.no_grad():
        batched = model(x_all)
        single = model(x_all[:1])
    assert single.shape == (1, 2)
    assert torch.allclose(single, batched[:1], atol=1e-6)


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's data and model."""
    model = _model()
    dataset = _dataset()
    x, _ = dataset.tensors
    names = record.run("exampleFix", {"DataLoader": DataLoader, "dataset": dataset, "model": model, "torch": torch, "x": x}, section="after")
    model.train()
    losses = _train_one_epoch(model, names["loader"])
    assert len(losses) == 2 and all(math.isfinite(v) for v in losses)
    assert names["y"].shape == (1, 2)


def guard():
    """validationCode flags the trigger's loader (9 samples, batch_size=4) and passes it with drop_last=True."""
    model, dataset = _model(), _dataset()
    assert not record.check("validationCode", {"model": model.train(), "loader": DataLoader(dataset, batch_size=4)})
    fixed = DataLoader(dataset, batch_size=4, drop_last=True)
    assert record.check("validationCode", {"model": model.train(), "loader": fixed})
    assert not record.check("validationCode", {"model": model.train(), "loader": DataLoader(dataset, batch_size=1)})


def _trains(model, loader):
    """The situation is valid: a whole epoch trains."""
    assert all(math.isfinite(v) for v in _train_one_epoch(model, loader))
    return {"model": model.train(), "loader": loader}


def valid_cnn_batch_of_one():
    """BatchNorm2d on 4x4 feature maps trains with batch_size=1: 16 values per channel (pix2pix-style training)."""
    torch.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2))
    images = TensorDataset(torch.randn(5, 1, 4, 4), torch.randint(0, 2, (5,)))
    return _trains(cnn, DataLoader(images, batch_size=1))


def valid_eval_mode():
    """Single-sample batches in eval mode (running statistics): the guard is about training."""
    return {"model": _model().eval(), "loader": DataLoader(_dataset(), batch_size=1)}


def valid_even_split_or_no_batchnorm():
    """8 samples in batches of 4; and the trigger's 9-in-4 split for a model without BatchNorm."""
    g = torch.Generator().manual_seed(1)
    even = TensorDataset(torch.randn(8, 4, generator=g), torch.randint(0, 2, (8,), generator=g))
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return [_trains(_model(), DataLoader(even, batch_size=4)), _trains(mlp, DataLoader(_dataset(), batch_size=4))]


def valid_batch_sampler():
    """A DataLoader built from a batch_sampler has batch_size None; batches of 3 here."""
    sampler = BatchSampler(SequentialSampler(range(9)), batch_size=3, drop_last=False)
    return _trains(_model(), DataLoader(_dataset(), batch_sampler=sampler))
