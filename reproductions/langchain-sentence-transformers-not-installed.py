"""langchain_community's HuggingFaceEmbeddings (libs/community/langchain_community/embeddings/huggingface.py) imports
sentence_transformers inside __init__ and, when that import fails, raises ImportError "Could not import
sentence_transformers python package. Please install it with `pip install sentence-transformers`." chained to the
original failure (`from exc`). langchain-community does not depend on sentence-transformers, so a plain
`pip install langchain-community` leaves it out. trigger(): a tiny BERT model folder written locally
(BertModel from a 1-layer config with a 12-word tokenizer, save_pretrained; nothing downloaded, HF_HUB_OFFLINE=1),
then HuggingFaceEmbeddings(model_name=<that folder>) in an environment with langchain-community, torch and
transformers but no sentence-transformers. Where sentence-transformers is installed the trigger goes on: the
embeddings of two sentences are computed and asserted equal to a mean pooling of the same BERT's last hidden state
computed by hand with transformers. Solution 1 (install sentence-transformers with the interpreter that runs the code)
cannot install inside a stage: its stage asserts the cause here (the chained exception is ModuleNotFoundError for
sentence_transformers itself) and shows the second case the solution covers: a package named sentence_transformers
that is present but whose own import fails on a missing module (a local stand-in folder on sys.path, named
tiny_st_dependency inside) gives the very same message, and the chained exception names the missing module, not
sentence_transformers; a stand-in that imports a name its dependency no longer has (cached_download, as in
PromptEngineer48/Ollama#21) gives the message chained to a plain ImportError "cannot import name"; the installed side is the committed langchain-community==0.4.1 + sentence-transformers==6.3.0
result, where trigger() embeds with the local model (verdict not-reproduced: the snippet works). The excerpt is
libs/community/langchain_community/embeddings/huggingface.py at tag libs/community/v0.3.23
(8a69aea0b6b473b3282aeae3ef5709354e4078f9) of the langchain-ai/langchain-community snapshot; the excerpt's lines 82-94
are identical in the 0.2.19, 0.3.31, 0.4.1 and 0.4.2 wheels (the raise at line 87 in all; lines 60-100 are identical
in 0.3.31, 0.4.1 and 0.4.2, while 0.2.19 differs below the excerpt, where it has a pydantic `class Config`). The trigger
names the sentence-transformers release it ran with (its stage variant), so the installed side's result shows it. The installed
venv has no langchain-community and skips. Results: errkb reproduce langchain-sentence-transformers-not-installed
--with langchain-community==0.2.19 --with langchain-community==0.3.31 --with langchain-community==0.4.2
--with langchain-community==0.4.1,sentence-transformers==6.3.0 (the installed side; a result file is named by the
NEEDS packages, which do not list sentence-transformers, so the installed side uses another langchain-community release).
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": "", "langchain-community": ">=0.2"}, "cuda_devices": 0,
         "timeout_s": 300}
SOLUTIONS = {1: "install_sentence_transformers"}
CODE = {}
WORDINGS = [
    {"text": "Could not import sentence_transformers python package. Please install it with `pip install "
             "sentence-transformers`.", "source": "langchain-community==0.4.2", "match": "pattern"},
    {"text": "Could not import sentence_transformers python package. Please install it with `pip install "
             "sentence-transformers`.", "source": "langchain-community==0.2.19", "match": "pattern"},
    {"text": "ImportError: Could not import sentence_transformers python package. Please install it with `pip install "
             "sentence-transformers`.", "source": "dakshesh14/anukool#5", "match": "matcher"},
    {"text": "ImportError: Could not import sentence_transformers python package. Please install it with `pip install "
             "sentence_transformers`.", "source": "entbappy/End-to-end-Medical-Chatbot-using-Llama2#5",
     "match": "matcher"},
    {"text": "ValueError: Could not import sentence_transformers python package. Please install it with `pip install "
             "sentence_transformers`.", "source": "zylon-ai/private-gpt#550", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "langchain-ai/langchain-community",
              "commit": "8a69aea0b6b473b3282aeae3ef5709354e4078f9",
              "path": "libs/community/langchain_community/embeddings/huggingface.py", "line": 87, "offset": 0}

import errkb_record as record

MODEL_DIR = "tiny-embedder"
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "tiny", "test", "another", "one", "sentence", "model"]
TEXTS = ["a tiny test", "another sentence"]


def _offline():
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may be fetched: the model is the local folder
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _write_model():
    """A BERT model folder as save_pretrained writes it: config, weights, tokenizer (no sentence-transformers files)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    _offline()
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(WORDS)})
    assert tokenizer("a tiny test")["input_ids"] == [2, 5, 6, 7, 3]
    tokenizer.save_pretrained(MODEL_DIR)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=32)).save_pretrained(MODEL_DIR)


