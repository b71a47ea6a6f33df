"""A job runs with HF_HUB_OFFLINE=1 (set for an air-gapped cluster, a CI cache or a container) and calls a Hub API
function, here HfApi().list_repo_files("gpt2"). Offline mode does not look at the local cache for API calls: the
session huggingface_hub builds refuses every HTTP request, so the call raises OfflineModeIsEnabled ("Cannot reach
<url>: offline mode is enabled. ...") before anything leaves the machine. On huggingface_hub 0.x the refusal is the
requests adapter mounted in offline mode (OfflineAdapter.send; run on 0.26.5 and 0.36.2); on 1.28.0 and 2.5.0 it is
the httpx event hook (hf_request_event_hook); the wording is the same. Everything runs without a network: HF_HOME points at a fresh
temporary folder, and the "earlier download" the cache fixes need is written by hand in the layout hf_hub_download
leaves (refs/main naming the commit, snapshots/<commit>/<file>). The demonstrations: reading the files through
snapshot_download from that cache works offline while list_repo_files still raises (solution 1); the try/except
fallback of the record's tryCatchPattern returns the cached file names, and raises LocalEntryNotFoundError for a
repository never cached (solution 2); unsetting HF_HUB_OFFLINE after import changes nothing, while a process started
without it, with HF_ENDPOINT pointing at a reachable endpoint (a small Hub stand-in served on the loopback interface,
the only network the sandbox has), gets the very call of the trigger answered (solution 3). The exampleFix runs from
the record's text against the hand-made cache. The validationCode flags offline mode with a repository that is not
cached, and passes cached repositories offline (a bare id and namespaced ids). The valid inputs all run offline: the
guard reads huggingface_hub.constants.HF_HUB_OFFLINE, fixed at import, and the stage runs in one process.

Drafted by `errkb draft` from snippet.py on huggingface_hub 2.5.0, Python 3.11.7:
  huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/gpt2/tree/main?recursive=true&expand=false: offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.
  raised at huggingface_hub/utils/_http.py:295
The repository holds no v2.5.0 tag in the stored huggingface/huggingface_hub snapshot (its newest tag is v1.28.0),
so the excerpt is anchored at tag v0.36.2 (664c484e261175deeb80c2aa3b525457a1f6fa5c): the installed 0.36.2 wheel's
huggingface_hub/utils/_http.py is byte-identical to src/huggingface_hub/utils/_http.py at that tag (checked with cmp),
and its raise is at line 107 (the line the 0.36.2 traceback reports).
"""
NEEDS = {'packages': {'huggingface_hub': '>=0.26'}, 'cuda_devices': 0, 'timeout_s': 60}
SOLUTIONS = {1: "read_from_cache", 2: "fallback_on_offline_error", 3: "online_with_reachable_endpoint"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard", "tryCatchPattern": "try_catch"}
CODE_NAMES = {"exampleFix": ["repo_id"], "validationCode": ["repo_id"], "tryCatchPattern": ["repo_id"]}
VALID = {"cached-offline": "valid_cached_offline", "cached-other-repo-ids": "valid_cached_namespaced"}
WORDINGS = [
    {'text': 'Cannot reach https://huggingface.co/api/models/gpt2/tree/main?recursive=true&expand=false: offline mode is enabled.',
     'source': 'huggingface_hub==2.5.0', 'match': 'pattern'},
    {'text': 'Cannot reach https://huggingface.co/api/models/gpt2/tree/main?recursive=True&expand=False: offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.',
     'source': 'huggingface_hub==0.36.2', 'match': 'pattern'},
    {'text': 'Cannot reach https://huggingface.co/api/models/kernels-community/finegrained-fp8/refs: offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.',
     'source': 'huggingface/kernels#553', 'match': 'pattern'},
    {'text': 'Cannot reach https://huggingface.co/api/models/meta-llama/Meta-Llama-3.1-8B-Instruct/tree/main?recursive=True&expand=False: offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.',
     'source': 'huggingface/text-generation-inference#3192', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'huggingface/huggingface_hub',
              'commit': '664c484e261175deeb80c2aa3b525457a1f6fa5c', 'path': 'src/huggingface_hub/utils/_http.py',
              'line': 107, 'offset': 0}

import json
import os
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import errkb_record as record

REPO_ID = "gpt2"
COMMIT = "607a30d783dfa663caf39e06633721c8d4cfcd7e"
FILES = {"config.json": {"model_type": "gpt2", "n_layer": 2}, "tokenizer_config.json": {"model_max_length": 1024}}


def _fresh_home(offline):
    """A fresh HF_HOME, and offline mode on or off; before huggingface_hub is imported (it reads both at import)."""
    os.environ["HF_HOME"] = tempfile.mkdtemp()
    os.environ.pop("HF_HUB_CACHE", None)
    os.environ.pop("HUGGINGFACE_HUB_CACHE", None)
    os.environ.pop("TRANSFORMERS_OFFLINE", None)
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    else:
        os.environ.pop("HF_HUB_OFFLINE", None)
    return Path(os.environ["HF_HOME"]) / "hub"


def _cache_repo(hub_cache, repo_id=REPO_ID):
    """What an earlier (online) hf_hub_download/snapshot_download leaves: refs/main and the snapshot's files."""
    folder = hub_cache / ("models--" + repo_id.replace("/", "--"))
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(COMMIT)
    snapshot = folder / "snapshots" / COMMIT
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, content in FILES.items():
        (snapshot / name).write_text(json.dumps(content))
    return snapshot


def _offline_cache():
    """The valid inputs share one process: the first situation sets offline mode and HF_HOME before huggingface_hub is
    imported, the next ones reuse the cache folder that import fixed."""
    import sys

    if "huggingface_hub" in sys.modules:
        from huggingface_hub import constants

        assert constants.HF_HUB_OFFLINE
        return Path(constants.HF_HUB_CACHE)
    return _fresh_home(offline=True)


def _assert_blocked(call):
    from huggingface_hub.utils import OfflineModeIsEnabled

    try:
        call()
    except OfflineModeIsEnabled as exc:
        assert isinstance(exc, ConnectionError) and "offline mode is enabled" in str(exc), exc
    else:
        raise AssertionError("the Hub API call went through in offline mode")


def trigger():
    import os
    import tempfile

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HOME"] = tempfile.mkdtemp()

    from huggingface_hub import HfApi

    HfApi().list_repo_files("gpt2")


def read_from_cache():
    """Solution 1: the repository was downloaded earlier; snapshot_download serves the cached snapshot offline, and the
    file list comes from that folder, while list_repo_files (an API call) is still refused."""
    hub_cache = _fresh_home(offline=True)
    _cache_repo(hub_cache)
    from huggingface_hub import HfApi, hf_hub_download, snapshot_download

    _assert_blocked(lambda: HfApi().list_repo_files(REPO_ID))
    folder = Path(snapshot_download(REPO_ID))
    assert folder.name == COMMIT, folder
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
    config = json.loads(Path(hf_hub_download(REPO_ID, "config.json")).read_text())
    assert config == FILES["config.json"], config


def fallback_on_offline_error():
    """Solution 2: the record's tryCatchPattern catches OfflineModeIsEnabled and lists the cached snapshot instead."""
    hub_cache = _fresh_home(offline=True)
    _cache_repo(hub_cache)
    names = record.run("tryCatchPattern", {"repo_id": REPO_ID})
    assert sorted(names["files"]) == sorted(FILES), names["files"]


def try_catch():
    fallback_on_offline_error()
    # Nothing cached: the fallback does not invent files, it raises the cache error, which names the cause.
    _fresh_home(offline=True)
    from huggingface_hub.utils import LocalEntryNotFoundError

    try:
        record.run("tryCatchPattern", {"repo_id": "someone/never-downloaded"})
    except LocalEntryNotFoundError:
        pass
    else:
        raise AssertionError("the fallback returned files for a repository that was never cached")


class _HubStandIn(BaseHTTPRequestHandler):
    """Answers the one route list_repo_files uses: GET /api/models/<repo>/tree/<revision>."""

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.startswith(f"/api/models/{REPO_ID}/tree/"):
            body = json.dumps([{"type": "file", "oid": "0" * 40, "size": len(json.dumps(c)), "path": name}
                               for name, c in FILES.items()]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *args):
        pass


def online_with_reachable_endpoint():
    """Solution 3: a process started without HF_HUB_OFFLINE, with HF_ENDPOINT pointing at a reachable endpoint (a
    stand-in on 127.0.0.1), gets the trigger's call answered. Unsetting the variable after huggingface_hub was imported
    is too late: the flag was read at import, and the call is still refused."""
    import subprocess
    import sys

    server = HTTPServer(("127.0.0.1", 0), _HubStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _fresh_home(offline=True)
    os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
    from huggingface_hub import HfApi

    os.environ.pop("HF_HUB_OFFLINE")
    _assert_blocked(lambda: HfApi().list_repo_files(REPO_ID))  # read at import: still offline in this process
    code = ("import json, sys\nfrom huggingface_hub import HfApi, constants\nassert not constants.HF_HUB_OFFLINE\n"
            "print(json.dumps(HfApi().list_repo_files(sys.argv[1])))")
    done = subprocess.run([sys.executable, "-c", code, REPO_ID], env=dict(os.environ), capture_output=True,
                          text=True, timeout=50)
    server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    files = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(files) == sorted(FILES), files


def example_fix():
    hub_cache = _fresh_home(offline=True)
    _cache_repo(hub_cache)
    names = record.run("exampleFix", {"repo_id": REPO_ID}, section="after")
    assert sorted(names["files"]) == sorted(FILES), names["files"]


def guard():
    _fresh_home(offline=True)  # the trigger's situation: offline, nothing cached
    assert not record.check("validationCode", {"repo_id": REPO_ID})
    hub_cache = Path(os.environ["HF_HOME"]) / "hub"
    _cache_repo(hub_cache)  # the fixed one: the repository was downloaded before going offline
    assert record.check("validationCode", {"repo_id": REPO_ID})


def valid_cached_offline():
    hub_cache = _offline_cache()
    _cache_repo(hub_cache)
    from huggingface_hub import snapshot_download

    snapshot_download(REPO_ID)  # served offline from the cache
    return {"repo_id": REPO_ID}


def valid_cached_namespaced():
    hub_cache = _offline_cache()
    situations = []
    from huggingface_hub import snapshot_download

    for repo_id in ("openai-community/gpt2", "sentence-transformers/all-MiniLM-L6-v2"):
        _cache_repo(hub_cache, repo_id)
        snapshot_download(repo_id)
        situations.append({"repo_id": repo_id})
    return situations
