"""A grayscale image (PIL mode "L", as MNIST's and Fashion-MNIST's are) goes through
transforms.Compose([ToTensor(), Normalize(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))]), the three-channel statistics
copied from a color-image example. ToTensor gives a (1, 28, 28) tensor; torchvision's normalize subtracts the mean
in place (tensor.sub_(mean)), and the in-place result would have to grow to the broadcast shape (3, 28, 28), which an
in-place operation cannot do, so torch's TensorIterator (mark_resize_outputs, aten/src/ATen/TensorIterator.cpp) raises
RuntimeError "output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]". Demonstrations, on the
trigger's image and statistics: converting the image to three channels first (Grayscale(num_output_channels=3), or
image.convert("RGB")) gives a (3, 28, 28) tensor whose every channel is (x - 0.5) / 0.5 (solution 1); one-channel
statistics ((0.5,), (0.5,), or MNIST's own (0.1307,), (0.3081,)) give a (1, 28, 28) tensor, and the stage shows that the
out-of-place x - mean would silently have made three channels instead of failing (solution 2). The exampleFix runs
from the record's text on the trigger's image.

The record's raise site is torch's C++ (the harness reads it from TORCH_SHOW_CPP_STACKTRACES=1); torchvision only builds
the situation. Where a torchvision that loads is installed, every stage uses transforms.ToTensor/Normalize (and
Grayscale); where it is not, the stages run a torch-only stand-in of the same two steps (the pixels divided by 255,
then the same in-place sub_ and div_ torchvision's normalize runs), which reaches the same raise site, and each stage
returns which variant ran. Results: torch 2.5.1 with torchvision 0.20.1 and torch 2.15.0 with torchvision 0.29.2 run
torchvision itself; the installed torch 2.13.0+cpu has no torchvision, and the only torchvision 0.28.0 wheel on the
local index is built for the CUDA torch (with 2.13.0+cpu its import fails with 'operator torchvision::nms does not
exist'), so that result runs the stand-in. The line is the one the torch 2.13.0 build reports. No stored copy of
TensorIterator.cpp at the build's commit (cf30153c4c131c8164ee7798e5022d810682e2cb) was available; the excerpt's text is
mark_resize_outputs as a stored copy of the file writes it (the same copy whose compute_types text the record
loss-backward-found-dtype-long-expected-float quotes; the store's string search does not name its repository or
commit), numbered so that its TORCH_CHECK stands at the build's line; hence "excerpt": "unverified".
"""
NEEDS = {"packages": {"torch": ">=2.0", "pillow": ""}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "three_channel_image", 2: "one_channel_statistics"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["transform", "image"]}
KEEP = ["transform"]
WORDINGS = [
    {"text": "output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "RuntimeError: output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]",
     "source": "L1aoXingyu/pytorch-beginner#31", "match": "matcher"},
    {"text": "RuntimeError: output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]",
     "source": "pranay414/Fashion-MNIST-Pytorch#1", "match": "matcher"},
    {"text": "output with shape [1, 256, 192] doesn't match the broadcast shape [3, 256, 192]",
     "source": "GrayXu/Virtual-Try-On-Flask#6", "match": "pattern"},
    {"text": "RuntimeError: output with shape [1, 8190, 5120] doesn't match the broadcast shape [2, 8190, 5120]",
     "source": "kijai/ComfyUI-WanVideoWrapper#174", "match": "pattern"},
    {"text": "RuntimeError: output with shape [256] doesn't match the broadcast shape [18, 72, 1, 256]",
     "source": "HRNet/HRNet-Semantic-Segmentation#252", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import torch

MEAN, STD = (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)
STAND_IN = "torch-only stand-in for torchvision (not installed or not loadable with this torch build)"


def _transforms():
    """torchvision.transforms, or None where torchvision is missing or its build does not load with this torch."""
    try:
        from torchvision import transforms
    except (ImportError, RuntimeError):
        return None
    return transforms


def _image():
    from PIL import Image

    torch.manual_seed(0)
    pixels = (torch.rand(28 * 28) * 255).to(torch.uint8).tolist()
    return Image.frombytes("L", (28, 28), bytes(pixels))  # mode "L": one channel


def _to_tensor(image):
    """ToTensor for a mode "L" image: (1, H, W) floats in [0, 1]."""
    transforms = _transforms()
    if transforms is not None:
        return transforms.ToTensor()(image)
    w, h = image.size
    return torch.tensor(list(image.tobytes()), dtype=torch.float32).view(1, h, w) / 255


def _normalize(tensor, mean, std):
    """transforms.Normalize, or the stand-in: the same in-place sub_ and div_ torchvision's normalize runs."""
    transforms = _transforms()
    if transforms is not None:
        return transforms.Normalize(mean, std)(tensor)
    mean_t = torch.as_tensor(mean, dtype=tensor.dtype).view(-1, 1, 1)
    std_t = torch.as_tensor(std, dtype=tensor.dtype).view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)


