"""A repository registers its own architecture with timm's @register_model, in the usual form of an entrypoint that
forwards **kwargs to a model class whose __init__ takes no **kwargs, and builds it with timm.create_model. From timm
0.6 on, create_model calls every entrypoint with pretrained_cfg= (0.9 adds pretrained_cfg_overlay=, 1.0.13 adds
cache_dir=), the entrypoint forwards them to the class, and Python raises TypeError
"...__init__() got an unexpected keyword argument 'pretrained_cfg'" for the class; the innermost timm frame, the
raise site the record names, is create_model's call of the entrypoint (timm/models/_factory.py). timm 0.5.4 ran
the same snippet without error in the draft's bisection (below); its result cannot be committed for this record: the
0.5 and 0.6 wheels' metadata name rwightman/pytorch-image-models (the repository's old address), not the record's
huggingface/pytorch-image-models, so the harness does not resolve the library there (verdict not-reproduced,
"unknown library"). Results: timm 0.9.16, 1.0.28 and 1.0.31 with torch 2.15.0 / torchvision 0.29.2, verified. The model is defined inside trigger(), so Python
names it trigger.<locals>.TinyNet; in a user's module it is TinyNet.__init__() (Python 3.10 and later) or
__init__() (older Pythons). The demonstrations, each building the model with create_model and running a forward
pass with the requested 10 classes: solution 1 gives the class's __init__ a **kwargs (the record's exampleFix, run
from its text); solution 2 pops timm's factory keywords in the entrypoint (also around timm's own VisionTransformer, as DeiT's
models.py builds it: that class takes no **kwargs, so solution 1 cannot apply there, and the unchanged entrypoint is
shown to raise), and checks that the fix people often
share, naming only pretrained_cfg in the entrypoint's signature, is not enough from timm 0.9 on (the class then
gets pretrained_cfg_overlay); solution 3 builds the model by calling the entrypoint directly, without
create_model.

Drafted by `errkb draft --api-change --library timm` from cfg_snip.py (torch 2.15.0, torchvision 0.29.2 pinned),
Python 3.11.7; the raise site was first read at timm/models/_factory.py:230 in timm 1.0.31. The record is anchored
at timm 1.0.28 instead: the stored huggingface/pytorch-image-models snapshot ends before 1.0.29, and the installed
1.0.28 _factory.py is byte-identical to the file at tag v1.0.28 (8ef73809f622), where the call is lines 138-144
(checked with cmp). factory.py at v0.6.5 and v0.6.12 calls create_fn(pretrained=pretrained,
pretrained_cfg=pretrained_cfg, **kwargs); at v0.5.4 create_fn(pretrained=pretrained, **kwargs); at v0.9.0
_factory.py adds pretrained_cfg_overlay=, and v1.0.13 (not v1.0.12) adds cache_dir=.

API change (errkb draft --api-change): timm works up to 0.5.4 and raises from 0.6.5 on (0.5.4 and 0.6.5 are
adjacent releases on PyPI). Releases run:
  timm==0.5.4: works
  timm==0.6.5: fails (TypeError: trigger.<locals>.TinyNet.__init__() got an unexpected keyword argument 'pretrained_cfg')
  timm==0.9.2: fails (TypeError: trigger.<locals>.TinyNet.__init__() got an unexpected keyword argument 'pretrained_cfg')
  timm==1.0.31: fails (TypeError: trigger.<locals>.TinyNet.__init__() got an unexpected keyword argument 'pretrained_cfg')
  not run by the bisection: 0.6.13, 0.9.16, 1.0.9 (0.9.16 is in the committed results, with 1.0.28 and 1.0.31)
"""
NEEDS = {'packages': {'timm': '', 'torch': '==2.15.0', 'torchvision': '==0.29.2'},
 'cuda_devices': 0,
 'timeout_s': 120}
