"""A model whose code ships with it (config.json's auto_map names modeling_tiny.TinyModel, loaded with
trust_remote_code=True) imports a package this environment cannot import. Before importing the downloaded module,
transformers' check_imports (src/transformers/dynamic_module_utils.py) parses the file, tries to import every
top-level package it imports outside try blocks, and raises ImportError "This modeling file requires the following
packages that were not found in your environment: fused_tiny_ops. Run `pip install fused_tiny_ops`". trigger(): a
local folder written by the reproduction (configuration_tiny.py, modeling_tiny.py importing fused_tiny_ops, a package
name that exists nowhere, so the trigger cannot be satisfied by accident), loaded with AutoModel.from_pretrained(...,
trust_remote_code=True). HF_HOME points at a temporary folder, because transformers copies remote code into
HF_HOME/modules. Demonstrations: (1) the package made importable (a local package folder put on sys.path, the
offline stand-in for pip install, stage variant "local package folder on sys.path") and the model loads with its
weights; before that, the same package installed but importing a missing module of its own (tiny_ops_kernels) is
listed in the same message, importing it directly names tiny_ops_kernels (and 4.45+ log it), and making that module
importable lets the model load; (2) an optional import moved into a try/except ImportError block, which
check_imports skips, and the model loads using its fallback. The record's validationCode runs from its text; it
reads only the modules auto_map names (VALID has a folder with an unrelated conversion script importing a missing
package, which loads). The excerpt is src/transformers/dynamic_module_utils.py at
0131ec4b0f99ddb49b22af8bd2e09abde733e106, a stored upstream copy from 2023 (its first 4839 characters were written
out from the copy and line-counted; its next text, read at offset 4800, continues at the same offset; a second
reader wrote the text up to check_imports' end out again and found the raise at line 144 and the excerpt equal to
lines 136-149): its raise statement and message read the same as in 4.40.2, 4.57.6 and 5.25.0, while the except
clause above it is older (every ImportError is listed). It is not from 2022: it already has the try-block filter
(line 125) that huggingface/transformers#21914 added in March 2023, whose regex, without DOTALL, removes only a
one-line try block ended by a bare `except:`; 4.40.2's get_imports removes any try block (DOTALL, any except
clause), 4.57.6's and 5.25.0's walk the AST. diffusers' copy (diffusers/utils/dynamic_modules_utils.py) was read in
the cached 0.32.2, 0.34.0 and 0.35.2 wheels (the same raise, lines 149/149/154, no try filter) and the 0.38.0 and
0.39.0 wheels (logger.warning instead); no diffusers release is run here. Results: errkb reproduce transformers-remote-code-missing-package (the installed
5.25.0) --with transformers==4.40.2 --with transformers==4.57.6.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "install_missing_package", 2: "optional_import_in_try"}
CODE = {"validationCode": "guard"}
CODE_NAMES = {"validationCode": ["model_dir"]}
VALID = {"remote-code-torch-only": "valid_torch_only", "optional-import-in-try": "valid_optional_import",
         "plain-model-folder": "valid_plain_folder", "unrelated-script-in-folder": "valid_unrelated_script"}
WORDINGS = [
    {"text": "This modeling file requires the following packages that were not found in your environment: "
             "fused_tiny_ops. Run `pip install fused_tiny_ops`", "source": "transformers==5.25.0", "match": "pattern"},
    {"text": "This modeling file requires the following packages that were not found in your environment: peft. Run "
             "`pip install peft`", "source": "Yuliang-Liu/Monkey#166", "match": "pattern"},
    {"text": "This modeling file requires the following packages that were not found in your environment: einops. Run "
             "`pip install einops`", "source": "EleutherAI/lm-evaluation-harness#707", "match": "matcher"},
    {"text": "This modeling file requires the following packages that were not found in your environment: environs. "
             "Run `pip install environs`", "source": "rendeirolab/LazySlide#64", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "0131ec4b0f99ddb49b22af8bd2e09abde733e106",
              "path": "src/transformers/dynamic_module_utils.py", "line": 144, "offset": 0}

import errkb_record as record

MODEL_DIR = "tiny-remote"
CONFIG_CODE = """from transformers import PretrainedConfig


class TinyConfig(PretrainedConfig):
    model_type = "tiny-remote"

    def __init__(self, hidden_size=8, **kwargs):
        self.hidden_size = hidden_size
        super().__init__(**kwargs)
"""
MODEL_CODE = """import torch
{import_block}
from transformers import PreTrainedModel

from .configuration_tiny import TinyConfig


class TinyModel(PreTrainedModel):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__(config)
        self.proj = torch.nn.Linear(config.hidden_size, config.hidden_size)
        self.post_init()

    def forward(self, x):
        y = self.proj(x)
        return fused_gelu(y) if fused_gelu is not None else torch.nn.functional.gelu(y)
