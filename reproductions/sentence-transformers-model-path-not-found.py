"""A script loads its fine-tuned embedding model with a relative path, SentenceTransformer("./models/my-finetuned-minilm"),
from a working directory that has no such folder. The string is no existing folder and, with two slashes, cannot be a
Hub id, so SentenceTransformer.__init__ raises FileNotFoundError "Path ./models/my-finetuned-minilm not found"
(sentence-transformers 4.x and 5.x; ValueError with the same words up to 3.x). Offline throughout: the model used by the
demonstrations is a one-layer BERT with a ten-word WordLevel tokenizer, built from a configuration, wrapped as
Transformer + mean Pooling and saved with model.save(). The demonstrations: an absolute path built from the project
folder loads the saved model whatever the working directory is (the embeddings equal the saved model's), and saving the
model to the relative path first makes the very call of the trigger work. The record's exampleFix and validationCode run
from its text; the guard passes saved models (relative, absolute, a home path expanded with os.path.expanduser), a plain
transformers folder, and Hub ids, which SentenceTransformer sends past this check; it flags a "~/..." path, which
SentenceTransformer does not expand (shown to raise this error although the folder exists).

Drafted by `errkb draft` from st_snip.py on sentence-transformers 5.1.2, Python 3.11.7:
  FileNotFoundError: Path ./models/my-finetuned-minilm not found
  raised at sentence_transformers/SentenceTransformer.py:304
The installed 5.1.2 wheel's SentenceTransformer.py has CRLF line ends; without them it is byte-identical to the file at
tag v5.1.2 (dfcbbd93056c) of the stored UKPLab/sentence-transformers snapshot (now huggingface/sentence-transformers),
checked with tr -d '\\r' | cmp; the excerpt is that upstream text (PROVENANCE upstream-copy).
"""
NEEDS = {'packages': {'sentence-transformers': '', 'transformers': '', 'torch': '==2.13.0+cpu'}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "absolute_path_from_project", 2: "save_then_load"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["project_dir"], "validationCode": ["model_path"]}
VALID = {"saved-relative": "valid_saved_relative", "saved-absolute": "valid_saved_absolute",
         "plain-transformers-folder": "valid_plain_transformers_folder", "hub-ids": "valid_hub_ids",
         "home-expanded": "valid_home_expanded"}
WORDINGS = [
    {'text': 'Path ./models/my-finetuned-minilm not found', 'source': 'sentence-transformers==5.1.2', 'match': 'pattern'},
    {'text': 'Path /home/workstation/liushaoqian/Chat2BI-master/retriever/retriever_model not found', 'source': 'mMrBun/AIPC#11', 'match': 'pattern'},
    {'text': "Repo id must be in the form 'repo_name' or 'namespace/repo_name'", 'source': 'huggingface/sentence-transformers#2459',
     'match': 'none', 'why': "huggingface_hub's repo id check (sentence-transformers 2.3.0 sent local folders to it), another raise site in another library"},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'huggingface/sentence-transformers', 'commit': 'dfcbbd93056c6292ee6a245c0740683a270df0b1',
              'path': 'sentence_transformers/SentenceTransformer.py', 'line': 304, 'offset': 0}

import os
import tempfile
from pathlib import Path

import errkb_record as record

RELATIVE = "./models/my-finetuned-minilm"
SENTENCES = ["hello world", "a cat"]


def _tiny_model():
    """A SentenceTransformer built offline: one-layer BERT, WordLevel tokenizer, mean pooling."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # before huggingface_hub is imported: no stage may reach the network
    import torch
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers import models as tok_models
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "a", "cat", "dog"]
    tokenizer = Tokenizer(tok_models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=32))
    hf_dir = Path(tempfile.mkdtemp()) / "bert"
    bert.save_pretrained(hf_dir)
    fast.save_pretrained(hf_dir)
    word = models.Transformer(str(hf_dir), max_seq_length=16)
    pooling = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[word, pooling], device="cpu"), hf_dir


def _project_with_saved_model():
    """A project folder holding models/my-finetuned-minilm (saved with model.save) and the saved model's embeddings."""
    model, _ = _tiny_model()
    project = Path(tempfile.mkdtemp()) / "project"
    model.save(str(project / "models" / "my-finetuned-minilm"))
    return project, model.encode(SENTENCES)


