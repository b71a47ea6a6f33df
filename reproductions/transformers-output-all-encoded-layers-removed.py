"""Code written for pytorch_pretrained_bert (the package transformers grew out of) calls
bert(input_ids, token_type_ids, attention_mask, output_all_encoded_layers=True|False) and unpacks
encoded_layers, pooled_output. transformers' BertModel.forward has no such keyword (the replacement is
output_hidden_states, huggingface/transformers#1392) and, in the 4.x releases run here, no **kwargs (checked by the
demonstrations), so Python raises TypeError "BertModel.forward() got an unexpected keyword argument
'output_all_encoded_layers'" at torch's Module._call_impl, where forward_call(*args, **kwargs) is called: no
transformers frame is on the stack, so the record's raise site is torch/nn/modules/module.py (torch 2.13.0+cpu, in
every environment). trigger(): a tiny BertModel built from a BertConfig (no download), called the
pytorch_pretrained_bert way with output_all_encoded_layers=True. Solution 1 (the record's exampleFix, run from its
text) asks for output_hidden_states=True and reads outputs.hidden_states: one tensor more than there are layers
(the embeddings first), and hidden_states[1:] equal the outputs of the encoder layers, captured with forward hooks
(what encoded_layers held). Solution 2, for output_all_encoded_layers=False, drops the keyword and reads
outputs.last_hidden_state and outputs.pooler_output, and shows that unpacking the output object the old way gives its
key names, not tensors, and that the old positional order (input_ids, token_type_ids, attention_mask) now passes the
mask as token types (transformers' order is input_ids, attention_mask, token_type_ids) and changes the outputs. The
old signature was read in modeling.py of the pytorch-pretrained-bert 0.6.2 wheel (line 709). Results: errkb reproduce transformers-output-all-encoded-layers-removed
--with transformers==4.30.2 --with transformers==4.46.3 --with transformers==4.57.6 (all verified). The installed
transformers 5.25.0 is outside NEEDS (skipped): its BertModel.forward, like 5.0.0's, ends in **kwargs (read in the
wheels' models/bert/modeling_bert.py, lines 638 and 651), so the call binds; no 5.x release was run. The excerpt is the installed torch 2.13.0+cpu file, lines 1782-1789 of
torch/nn/modules/module.py, the same lines as forward-called-with-wrong-arguments. Written by hand: errkb draft
cannot run the snippet on a release that raises from this catalog's Python environment (transformers 5.25.0 is
installed there), and the old side of the change is another package (pytorch_pretrained_bert), not a release of
transformers.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.30,<5"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "output_hidden_states", 2: "last_hidden_state_and_pooler"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["model", "input_ids", "token_type_ids", "attention_mask"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "BertModel.forward() got an unexpected keyword argument 'output_all_encoded_layers'",
     "source": "transformers==4.57.6", "match": "pattern"},
    {"text": "BertModel.forward() got an unexpected keyword argument 'output_all_encoded_layers'",
     "source": "transformers==4.30.2", "match": "pattern"},
    {"text": "forward() got an unexpected keyword argument 'output_all_encoded_layers'",
     "source": "songyouwei/ABSA-PyTorch#88", "match": "matcher"},
    {"text": "forward() got an unexpected keyword argument 'output_all_encoded_layers'",
     "source": "huggingface/transformers#817", "match": "matcher"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import errkb_record as record

LAYERS = 3


def _bert():
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=LAYERS, num_attention_heads=2,
                        intermediate_size=37)
    return BertModel(config).eval()


def _batch():
    import torch

    input_ids = torch.tensor([[2, 5, 7, 9, 3, 0], [2, 8, 6, 3, 0, 0]])
    token_type_ids = torch.zeros_like(input_ids)
    attention_mask = (input_ids != 0).long()
    return input_ids, token_type_ids, attention_mask


def _no_var_keyword(model):
    import inspect

    params = inspect.signature(model.forward).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), "this release's BertModel.forward takes **kwargs"
    assert "output_hidden_states" in params and "output_all_encoded_layers" not in params


def trigger():
    import torch

    model = _bert()
    input_ids, token_type_ids, attention_mask = _batch()
    with torch.no_grad():
        encoded_layers, pooled_output = model(input_ids, token_type_ids, attention_mask,
                                              output_all_encoded_layers=True)


def _layer_outputs(model, run):
    """The output of every encoder layer, captured with forward hooks while run() calls the model."""
    captured = []
    hooks = [layer.register_forward_hook(lambda m, i, o: captured.append(o[0] if isinstance(o, tuple) else o))
             for layer in model.encoder.layer]
    try:
        result = run()
    finally:
        for hook in hooks:
            hook.remove()
    assert len(captured) == LAYERS, len(captured)
    return result, captured


def _check_hidden_states(model, hidden_states, captured, last_hidden_state):
    import torch

    assert isinstance(hidden_states, tuple) and len(hidden_states) == LAYERS + 1, len(hidden_states)
    embeddings = model.embeddings(input_ids=_batch()[0], token_type_ids=_batch()[1])
    assert torch.allclose(hidden_states[0], embeddings, atol=1e-6), "hidden_states[0] is not the embedding output"
    for got, layer_out in zip(hidden_states[1:], captured):
        assert torch.allclose(got, layer_out, atol=1e-6)
    assert torch.equal(hidden_states[-1], last_hidden_state)


def output_hidden_states():
    """Solution 1: output_hidden_states=True; hidden_states[1:] are the encoder layers' outputs (the old
    encoded_layers), hidden_states[0] the embeddings, hidden_states[-1] the last layer."""
    import torch

    model = _bert()
    _no_var_keyword(model)
    input_ids, token_type_ids, attention_mask = _batch()
    with torch.no_grad():
        outputs, captured = _layer_outputs(model, lambda: model(input_ids, token_type_ids=token_type_ids,
                                                                attention_mask=attention_mask,
                                                                output_hidden_states=True))
        _check_hidden_states(model, outputs.hidden_states, captured, outputs.last_hidden_state)
        assert outputs.pooler_output.shape == (2, 32)


def last_hidden_state_and_pooler():
    """Solution 2: for output_all_encoded_layers=False, drop the keyword and read last_hidden_state and
    pooler_output by name; the old tuple unpacking of the output object gives its keys, not tensors, and the old
    positional order now passes attention_mask as token_type_ids."""
    import inspect

    import torch

    model = _bert()
    input_ids, token_type_ids, attention_mask = _batch()
    with torch.no_grad():
        try:
            model(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                  output_all_encoded_layers=False)
        except TypeError as exc:
            assert "output_all_encoded_layers" in str(exc), exc
        else:
            raise AssertionError("output_all_encoded_layers=False was accepted")
        outputs, captured = _layer_outputs(model, lambda: model(input_ids, token_type_ids=token_type_ids,
                                                                attention_mask=attention_mask))
        sequence_output, pooled_output = outputs.last_hidden_state, outputs.pooler_output
        assert torch.equal(sequence_output, captured[-1])
        assert sequence_output.shape == (2, 6, 32) and pooled_output.shape == (2, 32)
        # the pytorch_pretrained_bert way of unpacking now yields the output's key names
        first, second = model(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
        assert (first, second) == ("last_hidden_state", "pooler_output"), (first, second)
        # return_dict=False gives the tuple back, with the same tensors
        seq_tuple, pooled_tuple = model(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                                        return_dict=False)  # unpacks as the old code did: exactly two
        assert torch.equal(seq_tuple, sequence_output) and torch.equal(pooled_tuple, pooled_output)
        # the positional order changed too: transformers' second parameter is attention_mask, so the old positional
        # call model(input_ids, token_type_ids, attention_mask) swaps the two and gives other outputs, silently
        params = list(inspect.signature(model.forward).parameters)
        assert params[:3] == ["input_ids", "attention_mask", "token_type_ids"], params[:3]
        swapped = model(input_ids, token_type_ids, attention_mask).last_hidden_state
        assert not torch.allclose(swapped, sequence_output, atol=1e-4), "the positional order made no difference"


def example_fix():
    import torch

    model = _bert()
    input_ids, token_type_ids, attention_mask = _batch()
    names_in = {"model": model, "input_ids": input_ids, "token_type_ids": token_type_ids,
                "attention_mask": attention_mask}
    with torch.no_grad():
        names, captured = _layer_outputs(model, lambda: record.run("exampleFix", names_in, section="after"))
    assert names["model"] is model
    encoded_layers = names["encoded_layers"]
    assert len(encoded_layers) == LAYERS
    for got, layer_out in zip(encoded_layers, captured):
        assert torch.allclose(got, layer_out, atol=1e-6)
    assert names["pooled_output"].shape == (2, 32)
