"""A sequence tagger is trained and saved with a vocabulary of 30 tokens and 5 tags; the inference
script rebuilds the vocabulary from other data (32 tokens) and the tag set for a new task (7 tags),
builds the model from those numbers and loads the checkpoint: Module.load_state_dict collects "size
mismatch for embed.weight: copying a param with shape torch.Size([30, 8]) from checkpoint, the shape in
current model is torch.Size([32, 8])." (and the same for out.weight / out.bias) and raises them together as
"Error(s) in loading state_dict for Tagger". Demonstrations: rebuilding the model from the hyperparameters
saved with the checkpoint (the loaded model gives the saved model's outputs), and, for fine-tuning to a
new label set, loading only the entries whose shapes match (after checking that strict=False alone still
raises): the shared layers equal the checkpoint and the new head keeps its fresh initialisation. The
record's exampleFix and validationCode run from its text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "same_hyperparameters", 2: "load_matching_shapes"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "same-architecture": "valid_same_architecture",
    "partial-checkpoint-strict-false": "valid_partial_checkpoint",
    "batchnorm-scalar-buffers": "valid_batchnorm_buffers",
}
CODE_NAMES = {"exampleFix": ["torch", "Tagger"], "validationCode": ["model", "state_dict"]}
WORDINGS = [
    {"text": "size mismatch for embed.weight: copying a param with shape torch.Size([30, 8]) from checkpoint, the shape "
             "in current model is torch.Size([32, 8]).", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "size mismatch for block_level.position_enc.weight: copying a param of torch.Size([51, 30]) from "
             "checkpoint, where the shape is torch.Size([18290, 30]) in current model.",
     "source": "pytorch/pytorch#15720", "match": "pattern"},
    {"text": 'While copying the parameter named "layer1.0.conv1.weight", whose dimensions in the model are '
             "torch.Size([16, 16, 3, 3]) and whose dimensions in the checkpoint are torch.Size([11, 16, 3, 3]).",
     "source": "IntelLabs/distiller#26", "match": "pattern"},
    {"text": "RuntimeError: While copying the parameter named decoder.embedding.weight, whose dimensions in the model "
             "are torch.Size([58, 256]) and whose dimensions in the checkpoint are torch.Size([107, 256]).",
     "source": "lancopku/SGM#3", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import io
import os
import tempfile

import errkb_record as record

import torch
import torch.nn as nn

SAVED = {"vocab_size": 30, "num_tags": 5, "embed": 8, "hidden": 16}
REBUILT = dict(SAVED, vocab_size=32, num_tags=7)


class Tagger(nn.Module):
    def __init__(self, vocab_size, num_tags, embed, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.out = nn.Linear(hidden, num_tags)

    def forward(self, tokens):
        y, _ = self.lstm(self.embed(tokens))
        return self.out(y)


def _checkpoint():
    """What the training script wrote: the weights, and the hyperparameters beside them."""
    torch.manual_seed(0)
    model = Tagger(**SAVED)
    buffer = io.BytesIO()
    torch.save({"state_dict": model.state_dict(), "config": dict(SAVED)}, buffer)
    buffer.seek(0)
    return model, torch.load(buffer)


def _tokens():
    return torch.randint(0, 30, (2, 6), generator=torch.Generator().manual_seed(1))


def trigger():
    _, checkpoint = _checkpoint()
    model = Tagger(**REBUILT)  # vocabulary and tags rebuilt from other data
    model.load_state_dict(checkpoint["state_dict"])


def same_hyperparameters():
    saved, checkpoint = _checkpoint()
    model = Tagger(**checkpoint["config"])
    model.load_state_dict(checkpoint["state_dict"])
    model.eval(), saved.eval()
    with torch.no_grad():
        assert torch.equal(model(_tokens()), saved(_tokens()))


def load_matching_shapes():
    _, checkpoint = _checkpoint()
    torch.manual_seed(1)
    model = Tagger(**dict(SAVED, num_tags=7))  # fine-tuning: same vocabulary, new label set
    fresh_head = model.out.weight.detach().clone()
    try:
        model.load_state_dict(checkpoint["state_dict"], strict=False)
    except RuntimeError as exc:  # strict=False does not skip size mismatches
        assert "size mismatch for out.weight" in str(exc)
    else:
        raise AssertionError("strict=False loaded mismatched shapes")
    own = model.state_dict()
    compatible = {k: v for k, v in checkpoint["state_dict"].items() if k in own and v.shape == own[k].shape}
    result = model.load_state_dict(compatible, strict=False)
    assert sorted(result.missing_keys) == ["out.bias", "out.weight"] and not result.unexpected_keys
    assert torch.equal(model.embed.weight, checkpoint["state_dict"]["embed.weight"])
    assert torch.equal(model.lstm.weight_ih_l0, checkpoint["state_dict"]["lstm.weight_ih_l0"])
    assert torch.equal(model.out.weight, fresh_head) and model.out.weight.shape == (7, SAVED["hidden"])
    assert model(_tokens()).shape == (2, 6, 7)


def example_fix():
    """The "after" part from the record's text, in a folder where the training run wrote tagger.pt."""
    saved, checkpoint = _checkpoint()
    with tempfile.TemporaryDirectory() as folder:
        torch.save(checkpoint, os.path.join(folder, "tagger.pt"))
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            names = record.run("exampleFix", {"torch": torch, "Tagger": Tagger}, section="after")
        finally:
            os.chdir(cwd)
    model = names["model"].eval()
    with torch.no_grad():
        assert torch.equal(model(_tokens()), saved.eval()(_tokens()))


def guard():
    _, checkpoint = _checkpoint()
    assert not record.check("validationCode", {"model": Tagger(**REBUILT), "state_dict": checkpoint["state_dict"]})
    assert record.check("validationCode", {"model": Tagger(**SAVED), "state_dict": checkpoint["state_dict"]})


def valid_same_architecture():
    saved, checkpoint = _checkpoint()
    model = Tagger(**checkpoint["config"])
    model.load_state_dict(checkpoint["state_dict"])
    return {"model": model, "state_dict": checkpoint["state_dict"]}


def valid_partial_checkpoint():
    """A backbone-only checkpoint loaded with strict=False: missing keys are not size mismatches."""
    _, checkpoint = _checkpoint()
    partial = {k: v for k, v in checkpoint["state_dict"].items() if not k.startswith("out.")}
    model = Tagger(**SAVED)
    result = model.load_state_dict(partial, strict=False)
    assert sorted(result.missing_keys) == ["out.bias", "out.weight"]
    return {"model": model, "state_dict": partial}


def valid_batchnorm_buffers():
    """Buffers, including BatchNorm's 0-d num_batches_tracked, compare like parameters."""
    torch.manual_seed(0)
    trained = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    trained(torch.randn(16, 4))  # updates running stats and num_batches_tracked
    state = trained.state_dict()
    assert state["1.num_batches_tracked"].dim() == 0
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    model.load_state_dict(state)
    return {"model": model, "state_dict": state}