def _same_embeddings(loaded, expected):
    import numpy as np

    assert np.allclose(loaded.encode(SENTENCES), expected, atol=1e-6), "the loaded model is not the saved one"


def trigger():
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer("./models/my-finetuned-minilm")


def absolute_path_from_project():
    """Solution 1: from another working directory the relative path fails; the path built from the project folder loads."""
    from sentence_transformers import SentenceTransformer

    project, expected = _project_with_saved_model()
    os.chdir(tempfile.mkdtemp())  # a notebook or service started elsewhere
    try:
        SentenceTransformer(RELATIVE, device="cpu")
    except (FileNotFoundError, ValueError) as exc:
        assert "not found" in str(exc), exc
    else:
        raise AssertionError("the relative path resolved from the wrong working directory")
    model_dir = project.resolve() / "models" / "my-finetuned-minilm"
    _same_embeddings(SentenceTransformer(str(model_dir), device="cpu"), expected)


def save_then_load():
    """Solution 2: model.save() to the path first; then the trigger's very call loads it back."""
    from sentence_transformers import SentenceTransformer

    model, _ = _tiny_model()
    os.chdir(tempfile.mkdtemp())
    model.save(RELATIVE)
    assert (Path(RELATIVE) / "modules.json").is_file()
    _same_embeddings(SentenceTransformer(RELATIVE, device="cpu"), model.encode(SENTENCES))


def example_fix():
    project, expected = _project_with_saved_model()
    os.chdir(tempfile.mkdtemp())
    names = record.run("exampleFix", {"project_dir": str(project)}, section="after")
    _same_embeddings(names["model"], expected)


def _saved_in_home():
    """A home folder (HOME points at a temporary one) holding models/my-finetuned-minilm saved with model.save()."""
    home = Path(tempfile.mkdtemp()) / "home"
    os.environ["HOME"] = str(home)
    model, _ = _tiny_model()
    model.save(str(home / "models" / "my-finetuned-minilm"))
    return "~/models/my-finetuned-minilm"


def guard():
    from sentence_transformers import SentenceTransformer

    os.chdir(tempfile.mkdtemp())
    assert not record.check("validationCode", {"model_path": RELATIVE})
    assert not record.check("validationCode", {"model_path": "/srv/app/models/my-finetuned-minilm"})
    project, _ = _project_with_saved_model()
    os.chdir(project)
    assert record.check("validationCode", {"model_path": RELATIVE})
    # "~" is not expanded: the folder exists, SentenceTransformer still raises this error, the guard flags it.
    home_path = _saved_in_home()
    assert (Path(os.path.expanduser(home_path)) / "modules.json").is_file()
    try:
        SentenceTransformer(home_path, device="cpu")
    except (FileNotFoundError, ValueError) as exc:
        assert str(exc) == f"Path {home_path} not found", exc
    else:
        raise AssertionError("SentenceTransformer expanded ~ on this release")
    assert not record.check("validationCode", {"model_path": home_path})


def _loads(model_path):
    from sentence_transformers import SentenceTransformer

    SentenceTransformer(model_path, device="cpu").encode(SENTENCES)
    return {"model_path": model_path}


def valid_saved_relative():
    project, _ = _project_with_saved_model()
    os.chdir(project)
    return _loads(RELATIVE)


def valid_saved_absolute():
    project, _ = _project_with_saved_model()
    return _loads(str(project / "models" / "my-finetuned-minilm"))


def valid_plain_transformers_folder():
    _, hf_dir = _tiny_model()  # config.json and weights, no modules.json: loaded with mean pooling
    return _loads(str(hf_dir))


def valid_home_expanded():
    return _loads(os.path.expanduser(_saved_in_home()))


def valid_hub_ids():
    """Hub ids are not paths: SentenceTransformer sends them to the Hub (offline here, so that step fails with another
    error), past the check that raises "Path ... not found"."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing is downloaded: the Hub step must fail at once, not fetch
    from sentence_transformers import SentenceTransformer

    situations = []
    os.chdir(tempfile.mkdtemp())
    for hub_id in ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5"):
        try:
            SentenceTransformer(hub_id, device="cpu")
        except Exception as exc:  # offline: the download step refuses
            assert not str(exc).startswith("Path "), exc  # not this error: the id went past the path check
        situations.append({"model_path": hub_id})
    return situations
