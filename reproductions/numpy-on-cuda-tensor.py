"""An evaluation loop computes its metric with NumPy (as scikit-learn, pandas and matplotlib do under
the hood) on the model's predictions, which live on the GPU: predictions.numpy(), np.asarray(predictions)
or an sklearn call all reach torch's tensor_to_numpy (torch/csrc/utils/tensor_numpy.cpp), which refuses
any tensor whose memory is not host memory with TypeError "can't convert cuda:0 device type tensor to
numpy. Use Tensor.cpu() to copy the tensor to host memory first.". The real case needs one CUDA GPU;
without one every stage is skipped (on the CPU build the same check was seen to fire for a meta-device
tensor, at the same line, which is how the record's raise site was read; but a meta tensor cannot be
copied to the host, so no fix can be shown with it). Demonstrations: .detach().cpu() before .numpy()
(the NumPy result equals the tensor's values), and .numpy(force=True); the record's exampleFix and
validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=1.13", "numpy": ""}, "cuda_devices": 1, "timeout_s": 60}
SOLUTIONS = {1: "copy_to_host_first", 2: "numpy_force"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"cpu-tensor": "valid_cpu_tensor", "numpy-array": "valid_numpy_array", "python-list": "valid_list"}
CODE_NAMES = {"exampleFix": ["np", "pred", "target"], "validationCode": ["torch", "t"]}
WORDINGS = [
    {"text": "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
             "memory first.", "source": "xiaxin1998/DHCN#14", "match": "pattern"},
    {"text": "TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
     "source": "iMoonLab/PVRNet#3", "match": "pattern"},
]
PROVENANCE = {"checked": "unverified", "why": "GPU-only, every result skipped; the 2.13.0 CPU build reports line 141 "
              "for the same check on a meta tensor (run by hand with TORCH_SHOW_CPP_STACKTRACES=1, not a committed result)"}

import numpy as np

import errkb_record as record

import torch
import torch.nn as nn

DEVICE = "cuda:0"


def _predictions():
    torch.manual_seed(0)
    model = nn.Linear(4, 3).to(DEVICE)
    x = torch.randn(8, 4, device=DEVICE)
    with torch.no_grad():
        return model(x).argmax(dim=1), torch.randint(0, 3, (8,), device=DEVICE)


def _accuracy(pred, target):
    return float((np.asarray(pred) == np.asarray(target)).mean())


def trigger():
    pred, target = _predictions()
    _accuracy(pred.numpy(), target.numpy())  # tensors still on the GPU


def copy_to_host_first():
    pred, target = _predictions()
    p, t = pred.detach().cpu().numpy(), target.detach().cpu().numpy()
    assert isinstance(p, np.ndarray) and p.tolist() == pred.tolist()
    acc = _accuracy(p, t)
    assert acc == (pred == target).float().mean().item()


def numpy_force():
    pred, target = _predictions()
    p = pred.numpy(force=True)  # detach + cpu (+ resolve conj/neg) in one call, since 1.13
    assert isinstance(p, np.ndarray) and p.tolist() == pred.tolist()
    assert pred.device.type == "cuda"  # the original stays where it was


def example_fix():
    pred, target = _predictions()
    names = record.run("exampleFix", {"np": np, "pred": pred, "target": target}, section="after")
    assert names["acc"] == (pred == target).float().mean().item()


def guard():
    pred, _ = _predictions()
    assert not record.check("validationCode", {"torch": torch, "t": pred})
    assert record.check("validationCode", {"torch": torch, "t": pred.cpu()})


def _converts(t):
    np.asarray(t)
    return {"torch": torch, "t": t}


def valid_cpu_tensor():
    pred, _ = _predictions()
    return _converts(pred.cpu())


def valid_numpy_array():
    return _converts(np.arange(3))


def valid_list():
    return _converts([1, 2, 3])
