"""A model folder's pytorch_model.bin cannot be read by torch.load, and transformers 4.x hides why: load_state_dict
(src/transformers/modeling_utils.py) catches torch.load's exception, opens the file as text to see whether it is a Git
LFS pointer ("version ..."), and, when reading it as text fails (UnicodeDecodeError on a binary file), raises OSError
"Unable to load weights from pytorch checkpoint file for '<file>' at '<file>'. If you tried to load a PyTorch model
from a TF 2.0 checkpoint, please set from_tf=True." without chaining the torch error. trigger(): a tiny BERT saved
with save_pretrained(safe_serialization=False) whose pytorch_model.bin keeps only its first half, as a download cut
short leaves it; BertModel.from_pretrained on that folder raises. Demonstrations: (1) torch.load on the file itself
shows the hidden cause (here "failed finding central directory": the file is truncated); (2) the file fetched again
completely, checked by sha256, loads with the saved weights; (3) the same OSError for a complete checkpoint holding a
numpy scalar (torch.load's weights_only=True refuses it, and from_pretrained passes weights_only=True by default) goes
away with from_pretrained(..., weights_only=False), the file being trusted; (4) or the trusted file is re-saved with
tensors only (save_pretrained writes model.safetensors), which then loads with the default. The transformers 5.x
source (5.25.0 installed) no longer has this message, so NEEDS says transformers<5; from_pretrained takes
weights_only from 4.46 on, hence >=4.46. The excerpt is src/transformers/modeling_utils.py at
040ba146759afc625c77f49d04982bb54873995f, a stored upstream copy of a commit that is not a release (read at offsets
0 and 15950: its text up to the raise reads as 4.49.0's without the line "from enum import Enum", so its raise is at
576, 4.49.0's at 577; it has 4.49.0's restore_default_torch_dtype, which 4.48.3 lacks, so it is probably a commit
on the way to 4.49, but its date was not checked); the raise statement and message read the same there as in 4.46.3,
4.49.0 and 4.57.6. Results: errkb reproduce transformers-unable-to-load-weights-from-checkpoint
--with transformers==4.46.3 --with transformers==4.49.0 --with transformers==4.57.6 (the installed 5.25.0 is
skipped: outside NEEDS).
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.46,<5"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "show_the_hidden_cause", 2: "fetch_complete_copy", 3: "load_trusted_with_weights_only_false",
             4: "resave_tensors_only"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["BertConfig", "BertModel", "model_dir"], "validationCode": ["path"]}
VALID = {"complete-bin": "valid_complete_bin", "legacy-format-bin": "valid_legacy_bin",
         "path-object": "valid_path_object"}
WORDINGS = [
    {"text": "Unable to load weights from pytorch checkpoint file for 'tiny-bert/pytorch_model.bin' at "
             "'tiny-bert/pytorch_model.bin'. If you tried to load a PyTorch model from a TF 2.0 checkpoint, please set "
             "from_tf=True.", "source": "transformers==4.57.6", "match": "pattern"},
    {"text": "Unable to load weights from pytorch checkpoint file for 'model_cache/models--decapoda-research--llama-30b-hf/"
             "snapshots/f991780f9362b2fcaefad066cd235058844562b7/pytorch_model-00039-of-00061.bin'. If you tried to "
             "load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.",
     "source": "project-baize/baize-chatbot#31", "match": "matcher"},
    {"text": "Unable to load weights from pytorch checkpoint file. If you tried to load a PyTorch model from a TF 2.0 "
             "checkpoint, please set from_tf=True.", "source": "yym6472/ConSERT#27", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "040ba146759afc625c77f49d04982bb54873995f",
              "path": "src/transformers/modeling_utils.py", "line": 576, "offset": 0}

import errkb_record as record

MODEL_DIR = "tiny-bert"


def _config():
    from transformers import BertConfig

    return BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=37,
                      vocab_size=100)


def _model():
    import torch
    from transformers import BertModel

    torch.manual_seed(0)
    return BertModel(_config())


def _same_weights(a, b):
    import torch

    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for name in sa:
        assert torch.equal(sa[name], sb[name]), name


def _saved(model_dir=MODEL_DIR):
    """The complete pytorch_model.bin's bytes, after save_pretrained wrote it into model_dir."""
    import os

    _model().save_pretrained(model_dir, safe_serialization=False)
    with open(os.path.join(model_dir, "pytorch_model.bin"), "rb") as f:
        return f.read()


