"""Code written for old PyTorch defines a custom autograd function the legacy way: forward(self, x) and
backward(self, grad) as instance methods, state kept on self, and the function used by calling an instance,
Double()(x). Function.__init__ only warns (DeprecationWarning: should not be instantiated); calling the instance
reaches Function.__call__ (torch/autograd/function.py), which always raises RuntimeError "Legacy autograd function
with non-static forward method is deprecated. ...", whether or not forward is static. The demonstrations: rewrite
the function new-style (static forward(ctx, ...) and backward(ctx, ...), tensors saved with
ctx.save_for_backward, called through .apply), checked against finite differences with gradcheck; and, for a
function whose methods are already static, replace the instance call with Function.apply. The record's exampleFix
and validationCode run from their own text; the guard is checked against new-style functions in their usual
forms (setup_context, vjp, once_differentiable backward, a subclass). CPU only."""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "new_style", 2: "call_apply"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "static-forward-backward": "valid_static",
    "setup-context": "valid_setup_context",
    "vjp-and-once-differentiable": "valid_vjp_and_once_differentiable",
    "subclass-of-a-new-style-function": "valid_subclass",
}
CODE_NAMES = {"exampleFix": ["torch", "x"], "validationCode": ["fn_class"]}
WORDINGS = [
    {"text": "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
             "function with static forward method.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "UserWarning: Legacy autograd function with non-static forward method is deprecated and will be removed "
             "in 1.3. Please use new-style autograd function with static forward method.",
     "source": "mit-han-lab/temporal-shift-module#20", "match": "pattern"},
    {"text": "RuntimeError: Legacy autograd function with non-static forward method is deprecated. Please use new-style "
             "autograd function with static forward method. (Example: "
             "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)",
     "source": "josipd/torch-two-sample#6", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import errkb_record as record

import torch
from torch.autograd.function import once_differentiable


class LegacyScale(torch.autograd.Function):
    """The legacy style: instance methods, state on self."""

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor

    def backward(self, grad_output):
        return grad_output * self.factor


def _x():
    torch.manual_seed(0)
    return torch.randn(5, dtype=torch.double, requires_grad=True)


def trigger():
    x = _x()
    LegacyScale(3.0)(x)  # RuntimeError: Legacy autograd function with non-static forward method is deprecated. ...


class Scale(torch.autograd.Function):
    """New style: static methods; non-tensor arguments get a None gradient."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


def new_style():
    """Solution 1: static forward(ctx, ...)/backward(ctx, ...), called through .apply; gradients checked."""
    x = _x()
    y = Scale.apply(x, 3.0)
    assert torch.allclose(y, x * 3.0)
    y.sum().backward()
    assert torch.allclose(x.grad, torch.full_like(x, 3.0))
    assert torch.autograd.gradcheck(lambda t: Scale.apply(t, 3.0), (_x(),))


def call_apply():
    """Solution 2: methods already static but the function is called as an instance: the same error; .apply works."""
    x = _x()
    try:
        Scale()(x, 3.0)
    except RuntimeError as exc:
        assert "Legacy autograd function with non-static forward method" in str(exc), exc
    else:
        raise AssertionError("calling an instance was expected to fail even with static methods")
    y = Scale.apply(x, 3.0)
    y.sum().backward()
    assert torch.allclose(x.grad, torch.full_like(x, 3.0))
    # a legacy class without constructor state does not raise through .apply: forward gets ctx as self
    assert torch.allclose(LegacyDouble.apply(x.detach()), x.detach() * 2)


class LegacyDouble(torch.autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, grad_output):
        return grad_output * 2


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's input: value and gradient."""
    x = _x()
    names = record.run("exampleFix", {"torch": torch, "x": x}, section="after")
    y = names["y"]
    assert torch.allclose(y, x * 2)
    y.sum().backward()
    assert torch.allclose(x.grad, torch.full_like(x, 2.0))
    assert torch.autograd.gradcheck(names["Double"].apply, (_x(),))


def guard():
    """validationCode flags the legacy class and passes the new-style one, before anything is called."""
    assert not record.check("validationCode", {"fn_class": LegacyScale})
    assert record.check("validationCode", {"fn_class": Scale})


def _proven(fn_class, *args):
    x = _x()
    fn_class.apply(x, *args).sum().backward()  # the class works as defined
    assert x.grad is not None
    return {"fn_class": fn_class}


def valid_static():
    return _proven(Scale, 2.0)


class ScaleSetupContext(torch.autograd.Function):
    @staticmethod
    def forward(x, factor):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.factor = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


def valid_setup_context():
    return _proven(ScaleSetupContext, 2.0)


class ScaleVjp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def vjp(ctx, grad_output):
        return grad_output * 2


class ScaleOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output * 2


def valid_vjp_and_once_differentiable():
    return [_proven(ScaleVjp), _proven(ScaleOnce)]


class ScaleChild(ScaleOnce):
    pass


def valid_subclass():
    return _proven(ScaleChild)
