"""A small token model (a token nn.Embedding, a position nn.Embedding and an nn.Linear head) is moved to
cuda:0, but the batch of token ids is left on the CPU. nn.Embedding's forward calls torch.embedding, which
looks rows up with weight.index_select(0, ids); the CUDA kernel wrapper that PyTorch generates for
index_select first checks that all its tensor arguments share one device, finds the weight on cuda:0 and the
index on the CPU, and c10::impl::common_device_check_failure (aten/src/ATen/core/adaption.cpp) raises
RuntimeError "Expected all tensors to be on the same device, but got index is on cpu, different from other
tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)".
Needs one CUDA GPU: the generated device check exists only in the wrappers of backends with device guards
(CUDA and the like); the CPU and Meta wrappers have none, so a CPU-only build has no path to this raise
site (meta weights with CPU ids simply give a meta result) and there is no CPU variant.
The demonstrations: move the ids to the embedding's device (solution 1; the output then equals the same
model's output on the CPU and a backward pass gives finite gradients), and, for a model that builds its
position ids with the CPU default inside forward, build them with device=ids.device instead (solution 2).
The record's exampleFix and validationCode run from its own text.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 1, "timeout_s": 60}
SOLUTIONS = {1: "move_ids", 2: "create_in_forward_on_device"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"ids-on-model-device": "valid_ids_on_device", "cpu-model-cpu-ids": "valid_cpu_model"}
CODE_NAMES = {"exampleFix": ["model", "tokenizer", "texts"], "validationCode": ["model", "ids"]}
KEEP = ["model"]
# The record's own 2.13 wording is not declared: no committed result observed it (GPU-only) and no public paste of it
# was found; its strings were read from the installed build (see the record's documentation).
WORDINGS = [
    {"text": "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
             "cpu! (when checking argument for argument index in method wrapper__index_select)",
     "source": "facebookresearch/detr#524", "match": "none",
     "why": "the older wording of this check; the record expected-all-tensors-on-same-device matches it"},
]
PROVENANCE = {"checked": "unverified", "why": "GPU-only: no GPU here; the line 7 was read from the installed "
              "2.13.0 build's binary, not from a reported raise"}

import errkb_record as record

import torch
import torch.nn as nn


class TinyTokenModel(nn.Module):
    def __init__(self, vocab=50, max_len=16, dim=8, classes=3):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        # created where the ids are, not with the CPU default
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.head(self.tok(ids) + self.pos(positions))


class CpuPositionsModel(TinyTokenModel):
    """The same model with the position ids made with the CPU default."""

    def forward(self, ids):
        positions = torch.arange(ids.shape[1])
        return self.head(self.tok(ids) + self.pos(positions))


def _model_and_ids(cls=TinyTokenModel):
    torch.manual_seed(0)
    model = cls()
    ids = torch.randint(0, 50, (4, 10))  # a batch of token ids, as a DataLoader yields it: on the CPU
    return model, ids


def _check_output(model, ids, out, expected):
    assert out.device == model.tok.weight.device
    assert torch.allclose(out.detach().cpu(), expected, rtol=1e-5, atol=1e-6)
    out.float().pow(2).mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def trigger():
    variant = "cuda: nn.Embedding on cuda:0, token ids left on the CPU"
    model, ids = _model_and_ids()
    model = model.to("cuda:0")
    model(ids)  # ids are still on the CPU: index_select's CUDA wrapper refuses them
    return variant


def move_ids():
    """Solution 1: the ids go to the device of the embedding that uses them."""
    model, ids = _model_and_ids()
    expected = model(ids).detach()  # reference: everything on the CPU
    model = model.to("cuda:0")
    ids = ids.to(model.tok.weight.device)
    _check_output(model, ids, model(ids), expected)
    return "cuda: ids moved to the embedding's device"


def create_in_forward_on_device():
    """Solution 2: position ids made in forward with device=ids.device instead of the CPU default."""
    broken, ids = _model_and_ids(CpuPositionsModel)
    expected = broken(ids).detach()  # on the CPU both forwards agree
    broken = broken.to("cuda:0")
    try:
        broken(ids.to("cuda:0"))
    except RuntimeError as exc:  # the situation solution 2 is about: CPU positions under a CUDA table
        assert "index is on cpu" in str(exc), exc
    else:
        raise AssertionError("CPU position ids under a CUDA position table did not fail")
    model, ids = _model_and_ids(TinyTokenModel)  # same weights (same seed), positions made on ids.device
    model = model.to("cuda:0")
    ids = ids.to("cuda:0")
    _check_output(model, ids, model(ids), expected)
    return "cuda: position ids made with device=ids.device"


def example_fix():
    """The exampleFix's "after" part with the reproduction's model and a tokenizer stand-in that returns CPU ids."""
    model, ids = _model_and_ids()
    expected = model(ids).detach()

    def tokenizer(texts, return_tensors="pt", padding=True):
        assert return_tensors == "pt"
        return {"input_ids": ids[: len(texts)], "attention_mask": torch.ones_like(ids[: len(texts)])}

    names = record.run("exampleFix", {"model": model, "tokenizer": tokenizer, "texts": ["a", "b", "c", "d"]}, section="after")
    logits = names["logits"]
    assert names["model"] is model and logits.device.type == "cuda"
    assert torch.allclose(logits.detach().cpu(), expected, rtol=1e-5, atol=1e-6)
    return "cuda: the record's after part"


def guard():
    """validationCode flags CPU ids under the CUDA model and passes them once moved."""
    model, ids = _model_and_ids()
    model = model.to("cuda:0")
    assert not record.check("validationCode", {"model": model, "ids": ids})
    assert record.check("validationCode", {"model": model, "ids": ids.to("cuda:0")})
    return "cuda: the record's guard"


def valid_ids_on_device():
    model, ids = _model_and_ids()
    model = model.to("cuda:0")
    ids = ids.to("cuda:0")
    model(ids)
    return {"model": model, "ids": ids}


def valid_cpu_model():
    model, ids = _model_and_ids()
    model(ids)
    return {"model": model, "ids": ids}
