"""from_pretrained is given a local folder that has a config.json but no weights file. PreTrainedModel.from_pretrained
(transformers/modeling_utils.py) looks in the folder for model.safetensors, pytorch_model.bin and their sharded
index files; finding none it raises OSError "Error no file named model.safetensors, or pytorch_model.bin, found in
directory saved-bert." (5.24.0; 4.x lists the TensorFlow and Flax names too: "Error no file named pytorch_model.bin,
model.safetensors, tf_model.h5, model.ckpt.index or flax_model.msgpack found in directory ..."). trigger(): a tiny
BERT whose config alone was saved (model.config.save_pretrained), then BertModel.from_pretrained on that folder.
Demonstrations: (1) model.save_pretrained, which writes the weights beside the config, and the reload equals the
saved model; (2) a training output folder whose top level holds only config.json while the weights sit in its
checkpoint-2/ subfolder: from_pretrained on the checkpoint folder loads. The record's exampleFix and validationCode
run from its text. Results: errkb reproduce transformers-no-weights-file-in-directory --with transformers==4.40.2
--with transformers==4.57.6 and the installed 5.24.0.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "save_the_weights", 2: "load_the_checkpoint_folder"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "save_dir", "BertModel"], "validationCode": ["model_dir"]}
KEEP = ["model"]
VALID = {"safetensors-folder": "valid_safetensors", "bin-folder": "valid_bin", "sharded-folder": "valid_sharded",
         "path-object": "valid_path_object"}
WORDINGS = [
    {"text": "Error no file named model.safetensors, or pytorch_model.bin, found in directory saved-bert.",
     "source": "transformers==5.24.0", "match": "pattern"},
    {"text": "Error no file named pytorch_model.bin, tf_model.h5, model.ckpt.index or flax_model.msgpack found in "
             "directory gpt2-l.", "source": "xu737/PeFAD#2", "match": "matcher"},
    {"text": "Error no file named pytorch_model.bin, model.safetensors, tf_model.h5, model.ckpt.index or "
             "flax_model.msgpack found in directory", "source": "shuaijiang/Ke-Omni-R#4", "match": "pattern"},
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


def trigger():
    from transformers import BertModel

    model = _model()
    model.config.save_pretrained("saved-bert")  # writes config.json only
    reloaded = BertModel.from_pretrained("saved-bert")


def save_the_weights():
    """Solution 1: model.save_pretrained writes config.json and the weights; the reload equals the model."""
    import os

    from transformers import BertModel

    model = _model()
    model.save_pretrained("saved-bert")
    assert {"config.json", "model.safetensors"} <= set(os.listdir("saved-bert"))
    _same_weights(BertModel.from_pretrained("saved-bert"), model)


def load_the_checkpoint_folder():
    """Solution 2: the weights are in a checkpoint subfolder of the output folder: load that folder."""
    from transformers import BertModel

    model = _model()
    model.config.save_pretrained("output")  # what the top level of the folder holds
    model.save_pretrained("output/checkpoint-2")  # where the weights were written
    try:
        BertModel.from_pretrained("output")
    except OSError as exc:
        assert "Error no file named" in str(exc), exc
    else:
        raise AssertionError("the folder without weights loaded")
    _same_weights(BertModel.from_pretrained("output/checkpoint-2"), model)


def example_fix():
    from transformers import BertModel

    model = _model()
    names = record.run("exampleFix", {"model": model, "save_dir": "saved-bert", "BertModel": BertModel},
                       section="after")
    _same_weights(names["reloaded"], model)
    assert names["model"] is model


def guard():
    model = _model()
    model.config.save_pretrained("saved-bert")
    assert not record.check("validationCode", {"model_dir": "saved-bert"})
    model.save_pretrained("saved-bert")
    assert record.check("validationCode", {"model_dir": "saved-bert"})


def _proved(folder):
    from transformers import BertModel

    BertModel.from_pretrained(folder)
    return {"model_dir": folder}


def valid_safetensors():
    _model().save_pretrained("st")
    return _proved("st")


def valid_bin():
    """A folder with pytorch_model.bin (written by torch.save, as older releases and other tools do)."""
    import os

    import torch

    model = _model()
    model.config.save_pretrained("bin")
    torch.save(model.state_dict(), os.path.join("bin", "pytorch_model.bin"))
    return _proved("bin")


def valid_sharded():
    import os

    _model().save_pretrained("sharded", max_shard_size="100KB")
    assert os.path.isfile(os.path.join("sharded", "model.safetensors.index.json"))
    return _proved("sharded")


def valid_path_object():
    from pathlib import Path

    _model().save_pretrained("as-path")
    return _proved(Path("as-path"))
