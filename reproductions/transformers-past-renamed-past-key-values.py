"""Code written for transformers 2.x/3.x feeds GPT-2 its key/value cache back with model(input_ids, past=past). In
transformers 4 the keyword is past_key_values, and GPT2LMHeadModel.forward (no **kwargs in 4.30.2, 4.40.2 and 4.47.1,
checked by the demonstrations) cannot take past=, so Python raises TypeError "GPT2LMHeadModel.forward() got an
unexpected keyword argument 'past'" at torch's Module._call_impl, where forward_call(*args, **kwargs) is called: no
transformers frame is on the stack, so the record's raise site is torch/nn/modules/module.py (torch 2.13.0+cpu,
installed in every environment). trigger(): a tiny GPT-2 built from a GPT2Config (no download) is called as in
huggingface/transformers#8862, input_ids with past=None. Solution 1 passes the cache as past_key_values= (the
record's exampleFix, run from its text) and reads it back from outputs.past_key_values: the next token's logits from
the cached step equal those of a full forward pass over the whole sequence, and the old unpacking
logits, past = model(...) is shown to yield the output object's key names. Solution 2 lets model.generate() keep the
cache: its greedy tokens equal a greedy loop over full forward passes. Results: errkb reproduce
transformers-past-renamed-past-key-values --with transformers==4.30.2 --with transformers==4.40.2
--with transformers==4.47.1 (all verified). The installed transformers 5.25.0 is outside NEEDS (skipped): GPT2LMHeadModel.forward
ends in **kwargs in the 4.48.3 wheel (models/gpt2/modeling_gpt2.py line 1052) and in 5.25.0, so past= binds there;
no release after 4.47.1 was run (see the record). The old side of the rename
(transformers 3.x, which took past= with a FutureWarning) cannot be installed on Python 3.11: errkb draft
--api-change --library transformers --releases 3.5.1,4.0.0,4.25.1,4.30.2,4.47.1 found 4.47.1 failing with this
TypeError and 3.5.1 not installable (sentencepiece 0.1.91 has no Python 3.11 build), so no release where the
snippet works was run; the 3.x FutureWarning is cited from facebookresearch/ParlAI#3393. The record was written by
hand from that run (the draft refused to write without a working old side). The excerpt is the installed torch
2.13.0+cpu file, lines 1782-1789 of torch/nn/modules/module.py, the same lines as forward-called-with-wrong-arguments.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.30,<4.48"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "pass_past_key_values", 2: "generate_keeps_the_cache"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["model", "input_ids", "past"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "GPT2LMHeadModel.forward() got an unexpected keyword argument 'past'", "source": "transformers==4.47.1",
     "match": "pattern"},
    {"text": "GPT2LMHeadModel.forward() got an unexpected keyword argument 'past'", "source": "transformers==4.30.2",
     "match": "pattern"},
    {"text": "forward() got an unexpected keyword argument 'past'", "source": "huggingface/transformers#8862",
     "match": "matcher"},
    {"text": "forward() got an unexpected keyword argument 'past'", "source": "RF5/lmao#14", "match": "matcher"},
    {"text": "The `past` argument is deprecated and will be removed in a future version, use `past_key_values` instead.",
     "source": "facebookresearch/ParlAI#3393", "match": "none",
     "why": "the FutureWarning transformers 3.5.1 printed for past=, before the keyword was removed; not an error"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import errkb_record as record


def _gpt2():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=64)
    return GPT2LMHeadModel(config).eval()


def _no_var_keyword(model):
    import inspect

    params = inspect.signature(model.forward).parameters.values()
    assert not any(p.kind is p.VAR_KEYWORD for p in params), "this release's GPT2LMHeadModel.forward takes **kwargs"
    assert "past_key_values" in inspect.signature(model.forward).parameters


def trigger():
    import torch

    model = _gpt2()
    input_ids, past = torch.tensor([[5, 7, 9]]), None
    with torch.no_grad():
        outputs = model(input_ids, past=past)


def _full_last_logits(model, ids):
    import torch

    with torch.no_grad():
        return model(torch.tensor([ids])).logits[:, -1]


def pass_past_key_values():
    """Solution 1: the cache goes in as past_key_values= and comes back as outputs.past_key_values; the cached step's
    logits equal a full forward pass over the whole sequence."""
    import torch

    model = _gpt2()
    _no_var_keyword(model)
    with torch.no_grad():
        first = model(torch.tensor([[5, 7, 9]]), past_key_values=None, use_cache=True)
        past = first.past_key_values
        assert past is not None
        step = model(torch.tensor([[3]]), past_key_values=past, use_cache=True)
    assert step.logits.shape == (1, 1, 100)
    assert torch.allclose(step.logits[:, -1], _full_last_logits(model, [5, 7, 9, 3]), atol=1e-5)
    # the cache really was used: without it the one-token call sees only token 3
    assert not torch.allclose(_full_last_logits(model, [3]), step.logits[:, -1], atol=1e-5)
    # the 3.x habit of unpacking the result, logits, past = model(...), now yields the output object's key names
    with torch.no_grad():
        first, second = model(torch.tensor([[5, 7, 9]]), use_cache=True)
    assert (first, second) == ("logits", "past_key_values"), (first, second)


def generate_keeps_the_cache():
    """Solution 2: model.generate() handles the cache itself; greedy generate equals a greedy loop over full passes."""
    import torch

    model = _gpt2()
    prompt = [5, 7, 9]
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=4, do_sample=False, pad_token_id=0)
    ids = list(prompt)
    for _ in range(4):
        ids.append(int(_full_last_logits(model, ids).argmax(-1)))
    assert out[0].tolist() == ids, (out[0].tolist(), ids)


def example_fix():
    import torch

    model = _gpt2()
    with torch.no_grad():
        names = record.run("exampleFix", {"model": model, "input_ids": torch.tensor([[5, 7, 9]]), "past": None},
                           section="after")
        assert names["model"] is model
        assert names["logits"].shape == (1, 3, 100)
        past = names["past"]
        names = record.run("exampleFix", {"model": model, "input_ids": torch.tensor([[3]]), "past": past},
                           section="after")
    assert names["logits"].shape == (1, 1, 100)
    assert torch.allclose(names["logits"][:, -1], _full_last_logits(model, [5, 7, 9, 3]), atol=1e-5)
