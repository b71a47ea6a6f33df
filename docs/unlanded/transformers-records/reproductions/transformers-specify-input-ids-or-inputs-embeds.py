"""A transformers model is called without its token ids: BertModel(attention_mask=...) with input_ids left out (in
real code: a collator or dataset whose keys were renamed or dropped, or only part of a tokenizer batch passed on).
BertModel.forward (transformers/models/bert/modeling_bert.py) needs exactly one of input_ids and inputs_embeds and
raises ValueError "You must specify exactly one of input_ids or inputs_embeds" (5.24.0, which raises the same text
when both are given; 4.x words the missing case "You have to specify either input_ids or inputs_embeds").
trigger(): a tiny BERT from a BertConfig, called with only the attention mask. Demonstrations: (1) the whole batch
unpacked with model(**batch), giving the same output as passing input_ids and attention_mask by name; (2) embeddings
computed by the model's own embedding layer passed as inputs_embeds, giving the same hidden states as the token ids.
The record's exampleFix and validationCode run from its text. Results: the installed transformers 5.24.0;
errkb reproduce transformers-specify-input-ids-or-inputs-embeds --with transformers==4.40.2
--with transformers==4.57.6 for the matrix.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "unpack_the_batch", 2: "inputs_embeds"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "batch"], "validationCode": ["batch"]}
KEEP = ["model"]
VALID = {"tokenizer-batch": "valid_tokenizer_batch", "ids-only": "valid_ids_only", "embeds": "valid_embeds"}
WORDINGS = [
    {"text": "You must specify exactly one of input_ids or inputs_embeds", "source": "transformers==5.24.0",
     "match": "pattern"},
    {"text": "You must specify exactly one of input_ids or inputs_embeds", "source": "huggingface/trl#5421",
     "match": "matcher"},
    {"text": "You have to specify either input_ids or inputs_embeds", "source": "huggingface/transformers#17429",
     "match": "pattern"},
    {"text": "You cannot specify both input_ids and inputs_embeds at the same time",
     "source": "huggingface/transformers#26405", "match": "none",
     "why": "4.x's message for passing both, another condition; the record says it is not matched"},
]
PROVENANCE = {"checked": "installed", "dist": "transformers", "version": "5.24.0"}

import errkb_record as record


def _model():
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    return BertModel(BertConfig(num_hidden_layers=1, hidden_size=16, num_attention_heads=2, intermediate_size=20,
                                vocab_size=10)).eval()


def _batch():
    import torch

    return {"input_ids": torch.tensor([[1, 2, 3], [4, 5, 0]]), "attention_mask": torch.tensor([[1, 1, 1], [1, 1, 0]]),
            "token_type_ids": torch.zeros(2, 3, dtype=torch.long)}


def trigger():
    model = _model()
    batch = _batch()
    out = model(attention_mask=batch["attention_mask"])  # input_ids left out


def unpack_the_batch():
    """Solution 1: model(**batch) passes input_ids with the mask; same output as naming them."""
    import torch

    model = _model()
    batch = _batch()
    with torch.no_grad():
        unpacked = model(**batch).last_hidden_state
        named = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                      token_type_ids=batch["token_type_ids"]).last_hidden_state
    assert unpacked.shape == (2, 3, 16) and torch.equal(unpacked, named)


def inputs_embeds():
    """Solution 2: embeddings from the model's own embedding layer as inputs_embeds equal the token-id path."""
    import torch

    model = _model()
    batch = _batch()
    with torch.no_grad():
        embeds = model.get_input_embeddings()(batch["input_ids"])
        from_embeds = model(inputs_embeds=embeds, attention_mask=batch["attention_mask"]).last_hidden_state
        from_ids = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    assert torch.allclose(from_embeds, from_ids, atol=1e-6)


def example_fix():
    model = _model()
    names = record.run("exampleFix", {"model": model, "batch": _batch()}, section="after")
    assert names["out"].last_hidden_state.shape == (2, 3, 16)
    assert names["model"] is model


def guard():
    batch = _batch()
    assert not record.check("validationCode", {"batch": {"attention_mask": batch["attention_mask"]}})
    assert not record.check("validationCode", {"batch": {**batch, "inputs_embeds": _model().get_input_embeddings()(
        batch["input_ids"])}})
    assert record.check("validationCode", {"batch": batch})


def _proved(batch):
    import torch

    with torch.no_grad():
        _model()(**batch)
    return {"batch": batch}


def valid_tokenizer_batch():
    return _proved(_batch())


def valid_ids_only():
    return _proved({"input_ids": _batch()["input_ids"]})


def valid_embeds():
    import torch

    with torch.no_grad():
        embeds = _model().get_input_embeddings()(_batch()["input_ids"])
    return _proved({"inputs_embeds": embeds, "attention_mask": _batch()["attention_mask"]})
