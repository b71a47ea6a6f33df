"""A small U-Net-style block joins a skip connection with an upsampled feature map: the input is 15x15, the
encoder's 2x2 max-pool floors it to 7x7, and the transposed convolution doubles that to 14x14, so
torch.cat([skip, upsampled], dim=1) gets a (2, 8, 15, 15) and a (2, 8, 14, 14) tensor. cat may only differ in
the dimension it joins along; its shape check (check_cat_shape_except_dim in aten/src/ATen/native/TensorShape.h)
raises "Sizes of tensors must match except in dimension 1. Expected size 15 but got size 14 for tensor number 1
in the list." The demonstrations resize the upsampled map to the skip's size, pad it to that size, and feed an
input whose size the encoder halves exactly (16x16); the pad demonstration also crops the skip instead. The record's exampleFix and validationCode run from its own
text; the guard passes lists cat accepts (sizes that differ only in the joined dimension, negative dim, the legacy
empty 1-D tensor cat skips, generated shapes).
"""
NEEDS = {"packages": {"torch": ">=2.5", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "interpolate_to_skip", 2: "pad_to_skip", 3: "divisible_input_size"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "F", "skip", "upsampled"], "validationCode": ["tensors", "dim"]}
VALID = {
    "unet-16x16": "valid_unet_16",
    "differ-only-in-dim": "valid_differ_only_in_dim",
    "legacy-empty-accumulator": "valid_legacy_empty",
    "generated-shapes": "valid_generated",
}
WORDINGS = [
    {"text": "Sizes of tensors must match except in dimension 1. Expected size 15 but got size 14 for tensor number 1 "
             "in the list.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Sizes of tensors must match except in dimension 1. Expected size 15 but got size 14 for tensor number 1 "
             "in the list.", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Sizes of tensors must match except in dimension 1. Expected size 15 but got size 14 for tensor number 1 "
             "in the list.", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Sizes of tensors must match except in dimension 2. Got 4 and 8",
     "source": "sg-nm/cgp-cnn#11", "match": "pattern"},
    {"text": "RuntimeError: invalid argument 0: Sizes of tensors must match except in dimension 1. Got 16 and 15 in "
             "dimension 2 at /pytorch/aten/src/THC/generic/THCTensorMath.cu:87",
     "source": "Res2Net/Res2Net-PretrainedModels#19", "match": "pattern"},
    {"text": "RuntimeError: stack expects each tensor to be equal size, but got [5] at entry 0 and [1] at entry 1",
     "source": "rasbt/LLMs-from-scratch#365", "match": "none",
     "why": "torch.stack's own check (DataLoader's default collate): the record collate-stack-expects-equal-size"},
    {"text": "invalid argument 0: Sizes of tensors must match except in dimension 0. Got 1 and 2 in dimension 1",
     "source": "pytorch/pytorch#15037", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "d4c718120da900f5121cb784e91cf52fa0b02359", "offset": 8}

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn
import torch.nn.functional as F


def _block():
    torch.manual_seed(0)
    down = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.MaxPool2d(2))
    up = nn.ConvTranspose2d(8, 8, 2, stride=2)
    skip_conv = nn.Conv2d(3, 8, 3, padding=1)
    head = nn.Conv2d(16, 1, 1)
    return down, up, skip_conv, head


def _features(size=15):
    down, up, skip_conv, head = _block()
    x = torch.randn(2, 3, size, size)
    return skip_conv(x), up(down(x)), head


def _trains(merged, head):
    assert merged.shape[:2] == (2, 16)
    loss = head(merged).pow(2).mean()
    loss.backward()
    assert torch.isfinite(loss)
    assert head.weight.grad is not None and head.weight.grad.abs().sum() > 0


def trigger():
    skip, upsampled, _ = _features()  # (2, 8, 15, 15) and (2, 8, 14, 14)
    torch.cat([skip, upsampled], dim=1)


