"""A LoRA recipe written for LLaMA names the attention projections q_proj/v_proj; applied to a GPT-2 (here one layer,
built from a configuration, no download) nothing matches, because GPT-2 fuses its query/key/value projection into
one Conv1D called c_attn. get_peft_model -> BaseTuner.inject_adapter finds no module for any target name and raises
ValueError "Target modules {'q_proj'} not found in the base model. ..." (peft 0.21 raises the subclass
NoMatchingPeftModuleError). The demonstrations: target_modules taken from the model's own module names (c_attn),
"all-linear", and a regular expression string; each wraps c_attn, leaves the base weights frozen and trains the LoRA
weights one optimizer step; on a custom nn.Module "all-linear" wraps both layers from peft 0.15 and is refused with
another ValueError before (0.13.2). The record's exampleFix and validationCode run from its text; the guard passes the
configurations PEFT accepts (a partial list, full dotted names, a regex, all-linear in any case, a custom nn.Module,
target_modules=[] with target_parameters, trainable_token_indices naming the embedding) and flags the second raise
site's case (trainable_token_indices naming a layer the model lacks), shown to raise the same message.
Results: peft 0.20.0 (installed, torch 2.13.0+cpu), and --with environments for the other peft releases (each with
a transformers release of its era where the newest one does not import with it).

Drafted by `errkb draft` from peft_snip.py on peft 0.20.0, Python 3.11.7 (a custom two-layer module; the author
switched the trigger to a tiny GPT-2, the case users paste):
  ValueError: Target modules {'q_proj'} not found in the base model. Please check the target modules and try again.
  raised at peft/tuners/tuners_utils.py:1012
The excerpt (L1004-1014) is byte-identical to src/peft/tuners/tuners_utils.py at tag v0.20.0 (a5526d27a9d4), checked
with cmp against the stored huggingface/peft snapshot.
"""
NEEDS = {'packages': {'peft': '', 'transformers': '', 'torch': '==2.13.0+cpu'}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "names_from_the_model", 2: "all_linear", 3: "regex_string"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model"], "validationCode": ["model", "lora_config"]}
KEEP = ["model"]
VALID = {"fused-attention": "valid_c_attn", "partial-list": "valid_partial_list", "dotted-name": "valid_dotted_name",
         "regex": "valid_regex", "all-linear": "valid_all_linear", "custom-module": "valid_custom_module",
         "all-linear-any-case": "valid_all_linear_any_case", "parameters-only": "valid_parameters_only",
         "token-indices": "valid_token_indices"}
WORDINGS = [
    {'text': "Target modules {'q_proj'} not found in the base model. Please check the target modules and try again.", 'source': 'peft==0.20.0', 'match': 'pattern'},
    {'text': "Target modules ['q_proj', 'v_proj'] not found in the base model. Please check the target modules and try again.", 'source': 'hiyouga/LlamaFactory#181', 'match': 'pattern'},
    {'text': "Target modules {'q_proj', 'v_proj'} not found in the base model. Please check the target modules and try again.", 'source': 'linhduongtuan/BLOOM-LORA#15', 'match': 'pattern'},
    {'text': "Target modules [] not found in the base model. Please check the target modules and try again.", 'source': 'yangjianxin1/Firefly#23', 'match': 'pattern'},
    {'text': "Target modules [gate_proj, down_proj, up_proj] not found in the base model. Please check the target modules and try again.", 'source': 'HestiaSky/E4SRec#5', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'huggingface/peft', 'commit': 'a5526d27a9d47d1e8264d5e1b1f96c0fdc79464e', 'path': 'src/peft/tuners/tuners_utils.py', 'line': 1012, 'offset': 0}

import dataclasses
import re
import warnings

import errkb_record as record


def _gpt2():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=1, n_head=2)
    return GPT2LMHeadModel(config)


def _tiny_net():
    import torch

    class TinyNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 2)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    return TinyNet()


