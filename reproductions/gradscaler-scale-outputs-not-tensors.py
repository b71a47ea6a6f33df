"""A mixed-precision step on the CPU (torch.amp.GradScaler("cpu") with bfloat16 autocast) turns its loss into a
Python float with loss.item() for logging and then calls scaler.scale(loss).backward(): GradScaler.scale's
apply_scale (torch/amp/grad_scaler.py) accepts only tensors and iterables of tensors and raises ValueError
"outputs must be a Tensor or an iterable of Tensors". The demonstrations: the loss tensor scaled and the float kept
apart for logging (the step changes the parameters and the logged value equals the loss), and a dict of two losses
summed into one tensor before scaling. The record's exampleFix and validationCode run from its text. CPU only.

Drafted by `errkb draft` from scaler.py on torch 2.13.0+cpu, Python 3.11.7:
  ValueError: outputs must be a Tensor or an iterable of Tensors
  raised at torch/amp/grad_scaler.py:242
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The drafted pattern (the message
itself) is kept.
"""
NEEDS = {'packages': {'torch': '>=2.3'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "scale_the_tensor", 2: "sum_loss_parts"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["loss", "scaler", "optimizer"], "validationCode": ["loss"]}
KEEP = ["scaler", "optimizer"]
VALID = {"loss-tensor": "valid_tensor", "list-of-losses": "valid_list", "tuple-of-losses": "valid_tuple"}
WORDINGS = [
    {'text': "outputs must be a Tensor or an iterable of Tensors", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "outputs must be a Tensor or an iterable of Tensors", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "outputs must be a Tensor or an iterable of Tensors", 'source': 'jizhishutong/YOLOU#47',
     'match': 'matcher'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import errkb_record as record

import torch
import torch.nn.functional as F


def _step_setup():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
    return model, optimizer, scaler, inputs, targets


def _loss(model, inputs, targets):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return F.mse_loss(model(inputs), targets)


def trigger():
    # mixed-precision step on the CPU; the loss was turned into a Python number for logging before scaling
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1))
    loss = loss.item()                      # a float now
    scaler.scale(loss).backward()


def scale_the_tensor():
    """Solution 1: scale and backpropagate the tensor, log a separate float; the step updates the weights."""
    model, optimizer, scaler, inputs, targets = _step_setup()
    before = model.weight.detach().clone()
    loss = _loss(model, inputs, targets)
    loss_value = loss.item()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert isinstance(loss_value, float) and abs(loss_value - loss.item()) == 0
    assert not torch.equal(before, model.weight), "the optimizer step did not change the weights"


def sum_loss_parts():
    """Solution 2: a dict of losses summed into one tensor before scaling."""
    model, optimizer, scaler, inputs, targets = _step_setup()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(inputs)
        losses = {"mse": F.mse_loss(out, targets), "l1": F.l1_loss(out, targets)}
    total = sum(losses.values())
    assert isinstance(total, torch.Tensor)
    scaler.scale(total).backward()
    assert model.weight.grad is not None and torch.isfinite(model.weight.grad).all()
    scaler.step(optimizer)
    scaler.update()


def example_fix():
    model, optimizer, scaler, inputs, targets = _step_setup()
    before = model.weight.detach().clone()
    loss = _loss(model, inputs, targets)
    names = record.run("exampleFix", {"loss": loss, "scaler": scaler, "optimizer": optimizer}, section="after")
    assert names["scaler"] is scaler and names["optimizer"] is optimizer
    assert isinstance(names["loss_value"], float)
    assert not torch.equal(before, model.weight)


def guard():
    model, optimizer, scaler, inputs, targets = _step_setup()
    loss = _loss(model, inputs, targets)
    assert not record.check("validationCode", {"loss": loss.item()})
    assert record.check("validationCode", {"loss": loss})


def _valid(loss):
    torch.amp.GradScaler("cpu").scale(loss)  # the library accepts it
    return {"loss": loss}


def valid_tensor():
    model, _, _, inputs, targets = _step_setup()
    return _valid(_loss(model, inputs, targets))


def valid_list():
    model, _, _, inputs, targets = _step_setup()
    return _valid([_loss(model, inputs, targets), _loss(model, inputs, targets) * 2])


def valid_tuple():
    model, _, _, inputs, targets = _step_setup()
    return _valid((_loss(model, inputs, targets),))
