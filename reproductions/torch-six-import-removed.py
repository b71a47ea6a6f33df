"""A project pinned to an old timm (0.3.2 is the release DeiT and many repositories pin) runs on a current PyTorch:
importing timm reaches timm/models/layers/helpers.py, whose sixth line is `from torch._six import container_abcs`.
torch 2.x has no torch._six at all, so the import raises ModuleNotFoundError "No module named 'torch._six'" from that
line of timm (the 1.9-era releases still had the module without container_abcs, and raised ImportError "cannot
import name 'container_abcs' from 'torch._six'" there instead: cited from issues, not run here, since no torch 1.x
installs on Python 3.11). The trigger imports create_model from timm.models as DeiT's scripts do. The
demonstrations: solution 1 (upgrade timm to 0.4.5 or newer) is shown by the matrix itself: the committed timm==0.4.5
and timm==0.4.12 results run the same trigger without error (not-reproduced: the snippet works there), and on a
failing release its stage asserts the installed release is one the record names as failing (older than 0.4.5) and
that the file at fault is the helpers module 0.4.5 changed; solution 2 copies the installed timm package to a
temporary folder, replaces that one import with the record's exampleFix text (what timm 0.4.5 itself changed), and
imports the copy: a ViT and a ResNet-18 are built and run a forward pass, and to_2tuple behaves as before.
Results: timm 0.3.2 and 0.3.4 with torch 2.15.0 / torchvision 0.29.2, and timm 0.3.2 with torch 2.5.1 /
torchvision 0.20.1: verified; timm 0.4.5 and 0.4.12 with torch 2.15.0: not-reproduced (the fixed side). The
installed CPU build (torch 2.13.0+cpu) has no torchvision, which timm needs, and skips the record.

Drafted by `errkb draft` from six_snip.py on timm 0.3.2 (torch 2.15.0, torchvision 0.29.2), Python 3.11.2:
  ModuleNotFoundError: No module named 'torch._six'
  raised at timm/models/layers/helpers.py:6
The draft named rwightman/pytorch-image-models (the 0.3.2 wheel's Home-page; the repository is now
huggingface/pytorch-image-models, and GitHub redirects the old name) and the commit given with --sha. The commit was
chosen by hand: the stored huggingface/pytorch-image-models snapshot has no v0.3.2 tag; the version bump "Version
0.3.2" (6504a42832cb, 2020-11-30) differs from the wheel in 9 of its 120 .py files, and 9a25fdf3ad04 (2020-12-05,
merge of PR #297) is the first commit after it whose timm/**/*.py files are all byte-identical to the installed
0.3.2 wheel's (cmp, each file). helpers.py is the same at both, at v0.3.3 and at v0.3.4 (f8463b8fa9c0); it changed
to `import collections.abc` in 94ca140b (2021-02-10, "update collections.abc import"), first released in 0.4.5
(the next release on PyPI after 0.3.4; v0.4.5 is 5b28ef410062).
"""
NEEDS = {'packages': {'timm': '', 'torch': '', 'torchvision': ''}, 'cuda_devices': 0, 'timeout_s': 150}
SOLUTIONS = {1: "upgrade_timm", 2: "replace_the_import"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {'text': "No module named 'torch._six'", 'source': 'timm==0.3.2', 'match': 'pattern'},
    {'text': "No module named 'torch._six'", 'source': 'jiangtaoxie/SoT#3', 'match': 'pattern'},
    {'text': "cannot import name 'container_abcs' from 'torch._six' (/usr/local/lib/python3.7/dist-packages/torch/_six.py)",
     'source': 'qubvel-org/segmentation_models.pytorch#424', 'match': 'pattern'},
    {'text': "cannot import name 'container_abcs'", 'source': 'huggingface/pytorch-image-models#420', 'match': 'pattern'},
    {'text': "cannot import name 'PY3' from 'torch._six'", 'source': 'Lightning-Universe/lightning-flash#163',
     'match': 'pattern'},
    {'text': "cannot import name 'PY3' from 'torch._six' (C:\\Users\\Elijah\\miniconda3\\envs\\torch\\lib\\site-packages\\torch\\_six.py)",
     'source': 'Lightning-Universe/lightning-bolts#578', 'match': 'pattern'},
    {'text': "module 'torch' has no attribute '_six'", 'source': 'Lausannen/NAS-FCOS#13', 'match': 'none',
     'why': "an attribute lookup, not an import: the catalog's torch-too-old-for-code record matches it"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'timm', 'version': '0.3.2'}

import shutil
import sys
import tempfile
from pathlib import Path

import errkb_record as record

FIXED_IN = (0, 4, 5)  # the first timm release whose helpers.py imports collections.abc (see the docstring)
OLD_IMPORT = "from torch._six import container_abcs"


def _version(text):
    return tuple(int(p) for p in text.split("+")[0].split(".")[:3] if p.isdigit())


def _installed_timm():
    from importlib.metadata import distribution

    dist = distribution("timm")
    return dist.version, Path(str(dist.locate_file("timm")))


def _runs(timm):
    import torch

    vit = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=10).eval()
    cnn = timm.create_model("resnet18", pretrained=False, num_classes=10).eval()
    with torch.no_grad():
        assert vit(torch.randn(1, 3, 224, 224)).shape == (1, 10)
        assert cnn(torch.randn(2, 3, 64, 64)).shape == (2, 10)


