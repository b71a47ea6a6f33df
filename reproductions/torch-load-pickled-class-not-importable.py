"""A training script (train.py, run as its own process) defines class Net at top level and saves the whole model
with torch.save(Net(), "model.pt"); the checkpoint refers to the class as __main__.Net. Another program (the stage's
process, whose __main__ is the harness runner) loads it with torch.load(..., weights_only=False): the unpickler's
find_class (torch/serialization.py) looks Net up in this __main__ and pickle raises AttributeError
"Can't get attribute 'Net' on <module '__main__' from '...'>". The demonstrations: the class bound in the loading
program's __main__ before loading (the model comes back with the saved weights), and the state_dict saved instead,
loaded with the weights_only=True default into a model built from code. The record's exampleFix runs from its text.
CPU only; each stage runs train.py with the same interpreter.

Drafted by `errkb draft` from pickled_main.py on torch 2.13.0+cpu, Python 3.11.7:
  AttributeError: Can't get attribute 'Net' on <module '__main__' from '/tmp/errkb-trigger-n8sfsmge/harness/runner.py'>
  raised at torch/serialization.py:2210
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The author dropped the draft's
"from '...'" part from the pattern: interactive sessions print "(built-in)" there, newer reports nothing.
"""
NEEDS = {'packages': {'torch': '>=2.0'}, 'cuda_devices': 0, 'timeout_s': 90}
SOLUTIONS = {1: "class_bound_in_main", 2: "state_dict_instead"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["Net"]}
KEEP = ["Net"]
WORDINGS = [
    {'text': "Can't get attribute 'Net' on <module '__main__' from", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "Can't get attribute 'Net' on <module '__main__' from", 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': "Can't get attribute 'Net' on <module '__main__' from 'cifar10.py'>", 'source': 'kuangliu/pytorch-cifar#20',
     'match': 'pattern'},
    {'text': "Can't get attribute 'LocNet' on <module '__main__' (built-in)>", 'source': 'yhjo09/AdaTarget#5',
     'match': 'pattern'},
    {'text': "Can't get attribute 'base_args_dict' on <module '__main__'>", 'source': 'pytorch/pytorch#112944',
     'match': 'pattern'},
    {'text': "No module named 'networks.classi", 'source': 'ai-med/relaynet_pytorch#4', 'match': 'none',
     'why': "every failed import prints 'No module named ...': a pattern for it would claim all of them"},
    {'text': "Unsupported global: GLOBAL utils.HParams was not an allowed global by default",
     'source': '0Xiaohei0/LocalAIVtuber#51', 'match': 'none',
     'why': "the weights_only=True refusal, covered by torch-load-weights-only-failed"},
    {'text': "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
             "`True`", 'source': 'dchatel/comfyui_facetools#32', 'match': 'none',
     'why': "part of the weights_only=True refusal, covered by torch-load-weights-only-failed; cited for the 2.6 boundary"},
    {'text': "Can't get attribute 'ImageDataset' on <module '__main__' (built-in)>", 'source': 'Optimization-AI/LibAUC#60',
     'match': 'pattern'},
    {'text': "Can't get attribute 'ChatDataset' on <module '__mp_main__' from 'c:\\\\Users\\\\hp\\\\Desktop\\\\Pytorch\\\\train.py'>",
     'source': 'pytorch/pytorch#87016', 'match': 'pattern'},
    {'text': "Can't get attribute '_rebuild_tensor_v2' on <module 'torch._utils' from '/home/satreja0/miniconda2/envs/"
             "pytorch3/lib/python3.6/site-packages/torch/_utils.py'>", 'source': 'rowanz/neural-motifs#9', 'match': 'none',
     'why': "a module of torch itself: the checkpoint comes from a newer torch (pytorch/pytorch#5729), not this record's case"},
    {'text': "Can't get attribute '_rebuild_tensor' on <module 'torch._utils' from '/usr/local/lib/python3.6/site-packages/"
             "torch/_utils.py'>", 'source': 'pytorch/vision#112', 'match': 'none',
     'why': "a module of torch itself: torch 0.1.10 reading weights a newer torch saved"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import pickle
import subprocess
import sys
import textwrap

import errkb_record as record

import torch

TRAIN = textwrap.dedent('''
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)

    torch.manual_seed(0)
    model = Net()
    torch.save(model, "model.pt")
    torch.save(model.state_dict(), "model_state.pt")
''')


class Net(torch.nn.Module):
    """The same class as train.py's, as the loading program gets it (imported from a module, or copied)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def _train():
    with open("train.py", "w") as f:
        f.write(TRAIN)
    subprocess.run([sys.executable, "train.py"], check=True)


def _saved_weights():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 2).state_dict()  # what train.py's Net() initialised its fc layer to


def _check(model):
    assert type(model).__name__ == "Net"
    for name, value in _saved_weights().items():
        assert torch.equal(model.fc.state_dict()[name], value), name
    assert model(torch.ones(1, 4)).shape == (1, 2)


def trigger():
    # train.py defined its model class at top level and saved the whole model object
    _train()
    # another program (this stage) loads it; its __main__ has no Net
    model = torch.load("model.pt", weights_only=False)


def class_bound_in_main():
    """Solution 1: bind the class where the checkpoint says it lives (__main__.Net), then load."""
    import __main__

    _train()
    assert not hasattr(__main__, "Net")
    # first this release's default: from 2.6 weights_only=True refuses the class before any lookup
    release = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    try:
        torch.load("model.pt")
    except pickle.UnpicklingError as exc:
        assert release >= (2, 6), exc
        assert "Unsupported global: GLOBAL __main__.Net" in str(exc), exc
    except AttributeError as exc:
        assert release < (2, 6), exc
        assert "Can't get attribute 'Net' on <module '__main__'" in str(exc), exc
    else:
        raise AssertionError("the whole-model checkpoint loaded without the class")
    __main__.Net = Net
    _check(torch.load("model.pt", weights_only=False))


def state_dict_instead():
    """Solution 2: the state_dict holds only tensors: it loads with weights_only=True into a model built from code."""
    import __main__

    _train()
    assert not hasattr(__main__, "Net")
    model = Net()
    model.load_state_dict(torch.load("model_state.pt", weights_only=True))
    _check(model)
    # a file that exists only as a pickled model: load it once with the class bound, keep its state_dict
    __main__.Net = Net
    torch.save(torch.load("model.pt", weights_only=False).state_dict(), "converted_state.pt")
    del __main__.Net
    converted = Net()
    converted.load_state_dict(torch.load("converted_state.pt", weights_only=True))
    _check(converted)


def example_fix():
    _train()
    names = record.run("exampleFix", {"Net": Net}, section="after")
    assert names["Net"] is Net
    _check(names["model"])
