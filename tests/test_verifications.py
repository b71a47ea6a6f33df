"""Verification results as committed data: the file format, build loading them, the stale-result rule, show --json."""

import json
import re
import shutil

import jsonschema
import pytest
from sqlite_utils import Database

from conftest import CATALOG_SEED, REPO, SEED_RECORD, SEED_SLUG, run_cli, tree_digest
from web_support import datasette_client
from errkb import runs, signing, verifications
from errkb.reproduce.contract import read_needs
from errkb.store import file_hash

SCHEMA = json.loads((REPO / verifications.SCHEMA_FILE).read_text(encoding="utf-8"))


def result(root, verdict="verified", torch="2.13.0+cpu", gpus=(), **changes) -> dict:
    """A result for the seed as it is in `root` now (current), in the shape `errkb reproduce` writes."""
    packages = {"hanlp": "2.1.5", "torch": torch}
    data = {
        "schemaVersion": 1, "slug": SEED_SLUG,
        "environment": verifications.environment_key(packages, "3.11.7", list(gpus)),
        "recordHash": file_hash(root / "records" / f"{SEED_SLUG}.json"),
        "reproductionHash": file_hash(root / "reproductions" / f"{SEED_SLUG}.py"),
        "verdict": verdict, "reason": "ValueError raised at hanlp/components/taggers/tagger.py:37; 1 claim(s) held",
        "failedClaim": None, "drift": None,
        "stages": [{"stage": "trigger", "function": "trigger", "outcome": "raised", "kind": "exception",
                    "exceptionClass": "ValueError", "message": "DataParallel not supported when CRF is used",
                    "raiseSite": "hanlp/components/taggers/tagger.py:37", "warnings": [], "executed": []},
                   *[{"stage": label, "function": function, "outcome": "returned"} for label, function in CLAIMS]],
        "claims": [{"kind": label.split()[0], "index": int(label.split()[1]) if " " in label else None,
                    "verdict": verdict, "reason": f"{function}() completed"} for label, function in CLAIMS],
        "packages": packages, "library": "hanlp 2.1.5", "python": "3.11.7", "torchGitVersion": "cf30153c4c131c8164ee7798e5022d810682e2cb",
        "torchBuild": "CPU", "hardware": {"cpu": "AMD EPYC", "cpuCount": 2, "gpus": list(gpus), "gpuCount": len(gpus), "cuda": None, "cudnn": None},
        "os": "Linux-6.1-x86_64", "startedAt": "2026-12-01T07:00:00.000000Z", "seconds": 5.2, "errkbVersion": "0.1.0",
        "ranAt": {"kind": "local", "url": None}, "observedMessages": ["DataParallel not supported when CRF is used"],
    }
    data.update(changes)
    return data


# The seed's claims as its reproduction demonstrates them (SOLUTIONS and CODE)
CLAIMS = [("solution 1", "single_device"), ("solution 2", "crf_off"), ("exampleFix", "example_fix"), ("validationCode", "guard")]


def write(root, data, sign=True) -> str:
    """Write a result file, signed by the catalog's test maintainer key (as `errkb sign` would)."""
    path = root / "verifications" / data["slug"] / f"{data['environment']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    if sign:
        signing.sign(root, path, signing.load_private_key(root.parent / "maintainer.pem"))
    return path.relative_to(root).as_posix()


@pytest.fixture
def catalog(tmp_path):
    tmp_path = tmp_path / "catalog"
    (tmp_path / "records").mkdir(parents=True)
    (tmp_path / "reproductions").mkdir()
    shutil.copy(CATALOG_SEED, tmp_path / "records")
    shutil.copy(REPO / "reproductions" / f"{SEED_SLUG}.py", tmp_path / "reproductions")
    signing.generate_key(tmp_path.parent / "maintainer.pem", tmp_path / signing.KEYS_DIR / "test.pub")
    return tmp_path


def verdict_row(root):
    db = Database(root / "catalog.db")
    return db.execute("select lastVerdict, verifiedOn from records where slug = ?", [SEED_SLUG]).fetchone()


def test_the_schema_file_is_generated_from_the_model():
    assert (REPO / verifications.SCHEMA_FILE).read_text(encoding="utf-8") == verifications.schema_text()


def test_a_result_validates_against_model_and_schema(catalog):
    data = result(catalog)
    verifications.Verification.model_validate(data)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)


def test_environment_key_names_versions_python_and_hardware():
    assert verifications.environment_key({"torch": "2.5.1", "hanlp": "2.1.5"}, "3.11.7", []) == "hanlp-2.1.5_torch-2.5.1_py3.11_cpu"
    gpu = verifications.environment_key({"torch": "2.14.1"}, "3.12.1", ["NVIDIA H200", "NVIDIA H200"])
    assert gpu == "torch-2.14.1_py3.12_cuda2x-nvidia-h200"


