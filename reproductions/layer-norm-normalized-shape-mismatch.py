"""A convolution produces a feature map laid out (N, C, H, W) = (2, 16, 8, 8), and nn.LayerNorm(16) is applied to it
directly. LayerNorm normalizes over the input's last len(normalized_shape) dimensions, which must equal
normalized_shape; the last dimension here is the width 8, so _check_layer_norm_inputs
(aten/src/ATen/native/layer_norm.h) raises RuntimeError "Given normalized_shape=[16], expected input with shape [*, 16],
but got input of size[2, 16, 8, 8]". Demonstrations, each on the trigger's convolution, norm and images: moving the
channels last around the norm (permute, norm, permute back) gives, at every pixel, the normalization of its 16
channel values with the norm's own weight and bias, and the stage shows the silent variant (a map whose width happens
to be 16 passes the check and is normalized along the width) (solution 1); normalizing each sample over channels and
positions together with nn.GroupNorm(1, 16) (any size) or nn.LayerNorm([16, 8, 8]) (one size), which agree with each
other and differ from solution 1 (solution 2); a width mismatch (tokens 24 wide into a norm built for 32) raises the
same message and is fixed by building the norm for the width the features have, while the 32-wide norm's trained
weights no longer load (solution 3). Solution 1's stage also shows nn.RMSNorm (where
the release has it) refusing the same map with a message of the same form and accepting the permuted one. The
exampleFix and validationCode run from the record's text; the guard is checked against token sequences, channels-last
maps, an unbatched vector, a multi-dimensional normalized_shape, a batch of one and a LayerNorm subclass that permutes
inside its forward (written like timm's LayerNorm2d, timm/layers/norm.py of timm 1.0.31 line 113) on an
(N, C, H, W) map, each accepted by the norm first.

Drafted by `errkb draft` on torch 2.13.0+cpu, Python 3.11.7: raised at aten/src/ATen/native/layer_norm.h:92
(_check_layer_norm_inputs), commit cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version); 92 is the
line the 2.13.0 build reports. No stored copy of layer_norm.h at that commit was available. The excerpt's text is
lines 83-94 of torch/include/ATen/native/layer_norm.h in the installed 2.13.0+cpu wheel: the wheel ships this header
with one guard line prepended (#if !defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)) and three appended,
so its line 93 (TORCH_CHECK(false, std::move(ss).str())) is the source's line 92, the line the build reports (the
2.5.1 wheel's header has no guard line and its raise is at line 51, the line 2.5.1 reports). The header is not the
upstream file itself, hence "excerpt": "unverified". (Review: the first version's excerpt came from a ROCm fork and
had ss.str() where this build has std::move(ss).str().) Other builds report line 51 (2.5.1) and 92 (2.15.0, whose
header is identical to 2.13.0's).
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "channels_last_around_norm", 2: "normalize_whole_sample", 3: "norm_for_actual_width"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["norm", "x"], "validationCode": ["norm", "x"]}
KEEP = ["norm"]
VALID = {
    "tokens-channels-last": "valid_tokens",
    "image-channels-last": "valid_channels_last_map",
    "unbatched-vector": "valid_unbatched",
    "multi-dim-normalized-shape": "valid_multi_dim",
    "batch-of-one": "valid_batch_of_one",
    "channels-first-layernorm-subclass": "valid_channels_first_subclass",
}
WORDINGS = [
    {"text": "Given normalized_shape=[16], expected input with shape [*, 16], but got input of size[2, 16, 8, 8]",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Given normalized_shape=[16], expected input with shape [*, 16], but got input of size[2, 16, 8, 8]",
     "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Given normalized_shape=[16], expected input with shape [*, 16], but got input of size[2, 16, 8, 8]",
     "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Given normalized_shape=[256], expected input with shape [*, 256], but got input of size[4, 256, 200, 200]",
     "source": "ViTAE-Transformer/ViTDet#25", "match": "matcher"},
    {"text": "RuntimeError: Given normalized_shape=[1024], expected input with shape [*, 1024], but got input of size[4, 257, 768]",
     "source": "Wangbenzhi/RealisHuman#3", "match": "matcher"},
    {"text": "RuntimeError: Given normalized_shape=[768], expected input with shape [*, 768], but got input of size[12]",
     "source": "pengzhiliang/MAE-pytorch#93", "match": "matcher"},
    {"text": "RuntimeError: Given normalized_shape=[1280], expected input with shape [*, 1280], but got input of size[1, 257, 1664]",
     "source": "Comfy-Org/ComfyUI#14490", "match": "matcher"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch
import torch.nn as nn


def _setup():
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 16, 3, padding=1)
    norm = nn.LayerNorm(16)
    with torch.no_grad():  # a trained-looking norm: weight and bias not the 1/0 defaults
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    images = torch.randn(2, 3, 8, 8)
    return conv, norm, images


def _per_pixel_channel_norm(x, norm):
    """The intended result, one pixel at a time: normalize its C channel values, then the norm's weight and bias."""
    out = torch.empty_like(x)
    for n in range(x.shape[0]):
        for i in range(x.shape[2]):
            for j in range(x.shape[3]):
                v = x[n, :, i, j]
                out[n, :, i, j] = (v - v.mean()) / torch.sqrt(v.var(unbiased=False) + norm.eps) * norm.weight + norm.bias
    return out


def _expect_refused(norm, x, fragment):
    try:
        norm(x)
    except RuntimeError as exc:
        assert fragment in str(exc), str(exc)
    else:
        raise AssertionError(f"the norm accepted {tuple(x.shape)}")