def _lora(target_modules, **options):
    from peft import LoraConfig

    options.setdefault("fan_in_fan_out", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GPT-2's Conv1D: "fan_in_fan_out is set to False ..." is informative only
        return LoraConfig(r=4, lora_alpha=8, target_modules=target_modules, **options)


def _wrapped(model, target_modules, **options):
    from peft import get_peft_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_peft_model(model, _lora(target_modules, **options))


def _has_option(name):
    """Whether this peft release's LoraConfig has the field (target_parameters: 0.17, trainable_token_indices: 0.15)."""
    from peft import LoraConfig

    return name in {field.name for field in dataclasses.fields(LoraConfig)}


def _peft_before(version):
    import peft
    from packaging.version import Version

    return Version(peft.__version__) < Version(version)


def _trains_only_lora(peft_model, must_wrap=("c_attn",), must_not_wrap=()):
    """The named layers carry LoRA weights, every trainable parameter is a LoRA one, and one step changes them."""
    import torch

    names = [name for name, _ in peft_model.named_parameters()]
    for layer in must_wrap:
        assert any(f"{layer}.lora_A" in n for n in names), f"{layer} was not wrapped: {names}"
    for layer in must_not_wrap:
        assert not any(f"{layer}.lora_A" in n for n in names), f"{layer} was wrapped"
    trainable = [n for n, p in peft_model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable), trainable
    lora_b = [p for n, p in peft_model.named_parameters() if "lora_B" in n]
    before = [p.detach().clone() for p in lora_b]
    optimizer = torch.optim.SGD([p for p in peft_model.parameters() if p.requires_grad], lr=0.5)
    ids = torch.randint(0, 64, (2, 8))
    loss = peft_model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)
    assert any(not torch.equal(a, b) for a, b in zip(before, lora_b)), "the LoRA weights did not train"


def trigger():
    from peft import LoraConfig, get_peft_model

    model = _gpt2()
    config = LoraConfig(r=4, target_modules=["q_proj"])
    peft_model = get_peft_model(model, config)


def names_from_the_model():
    """Solution 1: the names come from model.named_modules(); GPT-2's attention projection is c_attn."""
    model = _gpt2()
    names = [name for name, _ in model.named_modules()]
    assert "transformer.h.0.attn.c_attn" in names and not any(n.endswith("q_proj") for n in names)
    _trains_only_lora(_wrapped(model, ["c_attn"]), must_not_wrap=("lm_head", "c_fc"))


def all_linear():
    """Solution 2: "all-linear" wraps every linear layer of the blocks (c_attn, c_proj, c_fc) and not the head. On a
    custom nn.Module it wraps both Linear layers from peft 0.15; older releases refuse it with another ValueError."""
    import torch

    _trains_only_lora(_wrapped(_gpt2(), "all-linear"), must_wrap=("c_attn", "c_fc", "c_proj"), must_not_wrap=("lm_head",))
    if _peft_before("0.15"):
        try:
            _wrapped(_tiny_net(), "all-linear", fan_in_fan_out=False)
        except ValueError as exc:
            assert "PreTrainedModel" in str(exc) and "not found in the base model" not in str(exc), exc
            return f"custom nn.Module: all-linear refused on this release ({exc})"
        raise AssertionError("all-linear was expected to be refused for a custom nn.Module before peft 0.15")
    peft_model = _wrapped(_tiny_net(), "all-linear", fan_in_fan_out=False)
    names = [n for n, _ in peft_model.named_parameters()]
    assert any("fc1.lora_A" in n for n in names) and any("fc2.lora_A" in n for n in names), names
    optimizer = torch.optim.SGD([p for p in peft_model.parameters() if p.requires_grad], lr=0.5)
    lora_b = [p for n, p in peft_model.named_parameters() if "lora_B" in n]
    before = [p.detach().clone() for p in lora_b]
    peft_model(torch.randn(4, 8)).pow(2).mean().backward()
    optimizer.step()
    assert any(not torch.equal(a, b) for a, b in zip(before, lora_b)), "the LoRA weights did not train"


