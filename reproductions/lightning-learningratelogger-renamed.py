"""PyTorch Lightning 0.10.0 renamed the learning-rate logging callback LearningRateLogger to LearningRateMonitor
(CHANGELOG 0.10.0, #3251), keeping LearningRateLogger as a deprecated subclass in callbacks/lr_logger.py that warned
"`LearningRateLogger` is now `LearningRateMonitor`" (tag 0.10.0); 1.0.0 removed the deprecated callbacks (CHANGELOG
1.0.0, #3979: at tag 1.0.0 pytorch_lightning/callbacks/__init__.py exports LearningRateMonitor only). Code and
templates from the 0.7 to 0.10 era still write `from pytorch_lightning.callbacks import LearningRateLogger`; on any
release from 1.0.0 on, Python raises ImportError "cannot import name 'LearningRateLogger' from
'pytorch_lightning.callbacks' (.../pytorch_lightning/callbacks/__init__.py)" in that line. No frame of Lightning is on
the stack: the raise site is the package that lacks the name, pytorch_lightning/callbacks/__init__.py.

The trigger is that import, run for real against the installed pytorch-lightning. Solution 1 is the rename: the
stage shows LearningRateLogger is absent from the callbacks package, then trains a tiny LightningModule for four
steps with LearningRateMonitor(logging_interval="step") and a CSVLogger, and reads the learning rates the callback
logged back from metrics.csv (0.1, then 0.05 after a StepLR halves it). The exampleFix runs from its text: its
LearningRateMonitor() keeps the old call's (empty) arguments, and with logging_interval=None it logs the same four
values at the step-interval scheduler's steps.

New side only: releases before 1.0.0 (2020) predate torch 2 and Python 3.11 (the catalog's other lightning records
found 1.3.8 and older not installable here), so no old-side result is claimed; the old side is cited from tag 0.10.0.
Results: errkb reproduce lightning-learningratelogger-renamed (pytorch-lightning 2.6.6 installed)
--with pytorch-lightning==1.9.5,setuptools==79.0.1 --with pytorch-lightning==2.0.8,setuptools==79.0.1 (verified).
Written by hand (errkb draft refuses a snippet with no library frame), from records/lightning-module-available-removed.json.
Excerpt: src/pytorch_lightning/callbacks/__init__.py at tag 1.9.5 (a020506a81a6) of Lightning-AI/lightning (mirror of
Lightning-AI/pytorch-lightning), byte-identical (cmp) to the pytorch_lightning/callbacks/__init__.py that
pytorch-lightning 1.9.5 installs. From 2.0 the package is built from src/lightning/pytorch with its imports renamed,
so later releases have no file at that path upstream; the harness matches the installed module by its
package-relative path, pytorch_lightning/callbacks/__init__.py (a suffix of filePath). What 2.0.8 and 2.6.6 install
there is src/lightning/pytorch/callbacks/__init__.py at tags 2.0.8 (8345689f1cd3) and 2.6.5 (be98784a1a03; the
mirror has no 2.6.6 tag) with lightning.pytorch -> pytorch_lightning and lightning.fabric -> lightning_fabric
(diff: identical); line 23 imports LearningRateMonitor there too, and the record's prose says the other lines differ.
The callbacks package exports LearningRateLogger from tag 0.7.6 (not at 0.7.0 to 0.7.5) to 0.10.0.
"""
NEEDS = {"packages": {"pytorch-lightning": ">=1.0", "torch": "==2.13.0+cpu"}, "cuda_devices": 0, "timeout_s": 150}
SOLUTIONS = {1: "learning_rate_monitor"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {"text": "cannot import name 'LearningRateLogger' from 'pytorch_lightning.callbacks'", "source": "pytorch-lightning==1.9.5",
     "match": "pattern"},
    {"text": "cannot import name 'LearningRateLogger' from 'pytorch_lightning.callbacks'", "source": "pytorch-lightning==2.6.6",
     "match": "pattern"},
    {"text": "ImportError: cannot import name 'LearningRateLogger' from 'pytorch_lightning.callbacks' (/usr/local/lib/python3.7/dist-packages/pytorch_lightning/callbacks/__init__.py)",
     "source": "Lightning-AI/pytorch-lightning#6418", "match": "matcher"},
    {"text": "ImportError: cannot import name 'LearningRateLogger' from 'pytorch_lightning.callbacks' (/shared/raimis/opt/miniconda/envs/torchmd_cg/lib/python3.7/site-packages/pytorch_lightning/callbacks/__init__.py)",
     "source": "torchmd/torchmd-cg#10", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "Lightning-AI/lightning",
              "commit": "a020506a81a671e380872aa5e435647b549e14e6",
              "path": "src/pytorch_lightning/callbacks/__init__.py", "line": 23, "offset": 0}

import csv
import glob
import os
import tempfile

import errkb_record as record


def trigger():
    from pytorch_lightning.callbacks import LearningRateLogger


def _fit_and_read_lrs(callback):
    """Four training steps of a tiny model with `callback` and a CSVLogger; the logged lr-SGD values."""
    import pytorch_lightning as pl
    import torch
    from pytorch_lightning.loggers import CSVLogger
    from torch.utils.data import DataLoader, TensorDataset

    class Tiny(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    torch.manual_seed(0)
    folder = tempfile.mkdtemp()
    data = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=4)
    trainer = pl.Trainer(max_epochs=1, logger=CSVLogger(folder), callbacks=[callback], log_every_n_steps=1,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         accelerator="cpu", devices=1)
    trainer.fit(Tiny(), data)
    (metrics,) = glob.glob(os.path.join(folder, "**", "metrics.csv"), recursive=True)
    with open(metrics) as f:
        rows = list(csv.DictReader(f))
    return [float(row["lr-SGD"]) for row in rows if row.get("lr-SGD")]


def learning_rate_monitor():
    """Solution 1: LearningRateMonitor, the same callback under its current name."""
    import pytorch_lightning.callbacks as callbacks

    assert not hasattr(callbacks, "LearningRateLogger")
    lrs = _fit_and_read_lrs(callbacks.LearningRateMonitor(logging_interval="step"))
    assert lrs == [0.1, 0.1, 0.05, 0.05], lrs
    _needs_a_logger(callbacks.LearningRateMonitor)


def _needs_a_logger(monitor_class):
    """Without a logger on the Trainer the callback refuses to run (what the record says)."""
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    class Tiny(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).pow(2).mean()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = pl.Trainer(max_steps=1, logger=False, callbacks=[monitor_class()], enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, accelerator="cpu", devices=1)
    try:
        trainer.fit(Tiny(), DataLoader(TensorDataset(torch.randn(4, 4)), batch_size=4))
    except Exception as exc:  # MisconfigurationException
        assert "logger" in str(exc), exc
    else:
        raise AssertionError("LearningRateMonitor ran without a logger")


def example_fix():
    names = record.run("exampleFix", {}, section="after")
    from pytorch_lightning.callbacks import LearningRateMonitor

    assert isinstance(names["lr_monitor"], LearningRateMonitor)
    assert names["lr_monitor"].logging_interval is None  # the default: each scheduler's own interval
    assert _fit_and_read_lrs(names["lr_monitor"]) == [0.1, 0.1, 0.05, 0.05]