def _truncated():
    import os

    source = _saved()
    path = os.path.join(MODEL_DIR, "pytorch_model.bin")
    with open(path, "wb") as f:
        f.write(source[: len(source) // 2])  # the download stopped half-way
    return source, path


def trigger():
    from transformers import BertModel

    _truncated()
    model = BertModel.from_pretrained(MODEL_DIR)


def show_the_hidden_cause():
    """Solution 1: torch.load on the file gives the error transformers 4.x left out of its message. from_pretrained's
    OSError has no cause and does not quote torch; torch's exception survives only as the context of the
    UnicodeDecodeError of the LFS-pointer check (what a full traceback prints above it)."""
    import torch
    from transformers import BertModel

    _, path = _truncated()
    try:
        BertModel.from_pretrained(MODEL_DIR)
    except OSError as exc:
        assert exc.__cause__ is None, exc.__cause__
        assert isinstance(exc.__context__, UnicodeDecodeError), exc.__context__
        hidden = exc.__context__.__context__
        assert hidden is not None and str(hidden) and str(hidden) not in str(exc), repr(hidden)
    else:
        raise AssertionError("the truncated file loaded")
    try:
        torch.load(path, map_location="cpu", weights_only=True)
    except RuntimeError as exc:
        assert "failed finding central directory" in str(exc), exc
    else:
        raise AssertionError("the truncated file loaded")


def fetch_complete_copy():
    """Solution 2: the copy's sha256 differs from the source's; the file fetched again completely loads."""
    import hashlib

    from transformers import BertModel

    source, path = _truncated()
    expected = hashlib.sha256(source).hexdigest()  # what the model page lists for the file
    with open(path, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() != expected
    with open(path, "wb") as f:
        f.write(source)
    with open(path, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == expected
    _same_weights(BertModel.from_pretrained(MODEL_DIR), _model())


def _with_numpy_entry(model_dir=MODEL_DIR):
    """A complete checkpoint written by torch.save, with a numpy scalar among the tensors."""
    import os

    import numpy as np
    import torch

    model = _model()
    model.config.save_pretrained(model_dir)
    state = dict(model.state_dict())
    state["training_step"] = np.int64(1000)
    torch.save(state, os.path.join(model_dir, "pytorch_model.bin"))
    return model


def load_trusted_with_weights_only_false():
    """Solution 3: the same trusted checkpoint loads with from_pretrained(..., weights_only=False), its tensors intact."""
    from transformers import BertModel

    source = _with_numpy_entry()
    try:
        BertModel.from_pretrained(MODEL_DIR)
    except OSError as exc:
        assert "Unable to load weights from pytorch checkpoint file" in str(exc), exc
    else:
        raise AssertionError("the checkpoint with a numpy entry loaded with weights_only=True")
    _same_weights(BertModel.from_pretrained(MODEL_DIR, weights_only=False), source)


def resave_tensors_only():
    """Solution 4: a trusted checkpoint with non-tensor entries: keep its tensors, save them with save_pretrained."""
    import os

    import torch
    from transformers import BertModel

    source = _with_numpy_entry()
    try:
        BertModel.from_pretrained(MODEL_DIR)
    except OSError as exc:
        assert "Unable to load weights from pytorch checkpoint file" in str(exc), exc
    else:
        raise AssertionError("the checkpoint with a numpy entry loaded")
    state = torch.load(os.path.join(MODEL_DIR, "pytorch_model.bin"), map_location="cpu", weights_only=False)
    model = BertModel(_config())
    model.load_state_dict({k: v for k, v in state.items() if isinstance(v, torch.Tensor)})
    model.save_pretrained(MODEL_DIR)  # model.safetensors, which from_pretrained prefers
    os.remove(os.path.join(MODEL_DIR, "pytorch_model.bin"))
    _same_weights(BertModel.from_pretrained(MODEL_DIR), source)


def example_fix():
    import os

    from transformers import BertConfig, BertModel

    source = _with_numpy_entry()
    names = record.run("exampleFix", {"BertConfig": BertConfig, "BertModel": BertModel, "model_dir": MODEL_DIR},
                       section="after")
    assert os.path.exists(os.path.join(MODEL_DIR, "model.safetensors"))
    _same_weights(names["model"], source)
    _same_weights(BertModel.from_pretrained(MODEL_DIR), source)


def guard():
    import os

    source, path = _truncated()
    assert not record.check("validationCode", {"path": path})
    with open(path, "wb") as f:
        f.write(source)
    assert record.check("validationCode", {"path": path})
    _with_numpy_entry("with-numpy")
    assert not record.check("validationCode", {"path": os.path.join("with-numpy", "pytorch_model.bin")})
    with open(path, "w") as f:  # a Git LFS pointer where the weights should be
        f.write("version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n")
    assert not record.check("validationCode", {"path": path})


def valid_complete_bin():
    import os

    from transformers import BertModel

    _saved("complete")
    BertModel.from_pretrained("complete")
    return {"path": os.path.join("complete", "pytorch_model.bin")}


def valid_legacy_bin():
    """A checkpoint in torch.save's format before zip archives (_use_new_zipfile_serialization=False)."""
    import os

    import torch
    from transformers import BertModel

    model = _model()
    model.config.save_pretrained("legacy")
    torch.save(model.state_dict(), os.path.join("legacy", "pytorch_model.bin"), _use_new_zipfile_serialization=False)
    _same_weights(BertModel.from_pretrained("legacy"), model)
    return {"path": os.path.join("legacy", "pytorch_model.bin")}


def valid_path_object():
    from pathlib import Path

    from transformers import BertModel

    _saved("as-path")
    BertModel.from_pretrained(Path("as-path"))
    return {"path": Path("as-path") / "pytorch_model.bin"}