def trigger():
    from timm.models import create_model

    model = create_model("vit_base_patch16_224", pretrained=False, num_classes=10)


def upgrade_timm():
    """Solution 1: releases from 0.4.5 on import collections.abc; the matrix's timm 0.4.5/0.4.12 results run the
    trigger without error. Here (a failing release) the stage checks the release and the file at fault."""
    version, package = _installed_timm()
    assert _version(version) < FIXED_IN, f"timm {version} should not raise this error"
    helpers = (package / "models" / "layers" / "helpers.py").read_text().splitlines()
    assert helpers[5] == OLD_IMPORT, helpers[:8]  # line 6, the raise site the record names
    try:
        import timm  # noqa: F401
    except ModuleNotFoundError as exc:
        assert exc.name == "torch._six", exc
    else:
        raise AssertionError(f"timm {version} imported")
    return f"timm {version}: older than 0.4.5; the upgrade is the committed timm==0.4.5 and timm==0.4.12 results"


def _patched_copy():
    """The installed timm copied to a temporary folder with helpers.py's import replaced by the exampleFix's text."""
    version, package = _installed_timm()
    folder = Path(tempfile.mkdtemp())
    shutil.copytree(package, folder / "timm")
    helpers = folder / "timm" / "models" / "layers" / "helpers.py"
    text = helpers.read_text()
    assert text.count(OLD_IMPORT + "\n") == 1, "the old import is not in this release's helpers.py"
    replacement = record.section_text("exampleFix", "after").strip()
    helpers.write_text(text.replace(OLD_IMPORT, replacement))
    sys.path.insert(0, str(folder))
    for name in [m for m in sys.modules if m == "timm" or m.startswith("timm.")]:
        del sys.modules[name]
    return version, folder


def replace_the_import():
    """Solution 2: the one import replaced by its standard-library equivalent; the copy imports and builds models."""
    version, folder = _patched_copy()
    import timm
    from timm.models.layers.helpers import to_2tuple

    assert Path(timm.__file__).is_relative_to(folder), timm.__file__
    assert timm.__version__ == version
    assert to_2tuple(3) == (3, 3) and to_2tuple((2, 5)) == (2, 5)
    _runs(timm)


def example_fix():
    import collections.abc

    names = record.run("exampleFix", {}, section="after")
    assert names["container_abcs"] is collections.abc
    _, folder = _patched_copy()
    import timm

    assert Path(timm.__file__).is_relative_to(folder)
    _runs(timm)
