"""A graph network written for PyTorch Geometric 1.x initialises its GCNConv layers' weights by hand
(torch.nn.init.xavier_normal_(self.conv1.weight)). In the PyG 2.x releases run here GCNConv keeps its weight in a
child Linear layer, conv.lin, and has no parameter named weight: the lookup falls through to nn.Module.__getattr__
(torch/nn/modules/module.py), which raises "'GCNConv' object has no attribute 'weight'" while the model is built.
Solution 1 initialises conv.lin.weight instead (a torch_geometric Linear, weight shaped (out, in)), checks the
layer's output uses exactly that weight and that self.lin(x) is x times the transposed weight (what a custom forward
that multiplied by self.weight needs); solution 2 drops the hand-written init and checks the default one (glorot:
every entry within sqrt(6 / (fan_in + fan_out)), zero bias) and that the model trains. The record's exampleFix runs from its text. CPU only.
Results: errkb reproduce pyg-gcnconv-weight-moved-to-lin (torch-geometric 2.8.1, the CI's install) --with
torch-geometric==2.3.1 --with torch-geometric==2.5.3 (all verified). The PyG 1.x side, where the snippet works, is
not run: those releases need the compiled torch_scatter/torch_sparse extensions, which have no build for torch 2.13.

Drafted by `errkb draft` from gcn_weight.py on torch 2.13.0+cpu, Python 3.11.7:
  AttributeError: 'GCNConv' object has no attribute 'weight'
  raised at torch/nn/modules/module.py:1967
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The draft's pattern accepted any
object's missing attribute; the author narrowed it to a *Conv layer's weight.
"""
NEEDS = {'packages': {'torch': '==2.13.0', 'torch-geometric': '>=2.3.1'}, 'cuda_devices': 0, 'timeout_s': 110}
SOLUTIONS = {1: "lin_weight", 2: "default_init"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["torch", "model"]}
KEEP = ["model"]
WORDINGS = [
    {'text': "'GCNConv' object has no attribute 'weight'", 'source': 'torch-geometric==2.8.1', 'match': 'pattern'},
    {'text': "'GCNConv' object has no attribute 'weight'", 'source': 'torch-geometric==2.3.1', 'match': 'pattern'},
    {'text': "AttributeError: 'GCNConv' object has no attribute 'weight'", 'source': 'divelab/DIG#65', 'match': 'pattern'},
    {'text': "torch.nn.modules.module.ModuleAttributeError: 'GCNConv' object has no attribute 'weight'",
     'source': 'slingling/MS-HGAT#2', 'match': 'pattern'},
    {'text': "AttributeError: 'GATConv' object has no attribute 'weight'", 'source': 'DSE-MSU/DeepRobust#57',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torch', 'version': '2.13.0+cpu'}

import errkb_record as record


def _graph():
    import torch

    torch.manual_seed(0)
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])
    return x, edge_index


def _gcn(init):
    """The trigger's model with its init_weights body given as a function of the model."""
    import torch
    from torch_geometric.nn import GCNConv

    class GCN(torch.nn.Module):
        def __init__(self, in_channels, hidden, out_channels):
            super().__init__()
            self.conv1 = GCNConv(in_channels, hidden)
            self.conv2 = GCNConv(hidden, out_channels)
            init(self)

        def forward(self, x, edge_index):
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    return GCN(4, 8, 2)


def trigger():
    import torch
    from torch_geometric.nn import GCNConv


    class GCN(torch.nn.Module):
        def __init__(self, in_channels, hidden, out_channels):
            super().__init__()
            self.conv1 = GCNConv(in_channels, hidden)
            self.conv2 = GCNConv(hidden, out_channels)
            self.init_weights()

        def init_weights(self):  # Xavier init, as written for PyG 1.x
            torch.nn.init.xavier_normal_(self.conv1.weight)
            torch.nn.init.xavier_normal_(self.conv2.weight)

        def forward(self, x, edge_index):
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


    model = GCN(4, 8, 2)


def lin_weight():
    """Solution 1: the same Xavier init on conv.lin.weight; the layer's output is computed with that weight."""
    import torch
    from torch_geometric.nn import GCNConv

    def init(model):
        torch.nn.init.xavier_normal_(model.conv1.lin.weight)
        torch.nn.init.xavier_normal_(model.conv2.lin.weight)

    torch.manual_seed(1)
    model = _gcn(init)
    from torch_geometric.nn import Linear

    assert "weight" not in dict(model.conv1.named_parameters(recurse=False))
    assert isinstance(model.conv1.lin, Linear) and model.conv1.lin.weight.shape == (8, 4)
    x, edge_index = _graph()
    with torch.no_grad():  # a custom forward's x @ self.weight is self.lin(x): x times the transposed Linear weight
        assert torch.allclose(model.conv1.lin(x), x @ model.conv1.lin.weight.t())
    with torch.no_grad():
        model.conv1.lin.weight.fill_(0.0)
        assert torch.count_nonzero(model.conv1(x, edge_index)) == 0  # output goes through lin.weight (bias is zeros)
        torch.manual_seed(2)
        torch.nn.init.xavier_normal_(model.conv1.lin.weight)
        reference = GCNConv(4, 8, normalize=True)
        reference.lin.weight.copy_(model.conv1.lin.weight)
        assert torch.allclose(model.conv1(x, edge_index), reference(x, edge_index))
    assert model(x, edge_index).shape == (5, 2)


def default_init():
    """Solution 2: no hand-written init; GCNConv's own init is glorot (bounded by sqrt(6/(fan_in+fan_out))) and the
    model trains."""
    import math

    import torch

    model = _gcn(lambda model: None)
    for conv, (fan_in, fan_out) in ((model.conv1, (4, 8)), (model.conv2, (8, 2))):
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        weight = conv.lin.weight
        assert weight.shape == (fan_out, fan_in) and weight.abs().max() <= bound and weight.abs().sum() > 0
        assert torch.count_nonzero(conv.bias) == 0
    x, edge_index = _graph()
    target = torch.tensor([0, 1, 0, 1, 0])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    before = model.conv1.lin.weight.detach().clone()
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x, edge_index), target)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    assert not torch.equal(before, model.conv1.lin.weight) and losses[-1] < losses[0]


def example_fix():
    import torch

    model = _gcn(lambda model: None)
    torch.manual_seed(3)
    record.run("exampleFix", {"torch": torch, "model": model}, section="after")
    torch.manual_seed(3)
    expected = torch.empty(8, 4)
    torch.nn.init.xavier_normal_(expected)
    assert torch.equal(model.conv1.lin.weight.detach(), expected)