SOLUTIONS = {1: "accept_extra_keywords", 2: "pop_factory_keywords", 3: "call_entrypoint_directly"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["nn"]}
WORDINGS = [
    {'text': "trigger.<locals>.TinyNet.__init__() got an unexpected keyword argument 'pretrained_cfg'", 'source': 'timm==0.9.16', 'match': 'pattern'},
    {'text': "trigger.<locals>.TinyNet.__init__() got an unexpected keyword argument 'pretrained_cfg'", 'source': 'timm==1.0.28', 'match': 'pattern'},
    {'text': "__init__() got an unexpected keyword argument 'pretrained_cfg'", 'source': 'facebookresearch/ConvNeXt#145', 'match': 'pattern'},
    {'text': "__init__() got an unexpected keyword argument 'pretrained_cfg'", 'source': 'pengzhiliang/MAE-pytorch#102', 'match': 'pattern'},
    {'text': "MetaFG.__init__() got an unexpected keyword argument 'pretrained_cfg'", 'source': 'dqshuai/MetaFormer#34', 'match': 'pattern'},
    {'text': "__init__() got an unexpected keyword argument 'pretrained_cfg_overlay'", 'source': 'TheBrainLab/Spikingformer#2', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'timm', 'version': '1.0.28'}

import inspect

import errkb_record as record

FACTORY_KEYWORDS = ("pretrained_cfg", "pretrained_cfg_overlay", "cache_dir")


def _version():
    import timm

    return tuple(int(p) for p in timm.__version__.split(".")[:3] if p.isdigit())


def _tinynet():
    import torch.nn as nn

    class TinyNet(nn.Module):
        def __init__(self, num_classes=1000, in_chans=3, width=8):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(in_chans, width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.head = nn.Linear(width, num_classes)

        def forward(self, x):
            return self.head(self.features(x))

    return TinyNet


def _classifies(model, classes=10):
    import torch

    assert model.head.out_features == classes, model.head
    with torch.no_grad():
        out = model.eval()(torch.randn(2, 3, 32, 32))
    assert out.shape == (2, classes), out.shape


def trigger():
    import torch.nn as nn
    import timm
    from timm.models import register_model

    class TinyNet(nn.Module):
        def __init__(self, num_classes=1000, in_chans=3, width=8):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(in_chans, width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.head = nn.Linear(width, num_classes)

        def forward(self, x):
            return self.head(self.features(x))

    @register_model
    def tinynet_errkb(pretrained=False, **kwargs):
        model = TinyNet(**kwargs)
        return model

    model = timm.create_model("tinynet_errkb", pretrained=False, num_classes=10)


def _register_and_create(model_cls):
    """The user's entrypoint, unchanged, around the given class; built with create_model."""
    import timm
    from timm.models import register_model

    @register_model
    def tinynet_errkb(pretrained=False, **kwargs):
        model = model_cls(**kwargs)
        return model

    return timm.create_model("tinynet_errkb", pretrained=False, num_classes=10)


def accept_extra_keywords():
    """Solution 1: the class's __init__ takes **kwargs (the exampleFix's class); create_model builds it."""
    import torch.nn as nn

    names = record.run("exampleFix", {"nn": nn}, section="after")
    _classifies(_register_and_create(names["TinyNet"]))


def pop_factory_keywords():
    """Solution 2: the entrypoint drops timm's factory keywords before building the class."""
    import timm
    from timm.models import register_model

    TinyNet = _tinynet()

    @register_model
    def tinynet_errkb(pretrained=False, **kwargs):
        for key in ("pretrained_cfg", "pretrained_cfg_overlay", "cache_dir"):
            kwargs.pop(key, None)
        model = TinyNet(**kwargs)
        return model

    _classifies(timm.create_model("tinynet_errkb", pretrained=False, num_classes=10))

    # DeiT's models.py wraps timm's own VisionTransformer, which takes no **kwargs (so solution 1 cannot apply):
    # unchanged, such an entrypoint raises; popping the keywords in the entrypoint builds it.
    from timm.models.vision_transformer import VisionTransformer

    assert not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(VisionTransformer.__init__).parameters.values())
    vit_args = dict(img_size=32, patch_size=16, embed_dim=16, depth=1, num_heads=2)

    @register_model
    def deit_style_errkb(pretrained=False, **kwargs):
        model = VisionTransformer(**vit_args, **kwargs)
        return model

    try:
        timm.create_model("deit_style_errkb", pretrained=False, num_classes=10)
    except TypeError as exc:
        assert "VisionTransformer.__init__() got an unexpected keyword argument 'pretrained_cfg'" in str(exc), exc
    else:
        raise AssertionError("timm's VisionTransformer accepted pretrained_cfg")

    @register_model
    def deit_style_fixed(pretrained=False, **kwargs):
        for key in ("pretrained_cfg", "pretrained_cfg_overlay", "cache_dir"):
            kwargs.pop(key, None)
        model = VisionTransformer(**vit_args, **kwargs)
        return model

    _classifies(timm.create_model("deit_style_fixed", pretrained=False, num_classes=10))

    # The partial fix often shared: name pretrained_cfg in the entrypoint's signature. From 0.9 on the class then
    # gets pretrained_cfg_overlay instead.
    @register_model
    def tinynet_partial(pretrained=False, pretrained_cfg=None, **kwargs):
        model = TinyNet(**kwargs)
        return model

    try:
        model = timm.create_model("tinynet_partial", pretrained=False, num_classes=10)
    except TypeError as exc:
        assert _version() >= (0, 9), f"timm {timm.__version__}: {exc}"
        assert "unexpected keyword argument 'pretrained_cfg_overlay'" in str(exc), exc
        return f"timm {timm.__version__}: naming only pretrained_cfg fails with pretrained_cfg_overlay; popping all works"
    assert _version() < (0, 9), f"timm {timm.__version__} passed no pretrained_cfg_overlay"
    _classifies(model)
    return f"timm {timm.__version__}: naming only pretrained_cfg is enough before 0.9; popping all works"


def call_entrypoint_directly():
    """Solution 3: call the repository's entrypoint (or class) itself; no factory keywords are added."""
    from timm.models import register_model

    TinyNet = _tinynet()

    @register_model
    def tinynet_errkb(pretrained=False, **kwargs):
        model = TinyNet(**kwargs)
        return model

    _classifies(tinynet_errkb(num_classes=10))


def example_fix():
    import torch.nn as nn

    names = record.run("exampleFix", {"nn": nn}, section="after")
    assert any(p.kind is p.VAR_KEYWORD for p in inspect.signature(names["TinyNet"]).parameters.values())
    _classifies(_register_and_create(names["TinyNet"]))


# What errkb draft --api-change ran (each release in its own environment) and saw.
API_CHANGE = {"library": 'timm', "last_working": '0.5.4', "first_failing": '0.6.5', "runs": {'0.5.4': 'works', '0.6.5': 'fails', '0.9.2': 'fails', '1.0.31': 'fails'}, "pins": {'torch': '==2.15.0', 'torchvision': '==0.29.2'}}
