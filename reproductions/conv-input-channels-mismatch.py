"""An image classifier whose first layer is nn.Conv2d(3, 6, 3) is given a PNG read as an RGBA array: the image has
an alpha channel, so after the usual HWC -> CHW permute and unsqueeze the batch is (1, 4, 32, 32). Conv2d's shape
check (check_shape_forward in aten/src/ATen/native/Convolution.cpp) compares dimension 1 of the input with
in_channels (weight.size(1) * groups) and raises "Given groups=1, weight of size [6, 3, 3, 3], expected
input[1, 4, 32, 32] to have 3 channels, but got 4 channels instead". The demonstrations fix the input three ways,
each on its own variant of the same mistake: drop the alpha channel of the RGBA image; repeat the single channel
of a grayscale image three times; permute an HWC array that was fed as it is to CHW. Each fixed batch goes through
the model and one SGD step changes its parameters. The record's exampleFix and validationCode run from its own
text; the guard is checked against batched and unbatched RGB input, a batch of one, channels_last memory format,
a grouped convolution and a LazyConv2d before its first forward pass (in_channels 0, which the guard skips). The sourceCode is the TORCH_CHECK as stored copies of Convolution.cpp write it, placed
at the line the torch 2.13.0 build reports (725); no copy at the build's commit was available, so PROVENANCE says
"unverified".
"""
NEEDS = {"packages": {"torch": ">=2.0", "numpy": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "drop_alpha", 2: "repeat_grayscale", 3: "permute_channels_last"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "image"], "validationCode": ["torch", "model", "x"]}
KEEP = ["model"]
VALID = {
    "rgb-batch": "valid_rgb_batch",
    "unbatched": "valid_unbatched",
    "batch-of-one": "valid_batch_of_one",
    "channels-last-memory-format": "valid_channels_last_memory_format",
    "grouped-conv": "valid_grouped_conv",
    "lazy-conv2d": "valid_lazy_conv2d",
}
WORDINGS = [
    {"text": "Given groups=1, weight of size [6, 3, 3, 3], expected input[1, 4, 32, 32] to have 3 channels, but got 4 "
             "channels instead", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Given groups=1, weight of size [6, 3, 3, 3], expected input[1, 4, 32, 32] to have 3 channels, but got 4 "
             "channels instead", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Given groups=1, weight of size [6, 3, 3, 3], expected input[1, 4, 32, 32] to have 3 channels, but got 4 "
             "channels instead", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Given groups=1, weight of size 3 3 1 1, expected input[1, 4, 678, 1020] to have 3 channels, "
             "but got 4 channels instead", "source": "sanghyun-son/EDSR-PyTorch#166", "match": "pattern"},
    {"text": "RuntimeError: Given transposed=1, weight of size [256, 128, 2, 2], expected input[12, 64, 256, 256] to have "
             "256 channels, but got 64 channels instead", "source": "MrGiovanni/UNetPlusPlus#73", "match": "none",
     "why": "ConvTranspose's branch of check_shape_forward, another TORCH_CHECK with its own weight layout; the record says so"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import copy

import errkb_record as record
import numpy as np

import torch
import torch.nn as nn


def _model(groups=1):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1, groups=groups), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(6, 2))


def _image(channels):
    shape = (32, 32) if channels is None else (32, 32, channels)
    return np.random.default_rng(0).integers(0, 256, size=shape, dtype=np.uint8)


def _to_batch(image):
    return torch.from_numpy(image).permute(2, 0, 1).float().div(255).unsqueeze(0)


def _train_step(model, x):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = nn.functional.cross_entropy(model(x), torch.zeros(x.shape[0], dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters())), "no parameter changed"


def trigger():
    model = _model()
    x = _to_batch(_image(4))  # an RGBA PNG: (1, 4, 32, 32)
    model(x)  # RuntimeError from Conv2d's shape check


def drop_alpha():
    """Solution 1: keep the first three (RGB) channels of the RGBA image."""
    rgba = _image(4)
    x = _to_batch(rgba[..., :3])
    assert x.shape == (1, 3, 32, 32)
    assert torch.equal(x[0], torch.from_numpy(rgba).permute(2, 0, 1)[:3].float().div(255))
    _train_step(_model(), x)


