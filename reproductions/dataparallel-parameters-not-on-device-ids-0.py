"""A classifier is wrapped as nn.DataParallel(model, device_ids=[0]); with a single device id the
constructor moves the model to cuda:0 itself. Then, for fine-tuning, its head (fc) is replaced by a new
nn.Linear built on the CPU, after the wrapping. At the next forward, DataParallel.forward walks over the
module's parameters and buffers and raises RuntimeError "module must have its parameters and buffers on
device cuda:0 (device_ids[0]) but found one of them on device: cpu" (torch/nn/parallel/data_parallel.py).
Needs one CUDA GPU: without CUDA, DataParallel is a pass-through that runs the module and checks nothing,
so there is no CPU variant. The demonstrations: move the wrapped model to device_ids[0] after the change
(solution 1), make the change before moving and wrapping (solution 2), and save/evaluate through
dp.module.state_dict() and a CPU copy instead of moving the wrapped model to the CPU (solution 3); each
checks the forward output against the unwrapped model and that a training step updates the new head.
The record's exampleFix and validationCode run from its own text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 1, "timeout_s": 120}
SOLUTIONS = {1: "move_after_change", 2: "change_before_wrapping", 3: "save_without_moving"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn", "model", "num_classes", "x"], "validationCode": ["dp"]}
KEEP = ["model"]
VALID = {"model-on-first-device": "valid_on_first_device"}
WORDINGS = [
    {"text": "module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on "
             "device: cpu", "source": "kennethwdk/MLCReID#5", "match": "pattern"},
    {"text": "RuntimeError: module must have its parameters and buffers on device cuda:1 (device_ids[0]) but found "
             "one of them on device: cpu", "source": "zhang-can/ECO-pytorch#51", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import copy
import io

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

CUDA0 = torch.device("cuda:0")


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 512), nn.ReLU())
        self.fc = nn.Linear(512, 4)

    def forward(self, x):
        return self.fc(self.body(x))


def _wrapped_with_new_head():
    torch.manual_seed(0)
    model = Classifier()
    dp = nn.DataParallel(model, device_ids=[0])  # one device id: the constructor moves model to cuda:0
    assert all(p.device == CUDA0 for p in model.parameters())
    model.fc = nn.Linear(512, 3)  # new 3-class head, created on the CPU after wrapping
    return model, dp


def _train_step(dp, model):
    """Forward through the wrapper, compare with the unwrapped model, one SGD step that changes the head."""
    assert all(t.device == CUDA0 for t in list(dp.parameters()) + list(dp.buffers()))
    x = torch.randn(6, 8)  # the batch may stay on the CPU: scatter copies it to device_ids[0]
    y = torch.randint(0, 3, (6,))
    out = dp(x)
    assert out.device == CUDA0 and tuple(out.shape) == (6, 3)
    with torch.no_grad():
        assert torch.allclose(out, model(x.to(CUDA0)))
    optimizer = torch.optim.SGD(dp.parameters(), lr=0.1)
    before = model.fc.weight.detach().clone()
    loss = F.cross_entropy(out, y.to(out.device))
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)
    assert not torch.equal(before, model.fc.weight), "the step did not change the new head"


def trigger():
    variant = "cuda: head replaced on the CPU after wrapping in DataParallel(device_ids=[0])"
    model, dp = _wrapped_with_new_head()
    dp(torch.randn(6, 8))  # the module is checked before the batch is scattered
    return variant


def move_after_change():
    """Solution 1: dp.to('cuda:0') after the change moves dp.module, new head included."""
    model, dp = _wrapped_with_new_head()
    dp.to("cuda:0")
    _train_step(dp, model)
    return "cuda: dp.to('cuda:0') after replacing the head"


def change_before_wrapping():
    """Solution 2: replace the head first, then move the model and wrap it."""
    torch.manual_seed(0)
    model = Classifier()
    model.fc = nn.Linear(512, 3)
    model.to("cuda:0")
    dp = nn.DataParallel(model, device_ids=[0])
    _train_step(dp, model)
    return "cuda: head replaced before moving and wrapping"


def save_without_moving():
    """Solution 3: save dp.module.state_dict() and evaluate a CPU copy; the wrapped model stays on cuda:0."""
    torch.manual_seed(0)
    model = Classifier().to("cuda:0")
    dp = nn.DataParallel(model, device_ids=[0])
    _ = dp(torch.randn(6, 8))

    buffer = io.BytesIO()
    torch.save(dp.module.state_dict(), buffer)  # no model.cpu(): the tensors are copied out from the GPU
    buffer.seek(0)
    restored = Classifier()
    restored.load_state_dict(torch.load(buffer, map_location="cpu"))
    for name, tensor in dp.module.state_dict().items():
        assert torch.equal(restored.state_dict()[name], tensor.cpu()), name

    cpu_copy = copy.deepcopy(dp.module).cpu()  # CPU evaluation on a copy
    x = torch.randn(5, 8)
    with torch.no_grad():
        assert torch.allclose(cpu_copy(x), dp(x).cpu(), rtol=1e-5, atol=1e-6)
    assert all(p.device == CUDA0 for p in model.parameters())  # the next training forward still works
    model.fc = nn.Linear(512, 3).to("cuda:0")  # a new head, put on device_ids[0] right away
    _train_step(dp, model)
    return "cuda: state_dict from dp.module and a CPU copy for evaluation"


def example_fix():
    """The exampleFix's "after" part on the trigger's model and batch."""
    torch.manual_seed(0)
    model = Classifier()
    x = torch.randn(6, 8)
    names = record.run("exampleFix", {"nn": nn, "model": model, "num_classes": 3, "x": x}, section="after")
    out = names["out"]
    assert out.device == CUDA0 and tuple(out.shape) == (6, 3)
    with torch.no_grad():
        assert torch.allclose(out, model(x.to(CUDA0)))
    return "cuda: the record's after part"


def guard():
    """validationCode flags the new CPU head and passes once dp.to('cuda:0') has moved it."""
    model, dp = _wrapped_with_new_head()
    assert not record.check("validationCode", {"dp": dp})
    dp.to("cuda:0")
    assert record.check("validationCode", {"dp": dp})
    return "cuda: the record's guard"


def valid_on_first_device():
    """The model on device_ids[0] (one GPU; with two GPUs also device_ids=[1, 0] and the model on cuda:1),
    with a buffer; each runs a forward."""
    out = []
    firsts = [0] + ([1] if torch.cuda.device_count() > 1 else [])
    for first in firsts:
        ids = [first] + [i for i in range(torch.cuda.device_count()) if i != first]
        model = Classifier().to(torch.device("cuda", first))
        model.register_buffer("scale", torch.ones(1, device=torch.device("cuda", first)))
        dp = nn.DataParallel(model, device_ids=ids)
        assert dp(torch.randn(4, 8)).shape == (4, 3)
        out.append({"dp": dp})
    return out

