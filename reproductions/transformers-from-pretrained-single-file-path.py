"""A tokenizer that needs several files (a BPE tokenizer: vocab.json and merges.txt) is loaded with
from_pretrained("tok/vocab.json"), the path of one of its files instead of its folder. PreTrainedTokenizerBase
.from_pretrained (src/transformers/tokenization_utils_base.py) sees a file path and, because the class declares more
than one vocabulary file, raises ValueError "Calling GPT2Tokenizer.from_pretrained() with the path to a single file or
url is not supported for this tokenizer. Use a model identifier or the path to a directory instead." trigger(): a
folder tok/ holding a tiny vocab.json and merges.txt written by the reproduction, and GPT2Tokenizer.from_pretrained on
tok/vocab.json. Demonstrations: (1) the folder passed instead, which loads both files and tokenizes "hello" with the
merges applied; and the Stable Diffusion variant: a .ckpt file passed with subfolder="tokenizer" raises the same error
for GPT2Tokenizer on every release, and for CLIPTokenizer on 4.x (on 5.x CLIPTokenizer lists an optional
tokenizer_file, passes this check and fails later with another error, which the stage asserts is not this one); the
model folder with its tokenizer/ subfolder loads with both classes; (2) files under non-standard names
(Megatron-style gpt2-vocab.json / gpt2-merges.txt) copied into one folder under the names the class expects
(GPT2Tokenizer.vocab_files_names), then that folder loads. The record's exampleFix and validationCode run from its
text. HF_HUB_OFFLINE=1 is set in the stages that load single-file tokenizers, so that a file path that transformers
5.x also tries as a Hub id fails fast instead of retrying the network. The excerpt is
src/transformers/tokenization_utils_base.py at 598a3dc387272524973e74e57f137e46cc4e3734, a stored upstream copy
byte-identical to the file of the transformers 4.53.0-4.53.3 wheels. Results: errkb reproduce
transformers-from-pretrained-single-file-path (the installed 5.25.0) --with transformers==4.53.3
--with transformers==4.57.6 --with transformers==5.24.0.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=4.40"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "pass_the_folder", 2: "standard_names_in_one_folder"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["GPT2Tokenizer", "vocab_path"], "validationCode": ["tokenizer_class", "name_or_path"]}
VALID = {"folder": "valid_folder", "folder-path-object": "valid_path_object",
         "single-vocab-file-tokenizer": "valid_single_vocab_file",
         "optional-tokenizer-file": "valid_optional_tokenizer_file"}
WORDINGS = [
    {"text": "Calling GPT2Tokenizer.from_pretrained() with the path to a single file or url is not supported for this "
             "tokenizer. Use a model identifier or the path to a directory instead.", "source": "transformers==4.53.3",
     "match": "pattern"},
    {"text": "Calling CLIPTokenizer.from_pretrained() with the path to a single file or url is not supported for this "
             "tokenizer. Use a model identifier or the path to a directory instead.",
     "source": "YBYBZhang/ControlVideo#23", "match": "matcher"},
    {"text": "Calling CLIPTokenizer.from_pretrained() with the path to a single file or url is not supported for this "
             "tokenizer.", "source": "sdbds/magic-animate-for-windows#14", "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "598a3dc387272524973e74e57f137e46cc4e3734",
              "path": "src/transformers/tokenization_utils_base.py", "line": 1879, "offset": 0}

import errkb_record as record

VOCAB = {"h": 0, "e": 1, "l": 2, "o": 3, "he": 4, "ll": 5, "<|endoftext|>": 6}
MERGES = "#version: 0.2\nh e\nl l\n"


def _offline():
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported


def _write(folder="tok", vocab_name="vocab.json", merges_name="merges.txt"):
    import json
    import os

    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, vocab_name), "w") as f:
        json.dump(VOCAB, f)
    with open(os.path.join(folder, merges_name), "w") as f:
        f.write(MERGES)
    return os.path.join(folder, vocab_name)


def trigger():
    _offline()
    from transformers import GPT2Tokenizer

    _write()
    tokenizer = GPT2Tokenizer.from_pretrained("tok/vocab.json")


def pass_the_folder():
    """Solution 1: the folder holding vocab.json and merges.txt; both merges apply ("he", "ll")."""
    _offline()
    from transformers import GPT2Tokenizer

    _write()
    tokenizer = GPT2Tokenizer.from_pretrained("tok")
    assert tokenizer("hello")["input_ids"] == [4, 5, 3]
    # the Stable Diffusion variant: a checkpoint file given where a model folder with a tokenizer/ subfolder belongs
    _write("sd/tokenizer")
    with open("sd/v1-5-pruned.ckpt", "wb") as f:
        f.write(b"weights")
    try:
        GPT2Tokenizer.from_pretrained("sd/v1-5-pruned.ckpt", subfolder="tokenizer")
    except ValueError as exc:
        assert "path to a single file or url is not supported" in str(exc), exc
    else:
        raise AssertionError("a checkpoint file was accepted as the model folder")
    tokenizer = GPT2Tokenizer.from_pretrained("sd", subfolder="tokenizer")
    assert tokenizer("hello")["input_ids"] == [4, 5, 3]
    # the class the pastes use: on 4.x the same error; on 5.x it passes this check (optional tokenizer_file) and fails
    # later with another error; the folder loads on both
    import transformers
    from transformers import CLIPTokenizer

    try:
        CLIPTokenizer.from_pretrained("sd/v1-5-pruned.ckpt", subfolder="tokenizer")
    except Exception as exc:  # noqa: BLE001 - which error depends on the release, checked below
        clip_error = exc
    else:
        raise AssertionError("CLIPTokenizer accepted a checkpoint file as the model folder")
    single_file = "path to a single file or url is not supported" in str(clip_error)
    if int(transformers.__version__.split(".")[0]) < 5:
        assert isinstance(clip_error, ValueError) and single_file, clip_error
    else:
        assert not single_file, clip_error
    clip = CLIPTokenizer.from_pretrained("sd", subfolder="tokenizer")
    assert len(clip("hello")["input_ids"]) > 2


def standard_names_in_one_folder():
    """Solution 2: files under other names are copied under the names the class expects, then the folder loads."""
    import os
    import shutil

    _offline()
    from transformers import GPT2Tokenizer

    _write("megatron", "gpt2-vocab.json", "gpt2-merges.txt")
    names = GPT2Tokenizer.vocab_files_names
    os.makedirs("gpt2-tokenizer", exist_ok=True)
    shutil.copy("megatron/gpt2-vocab.json", os.path.join("gpt2-tokenizer", names["vocab_file"]))
    shutil.copy("megatron/gpt2-merges.txt", os.path.join("gpt2-tokenizer", names["merges_file"]))
    tokenizer = GPT2Tokenizer.from_pretrained("gpt2-tokenizer")
    assert tokenizer("hello")["input_ids"] == [4, 5, 3]


def example_fix():
    _offline()
    from transformers import GPT2Tokenizer

    vocab_path = _write()
    names = record.run("exampleFix", {"GPT2Tokenizer": GPT2Tokenizer, "vocab_path": vocab_path}, section="after")
    assert names["tokenizer"]("hello")["input_ids"] == [4, 5, 3]


def guard():
    _offline()
    from transformers import GPT2Tokenizer

    _write()
    assert not record.check("validationCode", {"tokenizer_class": GPT2Tokenizer, "name_or_path": "tok/vocab.json"})
    assert record.check("validationCode", {"tokenizer_class": GPT2Tokenizer, "name_or_path": "tok"})


def valid_folder():
    _offline()
    from transformers import GPT2Tokenizer

    _write("valid-tok")
    GPT2Tokenizer.from_pretrained("valid-tok")
    return {"tokenizer_class": GPT2Tokenizer, "name_or_path": "valid-tok"}


def valid_path_object():
    from pathlib import Path

    _offline()
    from transformers import GPT2Tokenizer

    _write("valid-tok-path")
    GPT2Tokenizer.from_pretrained(Path("valid-tok-path"))
    return {"tokenizer_class": GPT2Tokenizer, "name_or_path": Path("valid-tok-path")}


def valid_single_vocab_file():
    """A tokenizer with one vocabulary file (BERT's vocab.txt) may still be given that file's path."""
    import os

    _offline()
    from transformers import BertTokenizer

    os.makedirs("bert-vocab", exist_ok=True)
    with open("bert-vocab/vocab.txt", "w") as f:
        f.write("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    tokenizer = BertTokenizer.from_pretrained("bert-vocab/vocab.txt")
    assert tokenizer.convert_tokens_to_ids("hello") == 4
    return {"tokenizer_class": BertTokenizer, "name_or_path": "bert-vocab/vocab.txt"}


def valid_optional_tokenizer_file():
    """RobertaTokenizer lists vocab_file, merges_file and an optional tokenizer_file. On 5.x its save_pretrained folder
    holds tokenizer.json, and that file's path loads; 4.x refuses a single file for it (the folder is the valid case
    there)."""
    import os

    _offline()
    import transformers
    from transformers import RobertaTokenizer

    _write("rob-files")
    RobertaTokenizer.from_pretrained("rob-files").save_pretrained("rob-saved")
    path = "rob-saved/tokenizer.json" if int(transformers.__version__.split(".")[0]) >= 5 else "rob-saved"
    assert os.path.exists(path), os.listdir("rob-saved")
    tokenizer = RobertaTokenizer.from_pretrained(path)
    assert len(tokenizer("hello")["input_ids"]) > 2
    return {"tokenizer_class": RobertaTokenizer, "name_or_path": path}
