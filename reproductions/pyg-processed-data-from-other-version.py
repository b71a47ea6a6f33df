"""PyG 2.x keeps a Data object's attributes in a storage object, data._store; PyG 1.x kept them in the instance's
__dict__. A Data pickled by 1.x (a dataset's processed/data.pt, a pickle file shared with a paper) unpickles under
2.x into a Data whose __dict__ has x and edge_index but no _store, and the first attribute looked up outside that
dict (data.stores, num_node_features, to(), separate() in dataset[0]) reaches Data.__getattr__
(torch_geometric/data/data.py), which raises RuntimeError "The 'data' object was created by an older version of
PyG. ...". Stand-in for the old file (no PyG 1.x installs beside torch 2.13): the trigger writes processed/data.pt
with torch.save of the (data, slices) pair of the 1.x layout, the data pickled the way 1.x pickled it (the class
torch_geometric.data.Data rebuilt without __init__, then its attribute dict restored: copyreg._reconstructor and a
state dict), and an InMemoryDataset whose process() would build 4 graphs loads it; dataset[0] raises.
Solution 1 deletes processed/ (and, separately, passes force_reload=True), so PyG reruns process() with the
installed version, and dataset[0] works. Solution 2 rebuilds old objects that cannot be regenerated (a pickle with
no raw data) with Data(**attributes) and batches them. Solution 3 shows the same error from a Data subclass whose
__init__ sets attributes before calling Data.__init__ (pyg-team/pytorch_geometric#4636), and the fixed order.
The record's exampleFix and validationCode run from its text.
Results: errkb reproduce pyg-processed-data-from-other-version (torch-geometric 2.8.1, torch 2.13.0+cpu) --with
torch-geometric==2.6.1 --with torch-geometric==2.7.0 (their environments take torch 2.15.0). torch-geometric 2.5.0
was tried and dropped: with torch 2.15 its torch_load does not fall back from weights_only=True for this file and
raises UnpicklingError before any Data exists (a different failure). The excerpt (L555-562 of the installed 2.8.1 file) is byte-identical (git
hash-object) to torch_geometric/data/data.py at tag 2.8.0 (726310a486ea); the stored mirror has no 2.8.1 tag. The
raise is at line 557 in 2.7.0 too and 556 in 2.6.1.

Drafted by `errkb draft` from pyg_trigger.py on torch-geometric 2.8.1, Python 3.11.7:
  RuntimeError: The 'data' object was created by an older version of PyG. If this error occurred while loading an already existing dataset, remove the 'processed/' directory in the dataset's root folder and try again
  raised at torch_geometric/data/data.py:557
Commit: 726310a486eae37a89cd6359072b82bbbbb71579 (--sha, checked as above).
"""
NEEDS = {'packages': {'torch': '>=2.5', 'torch-geometric': '>=2.6'}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "remove_processed", 2: "rebuild_old_objects", 3: "subclass_calls_init_first"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["graphs"], "validationCode": ["data"]}
VALID = {"new-data": "valid_new_data", "dataset-item": "valid_dataset_item", "batch": "valid_batch",
         "copies": "valid_copies", "round-trip": "valid_round_trip", "hetero": "valid_hetero",
         "upgraded": "valid_upgraded"}