def regex_string():
    """Solution 3: one regular expression string, matched against the full dotted module name."""
    _trains_only_lora(_wrapped(_gpt2(), r".*\.attn\.c_attn"), must_not_wrap=("c_fc", "lm_head"))


def example_fix():
    model = _gpt2()
    names = record.run("exampleFix", {"model": model}, section="after")
    _trains_only_lora(names["peft_model"])


def _this_message(message):
    """The record's message: "Target modules <...> not found in the base model. Please check ..." """
    return message.startswith("Target modules ") and "not found in the base model. Please check the target modules" in message


def _refusal(lora_config):
    """The ValueError get_peft_model raises for this configuration on a fresh GPT-2."""
    from peft import get_peft_model

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            get_peft_model(_gpt2(), lora_config)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"get_peft_model accepted {lora_config!r}")


def guard():
    from peft import LoraConfig

    assert not record.check("validationCode", {"model": _gpt2(), "lora_config": LoraConfig(r=4, target_modules=["q_proj"])})
    assert not record.check("validationCode", {"model": _gpt2(), "lora_config": LoraConfig(r=4, target_modules=["q_proj", "v_proj"])})
    assert record.check("validationCode", {"model": _gpt2(), "lora_config": _lora(["c_attn"])})
    # An empty list: PEFT refuses it on every release, in this message only before 0.17 ("Target modules set() ...").
    empty = _refusal(_lora([]))
    assert _this_message(empty) == _peft_before("0.17"), empty
    assert not record.check("validationCode", {"model": _gpt2(), "lora_config": _lora([])})
    if _has_option("trainable_token_indices"):
        # The second raise site (peft/utils/other.py): target_modules is right, the token layer name is not.
        wrong_layer = _lora(["c_attn"], trainable_token_indices={"embed_tokens": [0, 1]})
        message = _refusal(wrong_layer)
        assert _this_message(message) and "embed_tokens" in message, message
        assert not record.check("validationCode", {"model": _gpt2(), "lora_config": wrong_layer})


def _proven(make_model, target_modules):
    """A situation PEFT accepts: get_peft_model succeeds on one model; the guard sees a fresh one and the config."""
    _wrapped(make_model(), target_modules)
    return {"model": make_model(), "lora_config": _lora(target_modules)}


def valid_c_attn():
    return _proven(_gpt2, ["c_attn"])


def valid_partial_list():
    return _proven(_gpt2, ["c_attn", "q_proj"])  # PEFT raises only when nothing matches


def valid_dotted_name():
    return _proven(_gpt2, ["transformer.h.0.attn.c_attn", "h.0.mlp.c_fc"])


def valid_regex():
    return _proven(_gpt2, r".*\.(c_attn|c_proj)")


def valid_all_linear():
    return _proven(_gpt2, "all-linear")


def valid_custom_module():
    return [_proven(_tiny_net, ["fc1"]), _proven(_tiny_net, ["fc1", "fc2"])]


def valid_all_linear_any_case():
    return [_proven(_gpt2, "All-Linear"), _proven(_gpt2, "ALL-LINEAR")]  # PEFT compares target_modules.lower()


def valid_parameters_only():
    """target_modules=[] with target_parameters, as LoraConfig's documentation says (peft 0.17 and later)."""
    if not _has_option("target_parameters"):
        return _proven(_gpt2, ["c_attn"])  # no target_parameters on this release: the plain case stands in
    config = _lora([], target_parameters=["mlp.c_fc.weight"], fan_in_fan_out=False)
    _wrapped(_gpt2(), [], target_parameters=["mlp.c_fc.weight"], fan_in_fan_out=False)
    return {"model": _gpt2(), "lora_config": config}


def valid_token_indices():
    """trainable_token_indices naming the model's embedding layer (GPT-2: wte), peft 0.15 and later."""
    if not _has_option("trainable_token_indices"):
        return _proven(_gpt2, ["c_attn"])
    _wrapped(_gpt2(), ["c_attn"], trainable_token_indices={"wte": [0, 1]})
    return {"model": _gpt2(), "lora_config": _lora(["c_attn"], trainable_token_indices={"wte": [0, 1]})}
