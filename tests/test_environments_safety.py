"""`errkb reproduce --with` environments made safely (issue 21, Must 4): concurrent runs share one creation, a killed
creation's leftovers are removed, bad --with values and a relative $ERRKB_ENV_DIR are clear errors, names are
canonical. Local throwaway wheels only, no network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from errkb.reproduce import environments
from test_matrix import wheel

pytestmark = [pytest.mark.xdist_group("matrix"), pytest.mark.skipif(environments.uv_binary() is None, reason="uv is not installed")]

PREPARE = """
import sys
from errkb.reproduce import environments
prepared = environments.prepare([environments.parse_spec(sys.argv[1])], {}, say=lambda t: print(t, flush=True))
print("problem:", prepared.problem)
print("python:", prepared.python)
"""


def prepare_in_subprocesses(envs: Path, wheels: Path, specs: list[str]) -> list[subprocess.CompletedProcess]:
    env = {**os.environ, "ERRKB_ENV_DIR": str(envs), "PIP_FIND_LINKS": str(wheels)}
    started = [subprocess.Popen([sys.executable, "-c", PREPARE, spec], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for spec in specs]
    done = []
    for process in started:
        out, err = process.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


def test_concurrent_creations_of_one_environment_build_it_once(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel(wheels, "2.0")
    envs = tmp_path / "envs"
    done = prepare_in_subprocesses(envs, wheels, ["errkbdemo==2.0", "ERRKBDEMO==2.0", "errkbdemo==2.0"])
    for outcome in done:
        assert outcome.returncode == 0 and "problem: None" in outcome.stdout, outcome.stderr
    outputs = [o.stdout for o in done]
    assert sum(": creating " in out for out in outputs) == 1, outputs  # one builds; the others wait and reuse
    assert sum(": reusing " in out for out in outputs) == 2, outputs
    pythons = {line for out in outputs for line in out.splitlines() if line.startswith("python:")}
    assert len(pythons) == 1  # SIX==1 and six==1: one environment
    made = [p for p in envs.iterdir() if p.suffix != ".lock"]
    assert len(made) == 1 and not any(".partial-" in p.name for p in envs.iterdir())
    # a creation killed half-way leaves a .partial-PID folder: the next run that takes the lock removes it
    leftover = made[0].with_name(made[0].name + ".partial-99999")
    (leftover / "bin").mkdir(parents=True)
    (again,) = prepare_in_subprocesses(envs, wheels, ["errkbdemo==2.0"])
    assert "reusing" in again.stdout and not leftover.exists()


@pytest.mark.parametrize("args, env, message", [
    (["--with", ""], {}, "--with '' is empty"),
    (["--with", " , "], {}, "is empty"),
    (["--with", "torch==" + "1" * 300], {}, "a version of at most 64 characters"),
    (["--with", "errkbdemo==2.0"], {"ERRKB_ENV_DIR": "relative/envs"}, "$ERRKB_ENV_DIR='relative/envs' is a relative path"),
])
def test_bad_environment_requests_are_clear_errors(tmp_path, args, env, message):
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "x.json").write_text("{}")
    outcome = subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(tmp_path), "reproduce", "x", *args],
                             capture_output=True, text=True, timeout=120, env={**os.environ, **env}, cwd=tmp_path)
    assert outcome.returncode == 2, outcome.stderr
    assert message in outcome.stderr and "Traceback" not in outcome.stderr
    assert not (tmp_path / "relative").exists()