WORDINGS = [
    {'text': "The 'data' object was created by an older version of PyG. If this error occurred while loading an "
             "already existing dataset, remove the 'processed/' directory in the dataset's root folder and try again.",
     'source': 'torch-geometric==2.8.1', 'match': 'pattern'},
    {'text': "The 'data' object was created by an older version of PyG. If this error occurred while loading an "
             "already existing dataset, remove the 'processed/' directory in the dataset's root folder and try again.",
     'source': 'lin-lcx/H2-MIL#3', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch-geometric', 'version': '2.8.1'}

import copyreg
import os
import pickle
import shutil
import tempfile

import errkb_record as record

import torch

MESSAGE = "The 'data' object was created by an older version of PyG"


class LegacyData:
    """Pickles as PyG 1.x pickled a Data: torch_geometric.data.Data rebuilt without __init__, then the attribute
    dict restored as its state (1.x's Data had no _store)."""

    def __init__(self, **attrs):
        self.attrs = attrs

    def __reduce__(self):
        from torch_geometric.data import Data

        return (copyreg._reconstructor, (Data, object, None), self.attrs)


def _legacy_attrs(x, edge_index, num_nodes=None):
    # the attribute dict of a PyG 1.x Data: its constructor's keywords, unset ones None
    return dict(x=x, edge_index=edge_index, edge_attr=None, y=None, pos=None, normal=None, face=None,
                __num_nodes__=num_nodes)


def _graphs():
    torch.manual_seed(0)
    from torch_geometric.data import Data

    return [Data(x=torch.randn(3, 2), edge_index=torch.tensor([[0, 1], [1, 2]])) for _ in range(4)]


def _dataset_class():
    from torch_geometric.data import InMemoryDataset

    class Graphs(InMemoryDataset):
        processed = 0

        def __init__(self, root, **kwargs):
            super().__init__(root, **kwargs)
            self.load(self.processed_paths[0])

        @property
        def raw_file_names(self):
            return []

        @property
        def processed_file_names(self):
            return ["data.pt"]

        def download(self):
            pass

        def process(self):
            type(self).processed += 1
            self.save(_graphs(), self.processed_paths[0])

    return Graphs


def _old_root():
    """A dataset root whose processed/data.pt was written in the PyG 1.x layout: (Data, slices)."""
    root = tempfile.mkdtemp(prefix="graphs-")
    os.makedirs(os.path.join(root, "processed"))
    graphs = _graphs()
    x = torch.cat([g.x for g in graphs])
    edge_index = torch.cat([g.edge_index + 3 * i for i, g in enumerate(graphs)], dim=1)
    slices = {"x": torch.tensor([0, 3, 6, 9, 12]), "edge_index": torch.tensor([0, 2, 4, 6, 8])}
    torch.save((LegacyData(**_legacy_attrs(x, edge_index)), slices), os.path.join(root, "processed", "data.pt"))
    return root


def _raises(call):
    try:
        call()
    except RuntimeError as exc:
        assert MESSAGE in str(exc), exc
    else:
        raise AssertionError("no error")


def trigger():
    Graphs = _dataset_class()
    dataset = Graphs(_old_root())
    dataset[0]


def _works(dataset):
    first = dataset[0]
    assert len(dataset) == 4 and first.num_nodes == 3 and first.num_node_features == 2
    assert torch.equal(first.x, _graphs()[0].x) and first.edge_index.tolist() == [[0, 1], [1, 2]]


def remove_processed():
    """Solution 1: delete processed/ (or force_reload=True): process() reruns with the installed PyG."""
    import warnings

    Graphs = _dataset_class()
    root = _old_root()
    _raises(lambda: Graphs(root)[0])
    shutil.rmtree(os.path.join(root, "processed"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Graphs.processed = 0
        _works(Graphs(root))
    assert Graphs.processed == 1, "process() did not rerun"
    root = _old_root()
    Graphs.processed = 0
    _works(Graphs(root, force_reload=True))
    assert Graphs.processed == 1
    _works(Graphs(root))  # the regenerated file loads without processing again
    assert Graphs.processed == 1


def rebuild_old_objects():
    """Solution 2: old Data objects with no raw data to regenerate them: Data(**their attributes)."""
    from torch_geometric.data import Data
    from torch_geometric.loader import DataLoader

    graphs = _graphs()
    blob = pickle.dumps([LegacyData(**_legacy_attrs(g.x, g.edge_index)) for g in graphs]
                        + [LegacyData(**_legacy_attrs(None, torch.tensor([[0], [4]]), num_nodes=5))])
    old = pickle.loads(blob)
    _raises(lambda: old[0].num_node_features)
    new = [Data(**{k: v for k, v in vars(g).items() if v is not None and not k.startswith("__")}) for g in old[:4]]
    new.append(Data(edge_index=vars(old[4])["edge_index"], num_nodes=vars(old[4])["__num_nodes__"]))
    assert all(n.num_node_features == 2 and torch.equal(n.x, g.x) for n, g in zip(new, graphs))
    assert new[4].num_nodes == 5
    batch = next(iter(DataLoader(new[:4], batch_size=4)))
    assert batch.num_graphs == 4 and batch.x.shape == (12, 2) and batch.edge_index.shape == (2, 8)


def subclass_calls_init_first():
    """Solution 3: a Data subclass calls Data.__init__ before setting attributes (pyg-team/pytorch_geometric#4636)."""
    from torch_geometric.data import Data

    class CoverEarly(Data):
        def __init__(self, cover_index=None, **kwargs):
            self.cover_index = cover_index  # before Data.__init__: no _store yet
            super().__init__(**kwargs)

    class Cover(Data):
        def __init__(self, cover_index=None, **kwargs):
            super().__init__(**kwargs)
            self.cover_index = cover_index

    _raises(lambda: CoverEarly(cover_index=torch.tensor([[0, 1], [0, 0]])))
    cover = Cover(cover_index=torch.tensor([[0, 1], [0, 0]]), x=torch.randn(2, 3))
    assert cover.cover_index.shape == (2, 2) and cover.num_node_features == 3


def example_fix():
    graphs = pickle.loads(pickle.dumps([LegacyData(**_legacy_attrs(g.x, g.edge_index)) for g in _graphs()]
                                       + [LegacyData(**_legacy_attrs(None, torch.tensor([[0], [4]]), num_nodes=5))]))
    names = record.run("exampleFix", {"graphs": graphs}, section="after")
    upgraded = names["graphs"]
    assert [g.num_nodes for g in upgraded] == [3, 3, 3, 3, 5]
    assert all(g.num_node_features == 2 for g in upgraded[:4])


def guard():
    old = pickle.loads(pickle.dumps(LegacyData(**_legacy_attrs(torch.randn(3, 2), torch.tensor([[0, 1], [1, 2]])))))
    assert not record.check("validationCode", {"data": old})
    assert record.check("validationCode", {"data": _graphs()[0]})


def _valid(data):
    assert isinstance(data.stores, list) and isinstance(data.keys(), list)  # PyG reads it without the error
    return {"data": data}


def valid_new_data():
    from torch_geometric.data import Data

    return [_valid(_graphs()[0]), _valid(Data(edge_index=torch.tensor([[0], [4]]), num_nodes=5)), _valid(Data())]  # an empty Data too


def valid_dataset_item():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset = _dataset_class()(tempfile.mkdtemp(prefix="fresh-"))
    return [_valid(dataset[0]), _valid(dataset[3])]


def valid_batch():
    from torch_geometric.loader import DataLoader

    return _valid(next(iter(DataLoader(_graphs(), batch_size=2))))


def valid_copies():
    import copy

    data = _graphs()[0]
    return [_valid(copy.copy(data)), _valid(copy.deepcopy(data)), _valid(data.clone())]


def valid_round_trip():
    path = os.path.join(tempfile.mkdtemp(), "graph.pt")
    torch.save(_graphs()[0], path)
    return [_valid(torch.load(path, weights_only=False)), _valid(pickle.loads(pickle.dumps(_graphs()[1])))]


def valid_hetero():
    from torch_geometric.data import HeteroData

    data = HeteroData()
    data["paper"].x = torch.randn(4, 3)
    data["paper", "cites", "paper"].edge_index = torch.tensor([[0, 1], [1, 2]])
    assert data.node_types == ["paper"]
    return {"data": data}


def valid_upgraded():
    from torch_geometric.data import Data

    old = pickle.loads(pickle.dumps(LegacyData(**_legacy_attrs(torch.randn(3, 2), torch.tensor([[0, 1], [1, 2]])))))
    return _valid(Data(**{k: v for k, v in vars(old).items() if v is not None and not k.startswith("__")}))
