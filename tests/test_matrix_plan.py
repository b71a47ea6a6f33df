"""The release x hardware matrix: one source (.ci/matrix.json), a plan for every cell of the workflow's matrix that
needs no GPU to check, and the job command (.ci/reproduce-job) with --strict that fails only on what the
declared hardware does not explain."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_cli
from reproduce_support import SOFTMAX_MESSAGE, Case, softmax_warning, write_catalog

WORKFLOW = REPO / ".github" / "workflows" / "reproduce.yml"
MATRIX = REPO / ".ci" / "matrix.json"
JOB = REPO / ".ci" / "reproduce-job"


def matrix_tool(*args: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / ".ci" / "matrix.py"), *args], capture_output=True, text=True, check=True)
    return done.stdout


def workflow_cells() -> list[dict]:
    """The cells the workflow runs: its plan job's command, run here, must be what the reproduce job takes."""
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    plan_steps = [step.get("run", "") for step in jobs["plan"]["steps"]]
    assert 'echo "cells=$(python3 .ci/matrix.py cells)" >> "$GITHUB_OUTPUT"' in plan_steps
    assert jobs["reproduce"]["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.plan.outputs.cells) }}"}
    assert jobs["reproduce"]["runs-on"] == "${{ matrix.runs_on }}"
    return json.loads(matrix_tool("cells"))


def cell_flags(cell: dict) -> list[str]:
    return matrix_tool("flags", cell["hardware"], cell["release"], cell["build"]).split()


def plan_cells(root: Path, cells: list[dict]) -> dict[tuple, dict[str, dict]]:
    """{(hardware, release, build): {slug: planned}} from `errkb reproduce --all --plan --json` for each cell."""
    plans = {}
    for cell in cells:
        result = run_cli("reproduce", "--all", "--plan", "--json", *cell_flags(cell), root=root)
        assert result.exit_code in (0, 1), result.output
        (line,) = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        plans[(cell["hardware"], cell["release"], cell["build"])] = {p["slug"]: p for p in line["plan"]}
    return plans


def coverage_problems(plans: dict[tuple, dict[str, dict]], gpu_records: set[str]) -> list[str]:
    problems = []
    slugs = {slug for cell in plans.values() for slug in cell}
    for key, cell in plans.items():
        problems += [f"{slug} skipped unexpectedly in {key}: {p['reasons']}" for slug, p in cell.items() if not p["expected"]]
    for slug in sorted(slugs):
        ran_in = [key for key, cell in plans.items() if cell[slug]["action"] == "run"]
        if not ran_in:
            problems.append(f"{slug} runs in no cell")
        elif slug in gpu_records and not any(key[0] != "cpu" for key in ran_in):
            problems.append(f"{slug} needs a GPU but runs on no GPU cell")
    return problems


def gpu_records(root: Path) -> set[str]:
    found = set()
    for path in (root / "reproductions").glob("*.py"):
        match = re.search(r'"cuda_devices":\s*(\d+)', path.read_text(encoding="utf-8"))
        if match and int(match.group(1)) > 0:
            found.add(path.stem)
    return found


def test_every_cell_of_the_workflow_plans_without_an_unexpected_skip(catalog):
    cells = workflow_cells()
    plans = plan_cells(catalog, cells)
    assert coverage_problems(plans, gpu_records(catalog)) == []
    assert len(plans) == len(cells) and all(len(cell) == len(list((catalog / "records").glob("*.json"))) for cell in plans.values())


def test_the_coverage_check_can_fail(catalog):
    """A record that needs three GPUs runs in no cell, and the check says so."""
    write_catalog(catalog / "planted", [Case("needs-three-gpus", "needs_two_gpus.py", {}, "skipped", "")])
    shutil.move(catalog / "planted" / "records" / "needs-three-gpus.json", catalog / "records")
    three = catalog / "reproductions" / "needs-three-gpus.py"
    shutil.move(catalog / "planted" / "reproductions" / "needs-three-gpus.py", three)
    three.write_text(three.read_text(encoding="utf-8").replace('"cuda_devices": 2', '"cuda_devices": 3'), encoding="utf-8")
    problems = coverage_problems(plan_cells(catalog, workflow_cells()), gpu_records(catalog))
    assert problems == ["needs-three-gpus runs in no cell"]


def test_a_library_the_installed_environment_lacks_is_an_unexpected_skip(catalog):
    """Without --with, the installed packages decide; one the reproductions need and nobody installed is not
    explained by any hardware. (In a cell's --with environment the library is installed, or the run says why not.)"""
    write_catalog(catalog / "planted", [Case("needs-missing-library", "needs_missing_library.py", {}, "skipped", "")])
    shutil.move(catalog / "planted" / "records" / "needs-missing-library.json", catalog / "records")
    shutil.move(catalog / "planted" / "reproductions" / "needs-missing-library.py", catalog / "reproductions")
    result = run_cli("reproduce", "needs-missing-library", "--plan", "--gpus", "0", "--torch-build", "cpu", root=catalog)
    assert result.exit_code == 1
    assert "SKIP (UNEXPECTED): needs errkb-no-such-library>=1, which will not be installed" in result.stdout


def test_the_matrix_file_is_the_one_source():
    matrix = json.loads(MATRIX.read_text(encoding="utf-8"))
    releases = matrix["releases"]
    assert "1.13.1" in releases
    assert releases == sorted(releases, key=lambda v: tuple(map(int, v.split("."))))
    # The committed results name exactly the file's releases (the CPU build cell's is one of them).
    committed = {
        re.match(r"torch-([0-9.]+)(\+cpu)?_", path.name).group(1)
        for path in (REPO / "verifications").glob("*/torch-*.json")
    }
    assert committed <= set(releases), f"results for releases the matrix does not name: {sorted(committed - set(releases))}"
    assert set(releases) <= committed, f"matrix releases with no committed result: {sorted(set(releases) - committed)}"
    # The README's full-matrix command reads the file; it never lists the releases by hand.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "python3 .ci/matrix.py lines" in readme
    assert not re.search(r"(--with torch==\S+\s+(\\\s*)?){3,}", readme), "a hand-written list of releases in the README"


