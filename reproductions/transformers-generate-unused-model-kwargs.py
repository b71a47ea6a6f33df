"""generate() takes its own options (the GenerationConfig fields: max_new_tokens, repetition_penalty, top_p, ...) and
passes every other keyword to the model as a model input. Before generating, GenerationMixin._validate_model_kwargs
(src/transformers/generation/utils.py) compares those leftover keywords with the parameters of the model's
prepare_inputs_for_generation and forward, and raises ValueError "The following `model_kwargs` are not used by the
model: [...] (note: typos in the generate arguments will also show up in this list)" for any it does not know.
trigger(): a tiny GPT-2 (built from a GPT2Config, no download) gets repeat_penalty=1.1, llama.cpp's spelling of
transformers' repetition_penalty. Demonstrations: (1) the same call with repetition_penalty=1.1 generates, and the
penalty really changes the scores against a run without it; (2) the other common case, a batch from a BERT-style
tokenizer (built in memory, token_type_ids among its model inputs) handed to a model whose forward takes none (a tiny
Llama), raises with ['token_type_ids'] and generates once that key is popped, or once the tokenizer is called with
return_token_type_ids=False. The record's exampleFix and validationCode run from its text; VALID holds what generate
accepts that a naive guard would flag: a None-valued input, a BERT batch with token_type_ids for a bert2bert
EncoderDecoderModel (its forward takes no token_type_ids, its encoder does, and generate allows the encoder's inputs),
output_router_logits=False for a Llama (a TransformersKwargs key its forward takes only through **kwargs; offered where
the release accepts it, asserted for 4.57.6 and 5.25.0), and, where the release accepts them (4.57.6, 5.25.0; not
4.40.2), tokenizer=, trust_remote_code= and assistant_tokenizer=. The excerpt is src/transformers/generation/utils.py at
000034a44ef887621d9b36001a5eb7c46e64cb3f, a stored upstream copy (a commit shortly before 4.57.0): it was rebuilt from
4.57.0 with the differences read in the copy (pages at offsets 0, 16000, 40000, 56000 and 83500 read; the rebuilt
text lines up with the copy at 16000, 32000, 40000, 56000, 72000 and 83500), which puts the raise at line 1601. The cold
review read the two stretches left unread (pages at 32000 and 72000: copy 32000-45386 and 72000-85502 are 4.57.0's text
unchanged, shifted by 259 and 116 characters) and re-derived the line: copy = 4.57.0 (raise at 1599) + 1 (the
file_exists import) + 6 (4.56's load_custom_generate) - 3 (no "TODO (joao)" comment) - 2 (PromptLookupCandidateGenerator
without logits_processor/vocab_size) = 1601, the copy's pages at 0, 16000, 32000, 45386 and 72000 lining up exactly with
the text so assembled, whose lines 1593-1606 equal the excerpt. The raise statement reads the same as in 4.40.2, 4.57.6
and 5.25.0. Results: errkb reproduce
transformers-generate-unused-model-kwargs (the installed 5.25.0) --with transformers==4.40.2
--with transformers==4.57.6.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "correct_option_name", 2: "drop_inputs_the_model_does_not_take"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "input_ids"], "validationCode": ["model", "generate_kwargs"]}
KEEP = ["model"]
VALID = {"sampling-options": "valid_sampling_options", "gpt2-tokenizer-batch": "valid_gpt2_batch",
         "return-dict-scores": "valid_return_dict", "generation-config-object": "valid_generation_config",
         "none-valued-input": "valid_none_input", "keywords-newer-releases-take": "valid_newer_keywords",
         "encoder-decoder-bert-batch": "valid_encoder_decoder_batch",
         "transformers-kwargs-key": "valid_transformers_kwargs_key"}
WORDINGS = [
    {"text": "The following `model_kwargs` are not used by the model: ['repeat_penalty'] (note: typos in the generate "
             "arguments will also show up in this list)", "source": "transformers==5.25.0", "match": "pattern"},
    {"text": "The following `model_kwargs` are not used by the model: ['token_type_ids'] (note: typos in the generate "
             "arguments will also show up in this list)", "source": "run-llama/llama_index#13708", "match": "matcher"},
    {"text": "The following `model_kwargs` are not used by the model: ['max_tokens']", "source": "XMUDeepLIT/Faithful-RAG#4",
     "match": "pattern"},
    {"text": "The following `model_kwargs` are not used by the model: ['num_beans']", "source": "huggingface/tokenizers#1596",
     "match": "pattern"},
    {"text": "The following model_kwargs are not used by the model: ['gpt_cond_len']", "source": "idiap/coqui-ai-TTS#448",
     "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "000034a44ef887621d9b36001a5eb7c46e64cb3f",
              "path": "src/transformers/generation/utils.py", "line": 1601, "offset": 0}

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


def _bert_style_tokenizer():
    """A tokenizer built in memory whose model inputs include token_type_ids, as BERT-style tokenizers' do."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({"[UNK]": 0, "[PAD]": 1, "hello": 5, "world": 7}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                   model_input_names=["input_ids", "token_type_ids", "attention_mask"])


