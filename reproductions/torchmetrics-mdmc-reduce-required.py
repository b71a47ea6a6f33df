"""A segmentation model's softmax output, shaped (batch, classes, height, width), and its masks, (batch, height,
width), go into torchmetrics' legacy Precision(num_classes=3, average="macro") without mdmc_average. torchmetrics
classifies such input as multi-dimensional multi-class and, in the stat-scores update every legacy
precision/recall/F-score/accuracy metric shares (torchmetrics/functional/classification/stat_scores.py), refuses to
guess how the extra dimensions should be reduced: ValueError "... you have to set the `mdmc_reduce` parameter".
Solution 1 passes mdmc_average="global" and checks the value equals the same metric on the flattened pixels (and
that the class argument is called mdmc_average, not mdmc_reduce); solution 2 passes mdmc_average="samplewise" and
checks the value equals the mean of the per-image scores; solution 3 uses the task-based metric that replaced the
legacy classes, MulticlassPrecision (in torchmetrics from 0.10, the only form from 0.11), and checks it gives the
global value by default and the per-image values with multidim_average="samplewise", and that the legacy class
built without task= warns (DeprecationWarning) that task= becomes required from v0.11. exampleFix runs from the
record's text. CPU only.
Results: errkb reproduce torchmetrics-mdmc-reduce-required --with torchmetrics==0.10.0 --with torchmetrics==0.10.1
--with torchmetrics==0.10.3 (verified). Environments as for torchmetrics-mode-not-determined (setuptools<80:
torchmetrics 0.10 imports pkg_resources). The excerpt is upstream src/torchmetrics/functional/classification/
stat_scores.py at tag v0.10.3 (2a055f5594a6), byte-identical to the installed 0.10.3 file (cmp against a clone).

Drafted by `errkb draft` from mdmc.py on torchmetrics 0.10.3 (another environment's python), Python 3.11.7:
  ValueError: When your inputs are multi-dimensional multi-class, you have to set the `mdmc_reduce` parameter
  raised at torchmetrics/functional/classification/stat_scores.py:972
The draft said the commit was unresolved and named the repository by its old name from the wheel's metadata
(Lightning-AI/metrics); the tag's commit and the repository's path were set by hand. --api-change was not used:
the legacy call has no release where it works (before 0.10 there is no replacement class to bisect towards; from
0.11 the legacy call itself needs task=).
"""
NEEDS = {'packages': {'torchmetrics': '>=0.10,<0.11', 'torch': '==2.13.0+cpu', 'setuptools': '<80', 'numpy': ''},
         'cuda_devices': 0, 'timeout_s': 105}
