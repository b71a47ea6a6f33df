"""timm 0.9 moved its layers from timm.models.layers to timm.layers and its model helpers (registry, helpers,
features, hub, factory, fx_features) into timm.models itself, keeping the old modules as thin shims that import the
new ones and warn. From timm 1.0.11 the warning is a FutureWarning, which Python shows by default, so every program
that still imports timm.models.layers (its own code or a dependency's) prints "Importing from timm.models.layers is
deprecated, please import via timm.layers" from timm/models/layers/__init__.py; nothing fails. The trigger imports
DropPath and trunc_normal_ from timm.models.layers, as ViT-era research code does, and builds a DropPath. The
demonstrations, each recording warnings with the "always" filter and asserting none of timm's deprecation warnings
came: solution 1 imports the same names from timm.layers (they are the very objects the shim re-exports) and the
registry helpers from timm.models; solution 2 runs the try/except import, first as it runs on these releases (the
timm.layers branch), then with timm.layers made unimportable (its sys.modules entry set to None, so Python raises
ModuleNotFoundError as it does on a timm before 0.9), where the fallback branch must run and give the same objects.
That simulation shows the except clause and the fallback names, not a real old timm: that timm before 0.9 has no
timm/layers and exports DropPath and trunc_normal_ from timm/models/layers/__init__.py is read from tag v0.6.13 of
the stored snapshot (lines 16 and 44), and the try/except was run once by hand (not a committed result) in a
timm 0.6.13 + torch 2.15.0 environment, where the fallback branch ran. Solution 3 filters
the warning by its message before importing code that cannot be edited, and shows the old import still gives the
same objects. The record's exampleFix runs from its text.
Results: timm 1.0.11 (the first release with the FutureWarning), 1.0.28 and 1.0.31, each with torch 2.15.0 and
torchvision 0.29.2 (timm needs torchvision; the installed CPU build of torch has none), all verified; and timm 1.0.10
(NEEDS admits every release from 0.9, where the shims exist), whose result is wrong-error on purpose: its trigger
emits the same message as a DeprecationWarning, the class before 1.0.11. The trigger imports timm.models with
warnings ignored first, because importing it makes torch emit an unrelated FutureWarning on some releases
(torch.jit.interface, from timm/models/hrnet.py), which the harness would judge instead of the shim's warning.

Drafted by `errkb draft` from dep_snip_err.py (the snippet turned this FutureWarning into an error so that the draft
could capture it; the trigger only emits it) on timm 1.0.28, Python 3.11.7:
  FutureWarning: Importing from timm.models.layers is deprecated, please import via timm.layers
  raised at timm/models/layers/__init__.py:49
Commit: 8ef73809f622e0031bd7f4940265734aef8b9978 (--sha): tag v1.0.28 of the stored
huggingface/pytorch-image-models snapshot, whose timm/models/layers/__init__.py is byte-identical to the installed
1.0.28 file (cmp). In that snapshot the shim warns with DeprecationWarning at every tag from v0.9.0 through v1.0.10
and with FutureWarning at every tag from v1.0.11 through v1.0.28 (checked tag by tag; the snapshot has no later
tags); at v0.9.0, v0.9.16 and v1.0.28 timm/models/layers/ holds only __init__.py; at v1.0.10 timm/models/_registry.py
lists 'get_pretrained_cfgs_for_arch' in __all__ without defining it, the AttributeError of
huggingface/pytorch-image-models#2303 that the registry shim's star import raised there.
"""
NEEDS = {'packages': {'timm': '>=0.9', 'torch': '==2.15.0', 'torchvision': '==0.29.2'}, 'cuda_devices': 0,
         'timeout_s': 200}
SOLUTIONS = {1: "import_from_timm_layers", 2: "import_with_fallback", 3: "filter_for_code_you_cannot_edit"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {'text': 'Importing from timm.models.layers is deprecated, please import via timm.layers', 'source': 'timm==1.0.28', 'match': 'pattern'},
    {'text': 'Importing from timm.models.layers is deprecated, please import via timm.layers', 'source': 'timm==1.0.11', 'match': 'pattern'},
    {'text': 'Importing from timm.models.layers is deprecated, please import via timm.layers', 'source': 'warmshao/WiLoR-mini#10', 'match': 'pattern'},
    {'text': 'Importing from timm.models.registry is deprecated, please import via timm.models', 'source': 'ltdrdata/ComfyUI-Inspire-Pack#227', 'match': 'pattern'},
    {'text': 'Importing from timm.models.helpers is deprecated, please import via timm.models', 'source': 'kijai/ComfyUI-GIMM-VFI#22', 'match': 'pattern'},
    {'text': "No module named 'timm.models.layers.activations'", 'source': 'datvuthanh/HybridNets#92', 'match': 'none',
     'why': "raised by Python's import system (timm/models/layers has no submodules from 0.9 on), not by timm"},
    {'text': "No module named 'timm.layers'", 'source': 'chengtan9907/OpenSTL#153', 'match': 'none',
     'why': "the reverse case, code written for timm >= 0.9 on an older timm; raised by Python's import system"},
    {'text': "module 'timm.models._registry' has no attribute 'get_pretrained_cfgs_for_arch'",
     'source': 'huggingface/pytorch-image-models#2303', 'match': 'none',
     'why': "timm 1.0.10's own bug in the registry shim's star import (an __all__ name it never defined), another error with its own fix (any other release)"},
]
PROVENANCE = {'checked': 'installed', 'dist': 'timm', 'version': '1.0.28'}

