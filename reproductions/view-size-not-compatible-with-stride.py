"""A multi-head attention block produces (batch, heads, tokens, head_dim), swaps heads and tokens with transpose(1, 2)
and merges the last two dimensions with .view(batch, tokens, heads * head_dim). After the transpose those two
dimensions are not adjacent in memory, so view (aten/src/ATen/native/TensorShape.cpp, computeStride finds no strides)
raises "view size is not compatible with input tensor's size and stride (at least one dimension spans across two
contiguous subspaces). Use .reshape(...) instead.". Demonstrations: .reshape(...) and .contiguous().view(...), each
giving exactly the values of an element-by-element reference (torch.stack of the per-token head concatenation) and a
working backward pass. The record's exampleFix and validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "use_reshape", 2: "contiguous_then_view"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "contiguous": "valid_contiguous",
    "column-slice-split": "valid_column_slice",
    "transpose-split": "valid_transpose_split",
    "expanded-split": "valid_expanded",
    "generated-viewable": "valid_generated_viewable",
}
CODE_NAMES = {"exampleFix": ["attn", "B", "T", "H", "D"], "validationCode": ["t", "shape"]}
WORDINGS = [
    {"text": "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
             "contiguous subspaces). Use .reshape(...) instead.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: invalid argument 2: view size is not compatible with input tensor's size and stride (at "
             "least one dimension spans across two contiguous subspaces). Call .contiguous() before .view(). at "
             "/opt/conda/conda-bld/pytorch_1533672544752/work/aten/src/TH/generic/THTensor.cpp:237",
     "source": "geyang/deep-auto-punctuation#3", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record
from hypothesis import strategies as st

import torch

B, H, T, D = 2, 4, 5, 8


def _attention_output():
    torch.manual_seed(0)
    q = torch.randn(B, H, T, D, requires_grad=True)
    k = torch.randn(B, H, T, D)
    v = torch.randn(B, H, T, D)
    attn = torch.softmax(q @ k.transpose(-2, -1) / D ** 0.5, dim=-1) @ v  # (B, H, T, D)
    return q, attn


def _reference(attn):
    """Per batch and token, the heads' vectors concatenated: what merging heads means."""
    a = attn.detach()
    return torch.stack([torch.stack([torch.cat([a[b, h, t] for h in range(H)]) for t in range(T)]) for b in range(B)])


def _check(q, attn, merged):
    assert merged.shape == (B, T, H * D)
    assert torch.equal(merged.detach(), _reference(attn))
    merged.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


def trigger():
    _, attn = _attention_output()
    attn.transpose(1, 2).view(B, T, H * D)  # RuntimeError from view


def use_reshape():
    q, attn = _attention_output()
    _check(q, attn, attn.transpose(1, 2).reshape(B, T, H * D))


def contiguous_then_view():
    q, attn = _attention_output()
    _check(q, attn, attn.transpose(1, 2).contiguous().view(B, T, H * D))


def example_fix():
    q, attn = _attention_output()
    names = record.run("exampleFix", {"attn": attn, "B": B, "T": T, "H": H, "D": D}, section="after")
    _check(q, attn, names["out"])


def guard():
    _, attn = _attention_output()
    assert not record.check("validationCode", {"t": attn.transpose(1, 2), "shape": (B, T, H * D)})
    assert record.check("validationCode", {"t": attn.transpose(1, 2).contiguous(), "shape": (B, T, H * D)})


def _viewable(t, shape):
    """A valid situation is one view itself accepts."""
    t.view(shape)
    return {"t": t, "shape": shape}


def valid_contiguous():
    _, attn = _attention_output()
    return _viewable(attn, (B, H, T * D))


def valid_column_slice():
    """Not contiguous (a column slice), but splitting the rows needs no copy."""
    x = torch.randn(4, 6)[:, :3]
    assert not x.is_contiguous()
    return _viewable(x, (2, 2, 3))


def valid_transpose_split():
    x = torch.randn(4, 6).T
    assert not x.is_contiguous()
    return _viewable(x, (2, 3, 4))


def valid_expanded():
    x = torch.randn(1, 4).expand(3, 4)
    assert not x.is_contiguous()
    return _viewable(x, (3, 2, 2))


def valid_generated_viewable():
    """Generated: a contiguous tensor, or a column slice of one, viewed as a shape that splits or merges only
    dimensions view can (every such view is accepted)."""
    def situation(rows, cols, split, sliced):
        base = torch.randn(rows * split, cols * 2)
        t = base[:, :cols] if sliced else base  # a column slice: rows still split without a copy
        return _viewable(t, (split, rows, t.shape[1]))

    return st.builds(situation, st.integers(1, 5), st.integers(1, 5), st.integers(1, 4), st.booleans())
