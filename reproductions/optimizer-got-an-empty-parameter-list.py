"""TODO(errkb-draft): one paragraph: the story of the error, which variant runs where.

Drafted by `errkb draft` from empty_params.py on torch 2.13.0+cpu, Python 3.11.7:
  ValueError: optimizer got an empty parameter list
  raised at torch/optim/optimizer.py:400
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). NEEDS pins the releases the draft ran on: widen
them only with results (errkb reproduce optimizer-got-an-empty-parameter-list --with DIST==VERSION).
"""
NEEDS = {'packages': {'torch': '==2.13.0'}, 'cuda_devices': 0, 'timeout_s': 66}
SOLUTIONS = {1: "solution_1"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["TODO(errkb-draft)"], "validationCode": ["TODO(errkb-draft)"]}
VALID = {"TODO(errkb-draft)": "valid_situation"}
WORDINGS = [
    {'text': 'optimizer got an empty parameter list', 'source': 'torch==2.13.0', 'match': 'pattern'},
    # TODO(errkb-draft): other wordings users paste (older releases with a committed result, or cited issues owner/repo#N)
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import errkb_record as record


def trigger():
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)]

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x


    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def solution_1():
    raise NotImplementedError("TODO(errkb-draft): apply exactly solution 1 to the trigger's situation and assert it works")


def example_fix():
    raise NotImplementedError("TODO(errkb-draft): record.run(\"exampleFix\", {...the user's objects...}, section=\"after\")")


def guard():
    raise NotImplementedError("TODO(errkb-draft): assert not record.check(\"validationCode\", trigger_names); assert record.check(\"validationCode\", fixed_names)")


def valid_situation():
    raise NotImplementedError("TODO(errkb-draft): return the names the guard sees in a valid situation")
