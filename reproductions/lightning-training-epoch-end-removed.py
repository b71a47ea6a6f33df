"""A LightningModule written for Lightning 1.x logs its epoch loss in training_epoch_end(self, outputs); from lightning
2.0.0 on, trainer.fit() refuses it in the loop configuration check (lightning/pytorch/trainer/configuration_validator.py)
with NotImplementedError. Solution 1 moves the code to on_train_epoch_end with the outputs kept in a list attribute,
checks the logged epoch loss equals the mean of the step losses and the list is cleared, and shows that
validation_epoch_end (trainer.fit) and test_epoch_end (trainer.test) are refused the same way. The record's
exampleFix and validationCode run from its text.
Results: errkb reproduce lightning-training-epoch-end-removed --with lightning==1.9.5 (the module runs: not-reproduced, the old side) --with
lightning==2.0.0 --with lightning==2.0.8 (verified). The excerpt (L76-90 of the installed 2.0.8 file) is
byte-identical to src/lightning/pytorch/trainer/configuration_validator.py at tag 2.0.8 (8345689f1cd3), checked
with cmp against a clone. Environments as for lightning-trainer-unexpected-keyword-gpus (torch 2.13.0+cpu,
setuptools 77-79, lightning-cloud 0.5.37).

Drafted by `errkb draft` from epoch_end.py on lightning 2.0.8, Python 3.11.7:
  NotImplementedError: Support for `training_epoch_end` has been removed in v2.0.0. `Regressor` implements this method. You can use the `on_train_epoch_end` hook instead. To access outputs, save them in-memory as instance a
  raised at lightning/pytorch/trainer/configuration_validator.py:78
The draft said the commit was unresolved (no VCS metadata in the wheel); the tag's commit was found and checked by
hand as above. The draft's pattern accepted any 'Support for `X` has been removed in v2...'; the author narrowed it
to the three epoch-end hooks.

API change (errkb draft --api-change): lightning works up to 1.9.5 and raises from 2.0.0 on. Releases run:
  lightning==1.9.5: works
  lightning==2.0.0: fails (NotImplementedError: Support for `training_epoch_end` has been removed in v2.0.0. `Regressor` implements this method. You can use the `on_tra)
  lightning==2.0.1: fails (NotImplementedError: Support for `training_epoch_end` has been removed in v2.0.0. `Regressor` implements this method. You can use the `on_tra)
  lightning==2.0.3: fails (NotImplementedError: Support for `training_epoch_end` has been removed in v2.0.0. `Regressor` implements this method. You can use the `on_tra)
  lightning==2.0.8: fails (NotImplementedError: Support for `training_epoch_end` has been removed in v2.0.0. `Regressor` implements this method. You can use the `on_tra)
  not run (no claim is made for them): 2.0.1.post0, 2.0.2, 2.0.4, 2.0.5, 2.0.6, 2.0.7
Commit the results on both sides: errkb reproduce lightning-training-epoch-end-removed --with lightning==1.9.5 --with lightning==2.0.0 --with lightning==2.0.8
"""
NEEDS = {'packages': {'lightning': '',
              'torch': '==2.13.0+cpu',
              'setuptools': '<80,>=77.0.3',
              'lightning-cloud': '==0.5.37'},
 'cuda_devices': 0,
 'timeout_s': 120}
SOLUTIONS = {1: "on_epoch_end_hooks"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["LightningModule", "torch"], "validationCode": ["model"]}
VALID = {"new-hook": "valid_new_hook", "no-epoch-hook": "valid_no_epoch_hook", "validation-hooks": "valid_validation_hooks"}
WORDINGS = [
    {"text": "Support for `training_epoch_end` has been removed in v2.0.0. `Regressor` implements this method.",
     "source": "lightning==2.0.0", "match": "pattern"},
    {"text": "Support for `training_epoch_end` has been removed in v2.0.0. `SEDWrapper` implements this method.",
     "source": "RetroCirce/HTS-Audio-Transformer#54", "match": "pattern"},
    {"text": "Support for `validation_epoch_end` has been removed in v2.0.0. `RAVE` implements this method.",
     "source": "acids-ircam/RAVE#219", "match": "pattern"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'lightning', 'version': '2.0.8'}

import errkb_record as record

QUIET = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)


