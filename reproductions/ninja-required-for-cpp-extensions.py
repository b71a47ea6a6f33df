"""torch.utils.cpp_extension.load_inline is called in a process whose PATH has no ninja executable (every PATH
directory that holds one is dropped; links to the compiler tools stay on PATH, as on a machine with a compiler and
no ninja). verify_ninja_availability (torch/utils/cpp_extension.py) runs
'ninja --version', cannot start it, and raises "Ninja is required to load C++ extensions" (torch 2.13 and 2.15
add "(pip install ninja to get it)"). The demonstrations: ninja back on PATH (the system's ninja: the sandbox cannot
download the pip package) and the extension builds and computes; a ninja that sits in a directory standing for the
environment's bin directory (a link to the same executable, where pip install ninja would put it), not on PATH:
the error remains until that directory is put on PATH, then the build works. The record's exampleFix and
validationCode run from its text. CPU only (setuptools in NEEDS: torch.utils.cpp_extension imports it); each build parses torch's headers (tens of seconds).

Drafted by `errkb draft` from ninja_missing.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)
  raised at torch/utils/cpp_extension.py:2562
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author dropped the draft's
"(pip install ninja to get it)" from the pattern: torch 2.5.1 does not print it.
"""
NEEDS = {'packages': {'torch': '>=2.0', 'setuptools': ''}, 'cuda_devices': 0, 'timeout_s': 300}
SOLUTIONS = {1: "ninja_on_path", 2: "environment_bin_on_path"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["source"], "validationCode": []}
VALID = {"ninja-on-path": "valid_ninja_on_path"}
WORDINGS = [
    {'text': "Ninja is required to load C++ extensions (pip install ninja to get it)", 'source': 'torch==2.13.0',
     'match': 'pattern'},
    {'text': "Ninja is required to load C++ extensions", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "Ninja is required to load C++ extensions", 'source': 'unlimblue/KNN_CUDA#14', 'match': 'matcher'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import os
import shutil

import errkb_record as record

import torch

SOURCE = "torch::Tensor scale(torch::Tensor x, double factor) { return x * factor; }"
FULL_PATH = os.environ["PATH"]


def _without_ninja(path):
    """PATH minus every directory holding a ninja, plus a directory that still offers the compiler tools (the
    system keeps c++ next to ninja in /usr/bin): a machine with a compiler and no ninja."""
    tools = os.path.abspath("toolchain")
    os.makedirs(tools, exist_ok=True)
    for name in ("c++", "g++", "gcc", "cc", "as", "ld"):
        found = shutil.which(name, path=path)
        if found and not os.path.exists(os.path.join(tools, name)):
            os.symlink(found, os.path.join(tools, name))
    return os.pathsep.join([tools] + [d for d in path.split(os.pathsep) if not os.path.exists(os.path.join(d, "ninja"))])


def _build_dir(name):
    path = os.path.abspath(name)
    os.makedirs(path, exist_ok=True)
    return path


def _check_module(module):
    x = torch.arange(5.0)
    assert torch.equal(module.scale(x, 3.0), x * 3.0)


def trigger():
    from torch.utils.cpp_extension import load_inline

    # the process's PATH has a compiler but no ninja (not installed, or installed somewhere PATH does not list)
    os.environ["PATH"] = _without_ninja(os.environ["PATH"])
    assert shutil.which("c++")
    source = "torch::Tensor scale(torch::Tensor x, double factor) { return x * factor; }"
    build = os.path.abspath("scale_ext_build")
    os.makedirs(build, exist_ok=True)
    module = load_inline(name="scale_ext", cpp_sources=source, functions=["scale"], build_directory=build)


def ninja_on_path():
    """Solution 1: with ninja installed where PATH finds it, 'ninja --version' runs and the extension builds."""
    from torch.utils.cpp_extension import is_ninja_available, load_inline

    os.environ["PATH"] = _without_ninja(FULL_PATH)
    assert not is_ninja_available()
    os.environ["PATH"] = FULL_PATH  # the installed ninja, found again
    assert shutil.which("ninja") and is_ninja_available()
    _check_module(load_inline(name="scale_ext", cpp_sources=SOURCE, functions=["scale"],
                              build_directory=_build_dir("build")))


def environment_bin_on_path():
    """Solution 2: a ninja inside an environment's bin directory is invisible until that directory is on PATH."""
    from torch.utils.cpp_extension import is_ninja_available, load_inline

    env_bin = _build_dir("env/bin")  # stands for <venv>/bin, where pip install ninja puts the executable
    os.symlink(shutil.which("ninja", path=FULL_PATH), os.path.join(env_bin, "ninja"))
    os.environ["PATH"] = _without_ninja(FULL_PATH)
    assert not is_ninja_available()  # "installed", but not on PATH: the error would remain
    os.environ["PATH"] = env_bin + os.pathsep + os.environ["PATH"]
    assert shutil.which("ninja") == os.path.join(env_bin, "ninja") and is_ninja_available()
    _check_module(load_inline(name="scale_ext", cpp_sources=SOURCE, functions=["scale"],
                              build_directory=_build_dir("build")))


def example_fix():
    os.environ["TORCH_EXTENSIONS_DIR"] = _build_dir("torch_extensions")
    names = record.run("exampleFix", {"source": SOURCE}, section="after")
    _check_module(names["module"])


def guard():
    os.environ["PATH"] = _without_ninja(FULL_PATH)
    assert not record.check("validationCode", {})
    os.environ["PATH"] = FULL_PATH
    assert record.check("validationCode", {})


def valid_ninja_on_path():
    from torch.utils.cpp_extension import verify_ninja_availability

    os.environ["PATH"] = FULL_PATH
    verify_ninja_availability()  # the library accepts this PATH
    return {}
