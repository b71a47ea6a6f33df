"""A binary classifier's head is nn.Linear(4, 1): its logits are (8, 1) while the labels are a flat (8,) vector.
BCEWithLogitsLoss calls binary_cross_entropy_with_logits (torch/nn/functional.py), which compares the two sizes and
raises ValueError "Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 1]))". The
demonstrations: the labels reshaped with view_as(logits) and the logits squeezed on their one-unit dimension (both
give the same loss, which equals the element-wise definition, and a training step lowers it; BCELoss's sibling
ValueError is shown for the same shapes), and a three-class model whose class-index labels get CrossEntropyLoss
instead of the binary loss (which raises the same ValueError on them). The record's exampleFix and validationCode
run from its text. CPU only.

Drafted by `errkb draft` from bce.py on torch 2.13.0+cpu, Python 3.11.7:
  ValueError: Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 1]))
  raised at torch/nn/functional.py:3689
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author added BCELoss's
"Using a target size ... is deprecated" ValueError to the pattern.
"""
NEEDS = {'packages': {'torch': '>=2.0', 'hypothesis': ''}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "same_shape", 2: "cross_entropy_for_classes"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["criterion", "logits", "labels"], "validationCode": ["logits", "labels"]}
KEEP = ["criterion", "logits"]
VALID = {"binary-column": "valid_binary_column", "multi-label": "valid_multi_label", "soft-labels": "valid_soft",
         "segmentation-mask": "valid_mask", "shapes": "valid_shapes"}
WORDINGS = [
    {'text': "Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 1]))",
     'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 1]))",
     'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "Target size (torch.Size([16])) must be the same as input size (torch.Size([16, 1]))",
     'source': 'pytorch/pytorch#25663', 'match': 'matcher'},
    {'text': "Using a target size (torch.Size([64])) that is different to the input size (torch.Size([64, 1])) is "
             "deprecated. Please ensure they have the same size.", 'source': 'Arctanxy/W-Net-PyTorch#15',
     'match': 'pattern'},
    {'text': "UserWarning: Using a target size (torch.Size([1966080])) that is different to the input size "
             "(torch.Size([3010560])) is deprecated.", 'source': 'usuyama/pytorch-unet#5', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import errkb_record as record

import torch
import torch.nn.functional as F
from hypothesis import strategies as st


def _situation():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    inputs = torch.randn(8, 4)
    labels = torch.randint(0, 2, (8,)).float()
    return model, inputs, labels


def _by_definition(logits, labels):
    p = torch.sigmoid(logits)
    return -(labels * torch.log(p) + (1 - labels) * torch.log(1 - p)).mean()


def trigger():
    # a binary classifier: one logit per example, shape (8, 1); the labels are a flat (8,) vector
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    inputs = torch.randn(8, 4)
    labels = torch.randint(0, 2, (8,)).float()
    loss = torch.nn.BCEWithLogitsLoss()(model(inputs), labels)


def same_shape():
    """Solution 1: labels.view_as(logits), or logits.squeeze(1): the same loss, equal to the definition, and a
    training step lowers it. BCELoss on the same mismatched shapes raises its own ValueError."""
    model, inputs, labels = _situation()
    logits = model(inputs)
    a = torch.nn.BCEWithLogitsLoss()(logits, labels.view_as(logits))
    b = torch.nn.BCEWithLogitsLoss()(logits.squeeze(1), labels)
    assert torch.allclose(a, b) and torch.allclose(a, _by_definition(logits.squeeze(1), labels))
    try:
        torch.nn.BCELoss()(torch.sigmoid(logits), labels)
    except ValueError as exc:
        assert "that is different to the input size" in str(exc) and "is deprecated" in str(exc), exc
    else:
        raise AssertionError("BCELoss accepted (8, 1) against (8,)")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    optimizer.zero_grad()
    a.backward()
    optimizer.step()
    after = torch.nn.BCEWithLogitsLoss()(model(inputs), labels.view_as(logits))
    assert after < a, (after, a)
    # a batch of one: squeeze(1) keeps the batch dimension where a bare squeeze() would not
    one = model(inputs[:1])
    assert one.squeeze(1).shape == (1,) and one.squeeze().shape == ()


def cross_entropy_for_classes():
    """Solution 2: one class index per example and (N, C) logits: the binary loss raises the same ValueError,
    CrossEntropyLoss takes the integer labels."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    inputs = torch.randn(8, 4)
    classes = torch.randint(0, 3, (8,))
    try:
        torch.nn.BCEWithLogitsLoss()(model(inputs), classes.float())
    except ValueError as exc:
        assert "must be the same as input size" in str(exc), exc
    else:
        raise AssertionError("BCEWithLogitsLoss accepted (8, 3) against (8,)")
    loss = torch.nn.CrossEntropyLoss()(model(inputs), classes)
    assert torch.isfinite(loss)
    loss.backward()
    assert model.weight.grad is not None and model.weight.grad.abs().sum() > 0


def example_fix():
    model, inputs, labels = _situation()
    criterion = torch.nn.BCEWithLogitsLoss()
    logits = model(inputs)
    names = record.run("exampleFix", {"criterion": criterion, "logits": logits, "labels": labels}, section="after")
    assert names["criterion"] is criterion and names["logits"] is logits
    assert torch.allclose(names["loss"], _by_definition(logits.squeeze(1), labels))


def guard():
    model, inputs, labels = _situation()
    logits = model(inputs)
    assert not record.check("validationCode", {"logits": logits, "labels": labels})
    assert record.check("validationCode", {"logits": logits, "labels": labels.view_as(logits)})


def _valid(logits, labels):
    F.binary_cross_entropy_with_logits(logits, labels)  # the library accepts the pair
    return {"logits": logits, "labels": labels}


def valid_binary_column():
    model, inputs, labels = _situation()
    return _valid(model(inputs), labels.view(-1, 1))


def valid_multi_label():
    return _valid(torch.randn(6, 5), torch.randint(0, 2, (6, 5)).float())


def valid_soft():
    """Label smoothing / probabilities as targets."""
    return _valid(torch.randn(4), torch.tensor([0.1, 0.9, 0.5, 0.0]))


def valid_mask():
    """Segmentation: (N, 1, H, W) logits and a mask with its channel dimension."""
    return _valid(torch.randn(2, 1, 3, 3), torch.randint(0, 2, (2, 1, 3, 3)).float())


def valid_shapes():
    shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4)
    return shapes.map(lambda s: _valid(torch.randn(s), torch.rand(s)))
