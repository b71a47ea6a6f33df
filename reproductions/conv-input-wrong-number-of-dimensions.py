"""An image batch of shape (2, 3, 32, 32) gets one unsqueeze too many and reaches nn.Conv2d(3, 6, 3) as
(2, 1, 3, 32, 32). conv2d's batchify (aten/src/ATen/native/Convolution.cpp) accepts 3-D (unbatched) or 4-D
(batched) input only and raises "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size:
[2, 1, 3, 32, 32]". The demonstrations: removing the extra size-1 dimension at the place it was added (squeeze(1) for the
trigger's (N, 1, C, H, W), where squeeze(0) changes nothing; and why squeeze() without a dimension is wrong for a
batch of one); folding an extra crops/frames dimension into the batch
and back, checked against a per-sample loop; adding the channel (and batch) dimension to an (H, W) grayscale image
and the channel dimension to an (N, H, W) grayscale batch; permuting an (H, W, C) image to (C, H, W) before adding
the batch dimension. Each fixed input goes through a small CNN and one SGD step changes its parameters. The record's exampleFix and validationCode run from its text;
the guard is checked against batched, unbatched, batch-of-one, channels_last, conv1d, conv3d, transposed and lazy
convolutions, and a text CNN whose first layer is an embedding. The sourceCode is batchify as a stored copy of Convolution.cpp writes it, placed at the line the
torch 2.13.0 build reports (832); no copy at the build's commit was available, so PROVENANCE says "unverified".
(Stored copies differ: pytorch/pytorch at 954cecd1 has batchify without the nested-tensor early return; later
copies, the excerpt's text, have it.) On current releases the older wording "Expected 4-dimensional input for
4-dimensional weight ..." still comes from a later check, for a weight whose rank does not fit the input
(F.conv1d given a 4-D weight); that was run by hand on 2.13.0, not by a stage, and the record cites an issue.
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 240}
SOLUTIONS = {1: "squeeze_extra_dimension", 2: "fold_crops_into_batch", 3: "add_grayscale_channel",
             4: "permute_hwc_then_batch"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "images"], "validationCode": ["torch", "model", "x"]}
VALID = {
    "batched": "valid_batched",
    "unbatched": "valid_unbatched",
    "batch-of-one": "valid_batch_of_one",
    "channels-last-memory-format": "valid_channels_last",
    "conv1d": "valid_conv1d",
    "conv3d": "valid_conv3d",
    "conv-transpose2d": "valid_conv_transpose2d",
    "lazy-conv2d": "valid_lazy_conv2d",
    "no-convolution": "valid_no_convolution",
    "embedding-then-conv2d": "valid_embedding_then_conv2d",
}
WORDINGS = [
    {"text": "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 1, 3, 32, 32]",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 1, 3, 32, 32]",
     "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 1, 3, 32, 32]",
     "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
             "[1, 6, 6, 512, 512]", "source": "VisionRush/DeepFakeDefenders#30", "match": "matcher"},
    {"text": "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got 3-dimensional "
             "input of size [3, 224, 224] instead.", "source": "valerystrizh/pytorch-histogram-loss#13",
     "match": "matcher"},
    {"text": "Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got 3-dimensional input of size "
             "[3, 227, 227] instead", "source": "Brain-Bridge-Lab/resmem#1", "match": "pattern"},
    {"text": "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 1, 3, 3], but got 3-dimensional "
             "input of size [16, 120, 160] instead", "source": "shaofengzeng/SuperPoint-Pytorch#2", "match": "matcher"},
    {"text": "RuntimeError: Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [32, 24, 1, 12]",
     "source": "leizhang-geo/ST-CausalConvNet#1", "match": "pattern"},
    {"text": "RuntimeError: Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: "
             "[1, 1, 16, 240, 240, 160]", "source": "amir-aghdam/3D-UNet#5", "match": "pattern"},
    {"text": "Expected 4-dimensional input for 4-dimensional weight [1, 1, 1, 2], but got 3-dimensional input of size "
             "[1, 32, 324] instead", "source": "scutcsq/DWFormer#21", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import copy

import errkb_record as record

import torch
import torch.nn as nn

UNBATCHED = "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size"


def _model(in_channels=3):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(in_channels, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(6, 2))


def _batch(n=2, channels=3):
    return torch.randn(n, channels, 32, 32, generator=torch.Generator().manual_seed(1))


def _refused(model, x, text=UNBATCHED):
    try:
        model(x)
    except RuntimeError as error:
        assert text in str(error), str(error)
    else:
        raise AssertionError(f"input of shape {tuple(x.shape)} should have been refused")


def _train_step(model, x):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    out = model(x)
    loss = nn.functional.cross_entropy(out, torch.zeros(out.shape[0], dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters())), "no parameter changed"


def trigger():
    conv = nn.Conv2d(3, 6, 3)
    x = _batch().unsqueeze(1)  # (2, 1, 3, 32, 32): one unsqueeze too many
    conv(x)


def squeeze_extra_dimension():
    """Solution 1: remove the size-1 dimension where it was added; squeeze() without a dimension is wrong."""
    images = [_batch(1)[0]]  # one (3, 32, 32) image
    x = torch.stack(images).unsqueeze(0)  # (1, 1, 3, 32, 32)
    model = _model()
    _refused(model, x)
    fixed = x.squeeze(0)
    assert fixed.shape == (1, 3, 32, 32)
    _train_step(model, fixed)
    # squeeze() with no dimension also drops the batch dimension of size 1: (3, 32, 32) is then one unbatched
    # image, the convolution returns (6, 32, 32) and the Flatten/Linear head no longer sees a batch
    assert x.squeeze().shape == (3, 32, 32)
    assert model[0](x.squeeze()).shape == (6, 32, 32)
    # the trigger's (N, 1, C, H, W): the size-1 dimension is dim 1; squeeze(0) on a batch of 2 changes nothing
    y = _batch().unsqueeze(1)
    assert y.squeeze(0).shape == y.shape
    _refused(model, y.squeeze(0))
    assert y.squeeze(1).shape == (2, 3, 32, 32)
    _train_step(model, y.squeeze(1))


def fold_crops_into_batch():
    """Solution 2: (N, K, C, H, W) crops per sample: run them as N*K images and combine per sample."""
    n, k = 2, 4
    x = torch.randn(n, k, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    model = _model()
    _refused(model, x)
    out = model(x.flatten(0, 1))
    assert out.shape == (n * k, 2)
    per_sample = out.view(n, k, -1).mean(1)
    with torch.no_grad():
        loop = torch.stack([model(x[i]).mean(0) for i in range(n)])
    assert torch.allclose(per_sample, loop, atol=1e-6)
    # video-like (N, C, T, H, W): bring the frames next to the batch before folding; flatten(0, 1) alone folds
    # the channels into the batch instead
    video = x.transpose(1, 2)  # (N, C, K, H, W)
    assert torch.equal(video.transpose(1, 2).flatten(0, 1), x.flatten(0, 1))
    assert video.flatten(0, 1).shape == (n * 3, k, 32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = nn.functional.cross_entropy(per_sample, torch.zeros(n, dtype=torch.long))
    loss.backward()
    opt.step()
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


def add_grayscale_channel():
    """Solution 3: a grayscale (H, W) image needs its channel (and batch) dimension; an (N, H, W) batch its channel."""
    gray = torch.rand(32, 32, generator=torch.Generator().manual_seed(3))
    model = _model(in_channels=1)
    _refused(model, gray, "but got input of size: [32, 32]")
    unbatched = model[0](gray.unsqueeze(0))  # (1, H, W): one unbatched image
    assert unbatched.shape == (6, 32, 32)
    x = gray.unsqueeze(0).unsqueeze(0)  # (1, 1, H, W)
    assert x.shape == (1, 1, 32, 32)
    assert torch.allclose(model[0](x)[0], unbatched, atol=1e-6)
    _train_step(model, x)
    batch = torch.rand(16, 32, 32, generator=torch.Generator().manual_seed(4))  # (N, H, W)
    # without the channel dimension, the batch is read as ONE unbatched 16-channel image: the channel check refuses it
    _refused(model, batch, "to have 1 channels, but got 16 channels instead")
    _train_step(model, batch.unsqueeze(1))


def permute_hwc_then_batch():
    """Solution 4: an (H, W, C) image: permute to (C, H, W), then add the batch dimension."""
    hwc = torch.rand(32, 32, 3, generator=torch.Generator().manual_seed(5))
    model = _model()
    _refused(model, hwc.unsqueeze(0), "to have 3 channels, but got 32 channels instead")  # (1, H, W, C)
    x = hwc.permute(2, 0, 1).unsqueeze(0)
    assert x.shape == (1, 3, 32, 32) and torch.equal(x[0, :, 5, 7], hwc[5, 7])
    _train_step(model, x)


def example_fix():
    """The record's exampleFix, its "after" part: stack makes the batch dimension, no unsqueeze after it."""
    images = [img for img in _batch(3)]
    names = record.run("exampleFix", {"torch": torch, "images": images}, section="after")
    assert names["x"].shape == (3, 3, 32, 32)
    _train_step(_model(), names["x"])
    before = record.run("exampleFix", {"torch": torch, "images": images}, section="before")
    _refused(_model(), before["x"])


