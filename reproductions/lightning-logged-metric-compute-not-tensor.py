"""self.log(name, metric) with a torchmetrics Metric object leaves the reduction to Lightning: at the end of the epoch
the logger connector calls metric.compute() and requires a Tensor back (_ResultCollection._get_cache in
lightning/pytorch/trainer/connectors/logger_connector/result.py). Curve metrics return a tuple of tensors
(BinaryROC: fpr, tpr, thresholds), so Lightning raises ValueError "The `.compute()` return of the metric logged as
'val_roc' must be a tensor. Found (tensor([...]), ...)". The trigger validates a small classifier that updates a
BinaryROC in validation_step and logs the metric object.
Solution 1 logs BinaryAUROC (a scalar tensor) instead and checks the logged value equals the functional AUROC over
all batches. Solution 2 keeps BinaryROC out of self.log: it is updated in the step, computed in
on_validation_epoch_end, a scalar derived from the curve (the true-positive rate at a false-positive rate of at
most 0.5) is logged, and the metric is reset. The record's exampleFix and validationCode run from its text.
Results: errkb reproduce lightning-logged-metric-compute-not-tensor (lightning 2.6.6, torchmetrics 1.9.0) --with
lightning==2.4.0 --with lightning==2.5.6. The excerpt (L438-451) is from
src/lightning/pytorch/trainer/connectors/logger_connector/result.py at tag 2.6.5 (be98784a1a03) of
Lightning-AI/lightning (stored under its current name, Lightning-AI/pytorch-lightning; the record uses the name every
release's metadata gives, lightning 2.4.0's names no other), byte-identical (git hash-object) to the installed 2.6.6 file (the stored mirror has
no 2.6.6 tag; PROVENANCE names the upstream copy because the repository path has the src/ prefix the installed
package lacks); the raise is at line 444 in 2.4.0 and 447 in 2.5.6 (results).

Drafted by `errkb draft` from pl_metric.py on lightning 2.6.6, Python 3.11.7:
  ValueError: The `.compute()` return of the metric logged as 'val_roc' must be a tensor. Found (tensor([...]), ...)
  raised at lightning/pytorch/trainer/connectors/logger_connector/result.py:446
The draft said the commit was unresolved (no VCS metadata in the wheel); found and checked by hand as above.
"""
NEEDS = {'packages': {'lightning': '>=2.4', 'torch': '==2.13.0+cpu', 'torchmetrics': '>=1.0'}, 'cuda_devices': 0,
         'timeout_s': 120}
SOLUTIONS = {1: "log_scalar_metric", 2: "compute_curve_yourself"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["self", "preds", "y"], "validationCode": ["metric"]}
KEEP = ["self"]
VALID = {"auroc": "valid_auroc", "accuracy": "valid_accuracy", "mean": "valid_mean", "mse": "valid_mse"}
WORDINGS = [
    {'text': "The `.compute()` return of the metric logged as 'val_roc' must be a tensor.",
     'source': 'lightning==2.6.6', 'match': 'pattern'},
    {'text': "The `.compute()` return of the metric logged as 'pixel_BinaryROC' must be a tensor.",
     'source': 'open-edge-platform/anomalib#1460', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'Lightning-AI/lightning',
              'commit': 'be98784a1a03581b7051a355ae1084fd352d7cea',
              'path': 'src/lightning/pytorch/trainer/connectors/logger_connector/result.py', 'line': 446, 'offset': 0}

import errkb_record as record

import torch
from torch.utils.data import DataLoader, TensorDataset

QUIET = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)


def _data():
    torch.manual_seed(0)
    x = torch.randn(8, 4)
    y = torch.tensor([0, 1, 1, 0, 1, 0, 1, 1])
    return x, y, DataLoader(TensorDataset(x, y), batch_size=4)


def _classifier(step, epoch_end=None, metric_factory=None):
    from lightning.pytorch import LightningModule

    class Classifier(LightningModule):
        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.layer = torch.nn.Linear(4, 1)
            if metric_factory is not None:
                self.metric = metric_factory()

        def validation_step(self, batch, batch_idx):
            x, y = batch
            step(self, torch.sigmoid(self.layer(x)).squeeze(1), y)

    if epoch_end is not None:
        Classifier.on_validation_epoch_end = epoch_end
    return Classifier()


def _validate(model, loader):
    from lightning.pytorch import Trainer

    trainer = Trainer(**QUIET)
    trainer.validate(model, loader, verbose=False)
    return trainer.callback_metrics


