"""An adapter saved by a newer peft has an adapter_config.json with fields an older peft's config class does not have
(peft 0.22.0 writes alora_invocation_tokens, arrow_config, corda_config, eva_config, exclude_modules, lora_bias,
target_parameters, trainable_token_indices and more for every LoRA). Before peft 0.14.0, PeftConfigMixin.from_peft_type
(src/peft/config.py) passes every key of the file to the config class, `return config_cls(**kwargs)`, and the
dataclass's __init__ refuses the first unknown one: TypeError "LoraConfig.__init__() got an unexpected keyword
argument 'alora_invocation_tokens'" (the file's keys are sorted, so the unknown key first in alphabetical order is
named). peft 0.14.0 (huggingface/peft#2038, "Make PEFT configs forward compatible") catches that TypeError, drops the
unknown keys with a warning and goes on. trigger(): a tiny torch model M (Linear 8->8 named lin, Linear 8->2 named
out) with a LoRA (r=2, lora_alpha=8, on lin; lora_B filled with seeded random values so the adapter changes the
output) saved with the running peft's save_pretrained, its adapter_config.json then replaced by NEW_CONFIG, the text
peft 0.22.0's save_pretrained wrote for this LoRA on this model (captured by running it with peft 0.22.0; where the
running peft is 0.22.0 the trigger asserts its own file equals NEW_CONFIG apart from auto_mapping, which names the
defining module), and PeftModel.from_pretrained on a fresh base model. Where the loader copes (0.14.0 and later) the
trigger asserts the loaded adapter reproduces the saved model's output. Demonstrations: (1) upgrade peft: it cannot
install inside a stage; the stage asserts the cause (the running peft is older than 0.14.0, the file holds keys its
LoraConfig lacks, and the TypeError names the first of them) and returns a variant string; the upgraded side is the
committed peft==0.14.0 and peft==0.22.0 results (both with transformers 4.57.6), where trigger() loads the adapter and reproduces
the output (verdict not-reproduced: the snippet works); (2) drop the unknown keys after checking that each is off
(null, false or empty), bookkeeping (peft_version), or a setting of a feature that is off (qalora_group_size with
use_qalora false): the adapter loads and reproduces the saved output; then the unsafe case, the same config with
lora_bias true and a lora_B bias in the weights (a LoRA option that the running peft lacks): the check refuses it,
and dropping lora_bias anyway loads without an error but leaves the saved bias out of the model. The excerpt is
src/peft/config.py at tag v0.13.2 (431c0e2d5ca56fa512dc4c96876c4145bb538f62) of the huggingface/peft snapshot,
byte-identical to the file in the peft 0.13.2 wheel (cmp); the files at v0.12.0 and v0.10.0 are byte-identical to
those wheels' too, with the same return statement at lines 119 and 118. Releases run (the boundary found by running,
after reading config.py in the 0.10.0, 0.11.1, 0.12.0, 0.13.2, 0.14.0 and 0.15.2 wheels): errkb reproduce
peft-config-from-newer-peft --with peft==0.10.0,transformers==4.57.6 --with peft==0.12.0,transformers==4.57.6
--with peft==0.13.2,transformers==4.57.6 (verified) --with peft==0.14.0,transformers==4.57.6 (not-reproduced: it
loads with the warning) and --with peft==0.22.0,transformers==4.57.6 (not-reproduced: it loads). NEEDS keeps
transformers below 5: the peft releases that raise this (before 0.14) predate transformers 5, so the installed
transformers 5.x is skipped rather than run as the fixed side.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "peft": "", "transformers": "<5"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "upgrade_peft", 2: "drop_unknown_keys_if_off"}
CODE = {}
WORDINGS = [
    {"text": "LoraConfig.__init__() got an unexpected keyword argument 'alora_invocation_tokens'",
     "source": "peft==0.13.2", "match": "pattern"},
    {"text": "LoraConfig.__init__() got an unexpected keyword argument 'alora_invocation_tokens'",
     "source": "peft==0.10.0", "match": "pattern"},
    {"text": "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'eva_config'",
     "source": "huggingface/peft#2275", "match": "pattern"},
    {"text": "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'trainable_token_indices'",
     "source": "oobabooga/textgen#6819", "match": "pattern"},
    {"text": "LoraConfig.__init__() got an unexpected keyword argument 'layer_replication' when using custom model handler",
     "source": "huggingface/peft#1979", "match": "pattern"},
    {"text": "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_original_init'",
     "source": "huggingface/peft#1511", "match": "pattern"},
    {"text": "LoraConfig.__init__() got an unexpected keyword argument 'use_dora'",
     "source": "hiyouga/LlamaFactory#2696", "match": "pattern"},
    {"text": "TypeError: PeftConfig.__init__() got an unexpected keyword argument '_name_or_path'",
     "source": "huggingface/peft#1661", "match": "none",
     "why": "a model's config.json read as an adapter config, not a newer peft's file; the pattern names only the adapter config classes and the prose says the record does not explain it"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/peft", "commit": "431c0e2d5ca56fa512dc4c96876c4145bb538f62",
              "path": "src/peft/config.py", "line": 119, "offset": 0}

import errkb_record as record

ADAPTER = "adapter-from-0.22"
NEW_CONFIG = """{
  "alora_invocation_tokens": null,
  "alpha_pattern": {},
  "arrow_config": null,
  "astra_config": null,
  "auto_mapping": {
    "base_model_class": "M",
    "parent_library": "__main__"
  },
  "base_model_name_or_path": null,
  "bias": "none",
  "corda_config": null,
  "ensure_weight_tying": false,
  "eva_config": null,
  "exclude_modules": null,
  "fan_in_fan_out": false,
  "inference_mode": true,
  "init_lora_weights": true,
  "kasa_config": null,
  "layer_replication": null,
  "layers_pattern": null,
  "layers_to_transform": null,
  "loftq_config": {},
  "lora_alpha": 8,
  "lora_bias": false,
  "lora_dropout": 0.0,
  "lora_ga_config": null,
  "megatron_config": null,
  "megatron_core": "megatron.core",
  "modules_to_save": null,
  "monteclora_config": null,
  "peft_type": "LORA",
  "peft_version": "0.22.0",
  "qalora_group_size": 16,
  "r": 2,
  "rank_pattern": {},
  "revision": null,
  "target_modules": [
    "lin"
  ],
  "target_parameters": null,
  "task_type": null,
  "trainable_token_indices": null,
  "use_bdlora": null,
  "use_dora": false,
  "use_qalora": false,
  "use_rslora": false,
  "velora_config": null
}"""
BOOKKEEPING = {"peft_version"}
SETTING_OF = {"qalora_group_size": "use_qalora"}  # a setting that matters only when the named switch is on


def _model():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.out = torch.nn.Linear(8, 2)

        def forward(self, x):
            return self.out(torch.relu(self.lin(x)))

    torch.manual_seed(0)
    return M()


def _save(config_text=NEW_CONFIG, folder=ADAPTER):
    """The LoRA saved by the running peft, then its adapter_config.json replaced by the newer peft's text."""
    import json
    import os

    import torch
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(_model(), LoraConfig(r=2, lora_alpha=8, target_modules=["lin"]))
    torch.manual_seed(1)
    with torch.no_grad():
        model.base_model.model.lin.lora_B["default"].weight.normal_()
    model.eval()
    x = torch.randn(4, 8)
    with torch.no_grad():
        reference = model(x)
    model.save_pretrained(folder)
    path = os.path.join(folder, "adapter_config.json")
    with open(path) as f:
        written = json.load(f)
    with open(path, "w") as f:
        f.write(config_text)
    return x, reference, written


