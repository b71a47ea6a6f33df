"""A module stores an integer tensor (a label lookup table) as nn.Parameter. Parameter asks autograd to track the
tensor (requires_grad=True by default), and autograd tracks only floating point and complex tensors: the C++ setter
(set_requires_grad in torch/csrc/autograd/variable.h) refuses with RuntimeError "Only Tensors of floating point and
complex dtype can require gradients". torch.tensor(..., requires_grad=True) on integers goes through the same check;
other entry points word it in lower case, with or without "and complex" (cited from issues in WORDINGS). The
demonstrations: a value that is meant to be learned, created as floating point,
gets a gradient and changes with an optimizer step (solution 1; the stage also returns what requires_grad_() and
`requires_grad = True` print for integer indices on the release it runs); an integer tensor that is not learned, registered as
a buffer, keeps its dtype, follows the module's state_dict and is left out of parameters(), and
Parameter(t, requires_grad=False) is accepted too but stays listed among the module's parameters (solution 2). Solution 2's stage also shows why the often-suggested
.float() is wrong for such a table: indexing with the float copy is refused. The exampleFix runs from the record's text
on the trigger's module.

Drafted by `errkb draft` from snippet.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: Only Tensors of floating point and complex dtype can require gradients
  raised at torch/csrc/autograd/variable.h:294
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The raise line, 294, is the one the
2.13.0 build reports (TORCH_SHOW_CPP_STACKTRACES=1). The excerpt could not be checked at that commit: the stored
pytorch/pytorch copy of variable.h (0059b8cb) is from 2018 (AT_CHECK, "Only Tensors of floating point dtype");
the text quoted is a newer stored copy of the file whose repository and commit the store does not name, in which
set_requires_grad begins at line 294 and its TORCH_CHECK follows at 295, one line below the build's 294; the excerpt's
lines are numbered so that the TORCH_CHECK sits at the build's line (290-299, not the copy's 291-300), as the catalog's
other unverified C++ excerpts are; hence "excerpt": "unverified".
"""
NEEDS = {'packages': {'torch': '>=2.5'}, 'cuda_devices': 0, 'timeout_s': 150}
SOLUTIONS = {1: "learned_value_as_float", 2: "integer_table_as_buffer"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["module", "label_map"]}
KEEP = ["module"]
WORDINGS = [
    {'text': 'Only Tensors of floating point and complex dtype can require gradients', 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': 'only Tensors of floating point and complex dtype can require gradients', 'source': 'pytorch/pytorch#95110', 'match': 'pattern'},
    {'text': 'Only Tensors of floating point dtype can require gradients', 'source': 'jiasenlu/NeuralBabyTalk#26', 'match': 'pattern'},
    {'text': 'only Tensors of floating point dtype can require gradients', 'source': 'Akegarasu/lora-scripts#482', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified', 'commit': 'cf30153c4c131c8164ee7798e5022d810682e2cb', 'offset': 0}

import errkb_record as record

LABELS = [0, 2, 1, 4, 3]


def _tagger_class(register):
    import torch.nn as nn

    class Tagger(nn.Module):
        def __init__(self, label_map):
            super().__init__()
            self.proj = nn.Linear(8, 5)
            register(self, label_map)

        def forward(self, x):
            return self.proj(x)[:, self.label_map]  # reorder the scores by the table

    return Tagger


def trigger():
    import torch
    import torch.nn as nn

    class Tagger(nn.Module):
        def __init__(self, label_map):
            super().__init__()
            self.proj = nn.Linear(8, 5)
            self.label_map = nn.Parameter(label_map)  # an integer lookup table, stored as a Parameter

    Tagger(torch.tensor([0, 2, 1, 4, 3]))


def learned_value_as_float():
    """Solution 1: a value meant to be learned is created as floating point: it gets a gradient and an optimizer step
    changes it (the integer version cannot even be created)."""
    import torch

    try:
        torch.tensor([1, 2, 3], requires_grad=True)
    except RuntimeError as exc:
        assert "can require gradients" in str(exc), exc
    else:
        raise AssertionError("an integer tensor was allowed to require gradients")
    # The other entry points word it differently (the record's WORDINGS): record what this release prints.
    seen = {}
    for name, mark in (("requires_grad_()", lambda t: t.requires_grad_()),
                       ("requires_grad = True", lambda t: setattr(t, "requires_grad", True))):
        try:
            mark(torch.randn(3, 4).max(1)[1])  # int64 indices, as in pytorch/pytorch#95110
        except RuntimeError as exc:
            assert "can require gradients" in str(exc), exc
            seen[name] = str(exc).split("\nException raised from")[0]  # without the C++ location, when shown
        else:
            raise AssertionError(f"{name} accepted an integer tensor")
    scale = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
    before = scale.detach().clone()
    optimizer = torch.optim.SGD([scale], lr=0.1)
    loss = (scale * torch.tensor([1.0, -1.0, 2.0])).sum()
    loss.backward()
    assert torch.equal(scale.grad, torch.tensor([1.0, -1.0, 2.0]))
    optimizer.step()
    assert not torch.equal(scale.detach(), before)
    return "; ".join(f"{name}: {message!r}" for name, message in seen.items())


def integer_table_as_buffer():
    """Solution 2: the table is not learned: register_buffer keeps it int64, saves it in the state_dict, moves it with
    the module and keeps it out of parameters(); Parameter(t, requires_grad=False) is accepted as well."""
    import torch
    import torch.nn as nn

    Tagger = _tagger_class(lambda m, t: m.register_buffer("label_map", t))
    model = Tagger(torch.tensor(LABELS))
    assert model.label_map.dtype == torch.int64
    assert "label_map" in model.state_dict() and all(p is not model.label_map for p in model.parameters())
    x = torch.randn(3, 8)
    assert torch.equal(model(x), model.proj(x)[:, torch.tensor(LABELS)])
    restored = Tagger(torch.zeros(5, dtype=torch.int64))
    restored.load_state_dict(model.state_dict())
    assert torch.equal(restored.label_map, torch.tensor(LABELS))
    frozen = nn.Parameter(torch.tensor(LABELS), requires_grad=False)
    assert frozen.dtype == torch.int64 and not frozen.requires_grad
    # ... but it stays a Parameter, listed among the module's parameters (a buffer is not).
    holder = nn.Module()
    holder.table = frozen
    assert [n for n, _ in holder.named_parameters()] == ["table"]
    # The often-suggested nn.Parameter(label_map.float()) is created, but the table no longer indexes:
    as_float = nn.Parameter(torch.tensor(LABELS).float())
    try:
        model.proj(x)[:, as_float]
    except IndexError as exc:
        assert "tensors used as indices must be" in str(exc), exc
    else:
        raise AssertionError("a float table indexed the scores")


def example_fix():
    import torch
    import torch.nn as nn

    module = nn.Module()
    module.proj = nn.Linear(8, 5)
    label_map = torch.tensor(LABELS)
    names = record.run("exampleFix", {"module": module, "label_map": label_map}, section="after")
    assert names["module"] is module
    assert module.label_map.dtype == torch.int64 and "label_map" in module.state_dict()
    assert [n for n, _ in module.named_parameters()] == ["proj.weight", "proj.bias"]