def test_every_cell_runs_on_the_matrix_python():
    """One interpreter for the whole matrix: the workflow sets it up from the cells, the job script refuses others."""
    want = json.loads(MATRIX.read_text(encoding="utf-8"))["python"]
    assert matrix_tool("python").strip() == want
    assert {cell["python"] for cell in workflow_cells()} == {want}
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["reproduce"]["steps"]
    setup = [step for step in steps if step.get("uses", "").startswith("actions/setup-python@")]
    assert len(setup) == 1 and setup[0]["with"]["python-version"] == "${{ matrix.python }}"
    names = [step.get("uses", step.get("name", "")) for step in steps]
    assert names.index(setup[0]["uses"]) < next(i for i, n in enumerate(names) if "reproduce-job" in str(steps[i].get("run", "")))


def test_the_job_refuses_a_python_other_than_the_matrix_one(tmp_path):
    """A copy of .ci/ whose matrix asks for a Python this machine lacks: the job stops before installing anything."""
    shutil.copytree(REPO / ".ci", tmp_path / ".ci")
    matrix = json.loads(MATRIX.read_text(encoding="utf-8"))
    matrix["python"] = "3.99"
    (tmp_path / ".ci" / "matrix.json").write_text(json.dumps(matrix), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "ERRKB"}
    done = subprocess.run(["bash", str(tmp_path / ".ci" / "reproduce-job"), "cpu", "2.13.0", "cuda"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=120)  # hang guard
    assert done.returncode == 2, done.stderr
    assert "runs every cell on Python 3.99" in done.stderr
    assert not (tmp_path / ".venv").exists()


def test_plan_needs_declared_hardware(catalog):
    result = run_cli("reproduce", "--all", "--plan", root=catalog)
    assert result.exit_code == 2 and "--gpus" in result.output


def test_plan_explains_each_skip(catalog):
    result = run_cli("reproduce", "--all", "--plan", "--gpus", "2", "--with", "torch==2.1.2", root=catalog)
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "skip (expected): needs torch>=2.6, the run has torch 2.1.2" in lines["torch-load-weights-only-failed"]
    assert "skip (expected): needs a machine without an NVIDIA driver" in lines["found-no-nvidia-driver"]
    assert "skip (expected): needs a CPU build of torch" in lines["torch-not-compiled-with-cuda"]
    assert lines["rnn-input-size-mismatch"].endswith(" run")


# --- the job command, on this CPU machine, with the CPU-build cell's declared 0-GPU hardware ---

def installed_cpu_release() -> str | None:
    import importlib.metadata

    version = importlib.metadata.version("torch")
    return version[: -len("+cpu")] if version.endswith("+cpu") else None


def job(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ERRKB_ROOT"}
    env.update(ERRKB=str(Path(sys.executable).with_name("errkb")), ERRKB_ROOT=str(root))
    return subprocess.run([str(JOB), "cpu", installed_cpu_release(), "cpu"], capture_output=True, text=True, env=env, timeout=900)


SOFTMAX = softmax_warning(r"Implicit dimension choice for \w+ has been deprecated", SOFTMAX_MESSAGE)
WARNING = Case("warning", "softmax_warning.py", SOFTMAX, "verified", "")
TWO_GPUS = Case("needs-two-gpus", "needs_two_gpus.py", {}, "skipped", "")


@pytest.mark.skipif(installed_cpu_release() is None, reason="the job's CPU-build cell needs a CPU build of torch")
@pytest.mark.parametrize("extra, code, says", [
    (None, 0, "expected skips (1, explained by 0 GPU(s), no NVIDIA driver, a CPU build of torch):\n  needs-two-gpus: needs 2 CUDA devices, found 0"),
    (Case("does-nothing", "does_nothing.py", SOFTMAX, "not-reproduced", ""), 1, "failed (1):\n  does-nothing: not-reproduced"),
    (Case("needs-missing-library", "needs_missing_library.py", {}, "skipped", ""), 1,
     "failed (1):\n  needs-missing-library: skipped: needs errkb-no-such-library>=1, not installed"),
], ids=["expected-skips-pass", "planted-failure", "unexpected-skip"])
def test_job_command_strict_on_declared_hardware(tmp_path, extra, code, says):
    write_catalog(tmp_path, [WARNING, TWO_GPUS] + ([extra] if extra else []))
    done = job(tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    assert says in done.stdout + done.stderr


def test_a_device_declared_but_not_found_fails(tmp_path):
    """--gpus 2 on this machine: the two-GPU record is planned to run, so its skip is unexpected."""
    write_catalog(tmp_path, [TWO_GPUS])
    found = run_cli("reproduce", "--all", "--json", root=tmp_path)
    if json.loads(found.stdout.splitlines()[0])["environment"]["cuda_device_count"] >= 2:
        pytest.skip("this machine has two CUDA devices")
    result = run_cli("reproduce", "--all", "--strict", "--gpus", "2", root=tmp_path)
    assert result.exit_code == 1
    assert "failed (1):\n  needs-two-gpus: skipped: needs 2 CUDA devices, found 0" in result.output
    relaxed = run_cli("reproduce", "--all", "--strict", "--gpus", "0", root=tmp_path)
    assert relaxed.exit_code == 0, relaxed.output