def _mean_pooled(texts):
    """What the embeddings must be: BERT's last hidden state averaged over the real tokens, computed by hand."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(MODEL_DIR), AutoModel.from_pretrained(MODEL_DIR).eval()
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    return (hidden * mask).sum(1) / mask.sum(1)


def _st_release():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sentence-transformers")
    except PackageNotFoundError:
        return None


def trigger():
    import torch
    from langchain_community.embeddings import HuggingFaceEmbeddings

    release = _st_release()
    variant = f"sentence-transformers {release} installed" if release else "no sentence-transformers distribution"
    _write_model()
    embeddings = HuggingFaceEmbeddings(model_name=MODEL_DIR)
    # reached only where sentence-transformers is installed: the local model embeds, as mean pooling by hand does
    vectors = torch.tensor(embeddings.embed_documents(TEXTS))
    assert vectors.shape == (2, 16), vectors.shape
    assert torch.allclose(vectors, _mean_pooled(TEXTS), atol=1e-5)
    return f"{variant}: HuggingFaceEmbeddings embedded with the local model (equal to mean pooling by hand)"


def _package(name, code):
    import os

    os.makedirs(os.path.join("site", name), exist_ok=True)
    with open(os.path.join("site", name, "__init__.py"), "w") as f:
        f.write(code)


def install_sentence_transformers():
    """Solution 1: sentence-transformers is not importable here. The chained exception says which module failed:
    here sentence_transformers itself (install it); with a sentence_transformers package present whose own import
    fails (a local stand-in folder on sys.path), the same message appears and the chained exception names the
    module it lacks. The install itself is the langchain-community==0.4.1 + sentence-transformers==6.3.0 result."""
    import importlib
    import importlib.util
    import os
    import sys

    from langchain_community.embeddings import HuggingFaceEmbeddings

    _write_model()
    assert importlib.util.find_spec("sentence_transformers") is None
    try:
        HuggingFaceEmbeddings(model_name=MODEL_DIR)
    except ImportError as exc:
        assert "pip install sentence-transformers" in str(exc), exc
        assert isinstance(exc.__cause__, ModuleNotFoundError), repr(exc.__cause__)
        assert exc.__cause__.name == "sentence_transformers", exc.__cause__
    else:
        raise AssertionError("HuggingFaceEmbeddings was built without sentence-transformers")
    # a sentence_transformers package that is there but cannot be imported: same message, another cause
    sys.path.insert(0, os.path.abspath("site"))
    _package("sentence_transformers", "from tiny_st_dependency import SentenceTransformer\n")
    importlib.invalidate_caches()
    assert importlib.util.find_spec("sentence_transformers") is not None
    try:
        HuggingFaceEmbeddings(model_name=MODEL_DIR)
    except ImportError as exc:
        assert "pip install sentence-transformers" in str(exc), exc
        assert isinstance(exc.__cause__, ModuleNotFoundError), repr(exc.__cause__)
        assert exc.__cause__.name == "tiny_st_dependency", exc.__cause__
    else:
        raise AssertionError("the stand-in imported")
    # a sentence_transformers too old for its dependency: the name it imports is gone (cached_download in real life)
    _package("tiny_hub", "def hf_hub_download():\n    pass\n")
    _package("sentence_transformers", "from tiny_hub import hf_hub_download, cached_download\n")
    importlib.invalidate_caches()
    try:
        HuggingFaceEmbeddings(model_name=MODEL_DIR)
    except ImportError as exc:
        assert "pip install sentence-transformers" in str(exc), exc
        cause = exc.__cause__
        assert type(cause) is ImportError, repr(cause)  # not ModuleNotFoundError: the module is there, a name is not
        assert "cannot import name 'cached_download'" in str(cause) and cause.name == "tiny_hub", cause
    else:
        raise AssertionError("the too-old stand-in imported")
    return ("sentence-transformers not installed here (cause: ModuleNotFoundError sentence_transformers; a present but "
            "broken stand-in names tiny_st_dependency; a too-old one, cannot import name 'cached_download'): the install is the langchain-community==0.4.1 + "
            "sentence-transformers==6.3.0 result")