def test_build_loads_results_and_sets_verdict_and_verified_on(catalog):
    write(catalog, result(catalog, torch="2.5.1"))
    write(catalog, result(catalog, torch="2.13.0+cpu"))
    write(catalog, result(catalog, torch="2.14.1", gpus=["NVIDIA H200"]))
    assert run_cli("build", root=catalog).exit_code == 0
    db = Database(catalog / "catalog.db")
    assert db["reproduction_runs"].count == 3
    assert verdict_row(catalog) == ("verified", "torch 2.5.1, 2.13.0 (CPU); torch 2.14.1 (1× H200)")


def test_a_result_for_an_older_record_stays_visible_but_sets_no_verdict(catalog):
    write(catalog, result(catalog, verdict="wrong-error"))
    record = catalog / "records" / f"{SEED_SLUG}.json"
    envelope = json.loads(record.read_text())
    envelope["record"]["preventionTips"].append("Check the tagger's crf flag before choosing devices")
    record.write_text(json.dumps(envelope, indent=2))
    assert run_cli("build", root=catalog).exit_code == 0
    assert verdict_row(catalog) == (None, None)
    shown = json.loads(run_cli("show", SEED_SLUG, "--json", root=catalog).stdout)
    (entry,) = shown["verifications"]
    assert entry["current"] is False and entry["verdict"] == "wrong-error"
    assert {"verdict", "packages", "gpuCount", "current", "path", "startedAt"} <= set(entry)


def test_an_edited_reproduction_also_makes_results_stale(catalog):
    write(catalog, result(catalog))
    assert run_cli("build", root=catalog).exit_code == 0
    assert verdict_row(catalog)[0] == "verified"
    with open(catalog / "reproductions" / f"{SEED_SLUG}.py", "a") as handle:
        handle.write("\n# edited\n")
    assert run_cli("build", root=catalog).exit_code == 0
    assert verdict_row(catalog) == (None, None)


def test_rerunning_an_environment_replaces_its_row(catalog):
    path = write(catalog, result(catalog, verdict="fix-failed"))
    assert run_cli("build", root=catalog).exit_code == 0
    write(catalog, result(catalog, verdict="verified", startedAt="2026-12-01T08:00:00.000000Z"))
    assert run_cli("build", root=catalog).exit_code == 0
    rows = list(Database(catalog / "catalog.db").query("select path, verdict from reproduction_runs"))
    assert rows == [{"path": path, "verdict": "verified"}]


def test_a_deleted_result_file_leaves_the_catalog(catalog):
    path = write(catalog, result(catalog))
    assert run_cli("build", root=catalog).exit_code == 0
    (catalog / path).unlink()
    assert run_cli("build", root=catalog).exit_code == 0
    assert Database(catalog / "catalog.db")["reproduction_runs"].count == 0
    assert verdict_row(catalog) == (None, None)


@pytest.mark.parametrize(
    "change, where, message",
    [
        ({"verdict": "sort-of"}, "$.verdict", "expected: Input should be 'verified'"),
        ({"hardware": {"gpuCount": "0"}}, "$.hardware.gpuCount", "expected: Input should be a valid integer"),
        ({"recordHash": "abc"}, "$.recordHash", "expected: String should match pattern"),
        ({"hostname": "gpu-box-1"}, "$.hostname", "Extra inputs are not permitted"),
        ({"slug": "another-record"}, "$.slug", "expected the folder's name"),
    ],
)
def test_a_tampered_result_is_rejected_by_build_naming_file_and_field(catalog, change, where, message):
    assert run_cli("build", root=catalog).exit_code == 0
    data = result(catalog)
    path = write(catalog, data)
    (catalog / path).write_text(json.dumps({**data, **change}), encoding="utf-8")
    before = tree_digest(catalog)
    outcome = run_cli("build", root=catalog)
    assert outcome.exit_code == 1
    assert f"{path}: {where}" in outcome.stderr and message in outcome.stderr
    assert tree_digest(catalog) == before


