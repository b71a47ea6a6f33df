"""A model is called without its token ids: LlamaModel.forward (src/transformers/models/llama/modeling_llama.py) checks
that exactly one of input_ids and inputs_embeds is given and raises ValueError "You must specify exactly one of
input_ids or inputs_embeds" (the same text in 4.53.3, 4.57.6, 5.24.0 and 5.25.0, all run here). trigger(): a tiny Llama
(LlamaConfig, no download) called with the batch's attention mask only. Demonstrations: (1) model(**batch) passes the
ids with the mask, and equals naming them; (2) embeddings from the model's own embedding layer passed as
inputs_embeds give the same hidden states as the ids. The record's exampleFix and validationCode run from its text;
guard() also shows the library raises this error for each batch the guard flags (mask only, ids and embeddings both,
the ids under a misnamed keyword ids=, which the forward's **kwargs swallows).
The excerpt is src/transformers/models/llama/modeling_llama.py at 5dd4a63548857797727ae73eeb6a6e886ea02a3e, a stored
upstream copy (read_file, 51767 characters; not byte-identical to the 4.49.0 wheel's file, 51822 characters). Line
541 was counted in the copy itself: its characters 0-24850 (read_file at offsets 0 and 16000, and 24700 for the tail)
were written out and have 540 newlines before the raise, which starts at character 24771; they equal the first 24850
characters of the 4.49.0 wheel's file, where the raise is also on line 541. sourceCode is the copy's lines 518-543.
Results: errkb reproduce transformers-specify-input-ids-or-inputs-embeds (the installed 5.25.0) --with
transformers==4.53.3 --with transformers==4.57.6 --with transformers==5.24.0.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.53"}, "cuda_devices": 0, "timeout_s": 180}
SOLUTIONS = {1: "unpack_the_batch", 2: "inputs_embeds"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "batch"], "validationCode": ["batch"]}
KEEP = ["model"]
VALID = {"tokenizer-batch": "valid_tokenizer_batch", "ids-only": "valid_ids_only", "embeds": "valid_embeds",
         "tuple-batch": "valid_tuple_batch"}
WORDINGS = [
    {"text": "You must specify exactly one of input_ids or inputs_embeds", "source": "transformers==4.53.3",
     "match": "pattern"},
    {"text": "You must specify exactly one of input_ids or inputs_embeds", "source": "huggingface/trl#5421",
     "match": "matcher"},
    {"text": "You have to specify either input_ids or inputs_embeds", "source": "huggingface/transformers#17429",
     "match": "pattern"},
    {"text": "You cannot specify both input_ids and inputs_embeds at the same time, and must specify either one",
     "source": "huggingface/transformers#33781", "match": "none",
     "why": "the same XOR check worded by a few other models (zamba2, emu3, janus, ... in 5.25.0; qwen2_vl before #33781); "
            "not matched (it leads with passing both); the record says so"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "5dd4a63548857797727ae73eeb6a6e886ea02a3e",
              "path": "src/transformers/models/llama/modeling_llama.py", "line": 541, "offset": 0}

import errkb_record as record


def _model():
    import torch
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    return LlamaModel(LlamaConfig(num_hidden_layers=1, hidden_size=16, num_attention_heads=2, num_key_value_heads=2,
                                  intermediate_size=20, vocab_size=10, max_position_embeddings=16)).eval()


def _batch():
    import torch

    return {"input_ids": torch.tensor([[1, 2, 3], [4, 5, 0]]), "attention_mask": torch.tensor([[1, 1, 1], [1, 1, 0]])}


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
        named = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
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
    """The guard flags the trigger's batch, both inputs and a misnamed ids key (each of which the library rejects with
    this error) and passes the tokenizer's batch and a tuple batch."""
    import torch

    model = _model()
    batch = _batch()
    with torch.no_grad():
        embeds = model.get_input_embeddings()(batch["input_ids"])
    flagged = [{"attention_mask": batch["attention_mask"]}, {**batch, "inputs_embeds": embeds},
               {"ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}]
    for bad in flagged:
        assert not record.check("validationCode", {"batch": bad})
        try:
            with torch.no_grad():
                model(**bad)
        except ValueError as e:
            assert "exactly one of input_ids or inputs_embeds" in str(e), e
        else:
            raise AssertionError(f"the library accepted {sorted(bad)}")
    assert record.check("validationCode", {"batch": batch})
    assert record.check("validationCode", {"batch": (batch["input_ids"], batch["attention_mask"])})


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


def valid_tuple_batch():
    """A (input_ids, attention_mask) tuple from a TensorDataset, passed positionally as model(*batch)."""
    import torch

    batch = (_batch()["input_ids"], _batch()["attention_mask"])
    with torch.no_grad():
        out = _model()(*batch).last_hidden_state
    assert out.shape == (2, 3, 16)
    return {"batch": batch}