def _load(folder=ADAPTER):
    from peft import PeftModel

    return PeftModel.from_pretrained(_model(), folder).eval()


def trigger():
    import json

    import peft
    import torch

    x, reference, written = _save()
    if peft.__version__ == "0.22.0":  # NEW_CONFIG is what this very peft writes for this LoRA
        new = json.loads(NEW_CONFIG)
        assert {k: v for k, v in written.items() if k != "auto_mapping"} == {k: v for k, v in new.items()
                                                                              if k != "auto_mapping"}
    loaded = _load()
    # reached only where peft copes with the newer file (0.14.0 and later): the adapter reproduces the saved output
    with torch.no_grad():
        assert torch.allclose(loaded(x), reference, atol=1e-6)


def _unknown_keys():
    import dataclasses
    import json

    from peft import LoraConfig

    known = {field.name for field in dataclasses.fields(LoraConfig)}
    return sorted(set(json.loads(NEW_CONFIG)) - known)


def upgrade_peft():
    """Solution 1: the running peft predates forward-compatible configs (0.14.0); the upgrade is the peft==0.14.0
    result, where trigger() loads the adapter."""
    import peft
    from packaging.version import Version

    assert Version(peft.__version__) < Version("0.14.0"), peft.__version__
    unknown = _unknown_keys()
    assert unknown, "LoraConfig knows every key of the newer file"
    _save()
    try:
        _load()
    except TypeError as exc:
        assert f"unexpected keyword argument '{unknown[0]}'" in str(exc), (exc, unknown)
    else:
        raise AssertionError("the newer config loaded")
    return f"peft {peft.__version__} < 0.14.0 lacks {len(unknown)} keys of the file: the upgrade is the peft==0.14.0 result"