def guard():
    """validationCode flags the trigger's 5-D batch and the 2-D grayscale image, and passes the fixed ones."""
    model = _model()
    assert not record.check("validationCode", {"torch": torch, "model": model, "x": _batch().unsqueeze(1)})
    assert not record.check("validationCode", {"torch": torch, "model": _model(1), "x": torch.rand(32, 32)})
    assert record.check("validationCode", {"torch": torch, "model": model, "x": _batch()})
    assert record.check("validationCode", {"torch": torch, "model": _model(1), "x": torch.rand(1, 1, 32, 32)})


def _runs(model, x):
    """A valid situation is one the model accepts."""
    with torch.no_grad():
        model(x)
    return {"torch": torch, "model": model, "x": x}


def valid_batched():
    return _runs(_model(), _batch(8))


def valid_unbatched():
    return _runs(nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU()), torch.randn(3, 32, 32))


def valid_batch_of_one():
    return _runs(_model(), _batch(1))


def valid_channels_last():
    model = _model().to(memory_format=torch.channels_last)
    return _runs(model, _batch(4).to(memory_format=torch.channels_last))


def valid_conv1d():
    model = nn.Sequential(nn.Conv1d(4, 8, 3), nn.ReLU())
    return [_runs(model, torch.randn(2, 4, 50)), _runs(model, torch.randn(4, 50))]