def _all_preds(model, x):
    with torch.no_grad():
        return torch.sigmoid(model.layer(x)).squeeze(1)


def trigger():
    from torchmetrics.classification import BinaryROC

    def step(self, preds, y):
        self.metric.update(preds, y)
        self.log("val_roc", self.metric)

    _, _, loader = _data()
    _validate(_classifier(step, metric_factory=BinaryROC), loader)


def log_scalar_metric():
    """Solution 1: log a metric whose compute() is a scalar tensor (BinaryAUROC for the ROC curve)."""
    from torchmetrics.classification import BinaryAUROC
    from torchmetrics.functional.classification import binary_auroc

    def step(self, preds, y):
        self.metric.update(preds, y)
        self.log("val_auroc", self.metric)

    x, y, loader = _data()
    model = _classifier(step, metric_factory=BinaryAUROC)
    logged = _validate(model, loader)["val_auroc"]
    assert torch.allclose(logged, binary_auroc(_all_preds(model, x), y)), logged


def _tpr_at_fpr(fpr, tpr, max_fpr):
    return tpr[fpr <= max_fpr].max()


def compute_curve_yourself():
    """Solution 2: keep the curve out of self.log; compute it at epoch end, log a scalar from it, reset."""
    from torchmetrics.classification import BinaryROC
    from torchmetrics.functional.classification import binary_roc

    def step(self, preds, y):
        self.metric.update(preds, y)

    def epoch_end(self):
        fpr, tpr, _ = self.metric.compute()
        self.log("val_tpr_at_fpr_0.5", _tpr_at_fpr(fpr, tpr, 0.5))
        self.metric.reset()

    x, y, loader = _data()
    model = _classifier(step, epoch_end, metric_factory=BinaryROC)
    logged = _validate(model, loader)["val_tpr_at_fpr_0.5"]
    fpr, tpr, _ = binary_roc(_all_preds(model, x), y)
    assert torch.allclose(logged, _tpr_at_fpr(fpr, tpr, 0.5)), logged
    assert model.metric.update_count == 0, "the metric was not reset"


def example_fix():
    from torchmetrics.classification import BinaryAUROC
    from torchmetrics.functional.classification import binary_auroc

    def step(self, preds, y):
        record.run("exampleFix", {"self": self, "preds": preds, "y": y}, section="after")

    x, y, loader = _data()
    model = _classifier(step)
    logged = _validate(model, loader)["val_auroc"]
    assert isinstance(model.val_auroc, BinaryAUROC)
    assert torch.allclose(logged, binary_auroc(_all_preds(model, x), y)), logged


def _updated(metric_cls, *args, **kwargs):
    metric = metric_cls(*args, **kwargs)
    x, y, _ = _data()
    metric.update(torch.sigmoid(x[:, 0]), y)
    return metric


def guard():
    from torchmetrics.classification import BinaryAUROC, BinaryROC

    assert not record.check("validationCode", {"metric": _updated(BinaryROC)})
    roc = _updated(BinaryROC)
    assert record.check("validationCode", {"metric": _updated(BinaryAUROC)})
    record.check("validationCode", {"metric": roc})
    assert roc.update_count == 1 and roc._computed is None, "the guard changed the user's metric"


def _logs(factory, name, float_target=False):
    """Lightning logs this metric object without the error: proof the situation is valid."""
    def step(self, preds, y):
        self.metric.update(preds, y.float() if float_target else y)
        self.log(name, self.metric)

    _, _, loader = _data()
    assert name in _validate(_classifier(step, metric_factory=factory), loader)
    metric = factory()
    x, y, _ = _data()
    metric.update(torch.sigmoid(x[:, 0]), y.float() if float_target else y)
    return {"metric": metric}


def valid_auroc():
    from torchmetrics.classification import BinaryAUROC

    return _logs(BinaryAUROC, "auroc")


def valid_accuracy():
    from torchmetrics.classification import BinaryAccuracy

    return _logs(BinaryAccuracy, "accuracy")


def valid_mean():
    from torchmetrics import MeanMetric

    class Mean(MeanMetric):
        def update(self, preds, target=None):
            super().update(preds)

    return _logs(Mean, "mean", float_target=True)


def valid_mse():
    from torchmetrics import MeanSquaredError

    return _logs(MeanSquaredError, "mse", float_target=True)
