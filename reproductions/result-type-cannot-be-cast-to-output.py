"""A hand-written exponential moving average (EMA) of a model walks its state_dict and updates every entry in
place: ema_value.mul_(decay).add_(model_value, alpha=1 - decay). The model has a BatchNorm layer, whose state_dict
holds num_batches_tracked, an int64 (Long) counter. mul_ by 0.99 on it computes a Float result that an in-place
operation would have to store back into the Long tensor; TensorIterator's safe-casting check (compute_types in
aten/src/ATen/TensorIterator.cpp) refuses and raises "result type Float can't be cast to the desired output type
Long". The demonstrations update only floating-point entries and copy the integer ones; turn an integer tensor
that must hold a fraction into a float tensor first, out of place (a class-count histogram normalised with /=
raises the same error first); and keep an integer tensor integer with an explicit rounding mode (also for out=) or
an integer clamp_ bound (a float tensor bound raises the 'long int' wording). The record's
exampleFix and validationCode run from its own text; the guard passes every dtype pair add_ accepts.
"""
NEEDS = {"packages": {"torch": ">=2.5", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "floating_entries_only", 2: "float_out_of_place", 3: "integer_rounding_mode"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["ema", "model_state", "decay"], "validationCode": ["torch", "target", "update"]}
KEEP = ["ema"]
VALID = {
    "float-weights": "valid_float_weights",
    "integer-with-integer": "valid_integer_with_integer",
    "float-target-integer-update": "valid_float_target_integer_update",
    "generated-dtype-pairs": "valid_generated",
}
WORDINGS = [
    {"text": "result type Float can't be cast to the desired output type Long", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "result type Float can't be cast to the desired output type Long", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "result type Float can't be cast to the desired output type Long", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "RuntimeError: result type Float can't be cast to the desired output type long int",
     "source": "cv516Buaa/tph-yolov5#48", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import copy

import errkb_record as record
from hypothesis import strategies as st

import torch

DECAY = 0.99


def _models():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2))
    ema = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):  # a few steps, so the model differs from its copy and BatchNorm counts batches
        loss = model(torch.randn(16, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, ema


def _check_ema(model, ema, before):
    """Every float entry moved 1% of the way to the model; the integer counter was copied."""
    model_state, ema_state = model.state_dict(), ema.state_dict()
    for name, value in ema_state.items():
        if value.is_floating_point():
            expected = before[name] * DECAY + model_state[name] * (1 - DECAY)
            assert torch.allclose(value, expected, atol=1e-6), name
        else:
            assert torch.equal(value, model_state[name]), name
    assert not torch.equal(ema_state["0.weight"], before["0.weight"])
    assert ema_state["1.num_batches_tracked"].dtype == torch.int64
    assert ema_state["1.num_batches_tracked"].item() == 3


def trigger():
    model, ema = _models()
    model_state = model.state_dict()
    with torch.no_grad():
        for name, ema_value in ema.state_dict().items():
            ema_value.mul_(DECAY).add_(model_state[name], alpha=1 - DECAY)  # fails on num_batches_tracked


def floating_entries_only():
    """Solution 1: average only floating-point entries; copy integer buffers such as num_batches_tracked."""
    model, ema = _models()
    before = {k: v.clone() for k, v in ema.state_dict().items()}
    model_state = model.state_dict()
    with torch.no_grad():
        for name, ema_value in ema.state_dict().items():
            if ema_value.is_floating_point():
                ema_value.mul_(DECAY).add_(model_state[name], alpha=1 - DECAY)
            else:
                ema_value.copy_(model_state[name])
    _check_ema(model, ema, before)


def _class_counts():
    return torch.bincount(torch.tensor([0, 1, 1, 2, 2, 2, 2, 0]), minlength=3)  # int64


def float_out_of_place():
    """Solution 2: an integer tensor that must hold fractions becomes a new float tensor, out of place."""
    counts = _class_counts()
    try:
        counts /= counts.sum()  # the same error, from an integer histogram normalised in place
    except RuntimeError as error:
        assert "result type Float can't be cast to the desired output type Long" in str(error), str(error)
    else:
        raise AssertionError("normalising an int64 tensor in place was expected to fail")
    freqs = counts.float() / counts.sum()
    assert freqs.dtype == torch.float32
    assert torch.allclose(freqs, torch.tensor([0.25, 0.25, 0.5]))


def integer_rounding_mode():
    """Solution 3: to keep an integer tensor integer, say how to round: div_(..., rounding_mode="floor")."""
    counts = _class_counts()
    try:
        counts.div_(2)  # true division: a Float result
    except RuntimeError as error:
        assert "result type Float can't be cast to the desired output type Long" in str(error), str(error)
    else:
        raise AssertionError("true division in place on int64 was expected to fail")
    counts.div_(2, rounding_mode="floor")
    assert counts.dtype == torch.int64 and counts.tolist() == [1, 1, 2]
    # clamp_ of integer grid indices with a float tensor bound (YOLOv5's build_targets): an integer bound works
    gj, gain = torch.tensor([0, 5, 9]), torch.tensor([1.0, 1.0, 8.0, 8.0])
    try:
        gj.clamp_(0, gain[3] - 1)
    except RuntimeError as error:
        assert "result type Float can't be cast to the desired output type long int" in str(error), str(error)
    else:
        raise AssertionError("clamp_ of int64 with a float tensor bound was expected to fail")
    gj.clamp_(0, int(gain[3]) - 1)
    assert gj.dtype == torch.int64 and gj.tolist() == [0, 5, 7]
    out = torch.zeros(3, dtype=torch.int64)  # out= follows the same rule as in-place
    try:
        torch.div(torch.tensor([1, 2, 3]), 2, out=out)
    except RuntimeError as error:
        assert "result type Float can't be cast to the desired output type Long" in str(error), str(error)
    else:
        raise AssertionError("true division into an int64 out= was expected to fail")
    torch.div(torch.tensor([1, 2, 3]), 2, rounding_mode="floor", out=out)
    assert out.tolist() == [0, 1, 1]


def example_fix():
    """The record's exampleFix, its "after" part, updates the user's EMA model in place."""
    model, ema = _models()
    before = {k: v.clone() for k, v in ema.state_dict().items()}
    with torch.no_grad():
        names = record.run("exampleFix", {"ema": ema, "model_state": model.state_dict(), "decay": DECAY},
                           section="after")
    assert names["ema"] is ema
    _check_ema(model, ema, before)


def guard():
    """validationCode flags num_batches_tracked *= 0.99 and passes a float weight."""
    model, ema = _models()
    state = ema.state_dict()
    assert not record.check("validationCode", {"torch": torch, "target": state["1.num_batches_tracked"], "update": DECAY})
    assert record.check("validationCode", {"torch": torch, "target": state["0.weight"], "update": DECAY})


def _accepted(target, update):
    """A valid situation is one an in-place add_ accepts."""
    target.clone().add_(update)
    return {"torch": torch, "target": target, "update": update}


def valid_float_weights():
    model, _ = _models()
    weight = model.state_dict()["0.weight"]
    return [_accepted(weight, DECAY), _accepted(weight, weight), _accepted(weight.half(), 0.5),
            _accepted(weight.double(), weight)]


def valid_integer_with_integer():
    counter = torch.tensor(3)
    return [_accepted(counter, 1), _accepted(counter, torch.tensor(2)),
            _accepted(torch.zeros(4, dtype=torch.int32), torch.ones(4, dtype=torch.int64)),
            _accepted(torch.zeros(2, dtype=torch.uint8), True)]


def valid_float_target_integer_update():
    return [_accepted(torch.zeros(3), torch.arange(3)), _accepted(torch.zeros(3, dtype=torch.float16), 2)]


def valid_generated():
    """Generated: every pair of dtypes (and 0-d or 1-d update) for which add_ in place succeeds."""
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
              torch.float32, torch.float64]

    def works(target_dtype, update_dtype, zero_dim):
        target = torch.ones(3, dtype=target_dtype)
        update = torch.ones((), dtype=update_dtype) if zero_dim else torch.ones(3, dtype=update_dtype)
        try:
            target.clone().add_(update)
        except RuntimeError:
            return None
        return _accepted(target, update)

    pairs = st.builds(works, st.sampled_from(dtypes), st.sampled_from(dtypes), st.booleans())
    return pairs.filter(lambda names: names is not None)
