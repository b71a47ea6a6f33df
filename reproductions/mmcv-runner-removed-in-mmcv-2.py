"""mmcv 2.0 moved everything tied to training (mmcv.runner, mmcv.parallel, mmcv.engine, mmcv.device, mmcv.fileio,
and the Config/Registry/progress helpers mmcv.utils used to export at the top level) to the mmengine package. Code
written for OpenMMLab 1.x (mmdet 2.x, mmseg 0.x and the research repositories built on them) still says
`from mmcv.runner import load_checkpoint`; on mmcv 2.x Python finds no submodule `runner` in the mmcv package and
raises ModuleNotFoundError "No module named 'mmcv.runner'" in the user's own import line. No frame of mmcv is on the
stack: the raise site is the module that lacks the name, mmcv/__init__.py (the harness reads the missing name from
the exception, and the result shows `mmcv/__init__.py (lacks mmcv.runner)`).

The trigger is that import, run for real against the installed mmcv-lite (the pure-Python build of mmcv 2.x on
PyPI; its mmcv/__init__.py is byte-identical to the one of the full mmcv build at the same tag). Solution 1 imports
every moved name the record lists from its mmengine home and uses them: a checkpoint written by save_checkpoint is
loaded into a BaseModule by load_checkpoint and the weights match; get_dist_info and master_only work in a single
process; Config.fromfile reads a config and DictAction overrides it from the command line; registry, progress and
file helpers behave. It also asserts that the old imports really fail on the installed release (each submodule
missing, each top-level name absent), so the mapping cannot go stale silently. The exampleFix runs from its text.

Old side, checked by hand by the reviewer (not a committed result): in a scratch venv with mmcv 1.7.2 built from
its sdist (setuptools<80 at build time) beside torch 2.5.1 and torchvision 0.20.1, `from mmcv.runner import
load_checkpoint, init_dist, get_dist_info, BaseModule, save_checkpoint, master_only`, `from mmcv.parallel import
MMDataParallel, MMDistributedDataParallel`, every top-level name of PATTERN_NAMES and mmcv.engine / mmcv.device /
mmcv.fileio / mmcv.model_zoo all import (mmcv.runner.checkpoint imports torchvision, so 1.x needs it installed).
mmcv 1.x is the `mmcv` distribution on PyPI (1.7.2, a source distribution that builds without compiled
ops, given setuptools<80 at build time: its setup.py imports pkg_resources), mmcv 2.x without ops is `mmcv-lite`. Both install the same `mmcv` package folder, and a reproduction's NEEDS
installs every distribution it names beside the pinned one, so one reproduction cannot run both sides: the old side
is not run here, and the record cites mmcv's own tag v1.7.2 (mmcv/runner/__init__.py exists there) for it.
Results: errkb reproduce mmcv-runner-removed-in-mmcv-2 --with mmcv-lite==2.0.1 --with mmcv-lite==2.1.0
--with mmcv-lite==2.2.0 (verified). The installed environment has no mmcv and skips.

Written by hand (errkb draft refuses a snippet with no library frame), from records/torch-six-import-removed.json.
Raise site: mmcv/__init__.py at tag v2.2.0 (3a5fb4b96ab1b241e7379adf7c326ef6edef6515) of a fetched mirror of
open-mmlab/mmcv; the file's blob (2410ea555e90) is the same at v2.0.0, v2.0.1, v2.1.0 and v2.2.0, and cmp finds it
byte-identical to the installed mmcv-lite 2.0.1 and 2.2.0 files. The removal is commit 9185eee858cd ("Remove
runner, parallel, engine and device (#2216)", 2022-08-22), first tagged in v2.0.0rc1.
"""
NEEDS = {"packages": {"mmcv-lite": ">=2.0.0", "mmengine": "", "torch": "==2.13.0+cpu"}, "cuda_devices": 0,
         "timeout_s": 120}
