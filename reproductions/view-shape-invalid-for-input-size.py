"""A LeNet-style network written for 32x32 images flattens its convolution features with x.view(-1, 16 * 5 * 5),
a per-sample size that only holds for 32x32 inputs. Fed a batch of four 28x28 images, the features are (4, 16, 4, 4),
1024 elements, which no number of rows of 400 can hold, so view raises RuntimeError "shape '[-1, 400]' is invalid for
input of size 1024" from ATen's shape inference (infer_size_impl, aten/src/ATen/InferSize.h; reshape reports the same).
The demonstrations, each on the trigger's network with its weights: resizing the images to 32x32 makes the forward pass
run (solution 1); adaptive average pooling to 5x5 before flattening with the batch dimension kept accepts 28x28 and
32x32 images, and on 32x32 images it gives exactly the original network's outputs (solution 2); flattening per sample
and sizing the first Linear layer from a dummy forward pass runs on 28x28 images (solution 3). Solution 3's stage also
shows why the -1 in the batch position is dangerous: a batch of 25 such images has 6400 feature elements, which 400
divides, so view(-1, 400) raises nothing and the network returns 16 rows for 25 images. The exampleFix runs from the
record's text on the trigger's features.

Drafted by `errkb draft` from snippet.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: shape '[-1, 400]' is invalid for input of size 1024
  raised at aten/src/ATen/InferSize.h:72
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version). The raise line, 72, is the one the 2.13.0
build reports (TORCH_SHOW_CPP_STACKTRACES=1). The excerpt could not be checked at that commit: the stored pytorch/pytorch
copies of InferSize.h are older (b84d4e31, 0375de7b: the message is thrown with std::runtime_error there). The text
quoted comes from a newer stored copy of the file whose repository and commit the store does not name; in it the
TORCH_CHECK that builds this message for a shape with -1 stands at line 73, one line below the build's 72, so the
excerpt's numbering is shifted by one to the build's (the line above it, e.g. one more #include, is not known). Hence
"excerpt": "unverified".
NEEDS starts at 2.9: torch 2.5.1 raises the same message from the same function, but there as a plain
std::runtime_error without the "Exception raised from ... InferSize.h" location the harness checks a native raise site
by (a run on 2.5.1 ended wrong-error for that reason alone), so 2.5.1 is outside the record's range.
"""
NEEDS = {'packages': {'torch': '>=2.9'}, 'cuda_devices': 0, 'timeout_s': 70}
SOLUTIONS = {1: "resize_inputs", 2: "adaptive_pool_then_flatten", 3: "flatten_per_sample_and_size_fc1"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["x"]}
WORDINGS = [
    {'text': "shape '[-1, 400]' is invalid for input of size 1024", 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': "shape '[-1, 400]' is invalid for input of size 1024", 'source': 'torch==2.15.0', 'match': 'pattern'},
    {'text': "shape '[-1, 400]' is invalid for input of size 384", 'source': 'pytorch/pytorch#38469', 'match': 'pattern'},
    {'text': "shape '[-1, 13, 13, 384]' is invalid for input of size 67968", 'source': 'xulianuwa/MCTformer#29', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified', 'commit': 'cf30153c4c131c8164ee7798e5022d810682e2cb', 'offset': 0}

import errkb_record as record


def _net_class():
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 10)

        def features(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            return self.pool(F.relu(self.conv2(x)))

        def forward(self, x):
            x = self.features(x)
            x = x.view(-1, 16 * 5 * 5)
            return self.fc2(F.relu(self.fc1(x)))

    return Net


def _model_and_images():
    import torch

    torch.manual_seed(0)
    return _net_class()(), torch.randn(4, 3, 28, 28)


def trigger():
    model, images = _model_and_images()  # 28x28 images, the network was written for 32x32
    model(images)


def resize_inputs():
    """Solution 1: resize the images to the size the network was written for; one output row per image."""
    import torch.nn.functional as F

    model, images = _model_and_images()
    try:  # reshape refuses the same shape with the same message
        model.features(images).reshape(-1, 16 * 5 * 5)
    except RuntimeError as exc:
        assert "shape '[-1, 400]' is invalid for input of size 1024" in str(exc), exc
    else:
        raise AssertionError("reshape accepted the shape view refused")
    resized = F.interpolate(images, size=(32, 32), mode="bilinear", align_corners=False)
    out = model(resized)
    assert out.shape == (4, 10), out.shape
    out.sum().backward()
    assert model.fc1.weight.grad is not None and model.fc1.weight.grad.abs().sum() > 0


def adaptive_pool_then_flatten():
    """Solution 2: AdaptiveAvgPool2d((5, 5)) before flattening with the batch dimension kept; the same weights serve
    28x28 and 32x32 images, and on 32x32 images the outputs equal the original network's."""
    import torch
    import torch.nn.functional as F

    model, images = _model_and_images()

    def fixed_forward(x):
        x = F.adaptive_avg_pool2d(model.features(x), (5, 5))
        x = torch.flatten(x, 1)
        return model.fc2(F.relu(model.fc1(x)))

    assert fixed_forward(images).shape == (4, 10)
    images32 = torch.randn(4, 3, 32, 32)
    assert torch.equal(fixed_forward(images32), model(images32)), "the fix changed the outputs of 32x32 images"


def flatten_per_sample_and_size_fc1():
    """Solution 3: flatten with x.size(0) kept and give fc1 the feature count a dummy forward pass measures."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    model, images = _model_and_images()
    # Why the -1 in the batch position is dangerous: 25 images of 28x28 have 25 * 256 = 6400 feature elements, which 400
    # divides: view(-1, 400) raises nothing and the network answers 16 rows for 25 images.
    assert model(torch.randn(25, 3, 28, 28)).shape == (16, 10)
    # Flattening per sample alone moves the error to fc1, which was built for 400 features: it raises, it does not regroup.
    try:
        model.fc1(model.features(images).view(images.size(0), -1))
    except RuntimeError as exc:
        assert "mat1 and mat2 shapes cannot be multiplied" in str(exc), exc
    else:
        raise AssertionError("fc1 accepted 256 features")
    trained = {k: v.clone() for k, v in model.state_dict().items()}

    with torch.no_grad():
        n_features = model.features(torch.zeros(1, 3, 28, 28)).flatten(1).shape[1]
    assert n_features == 256, n_features
    model.fc1 = nn.Linear(n_features, 120)

    def fixed_forward(x):
        x = model.features(x)
        x = x.view(x.size(0), -1)
        return model.fc2(F.relu(model.fc1(x)))

    assert fixed_forward(images).shape == (4, 10)
    assert fixed_forward(torch.randn(25, 3, 28, 28)).shape == (25, 10)  # one row per image now
    try:  # the new fc1 has new weights: a checkpoint of the 400-feature network no longer loads into it
        model.load_state_dict(trained)
    except RuntimeError as exc:
        assert "size mismatch for fc1.weight" in str(exc), exc
    else:
        raise AssertionError("the old checkpoint loaded into the resized fc1")


def example_fix():
    import torch

    model, images = _model_and_images()
    x = model.features(images)  # (4, 16, 4, 4): the tensor the trigger's view refused
    names = record.run("exampleFix", {"x": x}, section="after")
    assert names["x"].shape == (4, 400), names["x"].shape
    x32 = model.features(torch.randn(4, 3, 32, 32))  # the size the network was written for: unchanged
    names = record.run("exampleFix", {"x": x32}, section="after")
    assert torch.equal(names["x"], x32.view(-1, 16 * 5 * 5))