SOLUTIONS = {1: "mdmc_global", 2: "mdmc_samplewise", 3: "task_metric"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["torchmetrics"]}
WORDINGS = [
    {'text': "When your inputs are multi-dimensional multi-class, you have to set the `mdmc_reduce` parameter",
     'source': 'torchmetrics==0.10.3', 'match': 'pattern'},
    {'text': "When your inputs are multi-dimensional multi-class, you have to set the `mdmc_reduce` parameter",
     'source': 'torchmetrics==0.10.0', 'match': 'pattern'},
    {'text': "ValueError: When your inputs are multi-dimensional multi-class, you have to set the `mdmc_reduce` parameter",
     'source': 'isaaccorley/torchrs#23', 'match': 'pattern'},
    {'text': "ValueError: When your inputs are multi-dimensional multi-class, you have to set the `mdmc_reduce` parameter",
     'source': 'qubvel-org/segmentation_models.pytorch#513', 'match': 'pattern'},
    {'text': "ValueError: When your inputs are multi-dimensional multi-class, you have to set the `mdmc_reduce` parameter",
     'source': 'Lightning-AI/torchmetrics#447', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'Lightning-AI/torchmetrics',
              'commit': '2a055f5594a624685e26ba64bf20ab0d12225c86',
              'path': 'src/torchmetrics/functional/classification/stat_scores.py', 'line': 972, 'offset': 0}

import errkb_record as record


def _batch():
    import torch

    torch.manual_seed(0)
    probs = torch.randn(2, 3, 8, 8).softmax(dim=1)
    masks = torch.randint(0, 3, (2, 8, 8))
    return probs, masks


def _flat(probs, masks):
    """(N, C, H, W) scores and (N, H, W) masks as one row per pixel."""
    return probs.movedim(1, -1).reshape(-1, probs.shape[1]), masks.reshape(-1)


def trigger():
    import torch
    import torchmetrics

    torch.manual_seed(0)
    probs = torch.randn(2, 3, 4, 4).softmax(dim=1)   # a segmentation model's output: (batch, classes, height, width)
    masks = torch.randint(0, 3, (2, 4, 4))            # the ground-truth masks
    precision = torchmetrics.Precision(num_classes=3, average="macro")
    precision(probs, masks)


def mdmc_global():
    """Solution 1: mdmc_average="global" treats every pixel as a sample: the value equals the flattened input's."""
    import inspect

    import torch
    import torchmetrics

    params = inspect.signature(torchmetrics.Precision.__init__).parameters
    assert "mdmc_average" in params and "mdmc_reduce" not in params
    probs, masks = _batch()
    value = torchmetrics.Precision(num_classes=3, average="macro", mdmc_average="global")(probs, masks)
    flat = torchmetrics.Precision(num_classes=3, average="macro")(*_flat(probs, masks))
    assert torch.isfinite(value) and torch.allclose(value, flat), (value, flat)


def mdmc_samplewise():
    """Solution 2: mdmc_average="samplewise" scores each image on its own pixels and averages over images."""
    import torch
    import torchmetrics

    probs, masks = _batch()
    value = torchmetrics.Precision(num_classes=3, average="macro", mdmc_average="samplewise")(probs, masks)
    per_image = [torchmetrics.Precision(num_classes=3, average="macro")(*_flat(probs[i:i + 1], masks[i:i + 1]))
                 for i in range(len(probs))]
    expected = torch.stack(per_image).mean()
    assert torch.allclose(value, expected), (value, per_image)
    flat = torchmetrics.Precision(num_classes=3, average="macro")(*_flat(probs, masks))
    assert not torch.allclose(value, flat)  # the two reductions are different numbers on this batch


def task_metric():
    """Solution 3: MulticlassPrecision accepts (N, C, ...) input; multidim_average="global" by default. The legacy
    class built without task= warns that task= becomes required from v0.11."""
    import warnings

    import torch
    import torchmetrics
    from torchmetrics.classification import MulticlassPrecision

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torchmetrics.Precision(num_classes=3, average="macro")
    assert any(issubclass(w.category, DeprecationWarning) and "From v0.11 the `task` argument" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    probs, masks = _batch()
    value = MulticlassPrecision(num_classes=3, average="macro")(probs, masks)
    flat = torchmetrics.Precision(num_classes=3, average="macro")(*_flat(probs, masks))
    assert torch.allclose(value, flat), (value, flat)
    per_image = MulticlassPrecision(num_classes=3, average="macro", multidim_average="samplewise")(probs, masks)
    expected = torch.stack([torchmetrics.Precision(num_classes=3, average="macro")(*_flat(probs[i:i + 1], masks[i:i + 1]))
                            for i in range(len(probs))])
    assert per_image.shape == (2,) and torch.allclose(per_image, expected), (per_image, expected)


def example_fix():
    import torch
    import torchmetrics

    names = record.run("exampleFix", {"torchmetrics": torchmetrics}, section="after")
    probs, masks = _batch()
    value = names["precision"](probs, masks)
    flat = torchmetrics.Precision(num_classes=3, average="macro")(*_flat(probs, masks))
    assert torch.allclose(value, flat)
