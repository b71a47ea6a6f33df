"""A small CNN flattens its feature maps with a hard-coded x.view(-1, 512), but each sample has 16 * 8 * 8 = 1024
features, so view folds every sample into two rows: a batch of 32 images leaves the classifier as 64 rows of logits.
nn.CrossEntropyLoss then compares 64 predictions with 32 labels, and nll_loss_nd_symint in
aten/src/ATen/native/LossNLL.cpp raises "ValueError: Expected input batch_size (64) to match target batch_size (32).".
The demonstrations: the flatten keeps the batch dimension (x.flatten(1)) and the Linear is sized to the real 1024
features; and the sequence-model variant of the same mistake (logits (B, T, V) flattened to (B*T, V) while the targets
stay (B, T)) fixed by flattening logits and targets together, or by moving the class dimension to position 1. The record's exampleFix and validationCode
run from its own text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "flatten_keeps_batch", 2: "flatten_logits_and_targets_together"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "batched": "valid_batched",
    "unbatched": "valid_unbatched",
    "sequence-class-dim-1": "valid_sequence",
    "class-probabilities": "valid_probabilities",
    "generated-matching-batches": "valid_generated_batches",
}
CODE_NAMES = {"exampleFix": ["x"], "validationCode": ["logits", "targets"]}
WORDINGS = [
    {"text": "Expected input batch_size (64) to match target batch_size (32).", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "ValueError: Expected input batch_size (1216) to match target batch_size (1280).",
     "source": "gauthierdmn/question_generation#4", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, in_features=512, flatten_keeps_batch=False):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))  # 16x16 -> 16 x 8 x 8
        self.fc = nn.Linear(in_features, 10)
        self.in_features = in_features
        self.flatten_keeps_batch = flatten_keeps_batch

    def forward(self, x):
        x = self.conv(x)
        if self.flatten_keeps_batch:
            x = x.flatten(1)  # (N, 1024)
        else:
            x = x.view(-1, self.in_features)  # (2N, 512): the batch dimension is silently changed
        return self.fc(x)


def _batch():
    g = torch.Generator().manual_seed(0)
    return torch.randn(32, 3, 16, 16, generator=g), torch.randint(0, 10, (32,), generator=g)


def _train(model, x, y, loss_fn, steps=15):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < losses[0], losses
    return losses


def trigger():
    torch.manual_seed(0)
    x, y = _batch()
    nn.CrossEntropyLoss()(Net()(x), y)  # ValueError: Expected input batch_size (64) to match target batch_size (32).


def flatten_keeps_batch():
    """Solution 1: flatten with x.flatten(1) and size the Linear to the features that really arrive (1024)."""
    torch.manual_seed(0)
    x, y = _batch()
    model = Net(in_features=16 * 8 * 8, flatten_keeps_batch=True)
    assert model(x).shape == (32, 10)
    _train(model, x, y, nn.CrossEntropyLoss())


def flatten_logits_and_targets_together():
    """Solution 2: a sequence model's (B, T, V) logits and (B, T) targets are flattened together (or permuted)."""
    torch.manual_seed(0)
    B, T, V = 4, 7, 11
    emb, head = nn.Embedding(V, 8), nn.Linear(8, V)
    model = nn.Sequential(emb, head)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, V, (B, T), generator=g)
    targets = torch.randint(0, V, (B, T), generator=g)
    logits = model(tokens)  # (B, T, V)
    assert logits.view(-1, V).shape[0] == B * T != targets.shape[0]  # the mismatched pair the error reports
    loss_fn = lambda out, tgt: F.cross_entropy(out.reshape(-1, out.shape[-1]), tgt.reshape(-1))
    _train(model, tokens, targets, loss_fn)
    # the same loss with the class dimension moved to position 1 instead of flattening
    assert torch.allclose(loss_fn(model(tokens), targets), F.cross_entropy(model(tokens).permute(0, 2, 1), targets), atol=1e-6)


def example_fix():
    """The record's exampleFix, its "after" part, as the forward's flatten step on the trigger's batch."""
    torch.manual_seed(0)
    x, y = _batch()
    model = Net(in_features=16 * 8 * 8, flatten_keeps_batch=True)
    names = record.run("exampleFix", {"x": model.conv(x)}, section="after")
    assert names["x"].shape == (32, 1024)
    loss = nn.CrossEntropyLoss()(model.fc(names["x"]), y)
    assert math.isfinite(loss.item())


def guard():
    """validationCode flags the 64-row logits against 32 labels and passes the fixed model's 32 rows."""
    torch.manual_seed(0)
    x, y = _batch()
    with torch.no_grad():
        bad, good = Net()(x), Net(16 * 8 * 8, True)(x)
    assert not record.check("validationCode", {"logits": bad, "targets": y})
    assert record.check("validationCode", {"logits": good, "targets": y})


def _accepted(logits, targets):
    """A valid situation is one cross_entropy accepts."""
    assert math.isfinite(nn.functional.cross_entropy(logits, targets).item())
    return {"logits": logits, "targets": targets}


def valid_batched():
    torch.manual_seed(0)
    x, y = _batch()
    with torch.no_grad():
        return _accepted(Net(16 * 8 * 8, True)(x), y)


def valid_unbatched():
    """One sample: (C,) logits and a 0-d target have no batch dimension."""
    return _accepted(torch.randn(10), torch.tensor(3))


def valid_sequence():
    """Sequence logits (N, C, T) with targets (N, T): the class dimension second, batch sizes equal."""
    return _accepted(torch.randn(4, 10, 7), torch.randint(0, 10, (4, 7)))


def valid_probabilities():
    return _accepted(torch.randn(6, 10), torch.softmax(torch.randn(6, 10), dim=1))


def valid_generated_batches():
    """Generated: logits (N, C) or (N, C, T) with class targets (N,) or (N, T) of the same N, as cross_entropy takes."""
    def pair(batch, classes, steps):
        if steps:
            return _accepted(torch.randn(batch, classes, steps), torch.randint(0, classes, (batch, steps)))
        return _accepted(torch.randn(batch, classes), torch.randint(0, classes, (batch,)))

    return st.builds(pair, st.integers(1, 9), st.integers(2, 7), st.integers(0, 4))
