"""timm.create_model("resnet_18", ...) with a name timm's registry does not hold: the factory raises RuntimeError
"Unknown model (resnet_18)" (timm/models/_factory.py). The demonstrations, all with pretrained=False (no download):
the registered name found with timm.list_models("resnet1*") builds a ResNet-18 with the requested 10 classes; a
repository's own model (a module with an @register_model function, written to a temporary folder) is unknown until
that module is imported and is built afterwards; and a newer architecture, mambaout_femto, is unknown to timm 0.9.16
and 1.0.9 and built by 1.0.28 (solution 3 asserts, on each release, that the registry's answer matches the release
the record names as the first to have it; on the older ones it returns the variant string). The record's exampleFix
and validationCode run from its text; the guard passes tagged names, names with the Hub organisation prefix
(timm/resnet18.a1_in1k), registered custom models and ordinary names.
Environments: torchvision and timm need a CUDA build of torch (the PyPI torchvision wheels link libtorch_cuda), so the
matrix runs timm releases beside torch 2.15.0 and torchvision 0.29.2; the installed CPU build (torch 2.13.0+cpu)
has no torchvision and skips the record.

Drafted by `errkb draft` from timm_snip.py on timm 1.0.28 (torch 2.15.0, torchvision 0.29.2), Python 3.11.7:
  RuntimeError: Unknown model (resnet_18)
  raised at timm/models/_factory.py:134
The installed 1.0.28 _factory.py is byte-identical to the file at tag v1.0.28 (8ef73809f622) of the stored
huggingface/pytorch-image-models snapshot (cmp). mambaout.py first appears in that history in a commit of
2024-08-23 that tag v1.0.10 is the first to contain.
"""
NEEDS = {'packages': {'timm': '', 'torch': '', 'torchvision': ''}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "registered_name_from_list_models", 2: "import_registering_module", 3: "upgrade_for_newer_architecture"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": [], "validationCode": ["model_name"]}
VALID = {"registered-names": "valid_registered_names", "pretrained-tags": "valid_pretrained_tags",
         "custom-registered": "valid_custom_registered", "hub-organisation-prefix": "valid_hub_organisation_prefix"}
WORDINGS = [
    {'text': 'Unknown model (resnet_18)', 'source': 'timm==1.0.28', 'match': 'pattern'},
    {'text': 'Unknown model (simba_l)', 'source': 'raytrun/mamba-clip#4', 'match': 'pattern'},
    {'text': 'Unknown model (spikingtransformer_ti)', 'source': 'xyshi2000/SpikingResformer#1', 'match': 'pattern'},
    {'text': 'Unknown model (convnextv2_huge.fcmae_ft_in22k_in1k_384)', 'source': 'Lavreniuk/SPIdepth#7', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'timm', 'version': '1.0.28'}

import sys
import tempfile
from pathlib import Path

import errkb_record as record

NEWER = "mambaout_femto"
NEWER_SINCE = (1, 0, 10)  # the first timm release whose registry has it (see the docstring)

CUSTOM_MODULE = '''
import torch.nn as nn
from timm.models import register_model


class TinyConvNet(nn.Module):
    def __init__(self, num_classes=1000, in_chans=3, **kwargs):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(in_chans, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.head(self.features(x))


@register_model
def tiny_conv_net(pretrained=False, **kwargs):
    return TinyConvNet(**kwargs)
'''


def _version():
    import timm

    return tuple(int(p) for p in timm.__version__.split(".")[:3] if p.isdigit())


def _classifies(model, classes, size=64):
    import torch

    model.eval()
    with torch.no_grad():
        out = model(torch.randn(2, 3, size, size))
    assert out.shape == (2, classes), out.shape


def _custom_module_folder():
    folder = Path(tempfile.mkdtemp())
    (folder / "my_backbones.py").write_text(CUSTOM_MODULE)
    sys.path.insert(0, str(folder))
    return folder


def trigger():
    import timm

    model = timm.create_model("resnet_18", pretrained=False, num_classes=10)


def registered_name_from_list_models():
    """Solution 1: list_models with a wildcard shows the registered spelling; that name builds the model."""
    import timm

    candidates = timm.list_models("resnet1*")
    assert "resnet18" in candidates and "resnet_18" not in candidates, candidates
    _classifies(timm.create_model("resnet18", pretrained=False, num_classes=10), 10)


def import_registering_module():
    """Solution 2: the repository's model is unknown until its module (with @register_model) is imported."""
    import timm

    _custom_module_folder()
    try:
        timm.create_model("tiny_conv_net", pretrained=False, num_classes=5)
    except RuntimeError as exc:
        assert "Unknown model (tiny_conv_net)" in str(exc), exc
    else:
        raise AssertionError("the unregistered model was built")
    import my_backbones  # noqa: F401  (the import runs @register_model)

    assert timm.is_model("tiny_conv_net")
    _classifies(timm.create_model("tiny_conv_net", pretrained=False, num_classes=5), 5)


def upgrade_for_newer_architecture():
    """Solution 3: whether this release knows mambaout_femto is decided by its version; from 1.0.10 on it builds."""
    import timm

    known = timm.is_model(NEWER)
    assert known == (_version() >= NEWER_SINCE), f"timm {timm.__version__}: is_model({NEWER!r}) = {known}"
    if not known:
        try:
            timm.create_model(NEWER, pretrained=False)
        except RuntimeError as exc:
            assert f"Unknown model ({NEWER})" in str(exc), exc
        else:
            raise AssertionError(f"timm {timm.__version__} built {NEWER}")
        return f"timm {timm.__version__}: {NEWER} not registered yet; a release >= 1.0.10 is needed"
    _classifies(timm.create_model(NEWER, pretrained=False, num_classes=3), 3)


def example_fix():
    names = record.run("exampleFix", {}, section="after")
    _classifies(names["model"], 10)


def guard():
    assert not record.check("validationCode", {"model_name": "resnet_18"})
    assert not record.check("validationCode", {"model_name": "resnet_18.a1_in1k"})
    assert record.check("validationCode", {"model_name": "resnet18"})


def _builds(model_name, **kwargs):
    import timm

    timm.create_model(model_name, pretrained=False, **kwargs)
    return {"model_name": model_name}


def valid_registered_names():
    return [_builds(name) for name in ("resnet18", "efficientnet_b0", "vit_tiny_patch16_224", "convnext_atto")]


def valid_pretrained_tags():
    # a pretrained tag after the dot names a weight set; with pretrained=False nothing is fetched
    return [_builds("resnet18.a1_in1k"), _builds("vit_tiny_patch16_224.augreg_in21k_ft_in1k")]


def valid_hub_organisation_prefix():
    # create_model keeps only the last path component of a name without a scheme: the Hub repo id form builds too
    return [_builds("timm/resnet18"), _builds("timm/resnet18.a1_in1k")]


def valid_custom_registered():
    _custom_module_folder()
    import my_backbones  # noqa: F401

    return _builds("tiny_conv_net", num_classes=4)
