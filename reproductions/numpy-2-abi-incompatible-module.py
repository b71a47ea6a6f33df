"""A compiled extension built against NumPy 1.x, imported beside NumPy 2.x: the extension's module init runs NumPy's
import_array, which looks up `_ARRAY_API` on numpy.core._multiarray_umath. NumPy 2 prints its banner ("A module that
was compiled using NumPy 1.x cannot be run in NumPy 2.1.3 as it may crash. ...") and a stack to stderr, the lookup
fails with AttributeError "_ARRAY_API not found" (printed by the extension's init), and the init then raises ImportError
"numpy.core.multiarray failed to import". trigger(): `import matplotlib` with matplotlib 3.7.2 (a cp311 wheel
built against NumPy 1.x whose metadata asks only numpy>=1.20, so pip and uv install it beside NumPy 2) and numpy 2.1.3.
The raise site is matplotlib's own frame: lib/matplotlib/transforms.py line 49, `from matplotlib._path import (`, the
import of the compiled _path extension (no NumPy frame is on the stack: the error comes from the extension's init,
code NumPy's headers compiled into it). The excerpt is the stored upstream copy of lib/matplotlib/transforms.py at
matplotlib/matplotlib 609e6498a9885f8a74559af1079a62ce5bb8396a, whose lines 1-51 read the same as the installed 3.7.2
file (checked by eye, line for line; the whole files differ further down); the same import is line 49 in 3.7.1 and
3.6.3 too (committed results). Neither solution can install inside a stage: each stage, on the broken pair,
checks from the installed metadata what makes the advice hold (numpy is 2.x; matplotlib's declared numpy range let
NumPy 2 in, and also accepts numpy 1.26.4) and returns a variant string; the fixed pairs are the committed results
matplotlib==3.9.4 + numpy==2.1.3 (a NumPy-2 build of matplotlib) and matplotlib==3.7.2 + numpy==1.26.4 (numpy<2), where
trigger() imports matplotlib without an error (not-reproduced: the import works). The installed venv (numpy 2.4.6,
no matplotlib) skips the record.
Results: errkb reproduce numpy-2-abi-incompatible-module --with matplotlib==3.7.2,numpy==2.1.3
--with matplotlib==3.7.1,numpy==2.0.2 --with matplotlib==3.6.3,numpy==2.2.6 (verified), and the fixed pairs
--with matplotlib==3.7.2,numpy==1.26.4 --with matplotlib==3.9.4,numpy==2.1.3 (not-reproduced).
"""
NEEDS = {'packages': {'matplotlib': '', 'numpy': ''}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "upgrade_module", 2: "pin_numpy_below_2"}
CODE = {}
WORDINGS = [
    {'text': 'numpy.core.multiarray failed to import', 'source': 'matplotlib==3.7.2', 'match': 'pattern'},
    {'text': '_ARRAY_API not found', 'source': 'spyder-ide/spyder#23402', 'match': 'pattern'},
    {'text': "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.4.2 as it may crash.",
     'source': 'agentscope-ai/QwenPaw#437', 'match': 'none',
     'why': 'a banner NumPy prints to stderr, not the exception; pastes that hold it hold the exception line too'},
    {'text': 'numpy._core.multiarray failed to import', 'source': 'lazydog28/mc_auto_boss#87', 'match': 'none',
     'why': 'the wording of modules built with NumPy 2 headers meeting NumPy 1.x: the fix runs the other way'},
    {'text': 'module compiled against API version 0xa but this version of numpy is 0x9', 'source': 'pytorch/pytorch#413',
     'match': 'none',
     'why': 'NumPy 1.x built newer than installed: upgrade numpy; the ImportError line printed under it is matched, '
            'the prose says so'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'matplotlib/matplotlib',
              'commit': '609e6498a9885f8a74559af1079a62ce5bb8396a', 'path': 'lib/matplotlib/transforms.py',
              'line': 49, 'offset': 0}


def _installed():
    from importlib.metadata import requires, version

    from packaging.requirements import Requirement

    numpy_version = version("numpy")
    module_version = version("matplotlib")
    wanted = next(Requirement(r) for r in requires("matplotlib") if Requirement(r).name == "numpy")
    return numpy_version, module_version, wanted


def trigger():
    import matplotlib


def upgrade_module():
    """Solution 1: numpy is 2.x and this matplotlib is older than 3.9.4 (the NumPy-2 build the results use), though its metadata lets
    NumPy 2 in; the upgraded pair is the committed matplotlib==3.9.4 + numpy==2.1.3 result."""
    numpy_version, module_version, wanted = _installed()
    assert int(numpy_version.split(".")[0]) >= 2, numpy_version
    assert tuple(int(p) for p in module_version.split(".")[:2]) < (3, 9), module_version
    assert wanted.specifier.contains(numpy_version), (str(wanted), numpy_version)  # why pip installed this pair
    return (f"matplotlib {module_version} (built against NumPy 1.x) beside numpy {numpy_version}, allowed by its "
            f"{wanted}: the upgrade is the matplotlib==3.9.4 + numpy==2.1.3 result, where trigger() imports matplotlib")


def pin_numpy_below_2():
    """Solution 2: the same matplotlib accepts numpy 1.26.4; the pinned pair is the committed
    matplotlib==3.7.2 + numpy==1.26.4 result."""
    numpy_version, module_version, wanted = _installed()
    assert int(numpy_version.split(".")[0]) >= 2, numpy_version
    assert wanted.specifier.contains("1.26.4"), str(wanted)
    return (f"numpy {numpy_version} -> numpy<2: matplotlib {module_version}'s {wanted} accepts 1.26.4; the pinned "
            "pair is the matplotlib==3.7.2 + numpy==1.26.4 result, where trigger() imports matplotlib")