def trigger():
    conv, norm, images = _setup()
    norm(conv(images))  # (2, 16, 8, 8): channels in dimension 1, LayerNorm(16) reads the last dimension


def channels_last_around_norm():
    """Solution 1: permute to (N, H, W, C), normalize over C, permute back to (N, C, H, W)."""
    conv, norm, images = _setup()
    x = conv(images)
    y = norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
    assert y.shape == x.shape
    assert torch.allclose(y, _per_pixel_channel_norm(x, norm), atol=1e-5)
    y.square().mean().backward()
    assert conv.weight.grad is not None and norm.weight.grad.abs().sum() > 0
    # The silent variant: a map whose width happens to equal C passes the check, normalized along the width.
    wide = conv(torch.randn(2, 3, 8, 16))  # (2, 16, 8, 16)
    with torch.no_grad():
        silent = norm(wide)  # no error
        right = norm(wide.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        assert not torch.allclose(silent, right, atol=1e-3)
        assert torch.allclose(right, _per_pixel_channel_norm(wide, norm), atol=1e-5)
        if hasattr(nn, "RMSNorm"):  # RMSNorm checks its input the same way; the same permute fixes it
            rms = nn.RMSNorm(16)
            _expect_refused(rms, x, "Given normalized_shape=[16], expected input with shape [*")
            assert rms(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2).shape == x.shape


def normalize_whole_sample():
    """Solution 2: normalize each sample over channels and positions together: GroupNorm(1, C) for any size, or
    LayerNorm([C, H, W]) for one size; both agree with each other (default affine) and differ from solution 1."""
    conv, norm, images = _setup()
    with torch.no_grad():
        x = conv(images)
        group = nn.GroupNorm(1, 16)(x)
        whole = nn.LayerNorm([16, 8, 8])(x)
        assert torch.allclose(group, whole, atol=1e-5)
        per_pixel = nn.LayerNorm(16)(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        assert not torch.allclose(group, per_pixel, atol=1e-3)
        assert nn.GroupNorm(1, 16)(conv(torch.randn(2, 3, 12, 10))).shape == (2, 16, 12, 10)
        _expect_refused(nn.LayerNorm([16, 8, 8]), conv(torch.randn(2, 3, 12, 10)), "expected input with shape [*, 16, 8, 8]")


def norm_for_actual_width():
    """Solution 3: a width mismatch (features 24 wide, a norm built for 32): build the norm for the real width."""
    torch.manual_seed(0)
    tokens = torch.randn(2, 5, 24)  # e.g. an encoder with hidden size 24
    built_for_32 = nn.LayerNorm(32)
    _expect_refused(built_for_32, tokens, "Given normalized_shape=[32], expected input with shape [*, 32], but got input of size[2, 5, 24]")
    norm = nn.LayerNorm(tokens.shape[-1])
    out = norm(tokens)
    assert out.shape == tokens.shape
    assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5)
    try:  # the weights trained for width 32 do not fit the new norm
        norm.load_state_dict(built_for_32.state_dict())
    except RuntimeError as exc:
        assert "size mismatch for weight" in str(exc), str(exc)
    else:
        raise AssertionError("a 32-wide checkpoint loaded into a 24-wide norm")


def example_fix():
    conv, norm, images = _setup()
    x = conv(images)
    names = record.run("exampleFix", {"norm": norm, "x": x}, section="after")
    assert names["y"].shape == x.shape
    assert torch.allclose(names["y"], _per_pixel_channel_norm(x, norm), atol=1e-5)


def guard():
    conv, norm, images = _setup()
    with torch.no_grad():
        x = conv(images)
    assert not record.check("validationCode", {"norm": norm, "x": x})
    assert not record.check("validationCode", {"norm": nn.LayerNorm(32), "x": torch.randn(2, 5, 24)})
    assert record.check("validationCode", {"norm": norm, "x": x.permute(0, 2, 3, 1)})
    assert not record.check("validationCode", {"norm": nn.LayerNorm(16), "x": x})  # a plain LayerNorm still flagged


class _LayerNorm2d(nn.LayerNorm):
    """A LayerNorm for (N, C, H, W) maps, written like timm's LayerNorm2d: channels last inside forward."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _accepted(norm, x):
    """A valid situation is one the norm accepts."""
    with torch.no_grad():
        norm(x)
    return {"norm": norm, "x": x}


def valid_tokens():
    return [_accepted(nn.LayerNorm(32), torch.randn(4, 7, 32)), _accepted(nn.LayerNorm(32), torch.randn(4, 32))]


def valid_channels_last_map():
    return _accepted(nn.LayerNorm(16), torch.randn(2, 8, 8, 16))


def valid_unbatched():
    return _accepted(nn.LayerNorm(10), torch.randn(10))


def valid_multi_dim():
    return [_accepted(nn.LayerNorm([16, 8, 8]), torch.randn(2, 16, 8, 8)),
            _accepted(nn.LayerNorm([5, 6], elementwise_affine=False), torch.randn(3, 4, 5, 6))]


def valid_batch_of_one():
    return [_accepted(nn.LayerNorm(32), torch.randn(1, 1, 32)), _accepted(nn.LayerNorm(8), torch.randn(1, 8))]


def valid_channels_first_subclass():
    return _accepted(_LayerNorm2d(16), torch.randn(2, 16, 8, 8))
