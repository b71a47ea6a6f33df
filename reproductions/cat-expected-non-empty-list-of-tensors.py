"""A script collects model outputs batch by batch and joins them with torch.cat, but the DataLoader yields no batch
(here its dataset is empty, as when a file glob matched nothing; drop_last=True on fewer samples than a batch does
the same), so the list is still [] and torch.cat raises
"torch.cat(): expected a non-empty list of Tensors" from the cat meta function in ATen. The class is ValueError on
torch 2.9.1, 2.13.0 and 2.15.0; older releases raised RuntimeError with the same words (the pastes cite it). The
demonstrations: checking that the loader has batches (len(loader), which also catches drop_last) stops the script
before the loop with an error that names the cause, and with a non-empty dataset the joined outputs have one row per sample and equal the model applied to the
whole dataset (solution 1); where an empty result is legitimate, returning an explicitly shaped empty tensor
(torch.empty(0, n_features)) gives a (0, 4) tensor that later concatenation and reductions accept, and the same code
still joins non-empty lists (solution 2). The exampleFix runs from the record's text on the trigger's empty list and
on a non-empty one.

Drafted by `errkb draft` from snippet.py on torch 2.13.0+cpu, Python 3.11.7:
  ValueError: torch.cat(): expected a non-empty list of Tensors
  raised at aten/src/ATen/native/TensorShape.cpp:250
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The raise line, 250, is the one the
2.13.0 build reports (TORCH_SHOW_CPP_STACKTRACES=1). The excerpt could not be checked at that commit: the stored
pytorch/pytorch copies of TensorShape.cpp are older: in f2fb53a540815df6b87ad208fbd4e4929715a4cb the cat meta
function takes `ITensorList tensors` and checks `tensors.size() > 0` (no materialize()), and
0005449734fa2528f0897170f68064c34f1c0396 predates the meta function. The excerpt's text (`const ITensorListRef&`,
`tensors.materialize()`, `materialized.size() > 0`) is that of another stored copy of TensorShape.cpp, found by its
text, whose repository and commit the store does not name. That copy checks the list with TORCH_CHECK (hence
RuntimeError) while 2.13.0 raises ValueError, so the 2.13.0 text differs at least in that macro. The excerpt's lines
are numbered so that the check sits at the build's line 250 (not at its place in that copy); hence "excerpt":
"unverified".
NEEDS starts at 2.9: torch 2.5.1 raises the same words as RuntimeError, which the record's class (ValueError) does
not cover, so 2.5.1 is outside the record's range.
"""
NEEDS = {'packages': {'torch': '>=2.9'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "check_source_not_empty", 2: "explicit_empty_result"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["outputs", "n_features"]}
WORDINGS = [
    {'text': 'torch.cat(): expected a non-empty list of Tensors', 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': 'RuntimeError: torch.cat(): expected a non-empty list of Tensors', 'source': 'ZZZBBBZZZ/MulSen-AD#7', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified', 'commit': 'cf30153c4c131c8164ee7798e5022d810682e2cb', 'offset': 0}

import errkb_record as record


def _setup(n_samples, drop_last=False):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    data = torch.randn(n_samples, 8)
    return model, data, DataLoader(TensorDataset(data), batch_size=4, drop_last=drop_last)


def _collect(model, loader):
    import torch

    outputs = []
    with torch.no_grad():
        for (x,) in loader:
            outputs.append(model(x))
    return outputs


def trigger():
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    model = torch.nn.Linear(8, 4)
    dataset = TensorDataset(torch.empty(0, 8))  # e.g. a glob that matched no files
    loader = DataLoader(dataset, batch_size=4)
    outputs = []
    with torch.no_grad():
        for (x,) in loader:
            outputs.append(model(x))
    embeddings = torch.cat(outputs)


def check_source_not_empty():
    """Solution 1: check the loader's number of batches before the loop; an empty dataset, and a non-empty one smaller
    than a batch with drop_last=True (which a len(loader.dataset) check lets through), are stopped with an error naming
    the cause; a non-empty one gives one output row per sample, equal to the model applied to all samples at once."""
    import torch

    def embed(model, loader):
        if len(loader) == 0:
            raise ValueError(f"the loader yields no batch ({len(loader.dataset)} samples, batch_size "
                             f"{loader.batch_size}, drop_last={loader.drop_last}): check the data path or the filter")
        return torch.cat(_collect(model, loader))

    for n_samples, drop_last in ((0, False), (3, True)):
        model, _, loader = _setup(n_samples, drop_last=drop_last)
        try:
            embed(model, loader)
        except ValueError as exc:
            assert "the loader yields no batch" in str(exc), exc
        else:
            raise AssertionError(f"{n_samples} samples, drop_last={drop_last} went through")
    model, _, small = _setup(3, drop_last=True)
    assert len(small.dataset) == 3 and _collect(model, small) == []  # a dataset check alone would pass this one
    model, data, loader = _setup(10)
    embeddings = embed(model, loader)
    assert embeddings.shape == (10, 4), embeddings.shape
    with torch.no_grad():
        assert torch.allclose(embeddings, model(data), atol=1e-6)


def explicit_empty_result():
    """Solution 2: an empty result is legitimate here; return torch.empty(0, n_features), which later code accepts."""
    import torch

    def join(outputs, n_features):
        return torch.cat(outputs) if outputs else torch.empty(0, n_features)

    model, _, empty_loader = _setup(0)
    empty = join(_collect(model, empty_loader), 4)
    assert empty.shape == (0, 4), empty.shape
    model, data, loader = _setup(6)
    full = join(_collect(model, loader), 4)
    assert full.shape == (6, 4)
    assert torch.equal(torch.cat([empty, full]), full)  # the empty block joins later results
    assert empty.sum(dim=0).shape == (4,)  # and reductions accept it


def example_fix():
    import torch

    model, _, empty_loader = _setup(0)
    names = record.run("exampleFix", {"outputs": _collect(model, empty_loader), "n_features": 4}, section="after")
    assert names["embeddings"].shape == (0, 4), names["embeddings"].shape
    model, data, loader = _setup(9)
    names = record.run("exampleFix", {"outputs": _collect(model, loader), "n_features": 4}, section="after")
    with torch.no_grad():
        assert torch.allclose(names["embeddings"], model(data), atol=1e-6)
