"""A model L2-normalises 96 embeddings of size 64 by hand: norm = x.norm(p=2, dim=1) has shape (96,), and
norm.expand_as(x) asks to expand it to (96, 64). Expansion aligns sizes from the last dimension, so the 96 lands
on the dimension of size 64, and the expand's geometry check (inferExpandGeometry in aten/src/ATen/ExpandUtils.cpp)
raises "The expanded size of the tensor (64) must match the existing size (96) at non-singleton dimension 1.
Target sizes: [96, 64].  Tensor sizes: [96]". The demonstrations keep the reduced dimension (keepdim=True, shape
(96, 1)), use F.normalize, and show the same error from a slice assignment (an image copied into a fixed-size
canvas slice; copy_ into that slice is shown to raise broadcasting's message instead), fixed by sizing the slice
from the source. The record's exampleFix and validationCode run from its
own text; the guard passes shapes expand accepts (keepdim, per-column, scalar, equal, generated).
"""
NEEDS = {"packages": {"torch": ">=2.5", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "keepdim", 2: "functional_normalize", 3: "slice_from_source_shape"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["x"], "validationCode": ["norm", "x"]}
VALID = {
    "keepdim": "valid_keepdim",
    "per-column-and-scalar": "valid_per_column_and_scalar",
    "batched-3d": "valid_batched_3d",
    "generated-shapes": "valid_generated",
}
WORDINGS = [
    {"text": "The expanded size of the tensor (64) must match the existing size (96) at non-singleton dimension 1.  "
             "Target sizes: [96, 64].  Tensor sizes: [96]", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "The expanded size of the tensor (64) must match the existing size (96) at non-singleton dimension 1.  "
             "Target sizes: [96, 64].  Tensor sizes: [96]", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "The expanded size of the tensor (64) must match the existing size (96) at non-singleton dimension 1.  "
             "Target sizes: [96, 64].  Tensor sizes: [96]", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: The expanded size of the tensor (3) must match the existing size (864) at non-singleton "
             "dimension 3", "source": "microsoft/singleshotpose#33", "match": "pattern"},
    {"text": "RuntimeError: The expanded size of the tensor (1000) must match the existing size (1289) at non-singleton "
             "dimension 1.\nTarget sizes: [1, 1000, 16, 64].  Tensor sizes: [1289, 16, 64]",
     "source": "kyutai-labs/pocket-tts#65", "match": "pattern"},
    {"text": "RuntimeError: The expanded size of the tensor (3) must match the existing size (864) at non-singleton "
             "dimension 3", "source": "microsoft/singleshotpose#10", "match": "pattern"},
    {"text": "RuntimeError: The size of tensor a (130528) must match the size of tensor b (4096) at non-singleton "
             "dimension 2", "source": "michael-wzhu/PromptCBLUE#11", "match": "none",
     "why": "broadcasting's own check (arithmetic, copy_): the record broadcast-tensor-size-must-match"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "181624244c76e6f99a3f20106310ee73245e5e0b", "offset": 3}

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn.functional as F


def _embeddings():
    torch.manual_seed(0)
    return torch.randn(96, 64)


def _unit_rows(y):
    assert y.shape == (96, 64)
    assert torch.allclose(y.norm(p=2, dim=1), torch.ones(96), atol=1e-5)


def trigger():
    x = _embeddings()
    norm = x.norm(p=2, dim=1)  # shape (96,)
    x = x / norm.expand_as(x)  # RuntimeError from expand: 96 is aligned with the last dimension (64)


def keepdim():
    """Solution 1: keep the reduced dimension, so the norm is (96, 1) and expands along the columns."""
    x = _embeddings()
    norm = x.norm(p=2, dim=1, keepdim=True)
    assert norm.shape == (96, 1)
    y = x / norm.expand_as(x)
    _unit_rows(y)
    assert torch.equal(y, x / x.norm(p=2, dim=1).unsqueeze(1))  # unsqueeze(1) is the same fix


def functional_normalize():
    """Solution 2: F.normalize divides each row by its norm without any manual expand."""
    x = _embeddings()
    y = F.normalize(x, p=2, dim=1)
    _unit_rows(y)
    assert torch.allclose(y, x / x.norm(p=2, dim=1, keepdim=True), atol=1e-6)


def slice_from_source_shape():
    """Solution 3: a slice assignment expands the source to the slice; size the slice from the source."""
    torch.manual_seed(0)
    images = [torch.rand(3, 28, 28), torch.rand(3, 32, 30)]
    canvas = torch.zeros(2, 3, 32, 32)
    try:
        canvas[0, :, :32, :32] = images[0]  # the fixed-size slice: the same error
    except RuntimeError as error:
        assert "The expanded size of the tensor (32) must match the existing size (28) at non-singleton dimension 2" \
            in str(error), str(error)
    else:
        raise AssertionError("copying a 28x28 image into a 32x32 slice was expected to fail")
    try:  # copy_ into the same slice broadcasts instead: another check, another message (another record)
        canvas[0, :, :32, :32].copy_(images[0])
    except RuntimeError as error:
        assert "The size of tensor a (32) must match the size of tensor b (28) at non-singleton dimension 2" \
            in str(error), str(error)
    else:
        raise AssertionError("copy_ of a 28x28 image into a 32x32 slice was expected to fail")
    for i, image in enumerate(images):
        h, w = image.shape[-2:]
        canvas[i, :, :h, :w] = image
    assert torch.equal(canvas[0, :, :28, :28], images[0]) and canvas[0, :, 28:, :].abs().sum() == 0
    assert torch.equal(canvas[1, :, :32, :30], images[1])


def example_fix():
    """The record's exampleFix, its "after" part, normalises the rows."""
    names = record.run("exampleFix", {"x": _embeddings()}, section="after")
    _unit_rows(names["x"])


def guard():
    """validationCode flags the (96,) norm against (96, 64) and passes the keepdim one."""
    x = _embeddings()
    assert not record.check("validationCode", {"norm": x.norm(p=2, dim=1), "x": x})
    assert record.check("validationCode", {"norm": x.norm(p=2, dim=1, keepdim=True), "x": x})


def _expands(norm, x):
    """A valid situation is one expand_as accepts."""
    norm.expand_as(x)
    return {"norm": norm, "x": x}


def valid_keepdim():
    x = _embeddings()
    return _expands(x.norm(p=2, dim=1, keepdim=True), x)


def valid_per_column_and_scalar():
    x = _embeddings()
    return [_expands(x.norm(p=2, dim=0), x), _expands(x.norm(), x), _expands(x.clone(), x),
            _expands(torch.ones(1, 1, 64), x[None])]


def valid_batched_3d():
    x = torch.randn(4, 10, 64)
    return [_expands(x.norm(dim=-1, keepdim=True), x), _expands(x.norm(dim=1, keepdim=True), x),
            _expands(torch.ones(64), x), _expands(torch.ones(4, 10, 64), x)]


def valid_generated():
    """Generated: a target shape, and a source made of its trailing sizes, some replaced by 1."""
    def situation(shape, keep, ones):
        x = torch.zeros(shape)
        tail = shape[len(shape) - keep:] if keep else []
        src = [1 if one else size for size, one in zip(tail, ones)]
        return _expands(torch.zeros(src), x)

    shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4)
    return shapes.flatmap(lambda shape: st.builds(
        situation, st.just(shape), st.integers(0, len(shape)),
        st.lists(st.booleans(), min_size=len(shape), max_size=len(shape))))
