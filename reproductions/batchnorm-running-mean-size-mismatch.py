"""A small CNN's second convolution was widened to 32 output channels, but the BatchNorm2d after it still says
num_features=16. batch_norm checks the buffers against the input's dimension 1 before normalizing:
check_dims_match_num_input_features (aten/src/ATen/native/Normalization.cpp) raises "running_mean should
contain 32 elements not 16" (the same check names weight, bias or running_var when those are the first to
disagree, e.g. with track_running_stats=False). The same message comes from BatchNorm1d given (batch, seq,
features) input, where dimension 1 is the sequence. The demonstrations: size the norm from the layer before it
(conv.out_channels); move the features to dimension 1 for sequence input (transpose, normalize, transpose back);
and let nn.LazyBatchNorm2d take num_features from the first batch. The record's exampleFix and validationCode run
from its own text; the guard is checked against 2-D, 3-D and 4-D inputs, channels_last, eval mode with a batch of
one and running stats turned off. CPU only."""
NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "size_from_previous_layer", 2: "features_to_dim_1", 3: "lazy_batchnorm"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "batchnorm1d-2d-and-3d": "valid_batchnorm1d",
    "channels-last": "valid_channels_last",
    "eval-batch-of-one": "valid_eval_batch_of_one",
    "no-running-stats": "valid_no_running_stats",
    "lazy-before-first-batch": "valid_lazy_before_first_batch",
    "generated-channels": "valid_generated_channels",
}
CODE_NAMES = {"exampleFix": ["nn", "conv"], "validationCode": ["x", "bn"]}
WORDINGS = [
    {"text": "running_mean should contain 32 elements not 16", "source": "torch==2.13.0", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "000e0689816596fada756234dbc4cf0a73790876", "offset": 48}

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn


def _net(norm):
    torch.manual_seed(0)
    conv1 = nn.Conv2d(3, 16, 3, padding=1)
    conv2 = nn.Conv2d(16, 32, 3, padding=1)  # widened from 16 to 32 output channels
    return nn.Sequential(conv1, nn.BatchNorm2d(16), nn.ReLU(), conv2, norm(conv2), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 4))


def _images():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 3, 12, 12, generator=g), torch.randint(0, 4, (8,), generator=g)


def _train_step(model, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


def trigger():
    model = _net(lambda conv: nn.BatchNorm2d(16))  # still the old width
    x, _ = _images()
    model(x)  # RuntimeError: running_mean should contain 32 elements not 16


def size_from_previous_layer():
    """Solution 1: num_features from the layer before it (conv.out_channels), so a change of width follows."""
    model = _net(lambda conv: nn.BatchNorm2d(conv.out_channels))
    x, y = _images()
    _train_step(model, x, y)
    assert model[4].running_mean.shape == (32,) and not torch.equal(model[4].running_mean, torch.zeros(32))
    # the same check in eval mode, and naming weight when running stats are off; both fixed the same way
    features = model[3](model[2](model[1](model[0](x))))
    for wrong, expected in ((nn.BatchNorm2d(16).eval(), "running_mean should contain 32 elements not 16"),
                            (nn.BatchNorm2d(16, track_running_stats=False), "weight should contain 32 elements not 16")):
        try:
            wrong(features)
        except RuntimeError as exc:
            assert expected in str(exc), exc
        else:
            raise AssertionError(f"{wrong} was expected to refuse 32 channels")
    assert nn.BatchNorm2d(model[3].out_channels, track_running_stats=False)(features).shape == features.shape


def features_to_dim_1():
    """Solution 2: BatchNorm1d normalizes dimension 1; (batch, seq, features) input is transposed around it."""
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(16)
    tokens = torch.randn(4, 10, 16)  # (batch, seq, features)
    try:
        bn(tokens)
    except RuntimeError as exc:
        assert "running_mean should contain 10 elements not 16" in str(exc), exc
    else:
        raise AssertionError("(batch, seq, features) input was expected to be refused")
    out = bn(tokens.transpose(1, 2)).transpose(1, 2)
    assert out.shape == tokens.shape
    # each feature is normalized over batch and sequence positions
    flat = out.reshape(-1, 16)
    assert torch.allclose(flat.mean(0), torch.zeros(16), atol=1e-5)
    assert torch.allclose(flat.var(0, unbiased=False), torch.ones(16), atol=1e-3)


def lazy_batchnorm():
    """Solution 3: nn.LazyBatchNorm2d takes num_features from the first batch it sees."""
    model = _net(lambda conv: nn.LazyBatchNorm2d())
    x, y = _images()
    model(x)  # materializes the lazy module before the optimizer is built
    assert model[4].num_features == 32
    _train_step(model, x, y)


def example_fix():
    """The record's exampleFix, its "after" part, with the network's real second convolution."""
    torch.manual_seed(0)
    conv = nn.Conv2d(16, 32, 3, padding=1)
    names = record.run("exampleFix", {"nn": nn, "conv": conv}, section="after")
    bn = names["bn"]
    out = bn(conv(torch.randn(2, 16, 8, 8)))
    assert bn.num_features == 32 and out.shape == (2, 32, 8, 8)


def guard():
    """validationCode flags the 32-channel input for the 16-feature norm and passes the correctly sized one."""
    x = torch.randn(8, 32, 12, 12)
    assert not record.check("validationCode", {"x": x, "bn": nn.BatchNorm2d(16)})
    assert not record.check("validationCode", {"x": torch.randn(4, 10, 16), "bn": nn.BatchNorm1d(16)})
    assert record.check("validationCode", {"x": x, "bn": nn.BatchNorm2d(32)})


def _accepted(x, bn):
    bn(x)  # proves the situation valid
    return {"x": x, "bn": bn}


def valid_batchnorm1d():
    return [_accepted(torch.randn(4, 16), nn.BatchNorm1d(16)),
            _accepted(torch.randn(4, 16, 10), nn.BatchNorm1d(16))]


def valid_channels_last():
    x = torch.randn(2, 8, 5, 5).to(memory_format=torch.channels_last)
    return _accepted(x, nn.BatchNorm2d(8))


def valid_eval_batch_of_one():
    return _accepted(torch.randn(1, 8, 5, 5), nn.BatchNorm2d(8).eval())


def valid_no_running_stats():
    return _accepted(torch.randn(3, 8, 5, 5), nn.BatchNorm2d(8, track_running_stats=False))


def valid_lazy_before_first_batch():
    """A LazyBatchNorm2d has num_features 0 until its first batch, and accepts any channel count."""
    bn = nn.LazyBatchNorm2d()
    x = torch.randn(2, 8, 5, 5)
    nn.LazyBatchNorm2d()(x)  # an identical lazy module accepts it; the one the guard sees stays unmaterialized
    assert bn.has_uninitialized_params()
    return {"x": x, "bn": bn}


def valid_generated_channels():
    """Generated: BatchNorm1d/2d/3d over inputs whose dimension 1 has its num_features, any batch (>1) and size."""
    def pair(kind, channels, batch, size):
        bn = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)[kind](channels)
        spatial = {0: 1 if size > 1 else 0, 1: 2, 2: 3}[kind]  # BatchNorm1d: (N, C) or (N, C, L); 2d: 4-D; 3d: 5-D
        x = torch.randn(batch, channels, *([size] * spatial))
        return _accepted(x, bn)

    return st.builds(pair, st.integers(0, 2), st.integers(1, 8), st.integers(2, 4), st.integers(1, 4))
