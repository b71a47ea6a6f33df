"""Code written for a newer PyTorch runs on an older one: a training step decays a Linear layer's parameters with
torch.foreach.mul_, the public foreach module torch 2.15 exposes. On torch 2.13.0 and 2.5.1 the lookup of
torch.foreach reaches torch's module-level __getattr__ (torch/__init__.py), which raises
"module 'torch' has no attribute 'foreach'"; on torch 2.15.0 the same step runs (its result is not-reproduced: the
snippet works there, which is what upgrading buys). The demonstrations: the step written with what the installed
release has (an in-place mul_ per parameter), and a feature check (hasattr, answered by the same __getattr__) that
picks torch.foreach where it exists and the fallback elsewhere; both give exactly the decayed parameters. The
record's exampleFix and validationCode run from its text. CPU only.

Drafted by `errkb draft` from torch_too_old.py on torch 2.13.0+cpu, Python 3.11.7:
  AttributeError: module 'torch' has no attribute 'foreach'
  raised at torch/__init__.py:2963
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The draft's pattern accepted any
module's missing attribute (numpy's too); the author narrowed it to torch and its submodules.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "installed_release_ops", 2: "feature_check"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["params"], "validationCode": ["required_names"]}
KEEP = ["params"]
VALID = {"present-names": "valid_present_names", "lazy-submodules": "valid_lazy_submodules",
         "dotted-names": "valid_dotted_names", "nothing-required": "valid_nothing_required"}
WORDINGS = [
    {'text': "module 'torch' has no attribute 'foreach'", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "module 'torch' has no attribute 'foreach'", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "module 'torch' has no attribute 'tensordot'", 'source': 'CalciferZh/SMPL#21', 'match': 'pattern'},
    {'text': "module 'torch' has no attribute 'no_grad'", 'source': 'MVIG-SJTU/AlphaPose#297', 'match': 'pattern'},
    {'text': "module 'torch' has no attribute 'library", 'source': 'ethnhe/FFB6D#103', 'match': 'pattern'},
    {'text': "module 'torch' has no attribute '_six'", 'source': 'Lausannen/NAS-FCOS#13', 'match': 'pattern'},
    {'text': "module 'torch.nn' has no attribute 'Identity'", 'source': 'asyml/texar-pytorch#123', 'match': 'pattern'},
    {'text': "'module' object has no attribute 'no_grad'", 'source': 'JiaRenChang/PSMNet#20', 'match': 'none',
     'why': "Python 2's wording names no module: matching it would claim every module's missing attribute"},
    {'text': "module 'torch' has no attribute 'Tensor'", 'source': 'pytorch/pytorch#39473', 'match': 'pattern'},
    {'text': "partially initialized module 'torch' has no attribute 'cuda' (most likely due to a circular import)",
     'source': 'ZhendongWang6/Uformer#61', 'match': 'none',
     'why': "a script named torch.py importing torch, or an import cycle: renaming the file is the fix, not a release"},
    {'text': "module 'torch._C' has no attribute '_cuda_getDevice'", 'source': 'sniklaus/sepconv-slomo#32',
     'match': 'none', 'why': "a name missing from the compiled module: a build without CUDA asked for CUDA"},
    {'text': "module 'torch._C' has no attribute '_cuda_setDevice'",
     'source': 'microsoft/Bringing-Old-Photos-Back-to-Life#241', 'match': 'none',
     'why': "a name missing from the compiled module: a build without CUDA asked for CUDA"},
    {'text': "module 'torch.distributed' has no attribute 'init_process_group'", 'source': 'pytorch/examples#467',
     'match': 'none', 'why': "a build without distributed support (macOS binaries then), not the age of the code"},
    {'text': "torch.distributed.init_process_group(backend=args.dist_backend, init_method=args.dist_url,\n"
             "AttributeError: module 'torch.distributed' has no attribute 'init_process_group'",
     'source': 'facebookresearch/detr#43', 'match': 'none',
     'why': "a build without distributed support (Windows, torch 1.5.0), not the age of the code"},
    {'text': "module 'torch.distributed' has no attribute 'device_mesh'", 'source': 'QwenLM/Qwen2.5-Omni#87',
     'match': 'none', 'why': "an old release this time (answered with torch==2.6.0), but the message is the same as a "
     "build without distributed support gives, so the module torch.distributed stays out of the pattern"},
    {'text': "module 'torch.distributed.tensor' has no attribute 'zeros'", 'source': 'facebookresearch/optimizers#48',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import errkb_record as record

import torch


def _params():
    torch.manual_seed(0)
    return list(torch.nn.Linear(4, 2).parameters())


def trigger():
    # a training step written against torch 2.15, which added the public torch.foreach module
    model = torch.nn.Linear(4, 2)
    params = list(model.parameters())
    with torch.no_grad():
        torch.foreach.mul_(params, 0.9)  # decay every parameter in one call


def _check_decayed(params, before):
    for p, b in zip(params, before):
        assert torch.allclose(p, b * 0.9), "the parameters were not decayed"
        assert p.requires_grad


def installed_release_ops():
    """Solution 1: the same decay with what this release has: an in-place mul_ per parameter under no_grad."""
    params = _params()
    before = [p.detach().clone() for p in params]
    with torch.no_grad():
        for p in params:
            p.mul_(0.9)
    _check_decayed(params, before)


def feature_check():
    """Solution 2: hasattr picks torch.foreach where it exists (no release run here that raises has it) and the
    fallback elsewhere; hasattr answers False through the same __getattr__ that raises."""
    assert not hasattr(torch, "foreach")  # this stage only runs where the trigger raised
    assert hasattr(torch, "no_grad") and hasattr(torch, "onnx")  # present names, and a lazily imported module
    params = _params()
    before = [p.detach().clone() for p in params]
    with torch.no_grad():
        if hasattr(torch, "foreach"):
            torch.foreach.mul_(params, 0.9)
        else:
            for p in params:
                p.mul_(0.9)
    _check_decayed(params, before)


def example_fix():
    params = _params()
    before = [p.detach().clone() for p in params]
    names = record.run("exampleFix", {"params": params}, section="after")
    assert names["params"] is params
    _check_decayed(params, before)


def guard():
    assert not record.check("validationCode", {"required_names": ["no_grad", "foreach"]})
    assert not record.check("validationCode", {"required_names": ["foreach.mul_"]})
    assert record.check("validationCode", {"required_names": ["no_grad"]})


def valid_present_names():
    for name in ("no_grad", "tensordot", "compile", "device"):
        getattr(torch, name)
    return [{"required_names": ["no_grad", "tensordot"]}, {"required_names": ["compile", "device"]}]


def valid_lazy_submodules():
    """Submodules count as present: onnx is imported only on first access (through the same __getattr__), fx and
    library when torch is imported."""
    for name in ("fx", "library", "onnx"):
        assert isinstance(getattr(torch, name), type(torch))
    return {"required_names": ["fx", "library", "onnx"]}


def valid_dotted_names():
    """Names inside submodules, as the record's own cases read (torch.nn.Identity, torch.library.custom_op)."""
    import importlib

    names = ["nn.Identity", "nn.functional.relu", "library.custom_op", "utils.data.DataLoader",
             "distributed.is_available"]
    for name in names:
        module, _, attr = ("torch." + name).rpartition(".")
        getattr(importlib.import_module(module), attr)
    return {"required_names": names}


def valid_nothing_required():
    return {"required_names": []}