def repeat_grayscale():
    """Solution 2: a grayscale image (H, W) fed to an RGB model: repeat its one channel three times."""
    gray = torch.from_numpy(_image(None)).float().div(255).unsqueeze(0).unsqueeze(0)  # (1, 1, 32, 32)
    model = _model()
    try:
        model(gray)
    except RuntimeError as error:
        assert "to have 3 channels, but got 1 channels instead" in str(error)
    else:
        raise AssertionError("the 1-channel batch should have been refused")
    x = gray.expand(-1, 3, -1, -1)
    assert x.shape == (1, 3, 32, 32) and torch.equal(x[:, 0], x[:, 2])
    _train_step(model, x)
    # expand() copies nothing: the three channels are one memory (stride 0), shared with the grayscale batch;
    # repeat() makes the copy that later in-place changes need
    assert x.stride(1) == 0 and x.data_ptr() == gray.data_ptr()
    copied = gray.repeat(1, 3, 1, 1)
    assert torch.equal(copied, x) and copied.stride(1) != 0 and copied.data_ptr() != gray.data_ptr()
    copied[:, 0] += 0.5
    assert not torch.equal(copied[:, 0], copied[:, 1]) and torch.equal(x[:, 0], x[:, 1])


def permute_channels_last():
    """Solution 3: an (N, H, W, C) batch fed as it is: move the channels to dimension 1."""
    hwc = torch.from_numpy(np.stack([_image(3)] * 2)).float().div(255)  # (2, 32, 32, 3)
    model = _model()
    try:
        model(hwc)
    except RuntimeError as error:
        assert "to have 3 channels, but got 32 channels instead" in str(error)
    else:
        raise AssertionError("the channels-last batch should have been refused")
    x = hwc.permute(0, 3, 1, 2)
    assert x.shape == (2, 3, 32, 32)
    _train_step(model, x)


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's RGBA image."""
    names = record.run("exampleFix", {"torch": torch, "image": _image(4)}, section="after")
    assert names["x"].shape == (1, 3, 32, 32)
    _train_step(_model(), names["x"])
    rgb = record.run("exampleFix", {"torch": torch, "image": _image(3)}, section="after")  # an RGB image is left as it is
    assert torch.equal(rgb["x"], _to_batch(_image(3)))


def guard():
    """validationCode flags the trigger's RGBA batch and passes the RGB one, before the model runs."""
    model = _model()
    assert not record.check("validationCode", {"torch": torch, "model": model, "x": _to_batch(_image(4))})
    assert record.check("validationCode", {"torch": torch, "model": model, "x": _to_batch(_image(3))})


def _runs(model, x):
    """A valid situation is one the model accepts."""
    with torch.no_grad():
        model(x)
    return {"torch": torch, "model": model, "x": x}


def valid_rgb_batch():
    return _runs(_model(), torch.randn(8, 3, 32, 32))


def valid_unbatched():
    return _runs(_model()[0], torch.randn(3, 32, 32))  # Conv2d accepts (C, H, W)


def valid_batch_of_one():
    return _runs(_model(), _to_batch(_image(3)))


def valid_channels_last_memory_format():
    model = _model().to(memory_format=torch.channels_last)
    return _runs(model, torch.randn(4, 3, 32, 32).to(memory_format=torch.channels_last))


def valid_grouped_conv():
    return _runs(_model(groups=3), torch.randn(2, 3, 16, 16))


def valid_lazy_conv2d():
    """A LazyConv2d infers in_channels at its first forward pass; before it, in_channels is 0. A copy of the model
    runs on the input (the situation is valid); the guard gets the model as it is before its first forward pass."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.LazyConv2d(6, 3, padding=1), nn.ReLU())
    x = torch.randn(2, 3, 16, 16)
    assert model[0].in_channels == 0
    _runs(copy.deepcopy(model), x)
    assert model[0].in_channels == 0
    return {"torch": torch, "model": model, "x": x}
