"""trainer.test(model) with no dataloaders= and no datamodule= asks the LightningModule for its test data by calling
its test_dataloader() hook. A module that defines test_step but not test_dataloader inherits the default hook from
DataHooks (lightning/pytorch/core/hooks.py), which raises MisconfigurationException "`test_dataloader` must be
implemented to be used with the Lightning Trainer". The trigger trains a small regressor with
trainer.fit(model, train_loader) and then calls trainer.test(model): the loader given to fit is not reused.
Solution 1 passes the test loader to trainer.test and checks the logged test loss equals the loss computed by hand;
solution 2 shows a LightningDataModule without the hook fails the same way, then defines test_dataloader() on a
LightningDataModule passed as datamodule= (and on the module itself) and checks the same. The record's exampleFix and validationCode run from its text.
Results: errkb reproduce lightning-no-test-dataloader-defined (lightning 2.6.6) --with lightning==2.4.0 --with
lightning==2.5.6. The excerpt (L505-515) is from
src/lightning/pytorch/core/hooks.py at tag 2.6.5 (be98784a1a03) of Lightning-AI/lightning (stored as its current name, Lightning-AI/pytorch-lightning; the record uses the name
every release's metadata gives, lightning 2.4.0's names no other) (the stored mirror
has no 2.6.6 tag; 2.6.0-2.6.5 have the same blob, which is also byte-identical (git hash-object) to the installed 2.6.6
lightning/pytorch/core/hooks.py; PROVENANCE names the upstream copy because the repository path has the src/ prefix
that the installed package lacks); the raise is at line 512 in 2.4.0 and 2.5.6 (stored tags).

Drafted by `errkb draft` from pl_trigger.py on lightning 2.6.6, Python 3.11.7:
  lightning.fabric.utilities.exceptions.MisconfigurationException: `test_dataloader` must be implemented to be used with the Lightning Trainer
  raised at lightning/pytorch/core/hooks.py:513
The draft said the commit was unresolved (no VCS metadata in the wheel); found and checked by hand as above. The
draft's pattern accepted any hook name; the author limited it to the test hook and added the 1.x wording.
"""
NEEDS = {'packages': {'lightning': '>=2.4', 'torch': '==2.13.0+cpu'}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "pass_test_dataloaders", 2: "define_test_dataloader"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["trainer", "model", "test_loader"],
              "validationCode": ["model", "dataloaders", "datamodule"]}
KEEP = ["trainer", "model", "test_loader"]
VALID = {"dataloaders-passed": "valid_dataloaders_passed", "module-hook": "valid_module_hook",
         "datamodule-hook": "valid_datamodule_hook"}
WORDINGS = [
    {'text': '`test_dataloader` must be implemented to be used with the Lightning Trainer',
     'source': 'lightning==2.6.6', 'match': 'pattern'},
    {'text': 'No `test_dataloader()` method defined to run `Trainer.test`.',
     'source': 'rinongal/textual_inversion#93', 'match': 'pattern'},
    {'text': 'No `test_dataloader()` method defined to run `Trainer.test`.',
     'source': 'XavierXiao/Dreambooth-Stable-Diffusion#72', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'Lightning-AI/lightning',
              'commit': 'be98784a1a03581b7051a355ae1084fd352d7cea', 'path': 'src/lightning/pytorch/core/hooks.py',
              'line': 513, 'offset': 0}

import errkb_record as record

import torch
from torch.utils.data import DataLoader, TensorDataset

QUIET = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)


def _loaders():
    torch.manual_seed(0)
    train = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)
    test = DataLoader(TensorDataset(torch.randn(6, 4), torch.randn(6, 1)), batch_size=6)
    return train, test


def _module_class(test_loader=None):
    from lightning.pytorch import LightningModule

    class Regressor(LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def test_step(self, batch, batch_idx):
            x, y = batch
            self.log("test_loss", torch.nn.functional.mse_loss(self.layer(x), y))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if test_loader is not None:
        Regressor.test_dataloader = lambda self: test_loader
    return Regressor


def _fitted(test_loader=None):
    from lightning.pytorch import Trainer

    train, test = _loaders()
    trainer = Trainer(max_epochs=1, **QUIET)
    model = _module_class(test_loader)()
    trainer.fit(model, train)
    return trainer, model, test


def _expected_loss(model, loader):
    x, y = next(iter(loader))
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model.layer(x), y).item()


def _datamodule(test_loader):
    from lightning.pytorch import LightningDataModule

    class Data(LightningDataModule):
        def test_dataloader(self):
            return test_loader

    return Data()


def trigger():
    from lightning.pytorch import Trainer

    train_loader, _ = _loaders()
    trainer = Trainer(max_epochs=1, **QUIET)
    model = _module_class()()
    trainer.fit(model, train_loader)
    trainer.test(model)


def pass_test_dataloaders():
    """Solution 1: trainer.test(model, dataloaders=test_loader)."""
    trainer, model, test = _fitted()
    results = trainer.test(model, dataloaders=test, verbose=False)
    assert abs(results[0]["test_loss"] - _expected_loss(model, test)) < 1e-5, results


def define_test_dataloader():
    """Solution 2: a test_dataloader() hook, on a LightningDataModule passed as datamodule= or on the module."""
    from lightning.pytorch import LightningDataModule
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    trainer, model, test = _fitted()
    try:
        trainer.test(model, datamodule=LightningDataModule(), verbose=False)  # a datamodule without the hook
    except MisconfigurationException as exc:
        assert "`test_dataloader` must be implemented" in str(exc), exc
    else:
        raise AssertionError("a datamodule without test_dataloader was accepted")
    results = trainer.test(model, datamodule=_datamodule(test), verbose=False)
    assert abs(results[0]["test_loss"] - _expected_loss(model, test)) < 1e-5, results
    _, test = _loaders()
    trainer, model, _ = _fitted(test_loader=test)
    results = trainer.test(model, verbose=False)
    assert abs(results[0]["test_loss"] - _expected_loss(model, test)) < 1e-5, results


def example_fix():
    trainer, model, test_loader = _fitted()
    names = record.run("exampleFix", {"trainer": trainer, "model": model, "test_loader": test_loader}, section="after")
    assert abs(names["results"][0]["test_loss"] - _expected_loss(model, test_loader)) < 1e-5


def guard():
    trainer, model, test = _fitted()
    assert not record.check("validationCode", {"model": model, "dataloaders": None, "datamodule": None})
    from lightning.pytorch import LightningDataModule

    assert not record.check("validationCode", {"model": model, "dataloaders": None, "datamodule": LightningDataModule()})
    assert record.check("validationCode", {"model": model, "dataloaders": test, "datamodule": None})


def valid_dataloaders_passed():
    trainer, model, test = _fitted()
    trainer.test(model, dataloaders=test, verbose=False)  # Lightning runs it
    return [{"model": model, "dataloaders": test, "datamodule": None},
            {"model": model, "dataloaders": [test, test], "datamodule": None}]


def valid_module_hook():
    _, test = _loaders()
    trainer, model, _ = _fitted(test_loader=test)
    trainer.test(model, verbose=False)
    return {"model": model, "dataloaders": None, "datamodule": None}


def valid_datamodule_hook():
    trainer, model, test = _fitted()
    datamodule = _datamodule(test)
    trainer.test(model, datamodule=datamodule, verbose=False)
    return {"model": model, "dataloaders": None, "datamodule": datamodule}
