"""TODO(errkb-draft): one paragraph: the story of the error, which variant runs where.

Drafted by `errkb draft` from snippet.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: operator torchvision::nms does not exist
  raised at torch/csrc/utils/python_dispatch.cpp:562 (operator())
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). NEEDS pins the releases the draft ran on: widen
them only with results (errkb reproduce torchvision-built-for-other-torch --with DIST==VERSION).
"""
# CI's install has no torchvision: the record is skipped there as a missing library (as the three torchvision records are).
# torch_build "cpu": the only mismatched pair a --with environment can make is the CPU torch with PyPI's (CUDA) torchvision
# of the same release (--with torch==2.13.0+cpu,torchvision==0.28.0); uv resolves every other pair to a matching torch.
NEEDS = {'packages': {'torch': '==2.13.0', 'torchvision': '==0.28.0'}, 'cuda_devices': 0, 'timeout_s': 60, 'torch_build': 'cpu'}
SOLUTIONS = {1: "solution_1"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": [], "validationCode": []}  # TODO(errkb-draft): the user's names each field reads
VALID = {"TODO(errkb-draft)": "valid_situation"}
WORDINGS = [
    {'text': 'operator torchvision::nms does not exist', 'source': 'torch==2.13.0', 'match': 'pattern'},
    # Older wordings of the same mismatch, not reproduced here (they need torch/torchvision releases from 2020-2023):
    # other messages the pattern does not take.
    {'text': "module 'torch.jit' has no attribute '_script_if_tracing'", 'source': 'pytorch/vision#2461', 'match': 'none'},
    {'text': "No module named 'torch._custom_ops'", 'source': 'victorchall/EveryDream2trainer#255', 'match': 'none'},
    # TODO: the 2019-2021 wording "No such operator torchvision::nms" (pytorch/vision#1489, ZQPei/deep_sort_pytorch#189)
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified', 'commit': 'cf30153c4c131c8164ee7798e5022d810682e2cb', 'offset': 0}

import errkb_record as record


def trigger():
    import torch
    import torchvision  # PyPI CUDA build of 0.28.0 beside torch 2.13.0+cpu


def solution_1():
    raise NotImplementedError("TODO(errkb-draft): apply exactly solution 1 to the trigger's situation and assert it works")


def example_fix():
    raise NotImplementedError("TODO(errkb-draft): record.run(\"exampleFix\", {...the user's objects...}, section=\"after\")")


GUARD_TEXT_CANDIDATE = '''
import importlib.util, re
from importlib.metadata import requires
folder = importlib.util.find_spec("torchvision").submodule_search_locations[0]   # torchvision not imported
built = re.search(r"__version__ = '([^']*)'", open(folder + "/version.py").read()).group(1)
pins = [m.group(1) for r in requires("torchvision") or [] if (m := re.match(r"torch\\s*\\(?\\s*==\\s*([\\w.]+)", r))]
release, _, build = torch.__version__.partition("+")
pair_ok = all(pin == release for pin in pins) and built.partition("+")[2] == build
'''  # checked by hand (README): False for 0.28.0+cu130 on 2.13.0+cpu and 0.29.2+cu132 on 2.5.1+cu124; True for matched pairs.
# Weakness: 0.29.2 declares torch>=2.14.0 (not ==), so a same-build cross-release pair is caught only by its build tag.


def guard():
    raise NotImplementedError("TODO(errkb-draft): assert not record.check(\"validationCode\", trigger_names); assert record.check(\"validationCode\", fixed_names)")


def valid_situation():
    raise NotImplementedError("TODO(errkb-draft): return the names the guard sees in a valid situation")
