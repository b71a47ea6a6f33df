"""A script written for Lightning 1.x builds Trainer(gpus=0, ...); from lightning 2.0.0 on the argument is gone and the
TypeError is raised at the call line of Trainer.__init__'s wrapper, _defaults_from_env_vars
(lightning/pytorch/utilities/argparse.py). Solution 1 builds the Trainer with accelerator="cpu", devices=1, fits a
tiny model with it, and shows that the other removed hardware arguments (tpu_cores, ipus, num_processes,
auto_select_gpus) raise the same TypeError. The record's exampleFix and validationCode run from its text.
Results: errkb reproduce lightning-trainer-unexpected-keyword-gpus --with lightning==1.9.5 (the snippet runs: not-reproduced, the old side) --with
lightning==2.0.0 --with lightning==2.0.8 (verified). The excerpt (L58-72 of the installed 2.0.8 file) is
byte-identical to src/lightning/pytorch/utilities/argparse.py at tag 2.0.8 (8345689f1cd3), checked with cmp
against a clone; the same holds for 2.0.0 (01834c8529a7), where the raise line is 69.
Environments get torch 2.13.0+cpu (the local build), setuptools 77-79 (lightning 1.9/2.0 import pkg_resources,
gone from newer setuptools, and torch 2.13 needs >=77.0.3) and lightning-cloud 0.5.37 (newer ones dropped a class
lightning 1.9/2.0 import).

Drafted by `errkb draft` from trainer_gpus.py on lightning 2.0.8, Python 3.11.7:
  TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'
  raised at lightning/pytorch/utilities/argparse.py:70
The draft said the commit was unresolved (the wheel's metadata names none); the tag's commit was found and checked
by hand as above. The draft's pattern matched any function's unexpected keyword; the author narrowed it.

API change (errkb draft --api-change): lightning works up to 1.9.5 and raises from 2.0.0 on. Releases run:
  lightning==1.9.5: works
  lightning==2.0.0: fails (TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus')
  lightning==2.0.1: fails (TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus')
  lightning==2.0.3: fails (TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus')
  lightning==2.0.8: fails (TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus')
  not run (no claim is made for them): 2.0.1.post0, 2.0.2, 2.0.4, 2.0.5, 2.0.6, 2.0.7
Commit the results on both sides: errkb reproduce lightning-trainer-unexpected-keyword-gpus --with lightning==1.9.5 --with lightning==2.0.0 --with lightning==2.0.8
"""
NEEDS = {'packages': {'lightning': '', 'torch': '==2.13.0+cpu', 'setuptools': '<80,>=77.0.3', 'lightning-cloud': '==0.5.37'},
 'cuda_devices': 0,
 'timeout_s': 120}
SOLUTIONS = {1: "accelerator_and_devices"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["Trainer"], "validationCode": ["trainer_kwargs"]}
VALID = {"accelerator-devices": "valid_accelerator_devices", "defaults": "valid_defaults",
         "device-list": "valid_device_list", "cpu": "valid_cpu"}
WORDINGS = [
    {"text": "Trainer.__init__() got an unexpected keyword argument 'gpus'", "source": "lightning==2.0.0", "match": "pattern"},
    {"text": "Trainer.__init__() got an unexpected keyword argument 'gpus'", "source": "facebookresearch/xformers#818", "match": "pattern"},
    {"text": "Trainer.__init__() got an unexpected keyword argument 'gpus'", "source": "jbohnslav/deepethogram#145", "match": "pattern"},
    {"text": "__init__() got an unexpected keyword argument 'gpus'", "source": "lcn-kul/madress-2023#1", "match": "pattern"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'lightning', 'version': '2.0.8'}

import errkb_record as record

REMOVED = ("gpus", "tpu_cores", "ipus", "num_processes", "auto_select_gpus")
QUIET = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)


def trigger():
    from lightning.pytorch import Trainer

    trainer = Trainer(gpus=0, max_epochs=1, logger=False, enable_checkpointing=False)


def accelerator_and_devices():
    """Solution 1: accelerator= and devices= build the Trainer and fit; every removed hardware argument raises."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from lightning.pytorch import LightningModule, Trainer

    for name in REMOVED:
        try:
            Trainer(**{name: 1}, **QUIET)
        except TypeError as exc:
            assert f"got an unexpected keyword argument '{name}'" in str(exc), exc
        else:
            raise AssertionError(f"Trainer({name}=...) was accepted")

    class Regressor(LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = Trainer(accelerator="cpu", devices=1, max_epochs=1, **QUIET)
    assert trainer.num_devices == 1
    model = Regressor()
    before = model.layer.weight.detach().clone()
    torch.manual_seed(0)
    trainer.fit(model, DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4))
    assert trainer.global_step == 2 and not torch.equal(before, model.layer.weight), "the model did not train"


def example_fix():
    from lightning.pytorch import Trainer

    names = record.run("exampleFix", {"Trainer": Trainer}, section="after")
    assert names["trainer"].num_devices == 1 and names["trainer"].max_epochs == 10


def guard():
    assert not record.check("validationCode", {"trainer_kwargs": {"gpus": 0, "max_epochs": 1}})
    assert not record.check("validationCode", {"trainer_kwargs": {"num_processes": 2}})
    assert record.check("validationCode", {"trainer_kwargs": {"accelerator": "cpu", "devices": 1, "max_epochs": 1}})


def valid_accelerator_devices():
    return {"trainer_kwargs": {"accelerator": "gpu", "devices": 2, "strategy": "ddp"}}


def valid_defaults():
    return {"trainer_kwargs": {}}


def valid_device_list():
    return {"trainer_kwargs": {"accelerator": "gpu", "devices": [0, 1], "precision": "16-mixed"}}


def valid_cpu():
    return {"trainer_kwargs": {"accelerator": "cpu", "devices": 1, "max_epochs": 3}}


# What errkb draft --api-change ran (each release in its own environment) and saw.
API_CHANGE = {"library": 'lightning', "last_working": '1.9.5', "first_failing": '2.0.0', "runs": {'1.9.5': 'works', '2.0.0': 'fails', '2.0.1': 'fails', '2.0.3': 'fails', '2.0.8': 'fails'}, "pins": {'setuptools': '<80,>=77.0.3', 'lightning-cloud': '==0.5.37'}}
