"""OpenMMLab libraries assert at import that the installed mmcv lies in the range their release was made for.
mmpretrain/__init__.py reads mmcv.__version__, compares it with mmcv_minimum_version (inclusive) and
mmcv_maximum_version (exclusive) through mmengine's digit_version, and otherwise fails its assert with
"MMCV==<installed> is used but incompatible. Please install mmcv>=<min>, <<max>." mmdet 3.x has the same check and
wording (range mmcv>=2.0.0rc4, <2.2.0 in 3.2.0 and 3.3.0, <2.1.0 in 3.0.0 and 3.1.0, read by the reviewer in
those PyPI wheels' mmdet/__init__.py); it is cited from issues here, not run (see the record). trigger(): `import
mmpretrain` beside an mmcv outside its range: mmpretrain 1.1.0 / 1.1.1 with mmcv-lite 2.2.0, mmpretrain 1.0.2 with
mmcv-lite 2.1.0 (mmcv-lite is mmcv without compiled ops; its mmcv.__version__ is what the check reads). Neither solution
can install a package inside a stage: on the failing pair each stage reads the installed mmpretrain's declared range from
its __init__.py (without importing mmpretrain), asserts the installed mmcv is outside it, and names the committed result
that shows the fix: solution 1 (an mmcv inside the range) is the mmpretrain==1.1.1 + mmcv-lite==2.1.0 result, solution 2
(a newer library whose range includes the mmcv) the mmpretrain==1.2.0 + mmcv-lite==2.2.0 result; in both, trigger()
imports mmpretrain without an error (not-reproduced: the import works). The excerpt is mmpretrain/__init__.py at tag
v1.1.1 (e95d9acb8919c59f7f1fab24a7701bdc23d25337) of the open-mmlab/mmpretrain snapshot, byte-identical to the installed
1.1.1 file; identical at v1.1.0, and at v1.0.2 only mmcv_maximum_version differs ('2.1.0'). Python 3.11 reports the
failed assert at line 18, the second line of the assert's condition. Results: errkb reproduce mmcv-version-incompatible
--with mmpretrain==1.0.2,mmcv-lite==2.1.0 --with mmpretrain==1.1.0,mmcv-lite==2.2.0
--with mmpretrain==1.1.1,mmcv-lite==2.2.0 --with mmpretrain==1.1.1,mmcv-lite==2.1.0
--with mmpretrain==1.2.0,mmcv-lite==2.2.0 (the installed venv has no mmpretrain and skips).
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "mmpretrain": ">=1.0.2,<1.3", "mmcv-lite": ">=2.0.0,<2.3",
                      "mmengine": ">=0.8.3,<1.0"},
         "cuda_devices": 0, "timeout_s": 180}
SOLUTIONS = {1: "install_mmcv_in_range", 2: "upgrade_library"}
CODE = {}
CODE_NAMES = {}
WORDINGS = [
    {"text": "MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0, <2.2.0.",
     "source": "mmpretrain==1.1.1", "match": "pattern"},
    {"text": "MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0, <2.2.0.",
     "source": "mmpretrain==1.1.0", "match": "pattern"},
    {"text": "MMCV==2.1.0 is used but incompatible. Please install mmcv>=2.0.0, <2.1.0.",
     "source": "mmpretrain==1.0.2", "match": "pattern"},
    {"text": "AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.",
     "source": "open-mmlab/mmdetection#12312", "match": "matcher"},
    {"text": "AssertionError: MMCV==1.7.2 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.",
     "source": "open-mmlab/mmdetection#11476", "match": "matcher"},
    {"text": "AssertionError: MMCV==2.1.0 is used but incompatible. Please install mmcv>=1.3.17, <=1.8.0.",
     "source": "open-mmlab/mmdetection#11636", "match": "matcher"},
    {"text": "AssertionError: MMCV==1.5.3 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.",
     "source": "Yzichen/FlashOCC#86", "match": "matcher"},
    {"text": "AssertionError: MMCV==1.7.2 is used but incompatible. Please install mmcv>=2.0.0rc4.",
     "source": "xzz777/SCTNet#11", "match": "matcher"},
    {"text": "MMCV==1.7.1 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.1.0.",
     "source": "YiqunChen1999/date#1", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "open-mmlab/mmpretrain",
              "commit": "e95d9acb8919c59f7f1fab24a7701bdc23d25337", "path": "mmpretrain/__init__.py",
              "line": 18, "offset": 0}

import errkb_record as record  # noqa: F401  (the record has no code fields to run)

MMCV_LITE_RELEASES = ["2.2.0", "2.1.0", "2.0.1", "2.0.0"]  # mmcv-lite's releases on PyPI, newest first


def trigger():
    import mmpretrain  # noqa: F401


def _declared_range():
    """mmpretrain's own mmcv range, read from its __init__.py without importing mmpretrain."""
    import ast
    import importlib.util
    from importlib.metadata import version

    spec = importlib.util.find_spec("mmpretrain")
    with open(spec.origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    values = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant)):
            values[node.targets[0].id] = node.value.value
    return version("mmpretrain"), values["mmcv_minimum_version"], values["mmcv_maximum_version"]


def _inside(candidate, low, high):
    from mmengine.utils import digit_version  # the comparison mmpretrain's check uses

    return digit_version(low) <= digit_version(candidate) < digit_version(high)


def install_mmcv_in_range():
    """Solution 1: the installed mmcv is outside the declared range and a released mmcv is inside it; the in-range
    pair is the mmpretrain==1.1.1 + mmcv-lite==2.1.0 result."""
    import mmcv

    library, low, high = _declared_range()
    assert not _inside(mmcv.__version__, low, high), (mmcv.__version__, low, high)
    inside = [release for release in MMCV_LITE_RELEASES if _inside(release, low, high)]
    assert inside, (low, high)
    return (f"mmcv {mmcv.__version__} is outside mmpretrain {library}'s [{low}, {high}); mmcv {inside[0]} is inside: "
            "the in-range pair is the mmpretrain==1.1.1 + mmcv-lite==2.1.0 result, where trigger() imports mmpretrain")


def upgrade_library():
    """Solution 2: the installed mmpretrain refuses this mmcv, which mmpretrain 1.2.0's range (>=2.0.0, <2.4.0 at tag
    v1.2.0) includes; the upgraded pair is the mmpretrain==1.2.0 + mmcv-lite==2.2.0 result."""
    import mmcv
    from mmengine.utils import digit_version

    library, low, high = _declared_range()
    assert not _inside(mmcv.__version__, low, high), (mmcv.__version__, low, high)
    assert digit_version(library) < digit_version("1.2.0"), library
    assert _inside(mmcv.__version__, "2.0.0", "2.4.0"), mmcv.__version__
    return (f"mmpretrain {library} refuses mmcv {mmcv.__version__}, which mmpretrain 1.2.0 accepts: the upgraded pair is "
            "the mmpretrain==1.2.0 + mmcv-lite==2.2.0 result, where trigger() imports mmpretrain")
