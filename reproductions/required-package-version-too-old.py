"""diffusers checks the installed peft against its dependency table when it is imported: with peft new enough to turn
the PEFT backend on (>= 0.6.0) but older than the table asks (peft>=0.15.0 in diffusers 0.34.0, peft>=0.17.0 from
0.35.0), dep_version_check("peft") reaches require_version in src/diffusers/utils/versions.py, whose _compare_versions
raises ImportError "peft>=0.17.0 is required for a normal functioning of this module, but found peft==0.14.0." The
same function, with the same wording, is in transformers (src/transformers/utils/versions.py), which checks
tokenizers, huggingface-hub and others at import; that path needs an environment that breaks transformers' declared
requirements, which pip and uv refuse to build, so it is cited from pasted issues, not run. trigger(): `import
diffusers` beside peft 0.14.0. Solution 1 (install a peft in range) cannot install inside a stage: on the old peft
its stage reads diffusers' own table from its file (without importing diffusers), asserts the installed peft fails
that requirement and 0.17.0 satisfies it, and returns a variant string; the upgraded side is the committed
diffusers==0.39.0 + peft==0.17.0 result, where trigger() imports diffusers without an error (not-reproduced: the
import works). Solution 2 (_CHECK_PEFT=0) runs in the same environment: diffusers imports with the PEFT backend on,
and a tiny UNet2DConditionModel takes a LoRA adapter from the old peft and changes its output. The record's
exampleFix runs from its text. The excerpt is src/diffusers/utils/versions.py at tag v0.35.2
(b71269675ec1b85193107a691dd35c308e46f0a5) of the huggingface/diffusers snapshot, byte-identical to the installed
0.35.2 file (errkb draft --upstream); the file is the same at v0.34.0, and the raise is line 43 at
v0.37.1 and v0.39.0. Results: errkb reproduce required-package-version-too-old
--with diffusers==0.34.0,peft==0.14.0,transformers==4.57.6 --with diffusers==0.35.2,peft==0.14.0,transformers==4.57.6
--with diffusers==0.39.0,peft==0.14.0,transformers==4.57.6 --with diffusers==0.39.0,peft==0.17.0,transformers==4.57.6
(the upgraded side); the installed venv has no diffusers and skips.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "diffusers": ">=0.34,<0.40", "peft": "", "transformers": ""},
         "cuda_devices": 0, "timeout_s": 300}
SOLUTIONS = {1: "upgrade_peft", 2: "skip_peft_check"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": []}
WORDINGS = [
    {"text": "peft>=0.17.0 is required for a normal functioning of this module, but found peft==0.14.0.",
     "source": "diffusers==0.35.2", "match": "pattern"},
    {"text": "peft>=0.15.0 is required for a normal functioning of this module, but found peft==0.14.0.",
     "source": "diffusers==0.34.0", "match": "pattern"},
    {"text": "ImportError: peft>=0.17.0 is required for a normal functioning of this module, but found peft==0.14.0.",
     "source": "Wan-Video/Wan2.2#347", "match": "matcher"},
    {"text": "ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of this module, but "
             "found tokenizers==0.15.0.", "source": "huggingface/transformers#27580", "match": "matcher"},
    {"text": "ImportError: huggingface-hub>=0.24.0,<1.0 is required for a normal functioning of this module, but found "
             "huggingface-hub==0.23.4.\nTry: `pip install transformers -U` or `pip install -e '.[dev]'` if you're "
             "working with git main", "source": "tungdop2/Comfyui_joy-caption-alpha-two#5", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/diffusers",
              "commit": "b71269675ec1b85193107a691dd35c308e46f0a5", "path": "src/diffusers/utils/versions.py",
              "line": 44, "offset": 0}

import errkb_record as record


def trigger():
    import diffusers  # noqa: F401


def _tiny_unet():
    import torch
    from diffusers import UNet2DConditionModel

    torch.manual_seed(0)
    return UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32).eval()


def upgrade_peft():
    """Solution 1: the installed peft is below diffusers' requirement, which 0.17.0 meets; the upgraded environment
    is the diffusers==0.39.0 + peft==0.17.0 result."""
    import importlib.util
    import os
    from importlib.metadata import version

    from packaging.requirements import Requirement

    spec = importlib.util.find_spec("diffusers")  # locates the package without running its __init__
    table_path = os.path.join(os.path.dirname(spec.origin), "dependency_versions_table.py")
    table = {}
    with open(table_path, encoding="utf-8") as handle:
        exec(handle.read(), table)
    wanted = Requirement(table["deps"]["peft"])
    installed = version("peft")
    assert not wanted.specifier.contains(installed), (str(wanted), installed)
    assert wanted.specifier.contains("0.17.0"), str(wanted)
    return (f"peft {installed} fails diffusers' {wanted}: the upgrade is shown by the diffusers==0.39.0 + "
            "peft==0.17.0 result, where trigger() imports diffusers")


def skip_peft_check():
    """Solution 2: _CHECK_PEFT=0 before the import; the PEFT backend stays on and the old peft adds a LoRA adapter
    that changes a tiny UNet's output."""
    import os

    os.environ["_CHECK_PEFT"] = "0"
    import torch
    from diffusers.utils import USE_PEFT_BACKEND
    from peft import LoraConfig

    assert USE_PEFT_BACKEND
    unet = _tiny_unet()
    sample, step, context = torch.randn(1, 4, 8, 8), torch.tensor([10]), torch.randn(1, 3, 32)
    with torch.no_grad():
        base = unet(sample, step, encoder_hidden_states=context).sample
    unet.add_adapter(LoraConfig(r=4, lora_alpha=4, target_modules=["to_q", "to_k", "to_v", "to_out.0"],
                                init_lora_weights=False))
    with torch.no_grad():
        adapted = unet(sample, step, encoder_hidden_states=context).sample
    assert adapted.shape == base.shape and torch.isfinite(adapted).all()
    assert (adapted - base).abs().max() > 1e-4  # the adapter is applied


def example_fix():
    import sys

    names = record.run("exampleFix", {}, section="after")
    assert names["diffusers"] is sys.modules["diffusers"]
    from diffusers.utils import USE_PEFT_BACKEND

    assert USE_PEFT_BACKEND
