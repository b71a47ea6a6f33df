"""A machine without a route to the Hugging Face Hub (an air-gapped cluster node, a sandbox, a proxy that blocks
huggingface.co) calls AutoModel.from_pretrained("some-org/tiny-bert") with an empty cache. transformers asks
huggingface_hub for the files; the request fails (in the reproduction sandbox DNS lookups fail, and huggingface_hub
retries before giving up), nothing is in the cache, and transformers.utils.hub.cached_files raises OSError "We
couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files." (5.25.0
and 4.57.6; 4.40.2 says "to load this file, couldn't find it in the cached files and it looks like some-org/tiny-bert
is not the path to a directory containing a file named config.json"). The trigger relies on the sandbox having no
network; HF_HUB_OFFLINE=1 with an empty cache reaches the same raise line without trying the network.
Demonstrations: (1) the model saved with save_pretrained into a folder (as it would be on a connected machine, then
copied) loads from that folder with the same weights; (2) a Hub cache populated elsewhere (the
models--org--name/snapshots/<commit> layout huggingface_hub writes) plus HF_HUB_OFFLINE=1 makes the same repo id load,
and a counting socket.getaddrinfo shows that not one host name is looked up. The record's exampleFix and
validationCode run from its text; the guard takes the from_pretrained keyword arguments (load_kwargs) so that a repo
cached under cache_dir=, fetched by revision=<commit> (no refs/main), or loaded from a subfolder= of the repo (a
pipeline's text_encoder/) passes, as from_pretrained loads each offline.
The excerpt is src/transformers/utils/hub.py at 00511f2b97756629c5668aec5ad4371cbfd9c466, a stored upstream copy of a
commit that is not a release (its cached_files keeps the "# All files exist" block of 4.54/4.55 while its
list_repo_templates takes the token argument 4.56.2 lacks, so where it sits between releases is not established;
the copy was read at offsets 0 and 16000 and lined up with 4.57.6's hub.py edited by the differences seen, which puts
offsets 16000 and 32000 where the copy has them and the raise at line 555). The 15 excerpt lines occur verbatim in
the hub.py of 4.53.3, 4.54.1, 4.55.4, 4.56.2, 4.57.0 and 4.57.6; the raise statement is the one 4.57.6 ships
(hub.py:553 there) and renders the same message as 5.25.0, whose statement names the endpoint constants.ENDPOINT instead of
HUGGINGFACE_CO_RESOLVE_ENDPOINT (both 'https://huggingface.co' unless HF_ENDPOINT is set). Results: errkb reproduce
huggingface-hub-unreachable (the installed 5.25.0) --with transformers==4.57.6 --with transformers==4.40.2.
"""
NEEDS = {"packages": {"transformers": ">=4.40", "torch": "==2.13.0+cpu"}, "cuda_devices": 0, "timeout_s": 150}
SOLUTIONS = {1: "local_directory", 2: "offline_with_populated_cache"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["AutoModel", "local_dir"], "validationCode": ["name_or_path", "load_kwargs"]}
VALID = {"local-folder": "valid_local_folder", "local-folder-path-object": "valid_local_path_object",
         "cached-repo-id": "valid_cached_repo", "cached-by-revision": "valid_cached_by_revision",
         "cached-under-cache-dir": "valid_cached_under_cache_dir", "cached-with-subfolder": "valid_cached_with_subfolder"}