def drop_inputs_the_model_does_not_take():
    """Solution 2: a batch from a BERT-style tokenizer carries token_type_ids; Llama's forward takes none. Pop it, or
    ask the tokenizer not to return it."""
    model = _llama()
    tokenizer = _bert_style_tokenizer()
    batch = dict(tokenizer(["hello world hello world"], return_tensors="pt"))
    assert "token_type_ids" in batch, batch.keys()
    try:
        model.generate(**batch, max_new_tokens=3, pad_token_id=1)
    except ValueError as exc:
        assert "['token_type_ids']" in str(exc), exc
    else:
        raise AssertionError("token_type_ids was accepted")
    batch.pop("token_type_ids")
    output = model.generate(**batch, max_new_tokens=3, pad_token_id=1)
    assert output.shape == (1, 7)
    plain = tokenizer(["hello world hello world"], return_tensors="pt", return_token_type_ids=False)
    assert "token_type_ids" not in plain
    output = model.generate(**plain, max_new_tokens=3, pad_token_id=1)
    assert output.shape == (1, 7)


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
    llama_batch.pop("token_type_ids")
    assert record.check("validationCode", {"model": _llama(), "generate_kwargs": llama_batch})


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


def valid_none_input():
    """A keyword whose value is None (an optional input left empty) is not checked."""
    return _proved(_gpt2(), {"max_new_tokens": 3, "pixel_values": None})


def valid_newer_keywords():
    """tokenizer= (stop_strings need it), trust_remote_code= and assistant_tokenizer=, which newer releases take out
    of the keyword arguments themselves: each is offered as a situation only once generate has accepted it here
    (4.40.2 rejects all three with this very error; 4.57.6 and 5.25.0 accept them)."""
    import transformers
    from packaging.version import Version

    situations = [_proved(_gpt2(), {"max_new_tokens": 3})]
    for key, value in (("tokenizer", _bert_style_tokenizer()), ("trust_remote_code", False),
                       ("assistant_tokenizer", _bert_style_tokenizer())):
        try:
            situations.append(_proved(_gpt2(), {"max_new_tokens": 3, key: value}))
        except ValueError as exc:
            assert "are not used by the model" in str(exc), exc  # an older release: generate itself rejects it
    if Version(transformers.__version__) >= Version("4.57"):
        assert len(situations) == 4, situations  # the releases the record names accept all three
    if Version(transformers.__version__) < Version("4.41"):
        assert len(situations) == 1, situations  # 4.40.2 rejects all three
    return situations


def valid_encoder_decoder_batch():
    """A bert2bert EncoderDecoderModel given a BERT tokenizer's batch: EncoderDecoderModel.forward names no
    token_type_ids, but its encoder's forward does, and generate accepts the encoder's inputs."""
    import inspect

    import torch
    from transformers import BertConfig, EncoderDecoderConfig, EncoderDecoderModel

    def bert(**extra):
        return BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=37, **extra)

    config = EncoderDecoderConfig.from_encoder_decoder_configs(bert(), bert(is_decoder=True, add_cross_attention=True))
    config.decoder_start_token_id, config.pad_token_id, config.eos_token_id = 2, 0, 3
    torch.manual_seed(0)
    model = EncoderDecoderModel(config=config).eval()
    assert "token_type_ids" not in inspect.signature(model.forward).parameters
    kwargs = {"attention_mask": torch.ones(1, 6, dtype=torch.long),
              "token_type_ids": torch.zeros(1, 6, dtype=torch.long), "max_new_tokens": 3}
    model.generate(_input_ids(), **kwargs)  # generate accepts it
    return {"model": model, "generate_kwargs": kwargs}


def valid_transformers_kwargs_key():
    """output_router_logits is no parameter of LlamaForCausalLM.forward, but a TransformersKwargs key, which newer
    releases accept; offered only where generate accepts it (4.57.6 and 5.25.0 must)."""
    import transformers
    from packaging.version import Version

    situations = [{"model": _llama(), "generate_kwargs": {"max_new_tokens": 2}}]
    kwargs = {"max_new_tokens": 2, "output_router_logits": False}
    model = _llama()
    try:
        model.generate(_input_ids(), pad_token_id=0, **kwargs)
        situations.append({"model": model, "generate_kwargs": kwargs})
    except ValueError as exc:
        assert "are not used by the model" in str(exc), exc  # an older release rejects it itself
    if Version(transformers.__version__) >= Version("4.57"):
        assert len(situations) == 2, "4.57.6 and 5.25.0 accept output_router_logits"
    return situations
