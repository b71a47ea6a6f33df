"""A FlowMatchEulerDiscreteScheduler configured with use_dynamic_shifting=True (FLUX.1-dev's scheduler_config, or
any flow-match config with the flag set) shifts its sigmas by a resolution-dependent `mu` that set_timesteps takes as
an argument; called without it, set_timesteps (src/diffusers/schedulers/scheduling_flow_match_euler_discrete.py) raises ValueError
"`mu` must be passed when `use_dynamic_shifting` is set to be `True`" (0.35.2, 0.39.0; 0.32.2 words it " you have a
pass a value for `mu` when `use_dynamic_shifting` is set to be `True`"). trigger(): the scheduler built in memory with
FLUX.1-dev's scheduler values (shift 3.0, use_dynamic_shifting True, base_shift 0.5, max_shift 1.15,
base_image_seq_len 256, max_image_seq_len 4096), then set_timesteps(4), as a custom sampling or validation loop does.
Demonstrations: (1) mu computed as FluxPipeline does (calculate_shift, imported from diffusers' own
pipelines/flux/pipeline_flux.py, on the packed latent sequence length of a 1024x1024 image, (1024 // 16) ** 2 = 4096,
with the scheduler's config values), passed to set_timesteps; the schedule is asserted to be the exponential time
shift of the unshifted one with that mu, and a 4-step Euler loop on a random latent runs to finite values; also at
512x512 (sequence 1024) mu is smaller and the schedule less shifted; (2) the scheduler rebuilt from its config with
use_dynamic_shifting=False: set_timesteps(4) works and the static shift of 3.0 from the same config is applied
instead, whatever the image size (the resolution dependence is given up). The excerpt is
src/diffusers/schedulers/scheduling_flow_match_euler_discrete.py at tag v0.39.0
(a3608b512ed7248499a44c61d954965ed9bdae4d) of the huggingface/diffusers snapshot, byte-identical to the installed
0.39.0 file (cmp against the cached environment); the files at v0.35.2 and v0.32.2 are byte-identical to those
releases' installed files too (raise at lines 276 and 235). The installed venv has no diffusers and skips. Results:
errkb reproduce diffusers-dynamic-shifting-needs-mu --with diffusers==0.32.2,transformers==4.57.6
--with diffusers==0.35.2,transformers==4.57.6 --with diffusers==0.39.0,transformers==4.57.6.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "diffusers": ">=0.30", "transformers": ""}, "cuda_devices": 0,
         "timeout_s": 200}
SOLUTIONS = {1: "pass_mu_like_the_pipeline", 2: "disable_dynamic_shifting"}
CODE = {}
WORDINGS = [
    {"text": "`mu` must be passed when `use_dynamic_shifting` is set to be `True`", "source": "diffusers==0.39.0",
     "match": "pattern"},
    {"text": " you have a pass a value for `mu` when `use_dynamic_shifting` is set to be `True`",
     "source": "diffusers==0.32.2", "match": "pattern"},
    {"text": "`mu` must be passed when `use_dynamic_shifting` is set to be `True`", "source": "bghira/SimpleTuner#1438",
     "match": "matcher"},
    {"text": "ValueError: `mu` must be passed when `use_dynamic_shifting` is set to be `True`",
     "source": "huggingface/diffusers#14675", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/diffusers",
              "commit": "a3608b512ed7248499a44c61d954965ed9bdae4d",
              "path": "src/diffusers/schedulers/scheduling_flow_match_euler_discrete.py", "line": 310, "offset": 0}

import errkb_record as record

FLUX_DEV = {"num_train_timesteps": 1000, "shift": 3.0, "use_dynamic_shifting": True, "base_shift": 0.5,
            "max_shift": 1.15, "base_image_seq_len": 256, "max_image_seq_len": 4096}
STEPS = 4


def _scheduler(**overrides):
    from diffusers import FlowMatchEulerDiscreteScheduler

    return FlowMatchEulerDiscreteScheduler(**{**FLUX_DEV, **overrides})


def _unshifted(scheduler):
    import numpy as np

    # the linear schedule set_timesteps starts from before shifting (sigma_max = 1, sigma_min = 1 / 1000 here)
    return np.linspace(scheduler.sigma_max, scheduler.sigma_min, STEPS)


def _euler_loop(scheduler):
    import torch

    torch.manual_seed(0)
    latents = torch.randn(1, 16, 8)
    for t in scheduler.timesteps:
        velocity = torch.randn_like(latents)  # stands in for the transformer's prediction
        latents = scheduler.step(velocity, t, latents).prev_sample
    assert torch.isfinite(latents).all()


def trigger():
    scheduler = _scheduler()
    scheduler.set_timesteps(STEPS)


def pass_mu_like_the_pipeline():
    """Solution 1: compute mu from the image's packed latent sequence length as FluxPipeline does, pass it."""
    import math

    import numpy as np
    from diffusers.pipelines.flux.pipeline_flux import calculate_shift

    scheduler = _scheduler()
    base = _unshifted(scheduler)
    schedules = {}
    for height, width in ((1024, 1024), (512, 512)):
        image_seq_len = (height // 16) * (width // 16)  # VAE factor 8, then 2x2 packing
        mu = calculate_shift(image_seq_len, scheduler.config.base_image_seq_len, scheduler.config.max_image_seq_len,
                             scheduler.config.base_shift, scheduler.config.max_shift)
        scheduler.set_timesteps(STEPS, mu=mu)
        sigmas = scheduler.sigmas[:-1].numpy()
        expected = math.exp(mu) / (math.exp(mu) + (1 / base - 1))
        assert np.allclose(sigmas, expected, atol=1e-5), (sigmas, expected)
        assert len(scheduler.timesteps) == STEPS
        _euler_loop(scheduler)
        schedules[height] = (mu, sigmas)
    assert math.isclose(schedules[1024][0], 1.15, abs_tol=1e-6)  # 4096 tokens: max_shift
    assert schedules[512][0] < schedules[1024][0]
    assert (schedules[512][1][1:] < schedules[1024][1][1:]).all()  # smaller image, less shift


def disable_dynamic_shifting():
    """Solution 2: the scheduler rebuilt with use_dynamic_shifting=False: the static shift applies instead."""
    import numpy as np
    from diffusers import FlowMatchEulerDiscreteScheduler

    dynamic = _scheduler()
    scheduler = FlowMatchEulerDiscreteScheduler.from_config(dynamic.config, use_dynamic_shifting=False)
    assert scheduler.config.use_dynamic_shifting is False and scheduler.config.shift == 3.0
    scheduler.set_timesteps(STEPS)
    base = _unshifted(scheduler)
    sigmas = scheduler.sigmas[:-1].numpy()
    static = 3.0 * base / (1 + 2.0 * base)
    assert np.allclose(sigmas, static, atol=1e-5), (sigmas, static)
    _euler_loop(scheduler)
