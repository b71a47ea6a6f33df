"""Lightning moved its rank-zero helpers (rank_zero_only, rank_zero_info, rank_zero_debug) out of
utilities.distributed into utilities.rank_zero in 1.6, kept deprecated re-exports for a while, and took them away:
1.8.0 dropped them (CHANGELOG 1.8.0, #14471), 1.8.1 put rank_zero_only back as a deprecated function (#15536, "Added
back the accidentally removed ..."), 2.0.0 removed the deprecated code in utilities.distributed (#16390), and 2.0.2
deleted the module (commit 2af135b3c2, "Sync module states during non-fit (#17370)": distributed.py is in the tree
of tag 2.0.1 and not of 2.0.2). So `from pytorch_lightning.utilities.distributed import rank_zero_only` raises, on
2.0.0 and 2.0.1, ImportError "cannot import name 'rank_zero_only' from 'pytorch_lightning.utilities.distributed'", and
from 2.0.2 on ModuleNotFoundError "No module named 'pytorch_lightning.utilities.distributed'"; the `lightning`
package, which ships the same code as lightning.pytorch, gives the same with its own module name.

The trigger is the import written against the lightning package, `from lightning.pytorch.utilities.distributed
import rank_zero_only`, run for real: no frame of lightning is on the stack, and the raise site is the package that
lacks the submodule, lightning/pytorch/utilities/__init__.py (whose line 31 imports rank_zero_only from rank_zero: the
replacement). NEEDS leaves out 2.0.0 and 2.0.1, whose error is raised at another module (distributed.py, which still
existed). Solution 1 imports rank_zero_only from its new home, in both packages where both are installed, checks the
two spellings give the same object, that the old module is gone from both, and that the decorator still runs the
function on rank 0 and skips it on another rank. The exampleFix runs from its text.

Results: errkb reproduce lightning-rank-zero-only-moved (lightning 2.6.6 and pytorch-lightning 2.6.6 installed)
--with lightning==2.0.8,pytorch-lightning==2.0.8,lightning-cloud==0.5.37,setuptools==79.0.1
--with lightning==2.4.0,pytorch-lightning==2.4.0 (verified) and
--with lightning==1.9.5,pytorch-lightning==1.9.5,lightning-cloud==0.5.37,setuptools==79.0.1 (not-reproduced: the
old side, where the deprecated import still works; lightning-cloud 0.5.37 and setuptools<80 are what 1.9/2.0 need to
import on Python 3.11, as in the catalog's other lightning records).
Written by hand (errkb draft refuses a snippet with no library frame), from records/lightning-module-available-removed.json.
Excerpt: src/lightning/pytorch/utilities/__init__.py at tag 2.6.5 (be98784a1a03) of Lightning-AI/lightning (mirror
of Lightning-AI/pytorch-lightning), byte-identical (cmp) to the installed lightning 2.6.6 file (the mirror has no
2.6.6 tag); the installed pytorch_lightning/utilities/__init__.py is the same file with the package names replaced
(diff after sed lightning.pytorch -> pytorch_lightning, lightning.fabric -> lightning_fabric).
"""
NEEDS = {"packages": {"lightning": ">=1.9.5,!=2.0.0,!=2.0.1", "pytorch-lightning": ">=1.9.5,!=2.0.0,!=2.0.1",
                      "torch": "==2.13.0+cpu"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "import_from_rank_zero"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {"text": "No module named 'lightning.pytorch.utilities.distributed'", "source": "lightning==2.6.6", "match": "pattern"},
    {"text": "No module named 'lightning.pytorch.utilities.distributed'", "source": "lightning==2.0.8", "match": "pattern"},
    {"text": "ModuleNotFoundError: No module named 'pytorch_lightning.utilities.distributed'",
     "source": "googlecolab/colabtools#3728", "match": "matcher"},
    {"text": "ModuleNotFoundError: No module named 'pytorch_lightning.utilities.distributed'",
     "source": "CompVis/stable-diffusion#758", "match": "matcher"},
    {"text": "ImportError: cannot import name 'rank_zero_only' from 'pytorch_lightning.utilities.distributed' (/usr/local/lib/python3.7/dist-packages/pytorch_lightning/utilities/distributed.py)",
     "source": "chigozienri/VQGAN-CLIP-animations#38", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "Lightning-AI/lightning",
              "commit": "be98784a1a03581b7051a355ae1084fd352d7cea",
              "path": "src/lightning/pytorch/utilities/__init__.py", "line": 31, "offset": 0}

import importlib
import importlib.util

import errkb_record as record


def trigger():
    from lightning.pytorch.utilities.distributed import rank_zero_only


def _packages():
    """lightning.pytorch, and pytorch_lightning where that distribution is installed beside it."""
    return [name for name in ("lightning.pytorch", "pytorch_lightning") if importlib.util.find_spec(name.split(".")[0])]


def import_from_rank_zero():
    """Solution 1: rank_zero_only from utilities (or utilities.rank_zero), in each installed package."""
    packages = _packages()
    assert "lightning.pytorch" in packages
    for package in packages:
        try:
            importlib.import_module(f"{package}.utilities.distributed")
        except ModuleNotFoundError as exc:
            assert exc.name == f"{package}.utilities.distributed", exc.name
        else:
            raise AssertionError(f"{package}.utilities.distributed still imports")
        utilities = importlib.import_module(f"{package}.utilities")
        rank_zero = importlib.import_module(f"{package}.utilities.rank_zero")
        rank_zero_only = utilities.rank_zero_only
        assert rank_zero_only is rank_zero.rank_zero_only
        assert rank_zero.rank_zero_info and rank_zero.rank_zero_debug  # the siblings moved with it

        calls = []

        @rank_zero_only
        def log_hyperparameters(value):
            calls.append(value)
            return value

        saved = rank_zero_only.rank
        try:
            rank_zero_only.rank = 0
            assert log_hyperparameters(1) == 1
            rank_zero_only.rank = 1  # what the launcher sets on another process
            assert log_hyperparameters(2) is None
        finally:
            rank_zero_only.rank = saved
        assert calls == [1], calls
    return "checked in " + ", ".join(packages)


def example_fix():
    names = record.run("exampleFix", {}, section="after")
    from pytorch_lightning.utilities.rank_zero import rank_zero_only

    assert names["rank_zero_only"] is rank_zero_only
