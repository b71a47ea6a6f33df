"""An evaluation loop counts correct predictions per batch, (logits.argmax(1) == labels).sum(), stacks the counts into
an int64 tensor and calls .mean() on it. torch.mean has no integer result type to infer, so the meta function of mean
(aten/src/ATen/native/ReduceOps.cpp) refuses any input that is not floating point or complex: "mean(): could not infer
output dtype. Input dtype must be either a floating point or complex dtype. Got: Long". torch 2.13.0 and 2.5.1 raise
it as RuntimeError, 2.15.0 as NotImplementedError (a subclass of RuntimeError); the trigger's result records the class.
Demonstrations, on the trigger's model and batches: casting to a floating dtype first (.float().mean(), or
mean(dtype=torch.float32)) gives the average the Python arithmetic gives, and a boolean tensor (a per-sample
correctness mask) fails the same way ("Got: Bool") and is fixed the same way, an integer dtype= is refused (the
message naming the Optional dtype), and float32 averages integers above 2**24 inexactly where float64 does not
(solution 1); computing an accuracy as
total correct over total samples gives the accuracy over all samples, while the mean of per-batch accuracies differs
when the last batch is smaller (solution 2). The exampleFix runs from the record's text on the trigger's counts.

Drafted by `errkb draft` on torch 2.13.0+cpu, Python 3.11.7: raised at aten/src/ATen/native/ReduceOps.cpp:308 (meta),
commit cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version); 308 is the line the 2.13.0 build reports.
No stored copy of ReduceOps.cpp at that commit was available. The excerpt's text is the check in the mean meta function
as a stored copy of the file writes it (a copy whose repository and commit the store's string search does not name),
numbered so that its TORCH_CHECK stands at the build's line 308; hence "excerpt": "unverified". Other builds report 304
(2.5.1) and 310 (2.15.0, where the raise is a NotImplementedError, so its text there differs from this excerpt).
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "cast_to_float_first", 2: "ratio_of_totals"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["batch_correct"]}
WORDINGS = [
    {"text": "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
     "source": "torch==2.5.1", "match": "pattern"},
    {"text": "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
     "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
     "source": "pyg-team/pytorch_geometric#7735", "match": "matcher"},
    {"text": "RuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Int",
     "source": "pytorch/pytorch#94909", "match": "matcher"},
    {"text": "mean(): input dtype should be either floating point or complex dtypes. Got Long instead.",
     "source": "pytorch/pytorch#76584", "match": "pattern"},
    {"text": "Can only calculate the mean of floating types. Got Long instead.", "source": "pytorch/pytorch#64897",
     "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch
import torch.nn as nn

SIZES = (8, 8, 3)  # the last batch is smaller


def _setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    batches = [(torch.randn(n, 4), torch.randint(0, 3, (n,))) for n in SIZES]
    with torch.no_grad():
        correct = [(model(x).argmax(1) == y) for x, y in batches]
    batch_correct = torch.stack([c.sum() for c in correct])  # int64 counts
    return batches, correct, batch_correct


def _refused(tensor, fragment):
    try:
        tensor.mean()
    except RuntimeError as exc:  # NotImplementedError on newer releases is a RuntimeError too
        assert fragment in str(exc), str(exc)
        return type(exc).__name__
    raise AssertionError(f"mean() accepted a {tensor.dtype} tensor")


def trigger():
    _, _, batch_correct = _setup()
    batch_correct.mean()


def cast_to_float_first():
    """Solution 1: .float().mean() or mean(dtype=torch.float32); the same for a boolean mask."""
    _, correct, batch_correct = _setup()
    counts = batch_correct.tolist()
    expected = sum(counts) / len(counts)
    assert abs(batch_correct.float().mean().item() - expected) < 1e-6
    assert abs(batch_correct.mean(dtype=torch.float32).item() - expected) < 1e-6
    mask = torch.cat(correct)  # bool: one entry per sample
    cls = _refused(mask, "Got: Bool")
    assert abs(mask.float().mean().item() - sum(mask.tolist()) / len(mask)) < 1e-6
    # the dtype= argument must name a floating dtype: an integer one is refused, the message naming it "Optional"
    try:
        batch_correct.mean(dtype=torch.int64)
    except RuntimeError as exc:
        assert "Optional dtype must be either a floating point or complex dtype. Got: Long" in str(exc), str(exc)
    else:
        raise AssertionError("mean(dtype=torch.int64) accepted an integer output dtype")
    # float32 holds integers exactly only up to 2**24: larger counts need float64
    big = torch.full((4,), 2**24 + 1, dtype=torch.int64)
    assert big.float().mean().item() != 2**24 + 1
    assert big.double().mean().item() == 2**24 + 1
    return f"torch {torch.__version__}: {cls} for a bool mask"


def ratio_of_totals():
    """Solution 2: for an accuracy, divide total correct by total samples; a mean of per-batch ratios is biased."""
    batches, correct, batch_correct = _setup()
    total = sum(len(y) for _, y in batches)
    accuracy = batch_correct.sum().item() / total
    assert abs(accuracy - torch.cat(correct).float().mean().item()) < 1e-6
    per_batch = torch.tensor([c.float().mean().item() for c in correct])
    assert abs(per_batch.mean().item() - accuracy) > 1e-3, "expected the unequal last batch to bias the mean of ratios"


def example_fix():
    _, _, batch_correct = _setup()
    names = record.run("exampleFix", {"batch_correct": batch_correct}, section="after")
    counts = batch_correct.tolist()
    assert names["mean_correct"].dtype == torch.float32
    assert abs(names["mean_correct"].item() - sum(counts) / len(counts)) < 1e-6
