"""mmcv keeps its compiled operators in the extension module mmcv._ext; every module under mmcv/ops loads it at import
time through mmcv/utils/ext_loader.py, whose load_ext calls importlib.import_module('mmcv._ext'). mmcv-lite is the
build without compiled ops, so `from mmcv.ops import nms` raises ModuleNotFoundError "No module named 'mmcv._ext'"
from ext_loader.py line 13. trigger(): first checks that the installed mmcv-lite distribution lists no mmcv/_ext file,
then imports nms from mmcv.ops. Solution 1 (keep mmcv-lite, use only the pure-Python modules) runs in the same
environment: ConvModule from mmcv.cnn runs a forward pass, mmcv.transforms.Resize and mmcv.imresize resize an image,
and mmcv.ops was never imported; the stage then checks what the solution leaves out (a DCNv2 conv config is not in
the registry, KeyError) and that even `import mmcv.ops.point_sample`, a pure-Python module, fails the same way. The
other fix (an mmcv with ops compiled for the installed torch/CUDA, via mim or
OpenMMLab's wheel index) needs a compiler and CUDA and is cited in the record, not run. The excerpt is
mmcv/utils/ext_loader.py at tag v2.1.0 (57c4e25e06e2d4f8a9357c84bcd24089a284dc88) of the open-mmlab/mmcv snapshot,
byte-identical to the file installed by mmcv-lite 2.1.0; load_ext is identical at v2.0.1 and v2.2.0. Results:
errkb reproduce mmcv-ext-module-missing --with mmcv-lite==2.0.1 --with mmcv-lite==2.1.0 --with mmcv-lite==2.2.0
(the installed venv has no mmcv-lite and skips).
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "mmcv-lite": ">=2.0.1,<2.3"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "pure_python_modules"}
CODE = {}
CODE_NAMES = {}
WORDINGS = [
    {"text": "No module named 'mmcv._ext'", "source": "mmcv-lite==2.1.0", "match": "pattern"},
    {"text": "No module named 'mmcv._ext'", "source": "mmcv-lite==2.0.1", "match": "pattern"},
    {"text": "No module named 'mmcv._ext'", "source": "mmcv-lite==2.2.0", "match": "pattern"},
    {"text": "ModuleNotFoundError: No module named 'mmcv._ext'", "source": "open-mmlab/mmcv#2929", "match": "matcher"},
    {"text": "ModuleNotFoundError: No module named 'mmcv._ext'", "source": "open-mmlab/mmcv#2059", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "open-mmlab/mmcv",
              "commit": "57c4e25e06e2d4f8a9357c84bcd24089a284dc88", "path": "mmcv/utils/ext_loader.py",
              "line": 13, "offset": 0}

import errkb_record as record  # noqa: F401  (the record has no code fields to run)


def _lite_has_no_ext():
    from importlib.metadata import distribution

    files = [str(f) for f in (distribution("mmcv-lite").files or [])]
    assert any(f.startswith("mmcv/ops/") for f in files), "mmcv-lite's file list has no mmcv/ops"
    assert not [f for f in files if f.startswith("mmcv/_ext")], "this mmcv-lite ships a compiled _ext"


def trigger():
    _lite_has_no_ext()
    from mmcv.ops import nms  # noqa: F401


def pure_python_modules():
    """Solution 1: the pure-Python parts of mmcv-lite work, and none of them imports mmcv.ops."""
    import sys

    import numpy as np
    import torch
    import mmcv
    from mmcv.cnn import ConvModule
    from mmcv.transforms import Resize

    _lite_has_no_ext()
    torch.manual_seed(0)
    conv = ConvModule(3, 8, 3, padding=1, norm_cfg=dict(type="BN"), act_cfg=dict(type="ReLU")).eval()
    out = conv(torch.randn(2, 3, 16, 16))
    assert out.shape == (2, 8, 16, 16) and torch.isfinite(out).all() and (out >= 0).all()
    image = np.random.default_rng(0).integers(0, 255, (20, 30, 3), dtype=np.uint8)
    assert mmcv.imresize(image, (15, 10)).shape == (10, 15, 3)
    resized = Resize(scale=(15, 10))(dict(img=image))
    assert resized["img"].shape == (10, 15, 3)
    assert "mmcv.ops" not in sys.modules and "mmcv._ext" not in sys.modules
    # What the solution leaves out: layers that only mmcv.ops registers are missing from the registry on mmcv-lite.
    from mmcv.cnn import build_conv_layer

    try:
        build_conv_layer(dict(type="DCNv2"), 3, 8, 3)
    except KeyError:
        pass
    else:
        raise AssertionError("DCNv2 was found in the registry without mmcv.ops")
    # Any import from mmcv.ops fails, even of a module that is pure Python itself (the record's documentation).
    try:
        import mmcv.ops.point_sample  # noqa: F401
    except ModuleNotFoundError as exc:
        assert exc.name == "mmcv._ext", exc
    else:
        raise AssertionError("mmcv.ops.point_sample imported on mmcv-lite")
