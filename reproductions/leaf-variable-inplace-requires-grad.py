"""A hand-written training loop keeps its weights as plain tensors created with requires_grad=True (leaf tensors)
and, after loss.backward(), updates them with w -= lr * w.grad while autograd is still recording. Autograd refuses
in-place changes to a leaf that requires grad, because its gradient is defined with respect to the value it had:
check_inplace (torch/csrc/autograd/VariableTypeUtils.h) raises "a leaf Variable that requires grad is being used in
an in-place operation." The same function raises the sibling wording "a view of a leaf Variable that requires grad
is being used in an in-place operation." when the in-place change goes through a view (weight[:, 0] -= ...); the
first demonstration shows it and fixes both, and shows that an assignment through full slices (w[:, :] = ...,
as in PingoLH/FCHarDNet#61) gives the view wording on torch 2.5.1 but the leaf wording on 2.13.0 and 2.15.0. The demonstrations: the update inside torch.no_grad(), over several
steps, with the weight still the same leaf and the loss going down (and, to show why the out-of-place rewrite
w = w - lr * w.grad some answers suggest is not a fix, that it turns w into a non-leaf whose .grad stays None,
so that the next such update fails with a TypeError);
and torch.optim.SGD doing the same update, giving the same weights. The record's exampleFix and validationCode run
from its own text; the guard is checked against frozen parameters and non-leaf activations, which in-place
operations accept. The excerpt is the header the torch 2.13.0 wheel ships
(torch/include/torch/csrc/autograd/VariableTypeUtils.h), which starts with a one-line '#if
!defined(TORCH_STABLE_ONLY) ...' guard: installed line N+1 is line N of the source the build compiled (the build
reports the raise at line 81; TORCH_CHECK( is line 82 of the installed header), so the excerpt is the installed lines
69-88 numbered 68-87. No stored upstream copy at the build's commit was available to compare it with, so PROVENANCE
says "unverified".
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "update_under_no_grad", 2: "use_optimizer"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "w", "lr"], "validationCode": ["torch", "params"]}
KEEP = ["w"]
VALID = {"frozen-params": "valid_frozen_params", "non-leaf-activations": "valid_non_leaf_activations"}
WORDINGS = [
    {"text": "a leaf Variable that requires grad is being used in an in-place operation.", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "a leaf Variable that requires grad is being used in an in-place operation.", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "a leaf Variable that requires grad is being used in an in-place operation.", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.",
     "source": "PingoLH/FCHarDNet#61", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import warnings

import errkb_record as record

import torch

LR = 0.1


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    return x, x @ torch.randn(4, 3, generator=g)


def _weight():
    return torch.zeros(4, 3, requires_grad=True)


def _loss(w):
    x, y = _data()
    return (x @ w - y).pow(2).mean()


def trigger():
    w = _weight()
    _loss(w).backward()
    w -= LR * w.grad  # in-place on a leaf that requires grad, with grad mode on: RuntimeError


def _expect(fn, words):
    try:
        fn()
    except RuntimeError as error:
        assert words in str(error), str(error)
    else:
        raise AssertionError(f"expected {words!r}")


def update_under_no_grad():
    """Solution 1: do the manual update inside torch.no_grad() (and zero the gradient)."""
    w = _weight()
    # the view variant of the same mistake, then the fix for it
    def view_update():
        w[:, 0] -= 1.0
    _expect(view_update, "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    # an assignment through full slices (as in PingoLH/FCHarDNet#61) is refused too, with a wording that depends on
    # the release: the view wording on torch 2.5.1, the leaf wording on 2.13.0 and 2.15.0 (asserted on those three)
    def full_slice_assignment():
        w[:, :] = torch.zeros(4, 3)
    try:
        full_slice_assignment()
    except RuntimeError as error:
        message = str(error)
    else:
        raise AssertionError("the full-slice assignment should have been refused")
    assert "leaf Variable that requires grad is being used in an in-place operation." in message, message
    release = torch.__version__.split("+")[0]
    view_wording = {"2.5.1": True, "2.13.0": False, "2.15.0": False}.get(release)
    if view_wording is not None:
        assert message.startswith("a view of a leaf") == view_wording, (release, message)
    with torch.no_grad():
        w[:, 0] -= 1.0
        w[:, 0] += 1.0
    losses = []
    for _ in range(5):
        loss = _loss(w)
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w -= LR * w.grad
        w.grad.zero_()
    assert w.is_leaf and w.requires_grad
    assert losses[-1] < losses[0]
    # the out-of-place rewrite some answers suggest: w is no longer a leaf, so the next backward leaves w.grad None
    v = _weight()
    _loss(v).backward()
    v = v - LR * v.grad
    assert not v.is_leaf
    _loss(v).backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns
        assert v.grad is None
        try:
            v = v - LR * v.grad  # the next out-of-place update has no gradient to use
        except TypeError:
            pass
        else:
            raise AssertionError("the second out-of-place update should have failed")


def use_optimizer():
    """Solution 2: let torch.optim.SGD do the update; it equals the manual no_grad update."""
    w = _weight()
    opt = torch.optim.SGD([w], lr=LR)
    for _ in range(3):
        opt.zero_grad()
        _loss(w).backward()
        opt.step()
    manual = _weight()
    for _ in range(3):
        _loss(manual).backward()
        with torch.no_grad():
            manual -= LR * manual.grad
        manual.grad.zero_()
    assert torch.allclose(w, manual)
    assert not torch.equal(w.detach(), torch.zeros(4, 3))


def example_fix():
    """The record's exampleFix, its "after" part, in the trigger's situation; w stays the same leaf."""
    w = _weight()
    _loss(w).backward()
    expected = (w - LR * w.grad).detach()
    names = record.run("exampleFix", {"torch": torch, "w": w, "lr": LR}, section="after")
    assert names["w"] is w and w.is_leaf and w.requires_grad
    assert torch.allclose(w.detach(), expected)
    assert torch.count_nonzero(w.grad) == 0


def guard():
    """validationCode flags the trigger's update (grad mode on) and passes the same update under torch.no_grad()."""
    w = _weight()
    _loss(w).backward()
    assert not record.check("validationCode", {"torch": torch, "params": [w]})
    with torch.no_grad():
        assert record.check("validationCode", {"torch": torch, "params": [w]})
    # the limit the record states: an update through .data is not refused with grad mode on, the guard still flags w
    w.data.sub_(LR * w.grad)
    assert not record.check("validationCode", {"torch": torch, "params": [w]})


def valid_frozen_params():
    """Parameters with requires_grad=False can be changed in place with grad mode on."""
    w = torch.zeros(4, 3)
    w -= 0.1
    return {"torch": torch, "params": [w]}


def valid_non_leaf_activations():
    """A tensor computed from a parameter is not a leaf: in-place ops on it are recorded, not refused."""
    w = _weight()
    h = w * 2
    h += 1
    return {"torch": torch, "params": [h]}
