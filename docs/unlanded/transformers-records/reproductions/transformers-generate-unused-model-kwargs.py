"""generate() takes its own options (the GenerationConfig fields: max_new_tokens, repetition_penalty, top_p, ...) and
passes every other keyword to the model as a model input. Before generating, GenerationMixin._validate_model_kwargs
(transformers/generation/utils.py) compares those leftover keywords with the parameters of the model's
prepare_inputs_for_generation and forward, and raises ValueError "The following `model_kwargs` are not used by the
model: [...] (note: typos in the generate arguments will also show up in this list)" for any it does not know.
trigger(): a tiny GPT-2 (built from a GPT2Config, no download) gets repeat_penalty=1.1, llama.cpp's spelling of
transformers' repetition_penalty. Demonstrations: (1) the same call with repetition_penalty=1.1 generates, and the
penalty really changes the scores against a run without it; (2) the other common case, a tokenizer batch carrying
token_type_ids handed to a model whose forward takes none (a tiny Llama), raises with ['token_type_ids'] and
generates once that key is dropped. The record's exampleFix and validationCode run from its text. Results:
errkb reproduce transformers-generate-unused-model-kwargs --with transformers==4.40.2 --with transformers==4.57.6
and the installed 5.24.0.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "correct_option_name", 2: "drop_inputs_the_model_does_not_take"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "input_ids"], "validationCode": ["model", "generate_kwargs"]}
KEEP = ["model"]
VALID = {"sampling-options": "valid_sampling_options", "gpt2-tokenizer-batch": "valid_gpt2_batch",
         "return-dict-scores": "valid_return_dict", "generation-config-object": "valid_generation_config"}
WORDINGS = [
    {"text": "The following `model_kwargs` are not used by the model: ['repeat_penalty'] (note: typos in the generate "
             "arguments will also show up in this list)", "source": "transformers==5.24.0", "match": "pattern"},
    {"text": "The following `model_kwargs` are not used by the model: ['token_type_ids'] (note: typos in the generate "
             "arguments will also show up in this list)", "source": "run-llama/llama_index#13708", "match": "matcher"},
    {"text": "The following `model_kwargs` are not used by the model: ['max_tokens']", "source": "XMUDeepLIT/Faithful-RAG#4",
     "match": "pattern"},
    {"text": "The following `model_kwargs` are not used by the model: ['num_beans']", "source": "huggingface/tokenizers#1596",
     "match": "pattern"},
    {"text": "The following model_kwargs are not used by the model: ['gpt_cond_len']", "source": "idiap/coqui-ai-TTS#448",
     "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "transformers", "version": "5.24.0"}

import errkb_record as record


def _gpt2():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=64)
    return GPT2LMHeadModel(config).eval()


def _input_ids():
    import torch

    return torch.tensor([[5, 7, 5, 7, 5, 9]])


def trigger():
    model = _gpt2()
    output = model.generate(_input_ids(), max_new_tokens=5, repeat_penalty=1.1)


def correct_option_name():
    """Solution 1: generate's own name, repetition_penalty; the scores differ from an unpenalised run."""
    import torch

    model = _gpt2()
    common = dict(max_new_tokens=5, do_sample=False, output_scores=True, return_dict_in_generate=True,
                  pad_token_id=0)
    plain = model.generate(_input_ids(), **common)
    penalised = model.generate(_input_ids(), repetition_penalty=1.1, **common)
    assert penalised.sequences.shape == (1, 11)
    assert not torch.equal(plain.scores[0], penalised.scores[0]), "the penalty did not reach the logits"


def _llama():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                         intermediate_size=37, vocab_size=100)
    return LlamaForCausalLM(config).eval()


def drop_inputs_the_model_does_not_take():
    """Solution 2: a batch from a BERT-style tokenizer carries token_type_ids; Llama's forward takes none. Drop it."""
    import torch

    model = _llama()
    batch = {"input_ids": _input_ids(), "attention_mask": torch.ones(1, 6, dtype=torch.long),
             "token_type_ids": torch.zeros(1, 6, dtype=torch.long)}
    try:
        model.generate(**batch, max_new_tokens=3, pad_token_id=0)
    except ValueError as exc:
        assert "['token_type_ids']" in str(exc), exc
    else:
        raise AssertionError("token_type_ids was accepted")
    batch.pop("token_type_ids")
    output = model.generate(**batch, max_new_tokens=3, pad_token_id=0)
    assert output.shape == (1, 9)


def example_fix():
    model = _gpt2()
    names = record.run("exampleFix", {"model": model, "input_ids": _input_ids()}, section="after")
    assert names["output"].shape[0] == 1 and names["output"].shape[1] > 6
    assert names["model"] is model


def guard():
    import torch

    model = _gpt2()
    assert not record.check("validationCode", {"model": model,
                                               "generate_kwargs": {"max_new_tokens": 5, "repeat_penalty": 1.1}})
    assert record.check("validationCode", {"model": model,
                                           "generate_kwargs": {"max_new_tokens": 5, "repetition_penalty": 1.1}})
    llama_batch = {"attention_mask": torch.ones(1, 6, dtype=torch.long),
                   "token_type_ids": torch.zeros(1, 6, dtype=torch.long)}
    assert not record.check("validationCode", {"model": _llama(), "generate_kwargs": llama_batch})


def _proved(model, kwargs):
    model.generate(_input_ids(), pad_token_id=0, **kwargs)  # generate accepts it
    return {"model": model, "generate_kwargs": kwargs}


def valid_sampling_options():
    return _proved(_gpt2(), {"do_sample": True, "top_p": 0.9, "top_k": 20, "temperature": 0.7, "max_new_tokens": 4,
                             "no_repeat_ngram_size": 2})


def valid_gpt2_batch():
    """What a GPT-2 tokenizer batch holds: GPT-2's forward does take token_type_ids."""
    import torch

    return _proved(_gpt2(), {"attention_mask": torch.ones(1, 6, dtype=torch.long),
                             "token_type_ids": torch.zeros(1, 6, dtype=torch.long), "max_new_tokens": 3})


def valid_return_dict():
    return _proved(_gpt2(), {"max_new_tokens": 3, "return_dict_in_generate": True, "output_scores": True,
                             "output_attentions": True, "num_beams": 2})


def valid_generation_config():
    from transformers import GenerationConfig

    return _proved(_gpt2(), {"generation_config": GenerationConfig(max_new_tokens=3, repetition_penalty=1.2)})