def _variant():
    transforms = _transforms()
    if transforms is None:
        return STAND_IN
    import torchvision

    return f"torchvision {torchvision.__version__}"


def trigger():
    _normalize(_to_tensor(_image()), MEAN, STD)  # (1, 28, 28) tensor, three-channel statistics
    return _variant()


def three_channel_image():
    """Solution 1: make the image three-channel before ToTensor; every channel is then (x - 0.5) / 0.5."""
    image = _image()
    plain = _to_tensor(image)
    assert plain.shape == (1, 28, 28)
    transforms = _transforms()
    firsts = [lambda im: im.convert("RGB")]
    if transforms is not None:
        firsts.append(transforms.Grayscale(num_output_channels=3))
    for first in firsts:
        rgb = first(image)
        if transforms is not None:
            tensor = transforms.ToTensor()(rgb)
        else:
            w, h = rgb.size
            tensor = torch.tensor(list(rgb.tobytes()), dtype=torch.float32).view(h, w, 3).permute(2, 0, 1) / 255
        out = _normalize(tensor, MEAN, STD)
        assert out.shape == (3, 28, 28), out.shape
        for c in range(3):
            assert torch.allclose(out[c], (plain[0] - 0.5) / 0.5, atol=1e-6)
    return _variant()


def one_channel_statistics():
    """Solution 2: one-channel statistics for one-channel images; out-of-place arithmetic would have hidden it."""
    image = _image()
    plain = _to_tensor(image)
    for mean, std in (((0.5,), (0.5,)), ((0.1307,), (0.3081,))):
        out = _normalize(_to_tensor(image), mean, std)
        assert out.shape == (1, 28, 28), out.shape
        assert torch.allclose(out, (plain - mean[0]) / std[0], atol=1e-6)
    # The same arithmetic out of place broadcasts silently to three channels; in place it is refused.
    mean3 = torch.tensor(MEAN).view(-1, 1, 1)
    assert (plain - mean3).shape == (3, 28, 28)
    try:
        plain.clone().sub_(mean3)
    except RuntimeError as exc:
        assert "output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]" in str(exc), str(exc)
    else:
        raise AssertionError("the in-place subtraction grew the tensor")
    grown = plain.clone()
    try:  # any in-place operator is refused the same way
        grown += mean3
    except RuntimeError as exc:
        assert "output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]" in str(exc), str(exc)
    else:
        raise AssertionError("+= grew the tensor")
    return _variant()


def _transform():
    """The user's transform: ToTensor, then Normalize with three-channel statistics (or the stand-in of both)."""
    transforms = _transforms()
    if transforms is not None:
        return transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean=MEAN, std=STD)])

    def stand_in(image):
        w, h = image.size
        c = len(image.getbands())
        tensor = torch.tensor(list(image.tobytes()), dtype=torch.float32).view(h, w, c).permute(2, 0, 1) / 255
        return _normalize(tensor.contiguous(), MEAN, STD)

    return stand_in


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's image and transform."""
    image, transform = _image(), _transform()
    try:
        transform(image)
    except RuntimeError as exc:
        assert "doesn't match the broadcast shape" in str(exc), str(exc)
    else:
        raise AssertionError("the transform accepted the grayscale image")
    names = record.run("exampleFix", {"transform": transform, "image": image}, section="after")
    assert names["tensor"].shape == (3, 28, 28), names["tensor"].shape
    plain = _to_tensor(image)
    for c in range(3):
        assert torch.allclose(names["tensor"][c], (plain[0] - 0.5) / 0.5, atol=1e-6)
    return _variant()