WORDINGS = [
    {"text": "We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached "
             "files.", "source": "transformers==5.25.0", "match": "pattern"},
    {"text": "We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files "
             "and it looks like bert-base-uncased is not the path to a directory containing a file named config.json.",
     "source": "CASIA-LMC-Lab/FiLo#10", "match": "pattern"},
    {"text": "We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files "
             "and it looks like some-org/tiny-bert is not the path to a directory containing a file named config.json.",
     "source": "transformers==4.40.2", "match": "pattern"},
    {"text": "We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached "
             "files.\nCheckout your internet connection", "source": "aistudynow/Comfyui-HunyuanFoley#6",
     "match": "matcher"},
    {"text": "We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files "
             "and it looks like decapoda-research/llama-7b-hf is not the path to a directory containing a file named "
             "config.json.", "source": "facebookresearch/bitsandbytes#34", "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "00511f2b97756629c5668aec5ad4371cbfd9c466",
              "path": "src/transformers/utils/hub.py", "line": 555, "offset": 0}

import errkb_record as record

REPO_ID = "some-org/tiny-bert"
COMMIT = "0123456789abcdef0123456789abcdef01234567"  # the snapshot's commit as the Hub cache names it


_HF_HOME = []


def _empty_cache():
    """A fresh HF_HOME: nothing was ever downloaded. Set before transformers / huggingface_hub are imported (they
    read it once, at import), so one process keeps the one it made first."""
    import os
    import tempfile

    if not _HF_HOME:
        _HF_HOME.append(tempfile.mkdtemp(prefix="hf-home-"))
        os.environ["HF_HOME"] = _HF_HOME[0]
        os.environ.pop("HF_HUB_CACHE", None)
    return _HF_HOME[0]


def _tiny_bert():
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=37,
                        vocab_size=100)
    return BertModel(config)


def _same_weights(a, b):
    import torch

    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for name in sa:
        assert torch.equal(sa[name], sb[name]), name


def _populate_cache(hf_home, model, hub_dir=None, refs=True, repo_id=REPO_ID, subfolder=""):
    """What a download on a connected machine leaves in HF_HOME/hub (or in the cache_dir it was given), copied to
    this one. refs=False: a download by revision=<commit>, which writes no refs/main."""
    import os

    hub_dir = hub_dir or os.path.join(hf_home, "hub")
    repo_dir = os.path.join(hub_dir, "models--" + repo_id.replace("/", "--"))
    snapshot = os.path.join(repo_dir, "snapshots", COMMIT)
    model.save_pretrained(os.path.join(snapshot, subfolder) if subfolder else snapshot)
    if refs:
        os.makedirs(os.path.join(repo_dir, "refs"), exist_ok=True)
        with open(os.path.join(repo_dir, "refs", "main"), "w") as f:
            f.write(COMMIT)
    return snapshot


def trigger():
    _empty_cache()
    from transformers import AutoModel

    model = AutoModel.from_pretrained(REPO_ID)  # no network here and nothing cached


def local_directory():
    """Solution 1: save_pretrained where the model is available, copy the folder, load from the folder."""
    import tempfile

    _empty_cache()
    from transformers import AutoModel

    source = _tiny_bert()
    local_dir = tempfile.mkdtemp(prefix="tiny-bert-")
    source.save_pretrained(local_dir)
    model = AutoModel.from_pretrained(local_dir)
    assert type(model).__name__ == "BertModel"
    _same_weights(model, source)


def offline_with_populated_cache():
    """Solution 2: a populated Hub cache and HF_HUB_OFFLINE=1: the repo id itself loads, and no host name is even
    looked up (every socket.getaddrinfo call is counted and refused)."""
    import os
    import socket

    hf_home = _empty_cache()
    os.environ["HF_HUB_OFFLINE"] = "1"
    lookups = []
    real_getaddrinfo = socket.getaddrinfo

    def counting_getaddrinfo(host, *args, **kwargs):
        lookups.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "refused by the reproduction")

    socket.getaddrinfo = counting_getaddrinfo
    try:
        source = _tiny_bert()
        _populate_cache(hf_home, source)
        from transformers import AutoModel

        model = AutoModel.from_pretrained(REPO_ID)
        _same_weights(model, source)
        try:  # a repo the cache does not hold still fails, without waiting on the network
            AutoModel.from_pretrained("some-org/not-downloaded")
        except OSError as exc:
            assert "couldn't connect to" in str(exc) or "offline mode" in str(exc), exc
        else:
            raise AssertionError("a repo missing from the cache loaded")
    finally:
        socket.getaddrinfo = real_getaddrinfo
    assert lookups == [], lookups  # HF_HUB_OFFLINE=1: no request was even attempted


def example_fix():
    import tempfile

    _empty_cache()
    from transformers import AutoModel

    source = _tiny_bert()
    local_dir = tempfile.mkdtemp(prefix="tiny-bert-")
    source.save_pretrained(local_dir)
    names = record.run("exampleFix", {"AutoModel": AutoModel, "local_dir": local_dir}, section="after")
    _same_weights(names["model"], source)