SOLUTIONS = {1: "import_from_mmengine"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {"text": "No module named 'mmcv.runner'", "source": "mmcv-lite==2.0.1", "match": "pattern"},
    {"text": "No module named 'mmcv.runner'", "source": "mmcv-lite==2.2.0", "match": "pattern"},
    {"text": "ModuleNotFoundError: No module named 'mmcv.runner'", "source": "open-mmlab/mmcv#2762", "match": "matcher"},
    {"text": "ModuleNotFoundError: No module named 'mmcv.parallel'", "source": "open-mmlab/mmcv#2761", "match": "matcher"},
    {"text": "ImportError: cannot import name 'Config' from 'mmcv' (/home/l1/anaconda3/envs/open-mmlab/lib/python3.7/site-packages/mmcv/__init__.py)",
     "source": "zzndream/ShipRSImageNet#3", "match": "matcher"},
    {"text": "ImportError: cannot import name 'Config' from 'mmcv' (unknown location)", "source": "open-mmlab/mmcv#439",
     "match": "none", "why": "mmcv 0.2.16, a broken install (a namespace package with no __init__.py), not the 2.0 move; the pattern needs the __init__.py path and the prose says so"},
    {"text": "No module named 'mmcv._ext'", "source": "Sense-X/Co-DETR#42", "match": "none",
     "why": "mmcv installed without its compiled ops, another cause; the prose says the record does not claim it"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "open-mmlab/mmcv", "commit": "3a5fb4b96ab1b241e7379adf7c326ef6edef6515",
              "path": "mmcv/__init__.py", "line": 3, "offset": 0}

import argparse
import importlib
import importlib.util
import os
import tempfile

import errkb_record as record

# The moved names the record lists: old import -> (new module, name).
MOVED = {
    ("mmcv.runner", "load_checkpoint"): ("mmengine.runner", "load_checkpoint"),
    ("mmcv.runner", "save_checkpoint"): ("mmengine.runner", "save_checkpoint"),
    ("mmcv.runner", "BaseModule"): ("mmengine.model", "BaseModule"),
    ("mmcv.runner", "init_dist"): ("mmengine.dist", "init_dist"),
    ("mmcv.runner", "get_dist_info"): ("mmengine.dist", "get_dist_info"),
    ("mmcv.runner", "master_only"): ("mmengine.dist", "master_only"),
    ("mmcv.parallel", "MMDistributedDataParallel"): ("mmengine.model", "MMDistributedDataParallel"),
    ("mmcv", "Config"): ("mmengine.config", "Config"),
    ("mmcv", "DictAction"): ("mmengine.config", "DictAction"),
    ("mmcv", "Registry"): ("mmengine.registry", "Registry"),
    ("mmcv", "mkdir_or_exist"): ("mmengine.utils", "mkdir_or_exist"),
    ("mmcv", "track_iter_progress"): ("mmengine.utils", "track_iter_progress"),
    ("mmcv", "load"): ("mmengine.fileio", "load"),
    ("mmcv", "dump"): ("mmengine.fileio", "dump"),
}
GONE_SUBMODULES = ["mmcv.runner", "mmcv.parallel", "mmcv.engine", "mmcv.device", "mmcv.fileio", "mmcv.model_zoo"]
# The top-level names the record's pattern accepts in "cannot import name 'X' from 'mmcv'" (all exported by mmcv 1.7.2
# from mmcv.utils or mmcv.fileio, checked at tag v1.7.2) -> their mmengine module.
PATTERN_NAMES = {"Config": "mmengine.config", "DictAction": "mmengine.config", "ConfigDict": "mmengine.config",
                 "Registry": "mmengine.registry", "build_from_cfg": "mmengine.registry",
                 "mkdir_or_exist": "mmengine.utils", "ProgressBar": "mmengine.utils", "track_progress": "mmengine.utils",
                 "track_iter_progress": "mmengine.utils", "FileClient": "mmengine.fileio"}


def trigger():
    from mmcv.runner import load_checkpoint


def _old_side_is_gone():
    """On the installed mmcv 2.x each submodule is missing and each top-level helper is absent."""
    import mmcv

    assert int(mmcv.__version__.split(".")[0]) >= 2, mmcv.__version__
    for name in GONE_SUBMODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            assert exc.name == name, (name, exc.name)
        else:
            raise AssertionError(f"{name} imported on mmcv {mmcv.__version__}")
    for (old, name) in MOVED:
        if old == "mmcv":
            assert not hasattr(mmcv, name), name
    for name, home in PATTERN_NAMES.items():
        assert not hasattr(mmcv, name), name
        assert hasattr(importlib.import_module(home), name), (home, name)
    import mmengine.model

    assert not hasattr(mmengine.model, "MMDataParallel")  # mmcv.parallel's single-GPU wrapper has no successor
    # mmcv.runner's fp16 decorators have no successor either; mmengine's mixed precision is AmpOptimWrapper
    for module in ("mmengine", "mmengine.model", "mmengine.runner", "mmengine.optim", "mmengine.utils", "mmengine.dist"):
        for name in ("force_fp32", "auto_fp16", "wrap_fp16_model"):
            assert not hasattr(importlib.import_module(module), name), (module, name)
    assert hasattr(importlib.import_module("mmengine.optim"), "AmpOptimWrapper")


def import_from_mmengine():
    """Solution 1: every moved name imported from mmengine, and the main ones used."""
    _old_side_is_gone()
    found = {}
    for (old, name), (new, new_name) in MOVED.items():
        found[name] = getattr(importlib.import_module(new), new_name)
    import torch

    BaseModule = found["BaseModule"]

    class Net(BaseModule):
        def __init__(self, init_cfg=None):
            super().__init__(init_cfg)
            self.backbone = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
            self.head = torch.nn.Linear(4, 2)

    torch.manual_seed(0)
    trained, fresh = Net(), Net()
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "epoch_1.pth")
    found["save_checkpoint"]({"state_dict": trained.state_dict(), "meta": {"epoch": 1}}, path)
    checkpoint = found["load_checkpoint"](fresh, path, map_location="cpu")
    assert checkpoint["meta"] == {"epoch": 1}
    for a, b in zip(trained.state_dict().values(), fresh.state_dict().values()):
        assert torch.equal(a, b)
    # a plain torch.save of a state_dict, as 1.x research checkpoints are, loads too
    torch.save(trained.state_dict(), path)
    other = Net()
    found["load_checkpoint"](other, path, map_location="cpu", strict=True)
    assert all(torch.equal(a, b) for a, b in zip(trained.state_dict().values(), other.state_dict().values()))

    assert found["get_dist_info"]() == (0, 1)  # a single process, no process group
    calls = []
    found["master_only"](lambda: calls.append(1))()
    assert calls == [1]
    assert issubclass(found["MMDistributedDataParallel"], torch.nn.parallel.DistributedDataParallel)

    config_file = os.path.join(folder, "cfg.py")
    with open(config_file, "w") as f:
        f.write("model = dict(type='Net', depth=50)\noptimizer = dict(lr=0.01)\n")
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=found["DictAction"])
    args = parser.parse_args(["--cfg-options", "optimizer.lr=0.1"])
    cfg = found["Config"].fromfile(config_file)
    cfg.merge_from_dict(args.cfg_options)
    assert cfg.model.depth == 50 and cfg.optimizer.lr == 0.1

    MODELS = found["Registry"]("models")
    MODELS.register_module(module=Net)
    assert isinstance(MODELS.build(dict(type="Net")), Net)
    found["mkdir_or_exist"](os.path.join(folder, "work_dirs", "run"))
    assert os.path.isdir(os.path.join(folder, "work_dirs", "run"))
    assert list(found["track_iter_progress"]([1, 2, 3])) == [1, 2, 3]
    found["dump"]({"a": 1}, os.path.join(folder, "x.json"))
    assert found["load"](os.path.join(folder, "x.json")) == {"a": 1}


def example_fix():
    names = record.run("exampleFix", {}, section="after")
    import torch
    from mmengine.dist import get_dist_info
    from mmengine.model import BaseModule
    from mmengine.runner import load_checkpoint

    assert names["load_checkpoint"] is load_checkpoint and names["get_dist_info"] is get_dist_info
    assert names["BaseModule"] is BaseModule
    model = torch.nn.Linear(3, 2)
    path = os.path.join(tempfile.mkdtemp(), "w.pth")
    torch.save(model.state_dict(), path)
    copy = torch.nn.Linear(3, 2)
    names["load_checkpoint"](copy, path, map_location="cpu")
    assert torch.equal(copy.weight, model.weight)
    assert names["get_dist_info"]() == (0, 1)