"""
REQUIRED = "from fused_tiny_ops import fused_gelu"
OPTIONAL = "try:\n    from fused_tiny_ops import fused_gelu\nexcept ImportError:\n    fused_gelu = None"
NONE = "fused_gelu = None"


def _hf_home():
    import os
    import tempfile

    if "ERRKB_HF_HOME_SET" not in os.environ:  # before transformers is imported: it reads HF_HOME once
        os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="hf-home-")
        os.environ["ERRKB_HF_HOME_SET"] = "1"


def _write_model(model_dir=MODEL_DIR, import_block=REQUIRED):
    """A model folder with its own code and weights, as a Hub repo with custom code looks once downloaded."""
    import json
    import os

    import torch
    from safetensors.torch import save_file

    os.makedirs(model_dir, exist_ok=True)
    with open(os.path.join(model_dir, "configuration_tiny.py"), "w") as f:
        f.write(CONFIG_CODE)
    with open(os.path.join(model_dir, "modeling_tiny.py"), "w") as f:
        f.write(MODEL_CODE.format(import_block=import_block))
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump({"model_type": "tiny-remote", "hidden_size": 8, "architectures": ["TinyModel"],
                   "auto_map": {"AutoConfig": "configuration_tiny.TinyConfig",
                                "AutoModel": "modeling_tiny.TinyModel"}}, f)
    torch.manual_seed(0)
    weights = {"proj.weight": torch.randn(8, 8), "proj.bias": torch.randn(8)}
    save_file(weights, os.path.join(model_dir, "model.safetensors"), metadata={"format": "pt"})
    return weights


def _load(model_dir=MODEL_DIR):
    from transformers import AutoModel

    return AutoModel.from_pretrained(model_dir, trust_remote_code=True)


def trigger():
    _hf_home()
    _write_model()
    model = _load()


def _package(name, code):
    import os

    os.makedirs(os.path.join("site", name), exist_ok=True)
    with open(os.path.join("site", name, "__init__.py"), "w") as f:
        f.write(code)


def install_missing_package():
    """Solution 1: make the listed package importable (offline: a local package folder on sys.path). First the case
    where it is installed but its own import lacks a module: the message lists it all the same; importing it
    directly names the module it lacks; once that one is importable too, the model loads."""
    import importlib
    import logging
    import os
    import sys

    import torch
    import transformers
    from packaging.version import Version

    _hf_home()
    weights = _write_model()
    warnings_seen = []

    class _Collect(logging.Handler):
        def emit(self, rec):
            warnings_seen.append(rec.getMessage())

    logging.getLogger("transformers.dynamic_module_utils").addHandler(_Collect())
    sys.path.insert(0, os.path.abspath("site"))
    _package("fused_tiny_ops", "import torch\nfrom tiny_ops_kernels import gelu_kernel\n\n\n"
                               "def fused_gelu(x):\n    return gelu_kernel(x)\n")
    importlib.invalidate_caches()
    try:
        _load()
    except ImportError as exc:
        assert "not found in your environment: fused_tiny_ops" in str(exc), exc  # installed, yet listed
    else:
        raise AssertionError("the model loaded though fused_tiny_ops cannot be imported")
    try:
        importlib.import_module("fused_tiny_ops")
    except ImportError as exc:
        assert "tiny_ops_kernels" in str(exc), exc  # importing it directly names what it lacks
    else:
        raise AssertionError("fused_tiny_ops imported")
    if Version(transformers.__version__) >= Version("4.45"):
        assert any("tiny_ops_kernels" in w for w in warnings_seen), warnings_seen
    _package("tiny_ops_kernels", "import torch\n\n\ndef gelu_kernel(x):\n    return torch.nn.functional.gelu(x)\n")
    importlib.invalidate_caches()
    model = _load()
    assert type(model).__name__ == "TinyModel"
    assert torch.equal(model.proj.weight, weights["proj.weight"])
    x = torch.randn(2, 8)
    assert torch.allclose(model(x), torch.nn.functional.gelu(model.proj(x)))
    return "local package folder on sys.path"


def optional_import_in_try():
    """Solution 2: the optional import inside try/except ImportError; check_imports skips it, the fallback runs."""
    import torch

    _hf_home()
    weights = _write_model(import_block=OPTIONAL)
    model = _load()
    assert torch.equal(model.proj.bias, weights["proj.bias"])
    x = torch.randn(2, 8)
    assert torch.allclose(model(x), torch.nn.functional.gelu(model.proj(x)))


def guard():
    import importlib
    import os
    import sys

    _hf_home()
    _write_model()
    assert not record.check("validationCode", {"model_dir": MODEL_DIR})
    _write_model("tiny-remote-optional", import_block=OPTIONAL)
    assert record.check("validationCode", {"model_dir": "tiny-remote-optional"})
    # installed but not importable (its own dependency is missing): flagged too, as from_pretrained fails on it
    sys.path.insert(0, os.path.abspath("site"))
    _package("fused_tiny_ops", "from tiny_ops_kernels import gelu_kernel as fused_gelu\n")
    importlib.invalidate_caches()
    assert not record.check("validationCode", {"model_dir": MODEL_DIR})
    _package("tiny_ops_kernels", "import torch\n\n\ndef gelu_kernel(x):\n    return torch.nn.functional.gelu(x)\n")
    importlib.invalidate_caches()
    assert record.check("validationCode", {"model_dir": MODEL_DIR})


def valid_torch_only():
    _hf_home()
    _write_model("torch-only", import_block=NONE)
    _load("torch-only")
    return {"model_dir": "torch-only"}


def valid_optional_import():
    _hf_home()
    _write_model("optional", import_block=OPTIONAL)
    _load("optional")
    return {"model_dir": "optional"}


def valid_plain_folder():
    """A model without remote code, written by save_pretrained."""
    _hf_home()
    from transformers import AutoModel, BertConfig, BertModel

    BertModel(BertConfig(num_hidden_layers=1, hidden_size=16, num_attention_heads=2, intermediate_size=20,
                         vocab_size=50)).save_pretrained("plain-bert")
    AutoModel.from_pretrained("plain-bert")
    return {"model_dir": "plain-bert"}


def valid_unrelated_script():
    """A remote-code folder that also holds a conversion script importing packages this environment lacks: the
    script is never imported, so the model loads."""
    import os

    _hf_home()
    _write_model("with-script", import_block=NONE)
    with open(os.path.join("with-script", "convert_original_checkpoint.py"), "w") as f:
        f.write("import fairseq_not_installed_here\nimport tensorflow_not_installed_here\n")
    _load("with-script")
    return {"model_dir": "with-script"}