def guard():
    import tempfile

    hf_home = _empty_cache()
    # the trigger's situation: a repo id, nothing cached, no keyword arguments
    assert not record.check("validationCode", {"name_or_path": REPO_ID, "load_kwargs": {}})
    local_dir = tempfile.mkdtemp(prefix="tiny-bert-")
    _tiny_bert().save_pretrained(local_dir)
    assert record.check("validationCode", {"name_or_path": local_dir, "load_kwargs": {}})
    _populate_cache(hf_home, _tiny_bert())
    assert record.check("validationCode", {"name_or_path": REPO_ID, "load_kwargs": {}})
    # a repo id cached only under another cache_dir is still flagged when from_pretrained is not given that cache_dir
    other = tempfile.mkdtemp(prefix="hf-cache-")
    _populate_cache(other, _tiny_bert(), hub_dir=other, refs=True, repo_id="some-org/elsewhere")
    assert not record.check("validationCode", {"name_or_path": "some-org/elsewhere", "load_kwargs": {}})
    assert record.check("validationCode", {"name_or_path": "some-org/elsewhere", "load_kwargs": {"cache_dir": other}})


def _load_offline(name_or_path, **load_kwargs):
    from transformers import AutoModel

    return AutoModel.from_pretrained(name_or_path, local_files_only=True, **load_kwargs)


def valid_local_folder():
    import tempfile

    _empty_cache()
    local_dir = tempfile.mkdtemp(prefix="tiny-bert-")
    _tiny_bert().save_pretrained(local_dir)
    _load_offline(local_dir)
    return {"name_or_path": local_dir, "load_kwargs": {}}


def valid_local_path_object():
    import tempfile
    from pathlib import Path

    _empty_cache()
    local_dir = Path(tempfile.mkdtemp(prefix="tiny-bert-"))
    _tiny_bert().save_pretrained(local_dir)
    _load_offline(local_dir)
    return {"name_or_path": local_dir, "load_kwargs": {}}


def valid_cached_repo():
    hf_home = _empty_cache()
    _populate_cache(hf_home, _tiny_bert())
    _load_offline(REPO_ID)
    return {"name_or_path": REPO_ID, "load_kwargs": {}}


def valid_cached_by_revision():
    """Downloaded with revision=<commit>: the snapshot is cached, but no refs/main names it."""
    _empty_cache()
    import os
    import tempfile

    cache = tempfile.mkdtemp(prefix="hf-cache-")
    _populate_cache(cache, _tiny_bert(), hub_dir=cache, refs=False)
    assert not os.path.exists(os.path.join(cache, "models--some-org--tiny-bert", "refs"))
    load_kwargs = {"cache_dir": cache, "revision": COMMIT}
    _load_offline(REPO_ID, **load_kwargs)
    return {"name_or_path": REPO_ID, "load_kwargs": load_kwargs}


def valid_cached_under_cache_dir():
    """Downloaded with cache_dir=<folder> instead of the default HF_HOME/hub."""
    import tempfile

    _empty_cache()
    cache = tempfile.mkdtemp(prefix="hf-cache-")
    _populate_cache(cache, _tiny_bert(), hub_dir=cache)
    load_kwargs = {"cache_dir": cache}
    _load_offline(REPO_ID, **load_kwargs)
    return {"name_or_path": REPO_ID, "load_kwargs": load_kwargs}


def valid_cached_with_subfolder():
    """A repo whose model sits in a subfolder (a pipeline repo's text_encoder/), loaded with subfolder=: config.json is
    cached under that subfolder, not at the repo's root."""
    import tempfile

    _empty_cache()
    cache = tempfile.mkdtemp(prefix="hf-cache-")
    _populate_cache(cache, _tiny_bert(), hub_dir=cache, repo_id="some-org/tiny-pipeline", subfolder="text_encoder")
    load_kwargs = {"cache_dir": cache, "subfolder": "text_encoder"}
    _load_offline("some-org/tiny-pipeline", **load_kwargs)
    return {"name_or_path": "some-org/tiny-pipeline", "load_kwargs": load_kwargs}
