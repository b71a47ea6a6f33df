"""An H x W x C uint8 NumPy frame (what OpenCV returns) goes through transforms.Compose([ColorJitter(brightness=0.3),
ToTensor()]). ColorJitter calls F.adjust_brightness, which hands a non-tensor to the PIL kernel, and
torchvision/transforms/_functional_pil.py raises TypeError "img should be PIL Image. Got <class 'numpy.ndarray'>".
The demonstrations: ToPILImage (or Image.fromarray) first, giving the same brightness-jittered tensor shape as a PIL
input, and an OpenCV BGR frame reversed to RGB with [..., ::-1] going straight into Image.fromarray and ToPILImage; and
ToTensor first, so the jitter runs on a C x H x W tensor (ToTensor refuses the reversed view, and takes its copy).
Solution 1's stage also shows that Grayscale, RandomHorizontalFlip and Pad raise this same message from their PIL
kernels, and that Resize, CenterCrop and RandomRotation reject the same array with a TypeError of another wording.
The record's exampleFix and validationCode run from its text; the guard passes PIL images of several modes and tensors
(uint8, float, batched).
Environments: the PyPI torchvision wheels link libtorch_cuda, so each torchvision release runs beside the CUDA torch
it was built for (torchvision 0.20.1 with torch 2.5.1, 0.29.1 and 0.29.2 with torch 2.15.0); the installed torch
2.13.0+cpu has no torchvision and skips the record.

Drafted by `errkb draft` from tv_pil_snip.py on torchvision 0.29.2 (torch 2.15.0), Python 3.11.7:
  TypeError: img should be PIL Image. Got <class 'numpy.ndarray'>
  raised at torchvision/transforms/_functional_pil.py:73
The draft left the commit unresolved; the wheel's torchvision.version.git_version names f12281517f1b, used as analyzedSha;
the excerpt is the installed 0.29.2 file's lines 71-75 (PROVENANCE installed).
"""
NEEDS = {'packages': {'torchvision': '', 'torch': '', 'numpy': '', 'pillow': ''}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "pil_first", 2: "tensor_first"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["frame"], "validationCode": ["img"]}
KEEP = ["frame"]
VALID = {"pil-modes": "valid_pil_modes", "tensors": "valid_tensors"}
WORDINGS = [
    {'text': "img should be PIL Image. Got <class 'numpy.ndarray'>", 'source': 'torchvision==0.29.2', 'match': 'pattern'},
    {'text': "img should be PIL Image. Got <class 'numpy.ndarray'>", 'source': 'torchvision==0.20.1', 'match': 'pattern'},
    {'text': "img should be PIL Image. Got <class 'torch.Tensor'>", 'source': 'leVirve/lsun-room#16', 'match': 'pattern'},
    {'text': "Unexpected type <class 'numpy.ndarray'>", 'source': 'pytorch/vision#8895', 'match': 'none',
     'why': "raised by get_dimensions for Resize, CenterCrop and RandomRotation on an array: another check, the record says it does not match it"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'torchvision', 'version': '0.29.2'}

import errkb_record as record


def _frame():
    import numpy as np

    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(64, 48, 3), dtype=np.uint8)


def trigger():
    import numpy as np
    from torchvision import transforms

    frame = np.zeros((64, 64, 3), dtype=np.uint8)  # what cv2.imread / imageio return: an H x W x C uint8 array
    augment = transforms.Compose([transforms.ColorJitter(brightness=0.3), transforms.ToTensor()])
    x = augment(frame)


def _is_image_tensor(x, height=64, width=48):
    import torch

    assert isinstance(x, torch.Tensor) and tuple(x.shape) == (3, height, width) and x.dtype == torch.float32, (type(x), getattr(x, "shape", None))
    assert 0.0 <= float(x.min()) and float(x.max()) <= 1.0


