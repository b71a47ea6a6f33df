"""peft imports names from transformers at import time; a peft release newer than the installed transformers imports
names that transformers release does not have yet, and `import peft` fails inside peft with ImportError. In peft
0.14.0 and 0.15.2 (wheels read) src/peft/peft_model.py line 37 reads `from transformers import Cache, DynamicCache,
EncoderDecoderCache, PreTrainedModel` (line 39 in the installed 0.22.0; 0.13.2 imports only PreTrainedModel there); transformers 4.40.2 has Cache and DynamicCache but not EncoderDecoderCache, so the message is
"cannot import name 'EncoderDecoderCache' from 'transformers' (<path>/transformers/__init__.py)" (Python names the
first missing name of the statement; a transformers before Cache existed gives 'Cache'). peft's metadata asks only for
"transformers", without a lower bound, so pip does not prevent the pair. trigger(): import peft, then a LoRA on a
tiny torch model (Linear 8->8 named lin, Linear 8->2) with get_peft_model, whose forward pass and trainable
parameter count are asserted where the import works. Demonstrations: (1) upgrade transformers, and (2) pin peft to a
release whose imports the installed transformers has, both installs that cannot run inside a stage: each stage reads
the `from transformers import ...` statements of the installed peft's own peft_model.py (ast), asserts the installed
transformers lacks some of those names, that the ImportError names the first of them, and returns a variant string;
the installed sides are the committed results peft==0.15.2 + transformers==4.57.6 (upgraded transformers) and
peft==0.13.2 + transformers==4.40.2 (older peft), where trigger() imports peft and runs the LoRA
(verdict not-reproduced: the snippet works). The excerpt is src/peft/peft_model.py at tag v0.15.2 of the
huggingface/peft snapshot (3c7b6e7f0252cb18386d86b056a9b100a8160792), byte-identical to the file in the peft 0.15.2 wheel (cmp). Results:
errkb reproduce peft-incompatible-with-installed-transformers --with peft==0.14.0,transformers==4.40.2
--with peft==0.15.2,transformers==4.40.2 --with peft==0.17.1,transformers==4.40.2 (verified)
--with peft==0.15.2,transformers==4.57.6 --with peft==0.13.2,transformers==4.40.2 (not-reproduced: the fixes),
NEEDS keeps transformers below 5: with transformers 5 the mismatch is the opposite one (a peft older than
transformers, HybridCache), which this record does not cover, so the installed transformers 5.x is skipped.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "peft": "", "transformers": "<5"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "upgrade_transformers", 2: "pin_older_peft"}
CODE = {}
WORDINGS = [
    {"text": "cannot import name 'EncoderDecoderCache' from 'transformers'", "source": "peft==0.15.2", "match": "pattern"},
    {"text": "cannot import name 'EncoderDecoderCache' from 'transformers'", "source": "peft==0.14.0", "match": "pattern"},
    {"text": "ImportError: cannot import name 'EncoderDecoderCache' from 'transformers' (/home_data/home/geyx2023/.conda/"
             "envs/llava/lib/python3.10/site-packages/transformers/__init__.py)", "source": "haotian-liu/LLaVA#1794",
     "match": "matcher"},
    {"text": "ImportError: \"cannot import name 'Cache' from 'transformers'\"", "source": "GaParmar/img2img-turbo#119",
     "match": "matcher"},
    {"text": "ImportError: cannot import name 'HybridCache' from 'transformers'", "source": "huggingface/peft#3333",
     "match": "none", "why": "the reverse mismatch (transformers 5 dropped HybridCache, a peft too old for it imports it): "
                             "upgrading transformers cannot fix it; the prose says so and the pattern leaves it out"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/peft", "commit": "3c7b6e7f0252cb18386d86b056a9b100a8160792",
              "path": "src/peft/peft_model.py", "line": 37, "offset": 0}

import errkb_record as record


def _model():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.out = torch.nn.Linear(8, 2)

        def forward(self, x):
            return self.out(torch.relu(self.lin(x)))

    torch.manual_seed(0)
    return M()


def trigger():
    import torch

    import peft  # peft_model.py imports names this transformers may lack

    model = peft.get_peft_model(_model(), peft.LoraConfig(r=2, lora_alpha=8, target_modules=["lin"]))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert trainable == 2 * 8 + 8 * 2, trainable  # lora_A (2x8) and lora_B (8x2) only
    assert model(torch.randn(4, 8)).shape == (4, 2)


def _missing_names():
    """The names the installed peft's peft_model.py imports from transformers that the installed transformers lacks."""
    import ast
    import importlib.util
    import os

    import transformers

    origin = importlib.util.find_spec("peft").origin
    with open(os.path.join(os.path.dirname(origin), "peft_model.py")) as f:
        tree = ast.parse(f.read())
    wanted = [alias.name for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "transformers"
              for alias in node.names]
    return wanted, [name for name in wanted if not hasattr(transformers, name)]


def _import_error():
    try:
        import peft  # noqa: F401
    except ImportError as exc:
        return exc
    raise AssertionError("peft imported")


def upgrade_transformers():
    """Solution 1: the installed transformers lacks names this peft imports; the upgrade is the
    peft==0.15.2 + transformers==4.57.6 result."""
    from importlib.metadata import version

    wanted, missing = _missing_names()
    assert missing, (wanted, "all present")
    # the record's case: transformers lacks a class it added later and still exports (5.25.0 has all three); a name
    # newer transformers dropped (HybridCache) is the reverse mismatch, where upgrading transformers cannot help
    assert missing[0] in ("Cache", "DynamicCache", "EncoderDecoderCache"), missing
    exc = _import_error()
    assert f"cannot import name '{missing[0]}' from 'transformers'" in str(exc), (exc, missing)
    return (f"transformers {version('transformers')} lacks {missing} of peft {version('peft')}'s {wanted}: "
            "the upgrade is the peft==0.15.2 + transformers==4.57.6 result")


def pin_older_peft():
    """Solution 2: a peft release whose imports this transformers has; the pinned side is the
    peft==0.13.2 + transformers==4.40.2 result."""
    from importlib.metadata import version

    wanted, missing = _missing_names()
    assert missing and missing[0] in ("Cache", "DynamicCache", "EncoderDecoderCache"), missing
    exc = _import_error()
    assert missing[0] in str(exc), exc
    return (f"peft {version('peft')} needs {missing} that transformers {version('transformers')} lacks: "
            "the older peft is the peft==0.13.2 + transformers==4.40.2 result")
