"""A torchmetrics Metric accumulates state in update() (or forward) and turns it into a value in compute(). When
compute() runs while the metric has not been updated since it was created or last reset, Metric._wrap_compute
(torchmetrics/metric.py) warns through rank_zero_warn, whose _warn helper calls warnings.warn
(torchmetrics/utilities/prints.py, the warning's innermost library frame): UserWarning "The ``compute`` method of
metric BinaryAccuracy was called before the ``update`` method which may lead to errors, as metric states have not
yet been updated." The value returned is computed from the initial states (tensor(0.) for BinaryAccuracy). The
trigger calls compute() on a fresh BinaryAccuracy, as an epoch-end hook does when its metric was never fed
(updated in another stage's step, or reset before compute).
Solution 1 updates the metric with every batch (update() and the forward call) before compute(), with no warning and
the value equal to the functional binary_accuracy over all batches, and shows reset() before compute() warns again.
Solution 2 checks metric.update_called in the epoch-end code and skips compute() when an epoch saw no batch, and for a
MetricCollection (which has no update_called) checks its members. The record's exampleFix and validationCode run from
its text; the guard looks at every metric whose compute() carries the check (a collection's members, the metrics a
wrapper or a composition holds, a tracker's current metric), and VALID covers those containers.
Results: errkb reproduce torchmetrics-compute-before-update (torchmetrics 1.9.0) --with torchmetrics==1.0.3 --with
torchmetrics==1.5.2. The excerpt (L38-57) is from src/torchmetrics/utilities/prints.py at tag v1.9.0 (700261d3683b)
of Lightning-AI/torchmetrics, byte-identical (git hash-object) to the installed file; PROVENANCE names the upstream
copy because the repository path has the src/ prefix the installed package lacks. In the stored tags the
warnings.warn line is 43 in v1.5.2 and 42 in v1.0.3.

Drafted by `errkb draft` from tm_warn_err.py (the snippet turned UserWarning into an error so that the draft could
capture it; the reproduction's trigger only emits the warning) on torchmetrics 1.9.0, Python 3.11.7:
  UserWarning: The ``compute`` method of metric BinaryAccuracy was called before the ``update`` method which may lead to errors, as metric states have not yet been updated.
  raised at torchmetrics/utilities/prints.py:43
The draft said the commit was unresolved (no VCS metadata in the wheel); found and checked by hand as above.
"""
NEEDS = {'packages': {'torchmetrics': '>=1.0', 'torch': '>=2.5'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "update_before_compute", 2: "skip_when_not_updated"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["accuracy", "batches"], "validationCode": ["metric"]}
KEEP = ["accuracy"]
VALID = {"updated": "valid_updated", "forward": "valid_forward", "reset-then-updated": "valid_reset_then_updated",
         "aggregation": "valid_aggregation", "metric-collection": "valid_metric_collection",
         "tracker": "valid_tracker", "wrapper-and-composition": "valid_wrapper_and_composition"}
WORDINGS = [
    {'text': "The ``compute`` method of metric BinaryAccuracy was called before the ``update`` method which may lead "
             "to errors, as metric states have not yet been updated.", 'source': 'torchmetrics==1.9.0',
     'match': 'pattern'},
    {'text': "The ``compute`` method of metric AUROC was called before the ``update`` method which may lead to "
             "errors, as metric states have not yet been updated.", 'source': 'pytorch-lifestream/pytorch-lifestream#151',
     'match': 'pattern'},
    {'text': "The ``compute`` method of metric SumExceptBatchMetric was called before the ``update`` method which may "
             "lead to errors, as metric states have not yet been updated.", 'source': 'cvignac/DiGress#81',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'Lightning-AI/torchmetrics',
              'commit': '700261d3683ba77517e9650043f62a8313027437', 'path': 'src/torchmetrics/utilities/prints.py',
              'line': 43, 'offset': 0}

import warnings

import errkb_record as record

import torch

WARNING_TEXT = "was called before the ``update`` method"


def _batches():
    torch.manual_seed(0)
    return [(torch.rand(6), torch.randint(0, 2, (6,))) for _ in range(3)]


def _quiet(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    assert not [w for w in caught if WARNING_TEXT in str(w.message)], [str(w.message) for w in caught]
    return out


def _warns(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert [w for w in caught if WARNING_TEXT in str(w.message)], "no warning"


def _expected(batches):
    from torchmetrics.functional.classification import binary_accuracy

    return binary_accuracy(torch.cat([p for p, _ in batches]), torch.cat([t for _, t in batches]))


def trigger():
    from torchmetrics.classification import BinaryAccuracy

    accuracy = BinaryAccuracy()
    value = accuracy.compute()
    assert float(value) == 0.0, value  # computed from the initial states


def update_before_compute():
    """Solution 1: update (or call) the metric with each batch before compute(); reset() only after compute()."""
    from torchmetrics.classification import BinaryAccuracy

    batches = _batches()
    accuracy = BinaryAccuracy()
    for preds, target in batches:
        accuracy.update(preds, target)
    assert torch.equal(_quiet(accuracy.compute), _expected(batches))
    accuracy.reset()
    _warns(accuracy.compute)  # reset before compute: the state is empty again
    for preds, target in batches:
        accuracy(preds, target)  # forward updates too
    assert torch.equal(_quiet(accuracy.compute), _expected(batches))


def skip_when_not_updated():
    """Solution 2: in epoch-end code, compute only a metric that saw a batch this epoch (metric.update_called)."""
    from torchmetrics.classification import BinaryAccuracy

    def epoch_end(metric, logged):
        if metric.update_called:
            logged["acc"] = metric.compute()
        metric.reset()

    accuracy = BinaryAccuracy()
    logged = {}
    _quiet(lambda: epoch_end(accuracy, logged))  # an epoch without batches
    assert logged == {}
    batches = _batches()
    for preds, target in batches:
        accuracy.update(preds, target)
    _quiet(lambda: epoch_end(accuracy, logged))
    assert torch.equal(logged["acc"], _expected(batches))

    from torchmetrics import MetricCollection
    from torchmetrics.classification import BinaryPrecision

    def collection_end(collection, logged):
        if all(m.update_called for m in collection.values()):
            logged.update(collection.compute())
        collection.reset()

    collection = MetricCollection([BinaryAccuracy(), BinaryPrecision()])
    assert not hasattr(collection, "update_called")  # the single-metric test does not apply to a collection
    logged = {}
    _quiet(lambda: collection_end(collection, logged))  # an epoch without batches
    assert logged == {}
    for preds, target in batches:
        collection.update(preds, target)
    _quiet(lambda: collection_end(collection, logged))
    assert torch.equal(logged["BinaryAccuracy"], _expected(batches)), logged


def example_fix():
    from torchmetrics.classification import BinaryAccuracy

    accuracy = BinaryAccuracy()
    batches = _batches()
    names = _quiet(lambda: record.run("exampleFix", {"accuracy": accuracy, "batches": batches}, section="after"))
    assert torch.equal(names["value"], _expected(batches))


def guard():
    from torchmetrics.classification import BinaryAccuracy

    assert not record.check("validationCode", {"metric": BinaryAccuracy()})
    metric = BinaryAccuracy()
    preds, target = _batches()[0]
    metric.update(preds, target)
    assert record.check("validationCode", {"metric": metric})
    from torchmetrics import MetricCollection

    collection = MetricCollection([BinaryAccuracy()])
    assert not record.check("validationCode", {"metric": collection})
    collection.update(preds, target)
    assert record.check("validationCode", {"metric": collection})


def _valid(metric):
    _quiet(metric.compute)  # compute() runs without the warning
    return {"metric": metric}


def valid_updated():
    from torchmetrics.classification import BinaryAccuracy, BinaryAUROC

    situations = []
    for cls in (BinaryAccuracy, BinaryAUROC):
        metric = cls()
        for preds, target in _batches():
            metric.update(preds, target)
        situations.append(_valid(metric))
    return situations


def valid_forward():
    from torchmetrics.classification import BinaryAccuracy

    metric = BinaryAccuracy()
    preds, target = _batches()[0]
    metric(preds, target)
    return _valid(metric)


def valid_reset_then_updated():
    from torchmetrics.classification import BinaryAccuracy

    metric = BinaryAccuracy()
    preds, target = _batches()[0]
    metric.update(preds, target)
    metric.compute()
    metric.reset()
    metric.update(preds, target)
    return _valid(metric)


def valid_aggregation():
    from torchmetrics import MeanMetric, SumMetric

    mean, total = MeanMetric(), SumMetric()
    mean.update(torch.tensor(2.0))
    total.update(torch.tensor([1.0, 2.0]))
    return [_valid(mean), _valid(total)]


def valid_metric_collection():
    """MetricCollections, with compute groups (accuracy/precision/recall share states), fed by update() or forward."""
    from torchmetrics import MetricCollection
    from torchmetrics.classification import BinaryAccuracy, BinaryAUROC, BinaryPrecision, BinaryRecall

    updated = MetricCollection([BinaryAccuracy(), BinaryPrecision(), BinaryRecall(), BinaryAUROC()])
    called = MetricCollection([BinaryAccuracy(), BinaryPrecision()])
    for preds, target in _batches():
        updated.update(preds, target)
        called(preds, target)
    return [_valid(updated), _valid(called)]


def valid_tracker():
    """A MetricTracker over two epochs: it holds a never-updated template, and computes its current metric."""
    from torchmetrics.classification import BinaryAccuracy
    from torchmetrics.wrappers import MetricTracker

    tracker = MetricTracker(BinaryAccuracy())
    for _ in range(2):
        tracker.increment()
        for preds, target in _batches():
            tracker.update(preds, target)
    return _valid(tracker)


def valid_wrapper_and_composition():
    """A composition (acc_a + acc_b, members fed directly), a BootStrapper and a ClasswiseWrapper."""
    from torchmetrics.classification import BinaryAccuracy, MulticlassAccuracy
    from torchmetrics.wrappers import BootStrapper, ClasswiseWrapper

    acc_a, acc_b = BinaryAccuracy(), BinaryAccuracy()
    total = acc_a + acc_b
    boot = BootStrapper(BinaryAccuracy(), num_bootstraps=3)
    classwise = ClasswiseWrapper(MulticlassAccuracy(num_classes=3, average=None))
    for preds, target in _batches():
        acc_a.update(preds, target)
        acc_b.update(preds, target)
        boot.update(preds, target)
    classwise.update(torch.randn(6, 3), torch.randint(0, 3, (6,)))
    return [_valid(total), _valid(boot), _valid(classwise)]