def pil_first():
    """Solution 1: ToPILImage (or Image.fromarray) before the PIL transforms; Resize/CenterCrop reject arrays otherwise."""
    import numpy as np
    import torch
    from PIL import Image
    from torchvision import transforms

    frame = _frame()
    torch.manual_seed(0)
    x = transforms.Compose([transforms.ToPILImage(), transforms.ColorJitter(brightness=0.3), transforms.ToTensor()])(frame)
    _is_image_tensor(x)
    torch.manual_seed(0)
    y = transforms.Compose([transforms.ColorJitter(brightness=0.3), transforms.ToTensor()])(Image.fromarray(frame))
    assert torch.equal(x, y), "ToPILImage and Image.fromarray give different images"
    bgr = np.ascontiguousarray(frame[..., ::-1])  # the buffer OpenCV returns: the same pixels, channels in B, G, R order
    assert np.array_equal(np.asarray(Image.fromarray(bgr[..., ::-1])), frame)  # reversed back: the RGB image
    assert np.array_equal(np.asarray(transforms.ToPILImage()(bgr[..., ::-1])), frame)
    for kernel in (transforms.Grayscale(), transforms.RandomHorizontalFlip(p=1.0), transforms.Pad(2)):
        try:
            kernel(frame)
        except TypeError as exc:  # every PIL kernel makes the same check
            assert str(exc) == "img should be PIL Image. Got <class 'numpy.ndarray'>", exc
        else:
            raise AssertionError(f"{kernel} accepted an ndarray")
        kernel(Image.fromarray(frame))
    for other in (transforms.Resize(32), transforms.CenterCrop(32), transforms.RandomRotation(10)):
        try:
            other(frame)
        except TypeError as exc:
            assert "img should be PIL Image" not in str(exc), exc  # another wording: not this record
        else:
            raise AssertionError(f"{other} accepted an ndarray")


def tensor_first():
    """Solution 2: ToTensor first; ColorJitter then runs on the C x H x W float tensor."""
    import torch
    from torchvision import transforms

    import numpy as np

    torch.manual_seed(0)
    x = transforms.Compose([transforms.ToTensor(), transforms.ColorJitter(brightness=0.3)])(_frame())
    _is_image_tensor(x)
    bgr = np.ascontiguousarray(_frame()[..., ::-1])
    try:
        transforms.ToTensor()(bgr[..., ::-1])
    except ValueError:
        pass  # the reversed view has a negative stride: ToTensor does not take it
    else:
        raise AssertionError("ToTensor took the channel-reversed view")
    rgb = transforms.ToTensor()(np.ascontiguousarray(bgr[..., ::-1]))
    assert torch.equal(rgb, transforms.ToTensor()(_frame()))
    _is_image_tensor(transforms.ColorJitter(brightness=0.3)(rgb))


def example_fix():
    frame = _frame()
    names = record.run("exampleFix", {"frame": frame}, section="after")
    _is_image_tensor(names["x"])


def guard():
    import torch
    from PIL import Image

    assert not record.check("validationCode", {"img": _frame()})
    assert not record.check("validationCode", {"img": _frame().tolist()})
    assert record.check("validationCode", {"img": Image.fromarray(_frame())})
    assert record.check("validationCode", {"img": torch.rand(3, 64, 48)})


def _jitters(img):
    from torchvision import transforms

    transforms.ColorJitter(brightness=0.3)(img)
    return {"img": img}


def valid_pil_modes():
    from PIL import Image

    frame = _frame()
    return [_jitters(Image.fromarray(frame)), _jitters(Image.fromarray(frame[..., 0])),  # RGB and L
            _jitters(Image.fromarray(frame).convert("RGBA").convert("RGB"))]


def valid_tensors():
    import torch

    return [_jitters(torch.rand(3, 64, 48)), _jitters(torch.randint(0, 256, (3, 64, 48), dtype=torch.uint8)),
            _jitters(torch.rand(2, 3, 32, 32))]
