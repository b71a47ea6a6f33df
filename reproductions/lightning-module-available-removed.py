"""lightning-bolts 0.5.0 imports the private helper _module_available from pytorch_lightning.utilities
(pl_bolts/utils/__init__.py, line 8), which importing almost any pl_bolts module reaches. pytorch-lightning 1.8.0 no
longer has it there, so `from pl_bolts.models.regression import LogisticRegression` raises ImportError inside pl_bolts
before any user code runs. Solution 1 is the replacement the helper's users moved to,
lightning_utilities.core.imports.module_available (lightning-utilities comes with pytorch-lightning from 1.8 on):
it answers for installed, missing and dotted module names as the flags pl_bolts computes need, and
pytorch_lightning.utilities is shown to lack the old name. The record's exampleFix runs from its text.
Results: errkb reproduce lightning-module-available-removed --with pytorch-lightning==1.8.0 --with
pytorch-lightning==1.8.3 --with pytorch-lightning==1.8.6 (verified). A run on pytorch-lightning 1.9.5 (not committed,
outside NEEDS) failed earlier in pl_bolts, on another removed name: "cannot import name 'LightningLoggerBase' from
'pytorch_lightning.loggers'" (pl_bolts/callbacks/data_monitor.py:6), so NEEDS stops below 1.9. The excerpt is byte-identical to
pl_bolts/utils/__init__.py at lightning-bolts tag 0.5.0 (ba899e8df5a7), checked with cmp against a clone of
Lightning-Universe/lightning-bolts (the repository's current name; the wheel's metadata names the old one,
PyTorchLightning/lightning-bolts). Environments get torch 2.13.0+cpu, torchmetrics 0.10.3 (pytorch-lightning 1.7/1.8
import names later torchmetrics releases dropped), numpy<2 and setuptools<80 (pl_bolts imports pkg_resources).

Drafted by `errkb draft` from bolts.py on lightning-bolts 0.5.0 (the pytorch-lightning 1.8.0 environment's python),
Python 3.11.7:
  ImportError: cannot import name '_module_available' from 'pytorch_lightning.utilities' (...)
  raised at pl_bolts/utils/__init__.py:8
The draft said the commit was unresolved (the wheel names none); the tag's commit was found and checked by hand as
above. NEEDS named only lightning-bolts; the author added the releases the environments need.

API change (errkb draft --api-change --library pytorch-lightning --releases 1.7.7,1.8.0, pins as in NEEDS): no
working side could be run. Releases run:
  pytorch-lightning==1.7.7: other error (ModuleNotFoundError: No module named 'torch._six', from
    pl_bolts/datamodules/async_dataloader.py: lightning-bolts 0.5.0 does not import on torch 2.x at all)
  pytorch-lightning==1.8.0: fails (ImportError: cannot import name '_module_available' from 'pytorch_lightning.utilities')
An earlier try without the torchmetrics pin counted 1.7.7 as failing (ImportError: cannot import name
'_compare_version' from 'torchmetrics.utilities.imports'), a different import error of the same class.
"""
NEEDS = {'packages': {'lightning-bolts': '==0.5.0', 'pytorch-lightning': '>=1.8.0,<1.9', 'torch': '==2.13.0',
                      'torchmetrics': '==0.10.3', 'numpy': '<2', 'setuptools': '<80,>=77.0.3'},
         'cuda_devices': 0, 'timeout_s': 165}
SOLUTIONS = {1: "module_available"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {'text': "cannot import name '_module_available' from 'pytorch_lightning.utilities'", 'source': 'pytorch-lightning==1.8.0', 'match': 'pattern'},
    {'text': "cannot import name '_module_available' from 'pytorch_lightning.utilities'", 'source': 'pytorch-lightning==1.8.6', 'match': 'pattern'},
    {'text': "ImportError: cannot import name '_module_available' from 'pytorch_lightning.utilities' (/opt/conda/lib/python3.8/site-packages/pytorch_lightning/utilities/__init__.py)",
     'source': 'Lightning-AI/pytorch-lightning#15491', 'match': 'pattern'},
    {'text': "ImportError: cannot import name '_module_available' from 'pytorch_lightning.utilities' (/usr/local/lib/python3.7/dist-packages/pytorch_lightning/utilities/__init__.py)",
     'source': 'Lightning-AI/pytorch-lightning#15517', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'lightning-bolts', 'version': '0.5.0'}

import errkb_record as record


def trigger():
    from pl_bolts.models.regression import LogisticRegression

    model = LogisticRegression(input_dim=4, num_classes=3)


def module_available():
    """Solution 1: lightning_utilities' module_available gives the availability flags pl_bolts computed with the
    removed helper; the old name is gone from pytorch_lightning.utilities."""
    import importlib.util

    import pytorch_lightning.utilities as pl_utilities
    from lightning_utilities.core.imports import module_available

    assert not hasattr(pl_utilities, "_module_available")
    assert importlib.util.find_spec("torch._six") is None  # what pl_bolts 0.6.0's async_dataloader still imports
    assert module_available("torch") and module_available("pytorch_lightning")
    assert module_available("torch.nn.functional")  # a dotted name, as pl_bolts checks torch.cuda.amp
    assert not module_available("no_such_module_errkb") and not module_available("torch.no_such_submodule_errkb")
    for name in ("wandb", "gym", "sklearn", "PIL", "cv2", "torchvision"):  # the optional packages pl_bolts probes
        assert module_available(name) == (importlib.util.find_spec(name) is not None), name


def example_fix():
    import importlib.util

    names = record.run("exampleFix", {}, section="after")
    assert names["_WANDB_AVAILABLE"] == (importlib.util.find_spec("wandb") is not None)
    assert names["_TORCHVISION_AVAILABLE"] == (importlib.util.find_spec("torchvision") is not None)


# What errkb draft --api-change ran (each release in its own environment) and saw.
API_CHANGE = {"library": 'pytorch-lightning', "last_working": None, "first_failing": '1.8.0',
              "runs": {'1.7.7': 'other error', '1.8.0': 'fails'},
              "pins": {'setuptools': '<80,>=77.0.3', 'lightning-bolts': '==0.5.0', 'numpy': '<2', 'torchmetrics': '==0.10.3'}}
