"""A first C++ extension built with torch.utils.cpp_extension.load_inline has a C++ mistake: the return statement
of scale(x, factor) lacks its semicolon. ninja runs the compiler, the compiler stops ("expected ';' before '}'
token" at main.cpp:5), and _run_ninja_build (torch/utils/cpp_extension.py) raises
"Error building extension 'scale_ext'" with the build log appended (verbose=False). The demonstration reads the
compiler's first 'error:' line out of the message, applies the fix it asks for, and shows the rebuilt extension
computes x * factor; the record's exampleFix builds the corrected source from its own text. Each build happens in
the stage's own directory (build_directory / TORCH_EXTENSIONS_DIR), so no cache is shared between stages. CPU
only, g++ and ninja on PATH (setuptools in NEEDS: torch.utils.cpp_extension imports it, and the 2.5.1 environment
lacks it otherwise); a build parses torch's headers, which takes tens of seconds.

Drafted by `errkb draft` from cpp_fail.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: Error building extension 'scale_ext': [1/2] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=scale_ext ...
  raised at torch/utils/cpp_extension.py:2910
  caused by / during: subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The draft's pattern spelled out the
ninja command line (flags, the extension's name); the author cut it to the prefix torch writes, and added the
setup.py wording.
"""
NEEDS = {'packages': {'torch': '>=2.0', 'setuptools': ''}, 'cuda_devices': 0, 'timeout_s': 300}
SOLUTIONS = {1: "fix_first_compiler_error"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {'text': "Error building extension 'scale_ext': [1/2] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=scale_ext "
             "-DTORCH_API_INCLUDE_EXTENSION_H -isystem", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "Error building extension 'fused_adam'", 'source': 'deepspeedai/DeepSpeed#629', 'match': 'matcher'},
    {'text': "Error compiling objects for extension", 'source': 'baowenbo/DAIN#73', 'match': 'matcher'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import os
import re

import errkb_record as record

import torch

BROKEN = """
#include <torch/extension.h>
torch::Tensor scale(torch::Tensor x, double factor) {
    return x * factor
}
"""


def _build_dir(name):
    path = os.path.abspath(name)
    os.makedirs(path, exist_ok=True)
    return path


def trigger():
    from torch.utils.cpp_extension import load_inline

    # a small C++ helper with a typo: the return statement lacks its semicolon
    load_inline(name="scale_ext", cpp_sources=BROKEN, functions=["scale"], verbose=False,
                build_directory=_build_dir("scale_ext_build"))


def fix_first_compiler_error():
    """Solution 1: the first 'error:' line of the message names the file, line and fix; apply it and rebuild."""
    from torch.utils.cpp_extension import load_inline

    build = _build_dir("first")
    try:
        load_inline(name="scale_ext", cpp_sources=BROKEN, functions=["scale"], build_directory=build)
    except RuntimeError as exc:
        message = str(exc)
    else:
        raise AssertionError("the broken source built")
    assert message.startswith("Error building extension 'scale_ext'")
    first = next(line for line in message.splitlines() if "error:" in line)
    found = re.search(r"main\.cpp:(\d+):\d+: error: expected .;. before .}. token", first)
    assert found, first
    # main.cpp is the file load_inline wrote (our source after an #include line, then the bindings)
    with open(os.path.join(build, "main.cpp")) as f:
        culprit = f.read().split("\n")[int(found.group(1)) - 1]
    assert culprit.strip() == "return x * factor", culprit
    fixed = BROKEN.replace(culprit + "\n", culprit + ";\n")
    assert fixed != BROKEN
    module = load_inline(name="scale_ext", cpp_sources=fixed, functions=["scale"],
                         build_directory=_build_dir("fixed"))
    x = torch.arange(4.0)
    assert torch.equal(module.scale(x, 2.5), x * 2.5)


def example_fix():
    os.environ["TORCH_EXTENSIONS_DIR"] = _build_dir("torch_extensions")
    names = record.run("exampleFix", {}, section="after")
    x = torch.randn(3, 2)
    assert torch.equal(names["module"].scale(x, -1.5), x * -1.5)
