"""A small sequence tagger (embedding, LSTM(batch_first=True), linear head) produces logits of shape (batch 4,
seq_len 7, classes 10) and F.cross_entropy gets them with targets of shape (4, 7). The loss reads classes from
dimension 1, so nll_loss_nd (aten/src/ATen/native/LossNLL.cpp) expects targets of shape (4, 10) and raises
"Expected target size [4, 10], got [4, 7]". Demonstrations: logits.transpose(1, 2) (classes in dimension 1), with
padding positions marked by ignore_index and reduction='none'; flattening to (batch * seq_len, classes) against
(batch * seq_len,), which gives the same mean loss; and, for one label per sequence, taking the last step's scores (the last real step of right-padded
sequences). Class-probability targets in (batch, seq_len, classes) are transposed with the logits.
Each checks the loss against a per-position loop and that one SGD step changes the model. The record's exampleFix and
validationCode run from its text; the guard is checked against valid 2-D, sequence (classes in dimension 1),
segmentation (with 255 as ignore_index), unbatched, class-probability and batch-of-one inputs. The sourceCode is the
TORCH_CHECK as stored copies of LossNLL.cpp write it, placed at the line the torch 2.13.0 build reports (725); no
copy at the build's commit was available, so PROVENANCE says "unverified".
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 240}
SOLUTIONS = {1: "transpose_classes_to_dim1", 2: "flatten_positions", 3: "one_label_per_sequence"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "logits", "targets"], "validationCode": ["logits", "targets"]}
VALID = {
    "one-label-per-sample": "valid_two_dim",
    "ignore-index-default": "valid_ignore_index",
    "sequence-classes-in-dim1": "valid_sequence",
    "segmentation-255": "valid_segmentation_255",
    "unbatched": "valid_unbatched",
    "class-probabilities": "valid_probabilities",
    "batch-of-one": "valid_batch_of_one",
}
WORDINGS = [
    {"text": "Expected target size [4, 10], got [4, 7]", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Expected target size [4, 10], got [4, 7]", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Expected target size [4, 10], got [4, 7]", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Expected target size [32, 9490], got [32, 51]",
     "source": "sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning#195", "match": "matcher"},
    {"text": "ValueError: Expected target size (12, 50265), got torch.Size([12, 510])", "source": "morganmcg1/fasthugs#7",
     "match": "matcher"},
    {"text": "RuntimeError: Expected target size [1, 6], got [1, 3327]", "source": "Namkyeong/BGRL_Pytorch#4",
     "match": "matcher"},
    {"text": "RuntimeError: Expected target size [20, 2], got [20]", "source": "CSAILVision/semantic-segmentation-pytorch#291",
     "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, CLASSES = 4, 7, 10


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(CLASSES, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)  # (batch, seq_len, classes)


def _setup():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, CLASSES, (BATCH, SEQ), generator=g)
    targets = torch.randint(0, CLASSES, (BATCH, SEQ), generator=g)
    return Tagger(), tokens, targets


def _loop_loss(logits, targets, ignore_index=-100):
    """The mean over every (sample, position) that is not ignored, one position at a time."""
    losses = [F.cross_entropy(logits[b, t].unsqueeze(0), targets[b, t].unsqueeze(0))
              for b in range(logits.shape[0]) for t in range(logits.shape[1]) if targets[b, t] != ignore_index]
    return torch.stack(losses).mean()


def _step_changes(model, loss):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters())), "no parameter changed"


def trigger():
    model, tokens, targets = _setup()
    logits = model(tokens)  # (4, 7, 10)
    F.cross_entropy(logits, targets)


def transpose_classes_to_dim1():
    """Solution 1: logits.transpose(1, 2): (batch, classes, seq_len); ignore_index and reduction='none' work."""
    model, tokens, targets = _setup()
    targets[0, 5:] = -100  # padding positions
    targets[2, 3:] = -100
    logits = model(tokens)
    loss = F.cross_entropy(logits.transpose(1, 2), targets)
    assert torch.allclose(loss, _loop_loss(logits, targets), atol=1e-6)
    per_position = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    assert per_position.shape == (BATCH, SEQ) and torch.all(per_position[targets == -100] == 0)
    # class-probability targets laid out (batch, seq_len, classes): refused unless transposed as well, and
    # silently misread (seq_len taken as classes) when neither is transposed
    with torch.no_grad():
        probs = torch.softmax(torch.randn(BATCH, SEQ, CLASSES, generator=torch.Generator().manual_seed(3)), -1)
        try:
            F.cross_entropy(logits.transpose(1, 2), probs)
        except RuntimeError as error:
            assert f"Expected target size [{BATCH}, {SEQ}], got [{BATCH}, {SEQ}, {CLASSES}]" in str(error), str(error)
        else:
            raise AssertionError("(batch, seq_len, classes) probabilities against transposed logits should be refused")
        soft = F.cross_entropy(logits.transpose(1, 2), probs.transpose(1, 2))
        assert torch.allclose(soft, F.cross_entropy(logits.reshape(-1, CLASSES), probs.reshape(-1, CLASSES)), atol=1e-6)
        assert not torch.allclose(F.cross_entropy(logits, probs), soft)
    # the transpose fixes the layout only: targets with more positions than the logits are still refused
    longer = torch.randint(0, CLASSES, (BATCH, SEQ + 3))
    try:
        F.cross_entropy(logits.transpose(1, 2), longer)
    except RuntimeError as error:
        assert f"Expected target size [{BATCH}, {SEQ}], got [{BATCH}, {SEQ + 3}]" in str(error), str(error)
    else:
        raise AssertionError("targets longer than the logits should be refused")
    assert torch.allclose(F.cross_entropy(logits.transpose(1, 2), longer[:, :SEQ]),
                          _loop_loss(logits, longer[:, :SEQ]), atol=1e-6)
    _step_changes(model, loss)


def flatten_positions():
    """Solution 2: (batch * seq_len, classes) against (batch * seq_len,): the same mean loss as solution 1."""
    model, tokens, targets = _setup()
    targets[1, 4:] = -100
    logits = model(tokens)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    assert torch.allclose(loss, F.cross_entropy(logits.transpose(1, 2), targets), atol=1e-6)
    assert torch.allclose(loss, _loop_loss(logits, targets), atol=1e-6)
    _step_changes(model, loss)


def one_label_per_sequence():
    """Solution 3: one label per sequence (targets (batch,)): the last step's scores, not a reshape."""
    model, tokens, _ = _setup()
    labels = torch.tensor([1, 0, 1, 1])
    logits = model(tokens)  # (4, 7, 10)
    try:
        F.cross_entropy(logits, labels)
    except RuntimeError as error:
        assert "Expected target size [4, 10], got [4]" in str(error), str(error)
    else:
        raise AssertionError("per-step scores against one label per sequence should be refused")
    last = logits[:, -1]  # (batch, classes)
    loss = F.cross_entropy(last, labels)
    assert torch.allclose(loss, torch.stack([F.cross_entropy(last[i:i + 1], labels[i:i + 1]) for i in range(4)]).mean())
    # right-padded sequences of different lengths: the last real step is at lengths - 1, and its scores are the
    # ones the unpadded sequence gives; logits[:, -1] reads padding for the shorter sequences
    lengths = torch.tensor([7, 3, 5, 2])
    with torch.no_grad():
        real_last = logits[torch.arange(len(lengths)), lengths - 1]
        for i, n in enumerate(lengths.tolist()):
            alone = model(tokens[i:i + 1, :n])[0, -1]
            assert torch.allclose(real_last[i], alone, atol=1e-5)
            assert (n == SEQ) == torch.allclose(logits[i, -1], alone, atol=1e-5)
    _step_changes(model, loss)


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's logits and targets."""
    model, tokens, targets = _setup()
    logits = model(tokens)
    names = record.run("exampleFix", {"torch": torch, "logits": logits, "targets": targets}, section="after")
    assert torch.allclose(names["loss"], _loop_loss(logits, targets), atol=1e-6)
    _step_changes(model, names["loss"])


