"""An MLP pipeline flattens the image inside the transforms and normalizes afterwards:
Compose([ToTensor(), Lambda(lambda t: t.view(-1)), Normalize((0.1307,), (0.3081,))]) on a 28 x 28 grayscale PIL image.
Normalize gets 784 values in one dimension and torchvision/transforms/_functional_tensor.py (_assert_image_tensor, the
check every tensor kernel makes) raises TypeError "Tensor is not a torch image.". The demonstrations: Normalize first
and flatten last, which gives exactly the vector the user wanted ((x - mean) / std of every pixel); and, for non-image
data, plain tensor arithmetic, with reshaping a flattened image back to 1 x 28 x 28 as the other way out. Solution 1's
stage also shows that RandomHorizontalFlip, Resize and ColorJitter raise the same message for the flattened vector, and
that a 2-D H x W tensor passes this check and is refused by Normalize's next check with a ValueError of another wording
(RandomHorizontalFlip and ColorJitter take it). The record's exampleFix and validationCode run from its text; the guard passes C x H x W and batched
tensors of float32/float64, each normalized by the library.
Environments: the PyPI torchvision wheels link libtorch_cuda, so each torchvision release runs beside the CUDA torch
it was built for (torchvision 0.20.1 with torch 2.5.1, 0.29.1 and 0.29.2 with torch 2.15.0); the installed torch
2.13.0+cpu has no torchvision and skips the record.

Drafted by `errkb draft` from tv_tens_snip.py on torchvision 0.29.2 (torch 2.15.0), Python 3.11.7:
  TypeError: Tensor is not a torch image.
  raised at torchvision/transforms/_functional_tensor.py:15
The draft left the commit unresolved; the wheel's torchvision.version.git_version names f12281517f1b, used as analyzedSha;
the excerpt is the installed 0.29.2 file's lines 9-20 (the draft took 13-15; the author added the predicate and a caller).
"""
NEEDS = {'packages': {'torchvision': '', 'torch': '', 'numpy': '', 'pillow': ''}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "normalize_then_flatten", 2: "arithmetic_for_non_images"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["digit"], "validationCode": ["tensor"]}
VALID = {"images": "valid_images", "batches": "valid_batches"}
WORDINGS = [
    {'text': 'Tensor is not a torch image.', 'source': 'torchvision==0.29.2', 'match': 'pattern'},
    {'text': 'Tensor is not a torch image.', 'source': 'torchvision==0.20.1', 'match': 'pattern'},
    {'text': 'tensor is not a torch image.', 'source': 'xuduo35/StyleFlowPytorch#4', 'match': 'pattern'},
    {'text': 'tensor is not a torch image.', 'source': 'Giveupfree/SiamCAR-CAM#1', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torchvision', 'version': '0.29.2'}

import errkb_record as record

MEAN, STD = 0.1307, 0.3081


def _digit():
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    return Image.fromarray(rng.integers(0, 256, size=(28, 28), dtype=np.uint8))


def _expected_vector(digit):
    import numpy as np
    import torch

    pixels = torch.from_numpy(np.asarray(digit, dtype=np.float32) / 255.0)
    return ((pixels - MEAN) / STD).reshape(-1)


def trigger():
    import numpy as np
    from PIL import Image
    from torchvision import transforms

    digit = Image.fromarray(np.zeros((28, 28), dtype=np.uint8))  # one grayscale MNIST-sized image
    to_vector = transforms.Compose([
        transforms.ToTensor(),
        transforms.Lambda(lambda t: t.view(-1)),  # flatten for an MLP ...
        transforms.Normalize((0.1307,), (0.3081,)),  # ... then normalize: the image is gone
    ])
    x = to_vector(digit)


def normalize_then_flatten():
    """Solution 1: Normalize on the 1 x 28 x 28 image, flatten last: the vector equals (pixel - mean) / std."""
    import torch
    from torchvision import transforms

    digit = _digit()
    to_vector = transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,)),
                                    transforms.Lambda(lambda t: t.view(-1))])
    x = to_vector(digit)
    assert x.shape == (784,) and torch.allclose(x, _expected_vector(digit), atol=1e-6)
    try:
        transforms.Normalize((MEAN,), (STD,))(torch.rand(28, 28))  # H x W: past this check, refused by the next
    except ValueError as exc:
        assert "not a torch image" not in str(exc), exc
    else:
        raise AssertionError("Normalize accepted a 2-D tensor")
    flat = transforms.ToTensor()(digit).view(-1)
    for other in (transforms.RandomHorizontalFlip(p=1.0), transforms.Resize(8), transforms.ColorJitter(brightness=0.3)):
        try:
            other(flat)
        except TypeError as exc:  # the same check in every tensor kernel
            assert str(exc) == "Tensor is not a torch image.", exc
        else:
            raise AssertionError(f"{other} accepted a 1-D tensor")
    for other in (transforms.RandomHorizontalFlip(p=1.0), transforms.ColorJitter(brightness=0.3)):
        assert other(torch.rand(28, 28)).shape == (28, 28)  # H x W is an image to them


def arithmetic_for_non_images():
    """Solution 2: plain (x - mean) / std for a vector; or reshape a flattened image back before the transform."""
    import torch
    from torchvision import transforms

    digit = _digit()
    flat = transforms.ToTensor()(digit).view(-1)
    by_hand = (flat - MEAN) / STD
    assert torch.allclose(by_hand, _expected_vector(digit), atol=1e-6)
    again = transforms.Normalize((MEAN,), (STD,))(flat.view(1, 28, 28)).view(-1)
    assert torch.allclose(again, by_hand, atol=1e-6)


def example_fix():
    import torch

    digit = _digit()
    names = record.run("exampleFix", {"digit": digit}, section="after")
    assert torch.allclose(names["x"], _expected_vector(digit), atol=1e-6)


def guard():
    import torch

    assert not record.check("validationCode", {"tensor": torch.rand(784)})
    assert not record.check("validationCode", {"tensor": torch.tensor(0.5)})
    assert not record.check("validationCode", {"tensor": torch.rand(28, 28)})
    assert record.check("validationCode", {"tensor": torch.rand(1, 28, 28)})


def _normalized(tensor):
    from torchvision import transforms

    channels = tensor.shape[-3]
    transforms.Normalize([0.5] * channels, [0.25] * channels)(tensor)
    return {"tensor": tensor}


def valid_images():
    import torch

    return [_normalized(torch.rand(1, 28, 28)), _normalized(torch.rand(3, 32, 32)),
            _normalized(torch.rand(3, 8, 8, dtype=torch.float64))]


def valid_batches():
    import torch

    return [_normalized(torch.rand(4, 3, 16, 16)), _normalized(torch.rand(2, 5, 1, 8, 8))]
