"""A custom torch.autograd.Function that defines forward but no backward (nor vjp, its alias) runs its forward
fine; the error comes only when backward reaches its node: autograd calls the class's backward, which is the base
class's default in torch/autograd/function.py (_SingleLevelFunction.backward), and that default raises
NotImplementedError "You must implement either the backward or vjp method for your custom autograd.Function to use
it with backward mode AD.". The trigger applies a forward-only Clamp to a tensor that requires grad and calls
backward on the sum. The same happens when the method is misspelled (backwards): stage misspelled_backward_is_flagged
(run inside the guard stage) shows that case through autograd and the guard. Solution 1 writes the backward (saving the input in
forward) and checks it with gradcheck and against autograd's own gradient of clamp; solution 2 drops the custom
Function for the differentiable torch operation it wraps. The record's exampleFix and validationCode run from its
text; the guard passes Functions that define backward, only vjp, backward with setup_context, and torch's own
CheckpointFunction.

Cold review (review2): PaddlePaddle/PaddleSpatial#306, cited for the torch 1.7.1 wording, shows another cause: its
SwishFN defines backward but its forward has no @staticmethod (line 68 of
research/D3VAE/d3vae_pytorch/model/neural_operations.py in the stored copy, a8e3053936696ec71f8ae8cfc0de7fe6eb1693cb),
and the fix there was the decorator; stage non_static_methods_run (in the guard stage) shows that the releases run here
accept such a Function and that the guard passes it. Solution 3 (detach the op's input when no gradient should flow
through it) was missing: detach_input shows the step then runs and the gradient equals the one with the op's output
held constant. The guard's comment now says a Function used only without grad needs no backward.

Results: errkb reproduce autograd-function-backward-not-implemented (torch 2.13.0+cpu) --with torch==2.5.1
--with torch==2.15.0.

Drafted by `errkb draft` from nobwd.py on torch 2.13.0+cpu, Python 3.11.7:
  NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.
  raised at torch/autograd/function.py:455
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version).
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "write_backward", 2: "plain_torch_ops", 3: "detach_input"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": [], "validationCode": ["fn_cls"]}
VALID = {"static-backward": "valid_static_backward", "vjp-only": "valid_vjp_only",
         "setup-context": "valid_setup_context", "torch-checkpoint-function": "valid_torch_checkpoint_function"}
WORDINGS = [
    {'text': 'You must implement either the backward or vjp method for your custom autograd.Function to use it with '
             'backward mode AD.', 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': 'You must implement either the backward or vjp method for your custom autograd.Function to use it with '
             'backward mode AD.', 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': 'You must implement either the backward or vjp method for your custom autograd.Function to use it with '
             'backward mode AD.', 'source': 'torch==2.15.0', 'match': 'pattern'},
    {'text': 'You must implement the backward function for custom autograd.Function.',
     'source': 'PaddlePaddle/PaddleSpatial#306', 'match': 'pattern'},
    {'text': 'NotImplementedError', 'source': 'xinge008/Cylinder3D#57', 'match': 'none',
     'why': "an old release raised the class with no message at all (function.py, in backward): nothing but the "
            "class name to match; the record says so"},
    {'text': 'You must implement the jvp function for custom autograd.Function to use it with forward mode AD.',
     'source': 'flatironinstitute/pytorch-finufft#110', 'match': 'none',
     'why': "forward-mode AD asks for jvp, another method and raise site; the record says so"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import errkb_record as record

EXAMPLE_INPUT = [-1.5, -0.2, 0.3, 2.0]


def _forward_only_clamp():
    import torch

    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0)

    return Clamp


def trigger():
    import torch

    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0)

    x = torch.randn(4, requires_grad=True)
    loss = Clamp.apply(x).sum()
    loss.backward()


def _expected_grad(x):
    import torch

    ref = x.detach().clone().requires_grad_(True)
    torch.clamp(ref, min=0).sum().backward()
    return ref.grad


def write_backward():
    """Solution 1: a staticmethod backward returning one gradient per forward input, checked by gradcheck."""
    import torch

    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * (x > 0).to(grad_output.dtype)

    x = torch.tensor(EXAMPLE_INPUT, requires_grad=True)
    Clamp.apply(x).sum().backward()
    assert torch.equal(x.grad, _expected_grad(x)), (x.grad, _expected_grad(x))
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 1.0], x.grad
    xd = torch.tensor(EXAMPLE_INPUT, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(Clamp.apply, (xd,))
    # a training step through it changes the layer before it
    layer = torch.nn.Linear(4, 4)
    before = layer.weight.detach().clone()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    loss = Clamp.apply(layer(torch.randn(8, 4))).pow(2).sum()
    loss.backward()
    opt.step()
    assert not torch.equal(before, layer.weight), "the step did not change the weights"


def plain_torch_ops():
    """Solution 2: forward only composes differentiable torch operations, so call them without a Function."""
    import torch

    def clamp(x):
        return x.clamp(min=0)

    x = torch.tensor(EXAMPLE_INPUT, requires_grad=True)
    clamp(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 1.0], x.grad


def detach_input():
    """Solution 3: no gradient should pass through the op (here a mask from the features): apply it to detached input."""
    import torch

    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 4)
    inputs = torch.randn(8, 4)
    Clamp = _forward_only_clamp()
    feats = layer(inputs)
    gate = Clamp.apply(feats.detach())           # backward never reaches the forward-only Function
    loss = (feats * gate).sum()
    loss.backward()
    # the gradient is the one of feats * constant
    expected = torch.autograd.grad((layer(inputs) * gate).sum(), layer.weight)[0]
    assert torch.allclose(layer.weight.grad, expected), (layer.weight.grad, expected)
    assert layer.weight.grad.abs().sum() > 0


def non_static_methods_run():
    """A Function whose forward and backward lack @staticmethod works through apply on the releases run here."""
    import torch

    class Double(torch.autograd.Function):
        def forward(ctx, x):
            return 2 * x

        def backward(ctx, grad_output):
            return 2 * grad_output

    x = torch.randn(3, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0], x.grad
    assert record.check("validationCode", {"fn_cls": Double})


def misspelled_backward_is_flagged():
    """The misspelled case the prose mentions: autograd raises the same error, and the guard flags the class."""
    import torch

    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0)

        @staticmethod
        def backwards(ctx, grad_output):  # not the name autograd calls
            return grad_output

    x = torch.randn(4, requires_grad=True)
    try:
        Clamp.apply(x).sum().backward()
    except NotImplementedError as exc:
        assert "You must implement either the backward or vjp method" in str(exc), exc
    else:
        raise AssertionError("a misspelled backward was accepted")
    assert not record.check("validationCode", {"fn_cls": Clamp})


def example_fix():
    import torch

    names = record.run("exampleFix", {}, section="after")
    Clamp = names["Clamp"]
    x = torch.tensor(EXAMPLE_INPUT, requires_grad=True)
    Clamp.apply(x).sum().backward()
    assert torch.equal(x.grad, _expected_grad(x)), x.grad
    before = record.run("exampleFix", {}, section="before")["Clamp"]
    assert before.backward is torch.autograd.Function.backward  # the before part is the forward-only Function


def guard():
    assert not record.check("validationCode", {"fn_cls": _forward_only_clamp()})
    names = record.run("exampleFix", {}, section="after")
    assert record.check("validationCode", {"fn_cls": names["Clamp"]})
    misspelled_backward_is_flagged()
    non_static_methods_run()


def _prove(fn_cls, *inputs):
    """The class works under backward mode AD: gradients reach every input that requires grad."""
    out = fn_cls.apply(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    assert all(t.grad is not None for t in inputs if getattr(t, "requires_grad", False))


def valid_static_backward():
    import torch

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    _prove(Square, torch.randn(3, requires_grad=True))
    return {"fn_cls": Square}


def valid_vjp_only():
    import torch

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def vjp(ctx, grad_output):
            return 2 * grad_output

    _prove(Double, torch.randn(3, requires_grad=True))
    return {"fn_cls": Double}


def valid_setup_context():
    import torch

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(x, factor):
            return x * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.factor = inputs[1]

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.factor, None

    _prove(Scale, torch.randn(3, requires_grad=True), 3.0)
    return {"fn_cls": Scale}


def valid_torch_checkpoint_function():
    import torch
    from torch.utils.checkpoint import CheckpointFunction

    layer = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    CheckpointFunction.apply(layer, True, x).sum().backward()
    assert x.grad is not None and layer.weight.grad is not None
    return {"fn_cls": CheckpointFunction}
