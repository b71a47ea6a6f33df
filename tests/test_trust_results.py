"""Forged, inconsistent and badly signed results (issue 21), each through the real `errkb` in a subprocess: refused
naming the file and the field, or shown as unsigned and never counted."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from errkb import signing, verifications
from trust_support import catalog_with, private_key, result, write
from web_support import datasette_client

GPU_RECORD = "numpy-on-cuda-tensor"
LIMIT_S = 120


def errkb(root: Path, *args, env: dict | None = None, input_text: str | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != signing.TRUST_ENV} | (env or {})
    return subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(root), *map(str, args)],
                          capture_output=True, text=True, timeout=LIMIT_S, env=environment, input=input_text)


def verdict(root: Path) -> tuple:
    with sqlite3.connect(root / "catalog.db") as conn:
        return conn.execute("select lastVerdict, verifiedOn from records where slug = ?", [GPU_RECORD]).fetchone()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return catalog_with(tmp_path / "catalog", GPU_RECORD)


def forged_h200(root: Path) -> dict:
    """Hand-written: right hashes, every claim, a GPU it never ran on and a "CI run" link to anywhere."""
    return result(root, GPU_RECORD, torch="2.14.1", gpus=["NVIDIA H200"],
                  ranAt={"kind": "github-actions", "url": "https://example.com/actions/runs/1"})


def test_a_forged_h200_result_shows_as_unsigned_and_is_never_counted(root):
    path = write(root, forged_h200(root), sign=False)
    built = errkb(root, "build")
    assert built.returncode == 0, built.stderr
    assert verdict(root) == (None, None)
    shown = json.loads(errkb(root, "show", GPU_RECORD, "--json").stdout)
    (entry,) = shown["verifications"]
    assert entry["path"] == path.relative_to(root).as_posix()
    assert (entry["signer"], entry["signature"]) == (None, "unsigned")
    # Listed, but counted nowhere: no summary, no claim mark, no "verified" in show, match or the record page.
    assert (shown["lastVerdict"], shown["verifiedOn"], shown["proofSummary"], shown["claimMarks"]) == (None, None, None, {})
    text = errkb(root, "show", GPU_RECORD).stdout
    assert "H200" not in text and "example.com" not in text and "CUDA device" not in text, text
    message = json.loads((root / "records" / f"{GPU_RECORD}.json").read_text())["record"]["errorMessage"]
    matched = errkb(root, "match", "-", input_text=message)
    assert GPU_RECORD in matched.stdout and "not run yet" in matched.stdout and "verified in" not in matched.stdout, matched.stdout
    with datasette_client(root) as client:
        page = client.get(f"/-/errkb/record/{GPU_RECORD}").text
    assert "1 unsigned result: not counted" in page
    assert "example.com" not in page.split("unsigned result: not counted")[0]  # the matrix and run rows hold no such proof
    # The same file signed by a listed maintainer key counts; the opt-in counts it unsigned on one's own machine.
    assert errkb(root, "build", "--trust-unsigned").returncode == 0
    assert verdict(root) == ("verified", "torch 2.14.1 (1× H200)")
    assert errkb(root, "build").returncode == 0
    assert verdict(root) == (None, None)
    signed = errkb(root, "sign", path, "--key", private_key(root))
    assert signed.returncode == 0, signed.stderr
    assert errkb(root, "build").returncode == 0
    assert verdict(root) == ("verified", "torch 2.14.1 (1× H200)")
    (entry,) = json.loads(errkb(root, "show", GPU_RECORD, "--json").stdout)["verifications"]
    assert entry["signer"].startswith("test-maintainer (ed25519 ")


@pytest.mark.parametrize("change, fields", [
    ({"stages": [], "claims": [], "hardware": {"gpus": [], "gpuCount": 3}, "startedAt": "x"},
     ["$.hardware.gpuCount", "$.startedAt", "$.stages", "$.claims"]),
    ({"hardware": {"gpus": ["NVIDIA B200"] * 8, "gpuCount": 8}}, ["$.environment"]),  # a `_cpu` key with 8 GPUs
    ({"startedAt": "2999-01-01T00:00:00Z"}, ["$.startedAt"]),
    ({"observedMessages": ["No module named 'numpy'"]}, ["$.observedMessages[0]"]),
])
def test_an_inconsistent_result_is_refused_naming_file_and_field(root, change, fields):
    assert errkb(root, "build").returncode == 0
    path = write(root, result(root, GPU_RECORD, **change), sign=False)
    before = (root / "catalog.db").read_bytes()
    built = errkb(root, "build")
    assert built.returncode == 1 and "Traceback" not in built.stderr
    for field in fields:
        assert f"{path.relative_to(root).as_posix()}: {field}:" in built.stderr, built.stderr
    assert (root / "catalog.db").read_bytes() == before
    refused = errkb(root, "sign", path, "--key", private_key(root))  # nobody signs an inconsistent result
    assert refused.returncode == 1 and not signing.signature_path(path).exists()


def test_a_verified_result_missing_a_claim_of_the_record_is_refused(root):
    data = result(root, GPU_RECORD)
    data["claims"], data["stages"] = data["claims"][:1], data["stages"][:2]
    path = write(root, data, sign=False)
    built = errkb(root, "build")
    assert built.returncode == 1
    assert f"{path.relative_to(root).as_posix()}: $.claims: no result for the record's" in built.stderr


def test_a_signature_that_does_not_verify_is_an_error_naming_the_file(root, tmp_path):
    path = write(root, result(root, GPU_RECORD))
    assert errkb(root, "build").returncode == 0
    signature = signing.signature_path(path).relative_to(root).as_posix()
    # 1. the result edited after it was signed
    path.write_text(path.read_text().replace('"seconds": 5.0', '"seconds": 1.0'))
    built = errkb(root, "build")
    assert built.returncode == 1 and f"{signature}: $.payload:" in built.stderr
    # 2. signed again, by a key that is not listed in keys/maintainers/
    outsider = tmp_path / "outsider.pem"
    signing.generate_key(outsider, tmp_path / "outsider.pub")
    signing.sign(root, path, signing.load_private_key(outsider))
    built = errkb(root, "build")
    assert built.returncode == 1 and f"{signature}: $.signatures: no signature verifies" in built.stderr
    assert "Traceback" not in built.stderr
    refused = errkb(root, "sign", path, "--key", outsider)
    assert refused.returncode == 1 and "no .pub file holds the public half" in refused.stderr
    # 3. a good signature of another result file, copied beside this one
    other = write(root, result(root, GPU_RECORD, torch="2.5.1"))
    signing.signature_path(path).write_bytes(signing.signature_path(other).read_bytes())
    built = errkb(root, "build")
    assert built.returncode == 1 and f"{signature}: $.payload:" in built.stderr


def test_sign_all_is_idempotent(root):
    paths = [write(root, result(root, GPU_RECORD, torch=t), sign=False) for t in ("2.5.1", "2.13.0+cpu")]
    first = errkb(root, "sign", "--all", "--key", private_key(root))
    assert first.returncode == 0 and "signed 2 result file(s)" in first.stdout
    envelopes = [signing.signature_path(p).read_bytes() for p in paths]
    second = errkb(root, "sign", "--all", "--key", private_key(root))
    assert second.returncode == 0 and "signed 0 result file(s)" in second.stdout and "2 already signed" in second.stdout
    assert [signing.signature_path(p).read_bytes() for p in paths] == envelopes
    statement = signing.encoded_payload(signing.signature_path(paths[0]))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"][0]["name"] == paths[0].relative_to(root).as_posix()


def test_symlinks_in_verifications_are_refused_by_name_without_reading(root, tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"token": "s3cr3t-value"}))
    folder = root / "verifications" / GPU_RECORD
    folder.mkdir(parents=True)
    (folder / "torch-2.5.1_py3.11_cpu.json").symlink_to(outside)
    (folder / "loop.json").symlink_to(folder / "loop.json")
    (root / "verifications" / "other-record").symlink_to(tmp_path)
    built = errkb(root, "build")
    assert built.returncode == 1 and "Traceback" not in built.stderr
    for name in (f"{GPU_RECORD}/torch-2.5.1_py3.11_cpu.json", f"{GPU_RECORD}/loop.json", "other-record"):
        assert f"verifications/{name}: $: is a symbolic link" in built.stderr
    assert "s3cr3t" not in built.stderr + built.stdout
    shown = errkb(root, "show", GPU_RECORD, "--json")
    assert shown.returncode == 1 and "is a symbolic link" in shown.stderr and "s3cr3t" not in shown.stderr


PASTE = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import numpy\nModuleNotFoundError: No module named 'numpy'\n"


@pytest.mark.parametrize("how", ["skipped", "stale", "unsigned", "wrong-error", "fix-failed", "claim-failed"])
def test_only_current_signed_verified_results_feed_the_matcher(root, how):
    """A forged observed message must not make a plain ModuleNotFoundError match the GPU record."""
    message = "No module named 'numpy'"
    data = result(root, GPU_RECORD, verdict=how if how in verifications.RAN_THE_TRIGGER else "verified", message=message)
    if how == "skipped":
        data = result(root, GPU_RECORD, verdict="skipped", message=message)
        data["observedMessages"] = [message]
    if how == "stale":
        data["recordHash"] = "0" * 64
    write(root, data, sign=how != "unsigned")
    paste = root.parent / "paste.txt"
    paste.write_text(PASTE)
    for source in ("files", "catalog.db"):
        if source == "catalog.db":
            assert errkb(root, "build").returncode == 0
        matched = errkb(root, "match", paste, "--json")
        assert GPU_RECORD not in matched.stdout, (source, matched.stdout)
    # the baseline: the same wording in a current, signed, verified result does teach the matcher
    write(root, result(root, GPU_RECORD, verdict="verified", torch="2.1.2", message=message))
    assert errkb(root, "build").returncode == 0
    assert GPU_RECORD in errkb(root, "match", paste, "--json").stdout


def test_sign_and_draft_wait_for_the_catalog_lock_and_write_nothing_when_it_stays_held(root, tmp_path):
    """errkb sign and errkb draft write through the one write path: while another process holds the catalog
    lock they wait, then say the catalog is busy, and leave every file as it was (issue 21 Must 6)."""
    from errkb.lock import catalog_lock

    path = write(root, result(root, GPU_RECORD), sign=False)
    snippet = tmp_path / "snippet.py"
    snippet.write_text("import torch\ntorch.zeros(2, 3) @ torch.zeros(2, 3)\n")
    busy = {"ERRKB_LOCK_TIMEOUT": "1"}
    with catalog_lock(root):
        signed = errkb(root, "sign", path, "--key", private_key(root), env=busy)
        drafted = errkb(root, "draft", "--slug", "busy-draft", "--", sys.executable, snippet, env=busy)
    assert signed.returncode == 1 and "busy" in signed.stderr and "Traceback" not in signed.stderr, signed.stderr
    assert not signing.signature_path(path).exists()
    assert drafted.returncode == 1 and "busy" in drafted.stderr and "Traceback" not in drafted.stderr, drafted.stderr
    assert not (root / "records" / "busy-draft.json").exists() and not (root / "reproductions" / "busy-draft.py").exists()


def test_sign_all_with_a_second_key_keeps_the_first_maintainers_signatures(root):
    """A second maintainer signs only what no listed key vouches for yet: the first maintainer's signatures of
    results the second did not run stay as they are."""
    first_path = write(root, result(root, GPU_RECORD, torch="2.5.1"), sign=False)
    assert errkb(root, "sign", "--all", "--key", private_key(root)).returncode == 0
    theirs = signing.signature_path(first_path).read_bytes()
    second_path = write(root, result(root, GPU_RECORD, torch="2.13.0+cpu"), sign=False)
    second_key = root.parent / "second-maintainer.pem"
    signed = errkb(root, "sign", "--all", "--key", second_key, "--new-key", "second-maintainer")
    assert signed.returncode == 0 and "signed 1 result file(s)" in signed.stdout, signed.stdout + signed.stderr
    assert signing.signature_path(first_path).read_bytes() == theirs
    shown = json.loads(errkb(root, "show", GPU_RECORD, "--json").stdout)
    signers = {Path(v["path"]).name: v["signer"] for v in shown["verifications"]}
    assert signers[first_path.name].startswith("test-maintainer") and signers[second_path.name].startswith("second-maintainer")
