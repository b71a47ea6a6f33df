"""torchmetrics before 0.11 kept the legacy classification classes (Accuracy(num_classes=...) without task=, AUROC,
...), which infer the input mode (binary, multi-class, multi-label) from the first update() and store it in
self.mode. Their compute() needs that mode: called before any update (an evaluation hook run on an epoch that saw
no batch, a wrapper's get_metrics() before testing, baal-org/baal#272) Accuracy.compute
(src/torchmetrics/classification/accuracy.py) raises RuntimeError "You have to have determined mode.", right after
the base class has warned that compute was called before update. In torchmetrics 1.x these legacy classes are
gone, and the task-specific classes only warn and return a value computed from empty states
(torchmetrics-compute-before-update). The
reproduction needs a release before 0.11 (it is skipped on the installed 1.x): the trigger calls compute() on a
fresh Accuracy(num_classes=3).
Solution 1 updates the metric with every batch before compute() and checks the value equals the functional
accuracy; solution 2 computes only a metric that was updated (its update count), skipping an empty epoch. The
record's exampleFix and validationCode run from its text.
Results: errkb reproduce torchmetrics-mode-not-determined --with torchmetrics==0.9.3 --with torchmetrics==0.10.0
--with torchmetrics==0.10.3 (environments pin setuptools<80: these releases import pkg_resources). The excerpt
(L613-621) is src/torchmetrics/classification/accuracy.py at tag v0.10.3 (2a055f5594a6) of Lightning-AI/torchmetrics
(stored mirror); the raise is line 617 at v0.10.0 and torchmetrics/classification/accuracy.py:266 at v0.9.3.
Written by hand (errkb draft runs the installed torchmetrics 1.9.0, which no longer has this error), from the
stored tags and the results.
"""
NEEDS = {'packages': {'torchmetrics': '<0.11', 'torch': '==2.13.0+cpu', 'setuptools': '<80', 'numpy': ''},
         'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "update_before_compute", 2: "compute_only_updated"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["accuracy", "batches"], "validationCode": ["metric"]}
KEEP = ["accuracy"]
VALID = {"updated": "valid_updated", "forward": "valid_forward", "reset-then-updated": "valid_reset_then_updated",
         "metric-collection": "valid_metric_collection"}
WORDINGS = [
    {'text': "You have to have determined mode.", 'source': 'torchmetrics==0.10.3', 'match': 'pattern'},
    {'text': "You have to have determined mode.", 'source': 'baal-org/baal#272', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'Lightning-AI/torchmetrics',
              'commit': '2a055f5594a624685e26ba64bf20ab0d12225c86',
              'path': 'src/torchmetrics/classification/accuracy.py', 'line': 616, 'offset': 0}

import warnings

import errkb_record as record

import torch


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(6, 3).softmax(dim=1), torch.randint(0, 3, (6,))) for _ in range(3)]


def _accuracy():
    from torchmetrics import Accuracy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0.10 warns that the task-less form is deprecated
        return Accuracy(num_classes=3)


def _expected(batches):
    preds = torch.cat([p for p, _ in batches]).argmax(dim=1)
    target = torch.cat([t for _, t in batches])
    return (preds == target).float().mean()


def trigger():
    accuracy = _accuracy()
    accuracy.compute()


def update_before_compute():
    """Solution 1: update (or call) the metric with each batch, then compute(), then reset()."""
    batches = _batches()
    accuracy = _accuracy()
    for preds, target in batches:
        accuracy.update(preds, target)
    assert torch.allclose(accuracy.compute(), _expected(batches))
    accuracy.reset()
    for preds, target in batches:
        accuracy(preds, target)
    assert torch.allclose(accuracy.compute(), _expected(batches))


def compute_only_updated():
    """Solution 2: an epoch that saw no batch skips compute(); the next one computes."""
    def epoch_end(metric, logged):
        if metric._update_count > 0:
            logged["acc"] = metric.compute()
        metric.reset()

    accuracy = _accuracy()
    logged = {}
    epoch_end(accuracy, logged)
    assert logged == {}
    batches = _batches()
    for preds, target in batches:
        accuracy.update(preds, target)
    epoch_end(accuracy, logged)
    assert torch.allclose(logged["acc"], _expected(batches))


def example_fix():
    accuracy = _accuracy()
    batches = _batches()
    names = record.run("exampleFix", {"accuracy": accuracy, "batches": batches}, section="after")
    assert torch.allclose(names["value"], _expected(batches))


def guard():
    assert not record.check("validationCode", {"metric": _accuracy()})
    metric = _accuracy()
    preds, target = _batches()[0]
    metric.update(preds, target)
    assert record.check("validationCode", {"metric": metric})
    from torchmetrics import MetricCollection

    collection = MetricCollection([_accuracy()])
    assert not record.check("validationCode", {"metric": collection})  # compute() would raise for its Accuracy
    collection.update(preds, target)
    assert record.check("validationCode", {"metric": collection})


def _valid(metric):
    metric.compute()  # torchmetrics computes it without the error
    return {"metric": metric}


def valid_updated():
    metric = _accuracy()
    for preds, target in _batches():
        metric.update(preds, target)
    return _valid(metric)


def valid_forward():
    metric = _accuracy()
    preds, target = _batches()[0]
    metric(preds, target)
    return _valid(metric)


def valid_reset_then_updated():
    metric = _accuracy()
    preds, target = _batches()[0]
    metric.update(preds, target)
    metric.compute()
    metric.reset()
    metric.update(preds, target)
    return _valid(metric)


def valid_metric_collection():
    """A MetricCollection holding the Accuracy (it has no _update_count itself), fed by update() or forward."""
    from torchmetrics import MetricCollection

    updated, called = MetricCollection([_accuracy()]), MetricCollection([_accuracy()])
    for preds, target in _batches():
        updated.update(preds, target)
        called(preds, target)
    return [_valid(updated), _valid(called)]
