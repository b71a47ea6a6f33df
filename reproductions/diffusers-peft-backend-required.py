"""diffusers turns its PEFT backend on at import only when peft (at MIN_PEFT_VERSION or later) and transformers (4.34
or later) are installed; the pipeline's load_lora_weights (src/diffusers/loaders/lora_pipeline.py) checks
USE_PEFT_BACKEND first and raises ValueError "PEFT backend is required for this method." trigger(): a tiny
StableDiffusionPipeline built in memory (2-block UNet2DConditionModel, 1-block AutoencoderKL, DDIM scheduler, no text
encoder, tokenizer or safety checker) and a LoRA state dict for the UNet's attn1.to_q layers, in diffusers' key
format, passed to pipe.load_lora_weights in an environment without peft; where the backend is on, the trigger goes
on to assert that the LoRA is registered and changes the UNet's output. Solution 1 (install peft) cannot install
inside a stage: its stage asserts the cause (peft not importable, or older than diffusers' MIN_PEFT_VERSION, or
transformers missing or older than 4.34) and returns a variant string; the installed side is the committed
diffusers==0.38.0 + peft==0.17.0 result, where trigger() loads the LoRA and the UNet's output changes (verdict
not-reproduced: the snippet works). The excerpt is src/diffusers/loaders/lora_pipeline.py at tag v0.35.2
(b71269675ec1b85193107a691dd35c308e46f0a5) of the huggingface/diffusers snapshot, byte-identical to the installed
0.35.2 file (errkb draft --upstream). The installed venv has no diffusers and skips. Results: errkb reproduce
diffusers-peft-backend-required --with diffusers==0.32.2,transformers==4.57.6
--with diffusers==0.35.2,transformers==4.57.6 --with diffusers==0.39.0,transformers==4.57.6
--with diffusers==0.38.0,peft==0.17.0,transformers==4.57.6 (the installed side; a result file is named by the NEEDS packages, which do not list peft, so the installed side uses another diffusers release than the three without peft).
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "diffusers": ">=0.30,<0.40", "transformers": ""}, "cuda_devices": 0,
         "timeout_s": 400}
SOLUTIONS = {1: "install_peft"}
CODE = {}
WORDINGS = [
    {"text": "PEFT backend is required for this method.", "source": "diffusers==0.35.2", "match": "pattern"},
    {"text": "PEFT backend is required for this method.", "source": "diffusers==0.32.2", "match": "pattern"},
    {"text": "ValueError: PEFT backend is required for this method.", "source": "TencentARC/PhotoMaker#150",
     "match": "matcher"},
    {"text": "ValueError: PEFT backend is required for `set_adapters()`.", "source": "bytedance/res-adapter#18",
     "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/diffusers",
              "commit": "b71269675ec1b85193107a691dd35c308e46f0a5", "path": "src/diffusers/loaders/lora_pipeline.py",
              "line": 195, "offset": 0}

import errkb_record as record


def _pipeline_and_lora():
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel

    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32).eval()
    vae = AutoencoderKL(block_out_channels=(32,), in_channels=3, out_channels=3, latent_channels=4,
                        down_block_types=("DownEncoderBlock2D",), up_block_types=("UpDecoderBlock2D",),
                        norm_num_groups=32)
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=None, tokenizer=None, unet=unet, scheduler=DDIMScheduler(),
                                   safety_checker=None, feature_extractor=None, requires_safety_checker=False)
    lora = {}
    for name, module in unet.named_modules():
        if name.endswith("attn1.to_q"):
            lora[f"unet.{name}.lora_A.weight"] = torch.randn(4, module.in_features) * 0.1
            lora[f"unet.{name}.lora_B.weight"] = torch.randn(module.out_features, 4) * 0.1
    return pipe, lora


def trigger():
    import torch

    pipe, lora = _pipeline_and_lora()
    sample, step, context = torch.randn(1, 4, 8, 8), torch.tensor([10]), torch.randn(1, 3, 32)
    with torch.no_grad():
        before = pipe.unet(sample, step, encoder_hidden_states=context).sample
    pipe.load_lora_weights(lora, adapter_name="tiny")
    # reached only with the PEFT backend on: the adapter is registered and changes the UNet
    assert "tiny" in pipe.get_active_adapters(), pipe.get_active_adapters()
    with torch.no_grad():
        after = pipe.unet(sample, step, encoder_hidden_states=context).sample
    assert (after - before).abs().max() > 1e-4


def install_peft():
    """Solution 1: the backend is off because peft (or a new enough transformers) is missing here; the environment
    with peft installed is the diffusers==0.38.0 + peft==0.17.0 result, where trigger() loads the LoRA."""
    import importlib.util
    from importlib.metadata import version

    from diffusers.utils import USE_PEFT_BACKEND
    from diffusers.utils.constants import MIN_PEFT_VERSION, MIN_TRANSFORMERS_VERSION
    from packaging.version import Version

    assert not USE_PEFT_BACKEND
    causes = []
    if importlib.util.find_spec("peft") is None:
        causes.append("peft is not installed")
    elif Version(version("peft")) < Version(MIN_PEFT_VERSION):
        causes.append(f"peft {version('peft')} < {MIN_PEFT_VERSION}")
    if importlib.util.find_spec("transformers") is None:
        causes.append("transformers is not installed")
    elif Version(Version(version("transformers")).base_version) < Version(MIN_TRANSFORMERS_VERSION):
        causes.append(f"transformers {version('transformers')} < {MIN_TRANSFORMERS_VERSION}")
    assert causes, "USE_PEFT_BACKEND is off with peft and transformers both new enough"
    return f"{'; '.join(causes)}: the install is shown by the diffusers==0.38.0 + peft==0.17.0 result"
