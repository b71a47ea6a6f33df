"""A GPT-2-style tokenizer (an end-of-text token, no padding token) is asked to pad a batch of texts of different
lengths. PreTrainedTokenizerBase._get_padding_truncation_strategies (src/transformers/tokenization_utils_base.py)
checks for a pad token before encoding and raises ValueError "Asking to pad but the tokenizer does not have a
padding token. Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add
a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`." trigger(): a tiny WordLevel tokenizer
built in memory with tokenizers, wrapped in PreTrainedTokenizerFast with only eos_token and unk_token, called with
padding=True. Demonstrations: (1) pad_token set to the eos token: the batch pads with the eos id, the attention
mask hides the pads, and a tiny GPT-2 gives the short row's real token the logits it gets unpadded; padded on the
left, greedy generation continues the short row as it continues it alone; DataCollatorForLanguageModeling
(mlm=False) sets the labels of the pads to -100, and, because pad and eos are one id, the label of a real
end-of-text token too; (2) a new [PAD] token added and the model's embeddings resized to the new vocabulary size,
then the padded batch runs through the model. The record's exampleFix and validationCode run from its text.
The excerpt is src/transformers/tokenization_utils_base.py at 598a3dc387272524973e74e57f137e46cc4e3734, a stored
upstream copy byte-identical to the file of the transformers 4.53.0-4.53.3 wheels. Results: errkb reproduce
transformers-tokenizer-no-padding-token (the installed 5.25.0) --with transformers==4.53.3
--with transformers==4.57.6 --with transformers==5.24.0.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "pad_with_eos", 2: "add_pad_token_and_resize"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["tokenizer", "texts"], "validationCode": ["tokenizer", "padding"]}
KEEP = ["tokenizer"]
VALID = {"has-pad-token": "valid_has_pad", "no-padding": "valid_no_padding", "do-not-pad": "valid_do_not_pad",
         "max-length-with-pad": "valid_max_length"}
WORDINGS = [
    {"text": "Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
             "`pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via "
             "`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.", "source": "transformers==4.53.3",
     "match": "pattern"},
    {"text": "Asking to pad but the tokenizer does not have a padding token.", "source": "huggingface/trl#466",
     "match": "matcher"},
    {"text": "Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
             "`pad_token`", "source": "lm-sys/FastChat#1534", "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "598a3dc387272524973e74e57f137e46cc4e3734",
              "path": "src/transformers/tokenization_utils_base.py", "line": 2751, "offset": 0}

import errkb_record as record

TEXTS = ["hello world hello", "world"]


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<|endoftext|>": 0, "hello": 1, "world": 2, "[UNK]": 3}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", unk_token="[UNK]")


def _gpt2(vocab_size=4):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=vocab_size, n_positions=16,
                                      bos_token_id=0, eos_token_id=0)).eval()


def trigger():
    tokenizer = _tokenizer()
    batch = tokenizer(TEXTS, padding=True, return_tensors="pt")


def pad_with_eos():
    """Solution 1: pad_token = eos_token; the pads are masked, and the short row's real token gets the logits it gets
    alone; padded on the left, generation continues the short row as it does alone; the language-modelling collator
    labels the pads -100, and with pad == eos the real end-of-text token as well."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    tokenizer = _tokenizer()
    tokenizer.pad_token = tokenizer.eos_token
    batch = tokenizer(TEXTS, padding=True, return_tensors="pt")
    assert batch["input_ids"].tolist() == [[1, 2, 1], [2, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    model = _gpt2()
    with torch.no_grad():
        # input_ids and attention_mask only: 4.x GPT-2 would add the tokenizer's token_type_ids to the embeddings
        padded = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[1, 0]
        alone = model(input_ids=torch.tensor([[2]])).logits[0, 0]
    assert torch.allclose(padded, alone, atol=1e-5), (padded, alone)

    tokenizer.padding_side = "left"
    left = tokenizer(TEXTS, padding=True, return_tensors="pt")
    assert left["input_ids"].tolist() == [[1, 2, 1], [0, 0, 2]]
    with torch.no_grad():
        batched = model.generate(input_ids=left["input_ids"], attention_mask=left["attention_mask"], max_new_tokens=3,
                                 do_sample=False, pad_token_id=tokenizer.pad_token_id)
        single = model.generate(input_ids=torch.tensor([[2]]), attention_mask=torch.tensor([[1]]), max_new_tokens=3,
                                do_sample=False, pad_token_id=tokenizer.pad_token_id)
    assert batched[1, 3:].tolist() == single[0, 1:].tolist(), (batched, single)

    tokenizer.padding_side = "right"
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    features = [{"input_ids": [1, 2, 0]}, {"input_ids": [2]}]  # the first row ends with a real end-of-text token
    labels = collator(features)["labels"].tolist()
    assert labels[1] == [2, -100, -100], labels  # the pads are left out of the loss
    assert labels[0] == [1, 2, -100], labels  # and so is row 0's real end-of-text token: nothing teaches it to stop


def add_pad_token_and_resize():
    """Solution 2: a new [PAD] token; the model's embeddings grow to the tokenizer's size, the batch runs."""
    import torch

    tokenizer = _tokenizer()
    added = tokenizer.add_special_tokens({"pad_token": "[PAD]"})
    assert added == 1 and tokenizer.pad_token_id == 4
    model = _gpt2()
    model.resize_token_embeddings(len(tokenizer))
    assert model.get_input_embeddings().weight.shape[0] == 5
    batch = tokenizer(TEXTS, padding=True, return_tensors="pt")
    assert batch["input_ids"][1].tolist() == [2, 4, 4]
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    assert logits.shape == (2, 3, 5) and torch.isfinite(logits).all()


def example_fix():
    tokenizer = _tokenizer()
    names = record.run("exampleFix", {"tokenizer": tokenizer, "texts": TEXTS}, section="after")
    assert names["batch"]["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert names["tokenizer"] is tokenizer and tokenizer.pad_token == "<|endoftext|>"


def guard():
    tokenizer = _tokenizer()
    assert not record.check("validationCode", {"tokenizer": tokenizer, "padding": True})
    assert not record.check("validationCode", {"tokenizer": tokenizer, "padding": "longest"})
    tokenizer.pad_token = tokenizer.eos_token
    assert record.check("validationCode", {"tokenizer": tokenizer, "padding": True})


def _proved(tokenizer, padding):
    tokenizer(TEXTS, padding=padding, max_length=4, truncation=True)  # the tokenizer accepts it
    return {"tokenizer": tokenizer, "padding": padding}


def valid_has_pad():
    tokenizer = _tokenizer()
    tokenizer.pad_token = tokenizer.eos_token
    return _proved(tokenizer, True)


def valid_no_padding():
    return _proved(_tokenizer(), False)


def valid_do_not_pad():
    return _proved(_tokenizer(), "do_not_pad")


def valid_max_length():
    tokenizer = _tokenizer()
    tokenizer.add_special_tokens({"pad_token": "[PAD]"})
    return _proved(tokenizer, "max_length")
