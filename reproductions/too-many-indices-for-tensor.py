"""Box post-processing written for a batched (B, N, 4) tensor runs on the (N, 4) boxes of one image:
boxes[:, :, 2] uses three indices on a two-dimensional tensor, and applySlicing
(torch/csrc/autograd/python_variable_indexing.cpp, the line the build reports with TORCH_SHOW_CPP_STACKTRACES=1)
raises IndexError "too many indices for tensor of dimension 2". The demonstrations: an index written for the rank the
tensor has, the missing batch dimension restored with unsqueeze(0) (the batched code then runs unchanged), and an
ellipsis index that gives the same widths for (N, 4) and (B, N, 4); each asserts the widths. The record's exampleFix
runs from its text. CPU only.

Drafted by `errkb draft` from too_many.py on torch 2.13.0+cpu, Python 3.11.7:
  IndexError: too many indices for tensor of dimension 2
  raised at torch/csrc/autograd/python_variable_indexing.cpp:228 (C++)
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author kept the drafted pattern,
with the dimension as a plain count.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "index_for_rank", 2: "restore_batch_dimension", 3: "ellipsis_index"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["boxes"]}
KEEP = ["boxes"]
WORDINGS = [
    {'text': "too many indices for tensor of dimension 2", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "too many indices for tensor of dimension 2", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "too many indices for tensor of dimension 2", 'source': 'thuml/iTransformer#1', 'match': 'matcher'},
    {'text': "too many indices for tensor of dimension 1", 'source': 'Sharpiless/Yolov5-deepsort-inference#1',
     'match': 'pattern'},
    {'text': "too many indices for array: array is 1-dimensional, but 2 were indexed",
     'source': 'argusswift/YOLOv4-pytorch#165', 'match': 'none', 'why': "NumPy's wording for arrays, not torch's"},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified'}

import errkb_record as record

import torch

BOXES = [[10.0, 20.0, 50.0, 80.0], [5.0, 5.0, 30.0, 40.0]]
WIDTHS = torch.tensor([40.0, 25.0])


def trigger():
    # detections for one image: (N, 4) boxes; code written for a batched (B, N, 4) tensor indexes three dimensions
    boxes = torch.tensor([[10.0, 20.0, 50.0, 80.0], [5.0, 5.0, 30.0, 40.0]])
    widths = boxes[:, :, 2] - boxes[:, :, 0]


def index_for_rank():
    """Solution 1: two indices for the two-dimensional boxes; an empty (0,) result reshaped to (0, 4) first."""
    boxes = torch.tensor(BOXES)
    assert boxes.dim() == 2
    assert torch.equal(boxes[:, 2] - boxes[:, 0], WIDTHS)
    empty = torch.zeros(0)  # no detections: a 1-D tensor, on which unsqueeze(0) and the ellipsis index both fail
    for attempt in (lambda b: b.unsqueeze(0)[:, :, 2], lambda b: b[..., 2]):
        try:
            attempt(empty)
        except IndexError:
            pass
        else:
            raise AssertionError("an empty 1-D result was indexed")
    empty = empty.reshape(-1, 4)
    assert empty.shape == (0, 4) and (empty[:, 2] - empty[:, 0]).shape == (0,)


def restore_batch_dimension():
    """Solution 2: a batch of one: the batched code runs and gives one row of widths."""
    boxes = torch.tensor(BOXES).unsqueeze(0)
    assert boxes.shape == (1, 2, 4)
    widths = boxes[:, :, 2] - boxes[:, :, 0]
    assert torch.equal(widths, WIDTHS.unsqueeze(0))


def ellipsis_index():
    """Solution 3: the ellipsis takes any leading dimensions: the same code for (N, 4) and (B, N, 4)."""
    single = torch.tensor(BOXES)
    batch = torch.stack([single, single + 1.0])
    assert torch.equal(single[..., 2] - single[..., 0], WIDTHS)
    assert torch.equal(batch[..., 2] - batch[..., 0], torch.stack([WIDTHS, WIDTHS]))


def example_fix():
    boxes = torch.tensor(BOXES)
    names = record.run("exampleFix", {"boxes": boxes}, section="after")
    assert names["boxes"] is boxes
    assert torch.equal(names["widths"], WIDTHS)