def valid_conv3d():
    model = nn.Sequential(nn.Conv3d(1, 4, 3), nn.ReLU())
    return [_runs(model, torch.randn(2, 1, 8, 16, 16)), _runs(model, torch.randn(1, 8, 16, 16))]


def valid_conv_transpose2d():
    return _runs(nn.Sequential(nn.ConvTranspose2d(3, 4, 2, stride=2)), _batch(2))


def valid_lazy_conv2d():
    """A LazyConv2d before its first forward pass: a copy runs on the input; the guard sees the model as it is."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.LazyConv2d(6, 3), nn.ReLU())
    x = _batch(2)
    _runs(copy.deepcopy(model), x)
    return {"torch": torch, "model": model, "x": x}


class _TextCNN(nn.Module):
    """Kim-style sentence CNN: token ids (N, L) -> embedding (N, L, E) -> (N, 1, L, E) -> Conv2d."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.conv = nn.Conv2d(1, 4, (3, 16))

    def forward(self, ids):
        return self.conv(self.embed(ids).unsqueeze(1)).amax(dim=(2, 3))


def valid_embedding_then_conv2d():
    """The model's first layer is an embedding, so its (N, L) input has fewer dimensions than its Conv2d takes."""
    torch.manual_seed(0)
    return _runs(_TextCNN(), torch.randint(0, 100, (4, 12)))


def valid_no_convolution():
    """A model without a convolution: nothing to check, and a 5-D tensor is fine for it."""
    return _runs(nn.Sequential(nn.Flatten(), nn.Linear(2 * 3 * 4 * 5, 2)), torch.randn(7, 2, 3, 4, 5))
