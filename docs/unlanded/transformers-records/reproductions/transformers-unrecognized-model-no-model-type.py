"""AutoModel / AutoConfig pick the model class from config.json's "model_type". A folder whose config.json has none
(converted by a script, written by hand, or written by another library) cannot be mapped to a class, and
AutoConfig.from_pretrained (transformers/models/auto/configuration_auto.py) raises ValueError "Unrecognized model in
my-model. Should have a `model_type` key in its config.json." (5.24.0; 4.x adds ", or contain one of the following
strings in its name: ..." with every known model type). trigger(): a tiny BERT saved with save_pretrained whose
config.json then loses its model_type, loaded with AutoModel.from_pretrained. Demonstrations: (1) the concrete class
(BertModel.from_pretrained) loads the folder as it is, with the saved weights; (2) "model_type": "bert" written back
into config.json, after which AutoModel loads a BertModel with the saved weights. The record's exampleFix and
validationCode run from its text. Results: the installed transformers 5.24.0; errkb reproduce
transformers-unrecognized-model-no-model-type --with transformers==4.40.2 --with transformers==4.57.6 for the matrix.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "concrete_class", 2: "add_model_type"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["BertModel", "model_dir"], "validationCode": ["model_dir"]}
VALID = {"save-pretrained-folder": "valid_saved", "hand-written-with-model-type": "valid_hand_written",
         "path-object": "valid_path_object"}
WORDINGS = [
    {"text": "Unrecognized model in my-model. Should have a `model_type` key in its config.json.",
     "source": "transformers==5.24.0", "match": "pattern"},
    {"text": "Unrecognized model in ../SentiLARE. Should have a `model_type` key in its config.json, or contain one of "
             "the following strings in its name: fnet, gptj,", "source": "thu-coai/SentiLARE#11", "match": "pattern"},
    {"text": "Unrecognized model in QuantFactory/DISC-MedLLM-GGUF. Should have a `model_type` key in its config.json",
     "source": "FudanDISC/DISC-MedLLM#20", "match": "matcher"},
]
PROVENANCE = {"checked": "installed", "dist": "transformers", "version": "5.24.0"}

import errkb_record as record


def _model():
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    return BertModel(BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=37,
                                vocab_size=100))


def _same_weights(a, b):
    import torch

    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for name in sa:
        assert torch.equal(sa[name], sb[name]), name


def _without_model_type(folder="my-model"):
    import json
    import os

    model = _model()
    model.save_pretrained(folder)
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        saved = json.load(f)
    del saved["model_type"]  # as a config converted or written by hand without it
    with open(path, "w") as f:
        json.dump(saved, f)
    return model


def trigger():
    from transformers import AutoModel

    _without_model_type()
    model = AutoModel.from_pretrained("my-model")


def concrete_class():
    """Solution 1: the architecture's own class does not need model_type."""
    from transformers import BertModel

    source = _without_model_type()
    _same_weights(BertModel.from_pretrained("my-model"), source)


def add_model_type():
    """Solution 2: model_type written back into config.json; AutoModel then maps it to BertModel."""
    import json

    from transformers import AutoModel

    source = _without_model_type()
    with open("my-model/config.json") as f:
        config = json.load(f)
    config["model_type"] = "bert"
    with open("my-model/config.json", "w") as f:
        json.dump(config, f)
    model = AutoModel.from_pretrained("my-model")
    assert type(model).__name__ == "BertModel"
    _same_weights(model, source)


def example_fix():
    from transformers import BertModel

    source = _without_model_type()
    names = record.run("exampleFix", {"BertModel": BertModel, "model_dir": "my-model"}, section="after")
    _same_weights(names["model"], source)


def guard():
    _without_model_type()
    assert not record.check("validationCode", {"model_dir": "my-model"})
    _model().save_pretrained("my-model")
    assert record.check("validationCode", {"model_dir": "my-model"})


def _proved(folder):
    from transformers import AutoModel

    AutoModel.from_pretrained(folder)
    return {"model_dir": folder}


def valid_saved():
    _model().save_pretrained("saved")
    return _proved("saved")


def valid_hand_written():
    """A config.json written by hand that names its model_type, beside the weights."""
    import json

    _without_model_type("by-hand")
    with open("by-hand/config.json") as f:
        config = json.load(f)
    with open("by-hand/config.json", "w") as f:
        json.dump({"model_type": "bert", **config}, f, indent=1)
    return _proved("by-hand")


def valid_path_object():
    from pathlib import Path

    _model().save_pretrained("as-path")
    return _proved(Path("as-path"))
