"""transformers' timm_wrapper configuration module (src/transformers/models/timm_wrapper/configuration_timm_wrapper.py)
runs `from timm.data import ImageNetInfo, infer_imagenet_subset` at import time whenever timm is installed, and timm
releases before 0.9.0 have neither name, so loading anything timm_wrapper with such a timm stops with ImportError
"cannot import name 'ImageNetInfo' from 'timm.data' (.../timm/data/__init__.py)". trigger(): a timm-style config.json
(architecture resnet18, num_classes 3, a pretrained_cfg, no model_type: the shape of timm's Hub checkpoints) written to
a temporary folder, loaded with AutoConfig.from_pretrained, then AutoModelForImageClassification.from_config and a
forward pass on a random image; with an old timm the config load raises. Solution 1 (upgrade timm) cannot install a
package inside a stage: on an old timm its stage asserts that the installed timm is older than 0.9.0 and lacks
both names (the record's account of the cause) and returns a variant string; the upgraded side is the committed
result with timm 1.0.31, where the same trigger() loads the config and runs the model (verdict not-reproduced: the
snippet works). transformers 4.48-4.51 wrap the same ImportError in a RuntimeError raised from
src/transformers/utils/import_utils.py (read in the 4.48.3, 4.50.3 and 4.51.3 wheels; pasted in
datalab-to/marker#509 and Gourieff/ComfyUI-ReActor#121); NEEDS starts at 4.52 so those releases are not run as this
record's class. Environments: timm imports torchvision, and the PyPI torchvision wheels need a CUDA build of torch,
so the matrix runs beside torch 2.15.0 and torchvision 0.29.2 (the installed CPU venv has no timm and skips).
The excerpt is src/transformers/models/timm_wrapper/configuration_timm_wrapper.py at
f0df072773d6adba8c0a5639a12bbabb357ba2fb, a stored upstream copy whose text (5509 characters, read in full) is the
file of the transformers 4.57.6 wheel; the import is line 25 there and in 4.52.4, line 26 in 5.25.0 (reported as
drift). Results: errkb reproduce transformers-timm-wrapper-needs-newer-timm
--with transformers==5.25.0,timm==0.6.13,torch==2.15.0,torchvision==0.29.2
--with transformers==4.57.6,timm==0.6.13,torch==2.15.0,torchvision==0.29.2
--with transformers==4.52.4,timm==0.6.13,torch==2.15.0,torchvision==0.29.2 (timm 0.6.12 itself fails to import on Python 3.11: a dataclass default in timm.models.maxxvit)
--with transformers==5.25.0,timm==1.0.31,torch==2.15.0,torchvision==0.29.2 (the upgraded side).
"""
NEEDS = {"packages": {"torch": "", "torchvision": "", "timm": "", "transformers": ">=4.52"}, "cuda_devices": 0,
         "timeout_s": 300}
SOLUTIONS = {1: "upgrade_timm"}
CODE = {}
WORDINGS = [
    {"text": "cannot import name 'ImageNetInfo' from 'timm.data'", "source": "transformers==5.25.0", "match": "pattern"},
    {"text": "cannot import name 'ImageNetInfo' from 'timm.data'", "source": "transformers==4.52.4", "match": "pattern"},
    {"text": "RuntimeError: Failed to import transformers.models.timm_wrapper.configuration_timm_wrapper because of the "
             "following error (look up to see its traceback):\ncannot import name 'ImageNetInfo' from 'timm.data'",
     "source": "datalab-to/marker#509", "match": "matcher"},
    {"text": "Failed to import transformers.models.timm_wrapper.configuration_timm_wrapper because of the following "
             "error (look up to see its traceback):\ncannot import name 'ImageNetInfo' from 'timm.data' "
             "(F:\\Anaconda\\envs\\comfyui\\Lib\\site-packages\\timm\\data\\__init__.py)",
     "source": "Gourieff/ComfyUI-ReActor#121", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "f0df072773d6adba8c0a5639a12bbabb357ba2fb",
              "path": "src/transformers/models/timm_wrapper/configuration_timm_wrapper.py", "line": 25, "offset": 0}

import json
import os
import tempfile

import errkb_record as record

TIMM_CONFIG = {"architecture": "resnet18", "num_classes": 3, "num_features": 512,
               "pretrained_cfg": {"tag": "a1_in1k", "num_classes": 3, "input_size": [3, 64, 64]}}


def trigger():
    import torch
    from transformers import AutoConfig, AutoModelForImageClassification

    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "config.json"), "w") as handle:
        json.dump(TIMM_CONFIG, handle)
    config = AutoConfig.from_pretrained(folder)  # imports configuration_timm_wrapper
    assert type(config).__name__ == "TimmWrapperConfig" and config.num_labels == 3
    model = AutoModelForImageClassification.from_config(config).eval()
    with torch.no_grad():
        logits = model(pixel_values=torch.randn(1, 3, 64, 64)).logits
    assert logits.shape == (1, 3)


def upgrade_timm():
    """Solution 1: the cause is the installed timm's age. A stage cannot upgrade it; on an old timm this asserts
    that timm is older than 0.9.0 and lacks both names transformers imports; the upgraded environment is the
    timm==1.0.31 result, where trigger() itself runs through."""
    from importlib.metadata import version

    import timm.data
    from packaging.version import Version

    installed = version("timm")
    has_names = hasattr(timm.data, "ImageNetInfo") and hasattr(timm.data, "infer_imagenet_subset")
    assert has_names == (Version(installed) >= Version("0.9.0")), (installed, has_names)
    assert not has_names, f"timm {installed} has ImageNetInfo, yet the trigger raised"
    return (f"timm {installed} < 0.9.0 lacks timm.data.ImageNetInfo: the upgrade is shown by the timm==1.0.31 "
            "result, where trigger() loads the config and runs the model")