def interpolate_to_skip():
    """Solution 1: resize the upsampled map to the skip connection's spatial size before cat."""
    skip, upsampled, head = _features()
    upsampled = F.interpolate(upsampled, size=skip.shape[-2:], mode="nearest")
    merged = torch.cat([skip, upsampled], dim=1)
    assert merged.shape == (2, 16, 15, 15)
    _trains(merged, head)


def pad_to_skip():
    """Solution 2: pad the upsampled map by the missing rows and columns."""
    skip, upsampled, head = _features()
    dy, dx = skip.shape[2] - upsampled.shape[2], skip.shape[3] - upsampled.shape[3]
    upsampled = F.pad(upsampled, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
    merged = torch.cat([skip, upsampled], dim=1)
    assert merged.shape == (2, 16, 15, 15)
    assert torch.all(merged[:, 8:, -1, :] == 0)  # the padded row
    _trains(merged, head)
    # the variant: crop the skip tensor to the upsampled size instead
    skip, upsampled, head = _features()
    cropped = skip[:, :, :upsampled.shape[2], :upsampled.shape[3]]
    merged = torch.cat([cropped, upsampled], dim=1)
    assert merged.shape == (2, 16, 14, 14)
    assert torch.equal(merged[:, :8], skip[:, :, :14, :14])
    _trains(merged, head)


def divisible_input_size():
    """Solution 3: an input size divisible by 2 ** (number of poolings) comes back to the same size."""
    skip, upsampled, head = _features(size=16)
    assert skip.shape == upsampled.shape == (2, 8, 16, 16)
    _trains(torch.cat([skip, upsampled], dim=1), head)


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's tensors."""
    skip, upsampled, head = _features()
    names = record.run("exampleFix", {"torch": torch, "F": F, "skip": skip, "upsampled": upsampled}, section="after")
    assert names["merged"].shape == (2, 16, 15, 15)
    _trains(names["merged"], head)


def guard():
    """validationCode flags the 15 vs 14 pair and passes the 16x16 one."""
    skip, upsampled, _ = _features()
    assert not record.check("validationCode", {"tensors": [skip, upsampled], "dim": 1})
    skip, upsampled, _ = _features(size=16)
    assert record.check("validationCode", {"tensors": [skip, upsampled], "dim": 1})


def _cats(tensors, dim):
    """A valid situation is a list torch.cat accepts."""
    torch.cat(tensors, dim=dim)
    return {"tensors": tensors, "dim": dim}


def valid_unet_16():
    skip, upsampled, _ = _features(size=16)
    return [_cats([skip, upsampled], 1), _cats([skip, upsampled], -3)]


def valid_differ_only_in_dim():
    return [_cats([torch.randn(37, 3), torch.randn(31, 3)], 0),       # batches of different lengths
            _cats([torch.randn(2, 8, 4), torch.randn(2, 36, 4)], 1),
            _cats([torch.randn(5), torch.randn(2)], 0),
            _cats([torch.randn(2, 3, 4), torch.randn(2, 3, 1)], -1),
            _cats([torch.randn(2, 3)], 0)]


def valid_legacy_empty():
    """cat skips an empty 1-D tensor, so an accumulator started as torch.tensor([]) works."""
    return [_cats([torch.tensor([]), torch.randn(2, 3)], 0), _cats([torch.randn(2, 3), torch.tensor([])], 1)]


def valid_generated():
    """Generated: a shape, a dimension, and tensors that differ from it only in that dimension."""
    def situation(shape, dim, sizes, negative):
        tensors = []
        for size in sizes:
            s = list(shape)
            s[dim] = size
            tensors.append(torch.zeros(s))
        return _cats(tensors, dim - len(shape) if negative else dim)

    shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)
    return shapes.flatmap(lambda shape: st.builds(
        situation, st.just(shape), st.integers(0, len(shape) - 1),
        st.lists(st.integers(0, 4), min_size=1, max_size=4), st.booleans()))