def test_a_truncated_result_is_rejected(catalog):
    path = write(catalog, result(catalog))
    text = (catalog / path).read_text()
    (catalog / path).write_text(text[: len(text) // 2])
    outcome = run_cli("build", root=catalog)
    assert outcome.exit_code == 1 and path in outcome.stderr
    db = Database(catalog / "catalog.db")
    assert "records" not in db.table_names()  # the failed build left nothing behind


def test_show_json_lists_results_before_any_build(catalog):
    write(catalog, result(catalog))
    shown = json.loads(run_cli("show", SEED_SLUG, "--json", root=catalog).stdout)
    (entry,) = shown["verifications"]
    assert entry["current"] is True and entry["packages"]["torch"] == "2.13.0+cpu" and entry["gpuCount"] == 0
    assert entry["path"].startswith(f"verifications/{SEED_SLUG}/")
    assert shown["slug"] == SEED_SLUG  # the record's own fields are still there


def test_the_committed_catalog_has_a_result_for_every_record():
    """A fresh clone shows the proof: every record has a result for today's record and reproduction that
    verified it. A skip is no proof: it is accepted only for a record whose reproduction needs CUDA devices
    (declared in its NEEDS) that none of the committed runs had, and then every current result says so."""
    for record in sorted((REPO / "records").glob("*.json")):
        current = [entry for entry in verifications.for_record(REPO, record.stem) if entry["current"]]
        assert current, f"no committed result for today's {record.stem}"
        if any(entry["verdict"] == "verified" for entry in current):
            continue
        needs = read_needs(REPO / "reproductions" / f"{record.stem}.py")
        gpu = needs.cuda_devices > 0 or needs.torch_build == "cuda" or needs.nvidia_driver is not None
        assert gpu, f"{record.stem}: not verified anywhere, and it needs no GPU, CUDA build or driver"
        for entry in current:
            assert entry["verdict"] == "skipped", (record.stem, entry["path"], entry["verdict"])
            assert re.search(r"needs [^;]*(CUDA|NVIDIA)", entry["reason"]), (
                record.stem, entry["path"], entry["reason"])


def test_verified_somewhere_is_verified_with_exactly_where(catalog):
    write(catalog, result(catalog, torch="2.13.0+cpu"))
    write(catalog, result(catalog, verdict="wrong-error", torch="2.15.0", startedAt="2026-12-01T09:00:00.000000Z"))
    assert run_cli("build", root=catalog).exit_code == 0
    assert verdict_row(catalog) == ("verified", "torch 2.13.0 (CPU)")
    # Re-running 2.13.0 with a failure replaces that environment's result: nothing verifies any more.
    write(catalog, result(catalog, verdict="fix-failed", torch="2.13.0+cpu", startedAt="2026-12-01T08:00:00.000000Z"))
    assert run_cli("build", root=catalog).exit_code == 0
    assert verdict_row(catalog) == ("wrong-error", None)


def _summary_run(torch, verdict, reason="", drift=None):
    return {"verdict": verdict, "torch": torch, "reason": reason, "drift": drift, "cuda_device_count": 0,
            "cuda_devices": "[]", "failed_claim": None}


def test_matrix_summary_names_releases_in_order_and_groups_skips_by_reason():
    from errkb.runs import matrix_summary

    runs = [
        _summary_run("2.15.0", "verified", drift="raise line 40 (record says 38)"),
        _summary_run("2.13.0+cpu", "verified"),
        _summary_run("2.5.1", "verified", drift="raise line 36 (record says 38)"),
        _summary_run("2.9.1", "skipped", "needs a CPU build of torch, found a CUDA 12.8 build"),
        _summary_run("1.13.1", "skipped", "needs a CPU build of torch, found a CUDA 11.7 build"),
        _summary_run("2.1.2", "wrong-error", "class: expected TypeError, got RuntimeError"),
        _summary_run("2.16.0", "verified", drift="raise site moved to aten/src/ATen/native/Utils.h:47 (addmm) in installed "
                                                 "torch 2.16.0, record says aten/src/ATen/native/LinearAlgebra.cpp:38"),
    ]
    summary = matrix_summary(runs, 38)
    assert summary.split("; ") == [
        "reproduces on torch 2.5.1, 2.13.0, 2.15.0, 2.16.0 (CPU)",
        "not on torch 2.1.2 (wrong-error)",
        "every claim held in each",
        "raise line 38 → 36 in torch 2.5.1",
        "raise line 38 → 40 in torch 2.15.0",
        "raise site moved to aten/src/ATen/native/Utils.h:47 in torch 2.16.0",
        "skipped on torch 1.13.1, 2.9.1 (needs a CPU build of torch)",
        "GPU: never run",
    ]


def test_a_no_write_run_of_a_reproduction_since_reverted_does_not_decide(catalog):
    """A `reproduce --no-write` run keeps no file, only a row; its reproduction hash must still be checked."""
    reproduction = catalog / "reproductions" / f"{SEED_SLUG}.py"
    original = reproduction.read_text(encoding="utf-8")
    assert run_cli("build", root=catalog).exit_code == 0
    reproduction.write_text(original + "\n# an experiment, reverted below\n", encoding="utf-8")
    ran = run_cli("reproduce", SEED_SLUG, "--no-write", "--json", "--trust-unsigned", root=catalog)  # a local run: unsigned
    verdict = json.loads(ran.stdout.splitlines()[0])["verdict"]
    assert verdict not in ("skipped", "crashed"), ran.stdout  # a run that judged the record
    assert verdict_row(catalog)[0] == verdict  # the run decides while its reproduction is today's
    reproduction.write_text(original, encoding="utf-8")
    for build in (["build", "--trust-unsigned"], ["build", "--full", "--trust-unsigned"]):  # stale, even trusted
        assert run_cli(*build, root=catalog).exit_code == 0
        assert verdict_row(catalog) == (None, None), build
        shown = json.loads(run_cli("show", SEED_SLUG, "--json", root=catalog).stdout)
        assert shown["lastVerdict"] is None
    assert Database(catalog / "catalog.db")["reproduction_runs"].count == 1  # kept, just not current


def test_a_run_kept_without_a_file_for_an_older_record_does_not_decide(catalog):
    """A run kept only as a row (`reproduce --no-write` writes no result file): once the record is edited, it
    judged an older record and sets no verdict. Such a run is local and unsigned, so it counts only with
    --trust-unsigned; the build after the edit trusts it too, so what it lacks is being current, not trust."""
    assert run_cli("build", "--trust-unsigned", root=catalog).exit_code == 0
    db = Database(catalog / "catalog.db")
    runs.store_result(db, catalog, verifications.Verification.model_validate(result(catalog)), None, trust_unsigned=True)
    db.close()
    assert verdict_row(catalog)[0] == "verified"  # it decides while the record is the one it judged
    record = catalog / "records" / f"{SEED_SLUG}.json"
    envelope = json.loads(record.read_text())
    envelope["record"]["preventionTips"].append("Check the tagger's crf flag before choosing devices")
    record.write_text(json.dumps(envelope, indent=2))
    assert run_cli("build", "--trust-unsigned", root=catalog).exit_code == 0
    assert verdict_row(catalog) == (None, None)


def test_the_record_page_shows_a_result_for_an_older_record_apart(catalog):
    """The matrix and the runs list hold today's results only; the older one is listed under its own heading."""
    write(catalog, result(catalog, verdict="wrong-error", torch="2.5.1", recordHash="0" * 64))
    write(catalog, result(catalog))
    assert run_cli("build", root=catalog).exit_code == 0
    with datasette_client(catalog) as client:
        html = client.get(f"/-/errkb/record/{SEED_SLUG}").text
    current, _, earlier = html.partition("for an earlier version")
    assert earlier, "no section for the earlier result"
    matrix = current[current.index('<table class="errkb-matrix">'):]
    matrix = matrix[:matrix.index("</table>")]
    assert "torch 2.13.0" in matrix and "2.5.1" not in matrix
    assert "wrong-error" not in current and "wrong-error" in earlier


def _run(verdict: str, torch: str, library: str, version: str) -> dict:
    return {"verdict": verdict, "torch": torch, "library": library, "library_version": version, "cuda_device_count": 0,
            "cuda_devices": "[]", "failed_claim": None, "drift": None, "reason": "", "started_at": "2026-12-01T00:00:00Z"}


def test_an_api_change_record_is_labelled_by_its_own_library_releases():
    """Three lightning releases on one torch read as lightning's releases, not as 'torch 2.13.0, 2.13.0'."""
    from errkb.runs import matrix_summary, verified_on

    runs = [_run("verified", "2.13.0+cpu", "lightning", v) for v in ("2.0.8", "2.0.0")]
    runs.append(_run("not-reproduced", "2.13.0+cpu", "lightning", "1.9.5"))
    assert matrix_summary(runs, 70).startswith(
        "reproduces on lightning 2.0.0, 2.0.8 (CPU); not on lightning 1.9.5 (not-reproduced); every claim held in each")
    assert verified_on(runs) == "lightning 2.0.0, 2.0.8 (CPU)"
    # One library release across torch releases (the seed: hanlp 2.1.5 on each torch): torch is what varies.
    seed = [_run("verified", torch, "hanlp", "2.1.5") for torch in ("2.5.1", "1.13.1", "2.13.0+cpu")]
    assert matrix_summary(seed, 1).startswith("reproduces on torch 1.13.1, 2.5.1, 2.13.0 (CPU)")
    assert verified_on(seed) == "torch 1.13.1, 2.5.1, 2.13.0 (CPU)"


def test_the_readme_table_names_the_lightning_releases_that_ran():
    from errkb.readme_table import coverage_table

    row = next(line for line in coverage_table(REPO).splitlines() if "`lightning-trainer-unexpected-keyword-gpus`" in line)
    assert "reproduces on lightning 2.0.0, 2.0.8 (CPU); not on lightning 1.9.5 (not-reproduced)" in row, row
    assert "torch 2.13.0, 2.13.0" not in row