def _data():
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    return DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)


def _module(**hooks):
    """A small regression module, with extra methods (the legacy hooks, a validation_step) as given."""
    import torch
    from lightning.pytorch import LightningModule

    def __init__(self):
        LightningModule.__init__(self)
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    methods = {"__init__": __init__, "training_step": training_step, "configure_optimizers": configure_optimizers}
    return type("Regressor", (LightningModule,), {**methods, **hooks})()


def trigger():
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from lightning.pytorch import LightningModule, Trainer


    class Regressor(LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def training_epoch_end(self, outputs):
            self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)


    data = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)
    trainer = Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                      enable_model_summary=False)
    trainer.fit(Regressor(), data)


def on_epoch_end_hooks():
    """Solution 1: on_train_epoch_end with kept outputs logs the mean step loss; the other legacy hooks are refused."""
    import torch
    from lightning.pytorch import Trainer

    def refused(call, hook):
        try:
            call()
        except NotImplementedError as exc:
            assert f"Support for `{hook}` has been removed in v2.0.0" in str(exc), exc
        else:
            raise AssertionError(f"{hook} was accepted")

    def step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    legacy_val = _module(validation_step=step, validation_epoch_end=lambda self, outputs: None)
    refused(lambda: Trainer(max_epochs=1, **QUIET).fit(legacy_val, _data(), _data()), "validation_epoch_end")
    legacy_test = _module(test_step=step, test_epoch_end=lambda self, outputs: None)
    refused(lambda: Trainer(**QUIET).test(legacy_test, _data()), "test_epoch_end")

    seen = []

    def training_step(self, batch, batch_idx):
        loss = step(self, batch, batch_idx)
        self.training_step_outputs.append(loss.detach())
        seen.append(float(loss))
        return loss

    def on_train_epoch_end(self):
        self.log("epoch_loss", torch.stack(self.training_step_outputs).mean())
        self.training_step_outputs.clear()

    model = _module(training_step=training_step, on_train_epoch_end=on_train_epoch_end)
    model.training_step_outputs = []
    trainer = Trainer(max_epochs=1, **QUIET)
    trainer.fit(model, _data())
    assert len(seen) == 2 and model.training_step_outputs == []
    assert abs(float(trainer.callback_metrics["epoch_loss"]) - sum(seen) / 2) < 1e-5


def example_fix():
    import torch
    from lightning.pytorch import LightningModule, Trainer

    names = record.run("exampleFix", {"LightningModule": LightningModule, "torch": torch}, section="after")
    model = names["Regressor"]()
    trainer = Trainer(max_epochs=1, **QUIET)
    trainer.fit(model, _data())
    assert "epoch_loss" in trainer.callback_metrics and model.training_step_outputs == []


def guard():
    legacy = _module(training_epoch_end=lambda self, outputs: None)
    assert not record.check("validationCode", {"model": legacy})
    assert record.check("validationCode", {"model": _module(on_train_epoch_end=lambda self: None)})


def valid_new_hook():
    return {"model": _module(on_train_epoch_end=lambda self: None)}


def valid_no_epoch_hook():
    return {"model": _module()}


def valid_validation_hooks():
    return {"model": _module(validation_step=lambda self, batch, batch_idx: None,
                             on_validation_epoch_end=lambda self: None)}


# What errkb draft --api-change ran (each release in its own environment) and saw.
API_CHANGE = {"library": 'lightning', "last_working": '1.9.5', "first_failing": '2.0.0', "runs": {'1.9.5': 'works', '2.0.0': 'fails', '2.0.1': 'fails', '2.0.3': 'fails', '2.0.8': 'fails'}, "pins": {'setuptools': '<80,>=77.0.3', 'lightning-cloud': '==0.5.37'}}
