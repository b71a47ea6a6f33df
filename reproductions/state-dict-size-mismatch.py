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

import io

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
    saved, checkpoint = _checkpoint()
    names = record.run("exampleFix", {"torch": torch, "Tagger": Tagger, "checkpoint": checkpoint}, section="after")
    model = names["model"].eval()
    with torch.no_grad():
        assert torch.equal(model(_tokens()), saved.eval()(_tokens()))


def guard():
    _, checkpoint = _checkpoint()
    assert not record.check("validationCode", {"model": Tagger(**REBUILT), "state_dict": checkpoint["state_dict"]})
    assert record.check("validationCode", {"model": Tagger(**SAVED), "state_dict": checkpoint["state_dict"]})