def _drop_unknown(folder=ADAPTER):
    """Solution 2 as a user does it: drop the keys this peft's LoraConfig lacks, after checking each one is off."""
    import dataclasses
    import json
    import os

    from peft import LoraConfig

    path = os.path.join(folder, "adapter_config.json")
    with open(path) as f:
        config = json.load(f)
    known = {field.name for field in dataclasses.fields(LoraConfig)}
    unknown = {key: value for key, value in config.items() if key not in known}
    on = [key for key, value in unknown.items()
          if value not in (None, False, {}, []) and key not in BOOKKEEPING
          and not (key in SETTING_OF and config.get(SETTING_OF[key]) in (None, False))]
    if on:
        raise ValueError(f"these settings are on and this peft cannot apply them, upgrade peft instead: {on}")
    with open(path, "w") as f:
        json.dump({key: value for key, value in config.items() if key in known}, f)
    return sorted(unknown)


def drop_unknown_keys_if_off():
    import json
    import os

    import torch
    from safetensors.torch import load_file, save_file

    x, reference, _ = _save()
    dropped = _drop_unknown()
    assert dropped == _unknown_keys()
    with torch.no_grad():
        assert torch.allclose(_load()(x), reference, atol=1e-6)
    # unsafe: lora_bias true, with the lora_B bias in the weights; the check refuses it
    config = json.loads(NEW_CONFIG)
    config["lora_bias"] = True
    _save(json.dumps(config), folder="with-bias")
    weights_path = os.path.join("with-bias", "adapter_model.safetensors")
    weights = load_file(weights_path)
    torch.manual_seed(2)
    weights["base_model.model.lin.lora_B.bias"] = torch.randn(8)
    save_file(weights, weights_path, metadata={"format": "pt"})
    if "lora_bias" in dataclasses_fields():
        return "this peft knows lora_bias: the unsafe case does not arise"
    try:
        _drop_unknown("with-bias")
    except ValueError as exc:
        assert "lora_bias" in str(exc), exc
    else:
        raise AssertionError("the check let lora_bias=true through")
    # dropped anyway: it loads, but the saved bias is not in the model
    with open(os.path.join("with-bias", "adapter_config.json"), "w") as f:
        json.dump({k: v for k, v in config.items() if k in dataclasses_fields()}, f)
    loaded = _load("with-bias")
    assert loaded.base_model.model.lin.lora_B["default"].bias is None
    assert not any("lora_B" in name and name.endswith("bias") for name, _ in loaded.named_parameters())
    return f"dropped {len(dropped)} keys that were off; lora_bias=true refused (dropping it loses the saved bias)"


def dataclasses_fields():
    import dataclasses

    from peft import LoraConfig

    return {field.name for field in dataclasses.fields(LoraConfig)}