import warnings

import errkb_record as record

SHIM_WARNING = "Importing from timm.models"


def _quiet(action):
    """Run action() recording every warning; assert none of timm's deprecation warnings came."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action()
    ours = [str(w.message) for w in caught if SHIM_WARNING in str(w.message)]
    assert not ours, ours
    return result


def _drop_path_works(DropPath, trunc_normal_):
    import torch

    torch.manual_seed(0)
    x = torch.randn(4, 8)
    layer = DropPath(0.5)
    assert torch.equal(layer.eval()(x), x)  # identity in eval mode
    w = trunc_normal_(torch.empty(64, 64), std=1.0)  # a=-2, b=2: absolute bounds
    assert 0 < w.abs().max() <= 2.0 and 0.5 < w.std() < 1.0, (w.abs().max(), w.std())


def trigger():
    with warnings.catch_warnings():  # torch's own FutureWarnings while timm registers its models (torch.jit.interface,
        warnings.simplefilter("ignore")  # hrnet, on 1.0.10 and 1.0.11): kept out, so the shim's is the one judged
        import timm.models  # noqa: F401  (does not import the shims: solution 1 asserts so)
    from timm.models.layers import DropPath, trunc_normal_

    drop_path = DropPath(0.1)


def import_from_timm_layers():
    """Solution 1: the new paths; the objects are the ones the old shim re-exports."""
    def new_imports():
        from timm.layers import DropPath, trunc_normal_
        from timm.models import register_model, load_checkpoint  # instead of timm.models.registry / .helpers
        return DropPath, trunc_normal_, register_model, load_checkpoint

    DropPath, trunc_normal_, register_model, load_checkpoint = _quiet(new_imports)
    _drop_path_works(DropPath, trunc_normal_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import timm.models.layers as old
        import timm.models.registry as old_registry
    assert old.DropPath is DropPath and old.trunc_normal_ is trunc_normal_
    assert old_registry.register_model is register_model


def import_with_fallback():
    """Solution 2: timm.layers first, the old path only where timm.layers does not exist (timm before 0.9)."""
    def imports():
        try:
            from timm.layers import DropPath, trunc_normal_
            branch = "timm.layers"
        except ImportError:  # timm < 0.9 has no timm.layers
            from timm.models.layers import DropPath, trunc_normal_
            branch = "timm.models.layers"
        return DropPath, trunc_normal_, branch

    DropPath, trunc_normal_, branch = _quiet(imports)
    assert branch == "timm.layers", branch
    _drop_path_works(DropPath, trunc_normal_)

    # The fallback branch, with timm.layers unimportable as on a timm before 0.9. The shim itself imports from
    # timm.layers, so it is loaded first; then None in sys.modules makes `from timm.layers import ...` raise
    # ModuleNotFoundError (an ImportError), as a timm without timm/layers does.
    import sys

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import timm.models.layers  # noqa: F401
    real = sys.modules["timm.layers"]
    sys.modules["timm.layers"] = None
    try:
        try:
            from timm.layers import DropPath as _  # noqa: F401
        except ImportError as exc:
            blocked = type(exc).__name__
        else:
            raise AssertionError("timm.layers still imports: the fallback would not run")
        OldDropPath, old_trunc_normal_, fallback_branch = imports()
    finally:
        sys.modules["timm.layers"] = real
    assert fallback_branch == "timm.models.layers", fallback_branch
    assert OldDropPath is DropPath and old_trunc_normal_ is trunc_normal_
    _drop_path_works(OldDropPath, old_trunc_normal_)
    import timm

    return (f"timm {timm.__version__}: the timm.layers branch ran; with timm.layers unimportable ({blocked}) "
            f"the timm.models.layers branch ran and gave the same objects")


def filter_for_code_you_cannot_edit():
    """Solution 3: a message filter installed before the old import (a dependency's, here the trigger's import)."""
    def filtered_old_import():
        warnings.filterwarnings("ignore", message="Importing from timm.models", category=FutureWarning)
        from timm.models.layers import DropPath, trunc_normal_
        return DropPath, trunc_normal_

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DropPath, trunc_normal_ = filtered_old_import()
    assert not [w for w in caught if SHIM_WARNING in str(w.message)], [str(w.message) for w in caught]
    from timm.layers import DropPath as NewDropPath

    assert DropPath is NewDropPath
    _drop_path_works(DropPath, trunc_normal_)


def example_fix():
    names = _quiet(lambda: record.run("exampleFix", {}, section="after"))
    _drop_path_works(names["DropPath"], names["trunc_normal_"])