def guard():
    """validationCode flags the trigger's (4, 7, 10) logits with (4, 7) targets and passes the transposed ones."""
    model, tokens, targets = _setup()
    with torch.no_grad():
        logits = model(tokens)
    assert not record.check("validationCode", {"logits": logits, "targets": targets})
    assert not record.check("validationCode", {"logits": logits, "targets": torch.tensor([1, 0, 1, 1])})
    assert record.check("validationCode", {"logits": logits.transpose(1, 2), "targets": targets})


def _accepted(logits, targets, **kwargs):
    """A valid situation is one cross_entropy accepts."""
    F.cross_entropy(logits, targets, **kwargs)
    return {"logits": logits, "targets": targets}


def valid_two_dim():
    return _accepted(torch.randn(8, 5), torch.randint(0, 5, (8,)))


def valid_ignore_index():
    return _accepted(torch.randn(4, 5), torch.tensor([0, -100, 4, -100]))


def valid_sequence():
    return _accepted(torch.randn(BATCH, CLASSES, SEQ), torch.randint(0, CLASSES, (BATCH, SEQ)))


def valid_segmentation_255():
    targets = torch.randint(0, 3, (2, 8, 8))
    targets[:, :2] = 255
    return _accepted(torch.randn(2, 3, 8, 8), targets, ignore_index=255)


def valid_unbatched():
    return [_accepted(torch.randn(5), torch.tensor(t)) for t in (0, 4)]


def valid_probabilities():
    return [_accepted(torch.randn(4, 5), torch.softmax(torch.randn(4, 5), 1)),
            _accepted(torch.randn(2, 5, 7), torch.softmax(torch.randn(2, 5, 7), 1))]


def valid_batch_of_one():
    return [_accepted(torch.randn(1, 5), torch.tensor([3])), _accepted(torch.randn(1, 5, 7), torch.randint(0, 5, (1, 7)))]
