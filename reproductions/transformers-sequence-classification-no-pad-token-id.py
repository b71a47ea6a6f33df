"""A sequence classifier built on a decoder model (LlamaForSequenceClassification here; Mistral, Qwen2 and most other
decoders share the code, GPT-2 and GPT-Neo have their own copy) scores each row from its last real token, which it finds
through config.pad_token_id. Llama's configuration has no pad token id, so for a batch of more than one row the forward
pass raises ValueError "Cannot handle batch sizes > 1 if no padding token is defined." from
GenericForSequenceClassification.forward (src/transformers/modeling_layers.py; Llama's classifier uses it from
transformers 4.57 on, 4.53.3 still raised it from models/llama/modeling_llama.py, hence NEEDS >=4.57). trigger(): a tiny
Llama classifier (LlamaConfig, num_labels=2, no download) on a right-padded batch of two rows. Demonstrations: (1)
config.pad_token_id set to the id the batch was padded with: the batch runs and the short row's logits equal its logits
computed alone; (2) one row at a time (batch size 1) runs without a pad id, each row's logits equal the padded-batch
result of solution 1. The record's exampleFix and validationCode run from its text. The excerpt is
src/transformers/modeling_layers.py at 00029cfa0ed780d1ddb6e5d199bd92e86c5791a2, a stored upstream copy whose raise
statement (line 137) reads as in the releases run; its condition reads self.config.pad_token_id where 5.x reads
self.config.get_text_config().pad_token_id (same value for a text model). Results: errkb reproduce
transformers-sequence-classification-no-pad-token-id (the installed 5.25.0) --with transformers==4.57.6
--with transformers==5.24.0.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.57"}, "cuda_devices": 0, "timeout_s": 180}
SOLUTIONS = {1: "set_pad_token_id", 2: "one_row_at_a_time"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "tokenizer", "batch"], "validationCode": ["model", "batch"]}
KEEP = ["model"]
VALID = {"pad-id-set": "valid_pad_id_set", "single-row": "valid_single_row", "bert-classifier": "valid_bert",
         "multimodal-text-config-pad": "valid_multimodal_text_config_pad"}
WORDINGS = [
    {"text": "Cannot handle batch sizes > 1 if no padding token is defined.", "source": "transformers==4.57.6",
     "match": "pattern"},
    {"text": "Cannot handle batch sizes > 1 if no padding token is defined.", "source": "shibing624/MedicalGPT#417",
     "match": "matcher"},
    {"text": "AssertionError: Cannot handle batch sizes > 1 if no padding token is defined.",
     "source": "babylm/evaluation-pipeline-2023#5", "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "00029cfa0ed780d1ddb6e5d199bd92e86c5791a2",
              "path": "src/transformers/modeling_layers.py", "line": 137, "offset": 0}

import errkb_record as record

PAD = 0  # the id the batch is padded with (the tokenizer's eos token, used as pad token)


def _model():
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    torch.manual_seed(0)
    config = LlamaConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=37, num_attention_heads=2,
                         num_key_value_heads=2, vocab_size=4, max_position_embeddings=16, num_labels=2)
    assert config.pad_token_id is None
    return LlamaForSequenceClassification(config).eval()


def _batch():
    import torch

    return {"input_ids": torch.tensor([[1, 2, 1], [2, PAD, PAD]]),
            "attention_mask": torch.tensor([[1, 1, 1], [1, 0, 0]])}


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<|endoftext|>": 0, "hello": 1, "world": 2, "[UNK]": 3}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", unk_token="[UNK]")
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def trigger():
    model = _model()
    logits = model(**_batch()).logits


def set_pad_token_id():
    """Solution 1: config.pad_token_id = the padding id; the short row scores as it does alone."""
    import torch

    model = _model()
    model.config.pad_token_id = PAD
    with torch.no_grad():
        logits = model(**_batch()).logits
        alone = model(input_ids=torch.tensor([[2]])).logits
    assert logits.shape == (2, 2)
    assert torch.allclose(logits[1], alone[0], atol=1e-5), (logits[1], alone[0])


def one_row_at_a_time():
    """Solution 2: batches of one need no pad id; the rows match solution 1's padded batch."""
    import torch

    model = _model()
    with torch.no_grad():
        rows = [model(input_ids=torch.tensor([[1, 2, 1]])).logits[0], model(input_ids=torch.tensor([[2]])).logits[0]]
        model.config.pad_token_id = PAD
        batched = model(**_batch()).logits
    assert torch.allclose(torch.stack(rows), batched, atol=1e-5)


def example_fix():
    import torch

    model = _model()
    tokenizer = _tokenizer()
    batch = tokenizer(["hello world hello", "world"], padding=True, return_tensors="pt")
    assert batch["input_ids"].tolist() == _batch()["input_ids"].tolist()
    names = record.run("exampleFix", {"model": model, "tokenizer": tokenizer, "batch": batch}, section="after")
    assert names["logits"].shape == (2, 2) and model.config.pad_token_id == PAD
    assert names["model"] is model


def guard():
    model = _model()
    assert not record.check("validationCode", {"model": model, "batch": _batch()})
    model.config.pad_token_id = PAD
    assert record.check("validationCode", {"model": model, "batch": _batch()})


def valid_pad_id_set():
    model = _model()
    model.config.pad_token_id = PAD
    model(**_batch())
    return {"model": model, "batch": _batch()}


def valid_single_row():
    import torch

    model = _model()
    batch = {"input_ids": torch.tensor([[1, 2, 1]])}
    model(**batch)
    return {"model": model, "batch": batch}


def valid_bert():
    """An encoder classifier pools its first token: no pad id needed (BertConfig's default is 0 anyway)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    model = BertForSequenceClassification(BertConfig(num_hidden_layers=1, hidden_size=16, num_attention_heads=2,
                                                     intermediate_size=20, vocab_size=10)).eval()
    batch = {"input_ids": torch.tensor([[1, 2, 3], [2, 0, 0]]), "attention_mask": torch.tensor([[1, 1, 1], [1, 0, 0]])}
    model(**batch)
    return {"model": model, "batch": batch}


def valid_multimodal_text_config_pad():
    """A multimodal classifier (Gemma 3): the pad id is in config.text_config, config.pad_token_id is unset (None in
    4.57.6, absent in 5.x), and a padded batch of two rows runs."""
    import torch
    from transformers import Gemma3Config, Gemma3ForSequenceClassification

    torch.manual_seed(0)
    config = Gemma3Config(
        text_config={"num_hidden_layers": 1, "hidden_size": 32, "intermediate_size": 37, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 300, "pad_token_id": PAD},
        vision_config={"num_hidden_layers": 1, "hidden_size": 16, "intermediate_size": 20, "num_attention_heads": 2,
                       "image_size": 28, "patch_size": 14},
        mm_tokens_per_image=4, num_labels=2)
    assert getattr(config, "pad_token_id", None) is None and config.get_text_config().pad_token_id == PAD
    model = Gemma3ForSequenceClassification(config).eval()
    batch = {"input_ids": torch.tensor([[5, 6, 7], [5, PAD, PAD]]), "attention_mask": torch.tensor([[1, 1, 1], [1, 0, 0]])}
    assert model(**batch).logits.shape == (2, 2)
    return {"model": model, "batch": batch}
