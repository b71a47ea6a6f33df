"""The reproduction sandbox, with real stages in real subprocesses: memory bomb, output flood, a setsid daemon,
a forged result, and writes into the catalog. Each gets the verdict the harness observed, nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO
from reproduce_support import PLANTED, Case, survivors, write_catalog

from errkb.reproduce import isolate
from errkb.reproduce.harness import Environment, reproduce_one

pytestmark = pytest.mark.xdist_group("sandbox")
SEED = "dataparallel-not-supported-when-crf-is-used"
HEADER = 'NEEDS = {{"packages": {{}}, "cuda_devices": 0, "timeout_s": {timeout}{extra}}}\nSOLUTIONS = {{1: "fix"}}\n'
MACHINE = Environment.probe()  # this interpreter: its versions, package folders and CUDA devices


def catalog(root: Path, slug: str, source: str, timeout: int = 60, extra: str = "") -> Path:
    """A one-record catalog (the seed's record under `slug`) whose reproduction is `source`."""
    write_catalog(root, [Case(slug, None, {}, "", "")])
    (root / "reproductions" / f"{slug}.py").write_text(HEADER.format(timeout=timeout, extra=extra) + textwrap.dedent(source))
    return root


def test_memory_bomb_is_crashed_at_its_limit(tmp_path):
    root = catalog(tmp_path, "memory-bomb", """
        def trigger():
            hoard = []
            while True:
                hoard.append(bytearray(64 * 2**20))  # touched: real memory, 64 MiB at a time

        def fix():
            pass
        """, extra=', "memory_gb": 1')
    result = reproduce_one(root, "memory-bomb", MACHINE)
    assert result.verdict == "crashed", result.reason
    assert "MemoryError at its 1 GiB memory limit (NEEDS memory_gb)" in result.reason


def test_the_default_memory_limit_is_8_gib(tmp_path):
    root = catalog(tmp_path, "defaults", "def trigger(): pass\ndef fix(): pass\n")
    limits = isolate.Limits.for_reproduction(root / "reproductions" / "defaults.py")
    assert (limits.memory_bytes, limits.memory_kind) == (8 * 2**30, "as")


FLOOD_HARNESS = """
import json, resource, sys
from pathlib import Path
from errkb.reproduce.harness import Environment, reproduce_one
result = reproduce_one(Path(sys.argv[1]), "flood", Environment.probe())
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"verdict": result.verdict, "reason": result.reason, "peak_mib": peak_kib / 1024,
                  "detail": result.stages[0].detail}))
"""


def test_output_flood_gets_a_verdict_and_the_harness_stays_small(tmp_path):
    root = catalog(tmp_path, "flood", """
        import os

        def trigger():
            chunk = b"x" * 2**20
            for _ in range(1024):  # 1 GiB to stderr, then the end of the story
                os.write(2, chunk)
            os.write(2, b"\\nlast words")

        def fix():
            pass
        """, timeout=120)
    quiet = catalog(tmp_path / "quiet", "flood", """
        import os

        def trigger():
            os.write(2, b"last words")

        def fix():
            pass
        """, timeout=120)

    def harness_run(where):
        done = subprocess.run([sys.executable, "-c", FLOOD_HARNESS, str(where)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    found, baseline = harness_run(root), harness_run(quiet)
    assert found["verdict"] == baseline["verdict"] == "not-reproduced"
    # The harness's own peak memory after 1 GiB of output went through it, against the same run with a few bytes:
    # what it keeps of the output is bounded (its imports alone are ~200 MiB and vary with the machine).
    assert found["peak_mib"] - baseline["peak_mib"] < 64, (found["peak_mib"], baseline["peak_mib"])


DAEMON = """
    import os, subprocess, sys

    def trigger():
        variant = "planted: build_criterion(DataParallel), after starting a daemon"
        # A grandchild in a session of its own that keeps the stage's pipes open, then the documented error.
        subprocess.Popen([sys.executable, "-c", "import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    time.sleep(600)",
                          "{marker}"])
        from hanlp.components.taggers.rnn_tagger import RNNTagger
        from torch import nn
        RNNTagger(crf=True).build_criterion(model=nn.DataParallel(nn.Linear(1, 1)))

    def fix():
        from hanlp.components.taggers.rnn_tagger import RNNTagger
        from torch import nn

        class WithCrf(nn.Module):
            def __init__(self):
                super().__init__()
                self.crf = nn.Identity()

        assert isinstance(RNNTagger(crf=True).build_criterion(model=WithCrf()), nn.Identity)
    """


def test_a_setsid_daemon_gets_the_right_verdict_and_does_not_survive(tmp_path):
    marker = f"errkb-daemon-{os.getpid()}-{tmp_path.name}"
    root = catalog(tmp_path, SEED, DAEMON.replace("{marker}", marker), timeout=60)
    result = reproduce_one(root, SEED, MACHINE)
    assert result.verdict == "verified", result.reason
    assert survivors(marker) == []


def real_result(planted: str, stage: str) -> dict:
    """What the runner reports for a planted stage: the payload a forger copies."""
    runner = REPO / "errkb" / "reproduce" / "runner.py"
    done = subprocess.run([sys.executable, str(runner), str(PLANTED / planted), stage], capture_output=True, text=True,
                          input="copied-nonce\n", timeout=120)
    result = json.loads(done.stdout)
    del result["nonce"]
    return result


FORGER = """
    import json, os

    def _forge(result):
        for fd in range(3, 64):  # wherever the result channel is
            try:
                os.write(fd, json.dumps(result).encode())
            except OSError:
                pass
        os._exit(0)

    def trigger():
        _forge({trigger!r})

    def fix():
        _forge({fix!r})
    """


def test_a_forged_result_is_not_verified(tmp_path):
    trigger = real_result("raises_in_hanlp.py", "trigger")
    assert trigger["outcome"] == "raised"  # exactly what a real, verified trigger reports
    fix = real_result("raises_in_hanlp.py", "fix")
    root = catalog(tmp_path, SEED, FORGER.format(trigger=trigger, fix=fix))
    result = reproduce_one(root, SEED, MACHINE)
    assert result.verdict == "not-reproduced"
    assert "trigger() exited without raising and without a result from the runner" in result.reason
    assert "not the runner's result" in result.reason


def test_a_stage_cannot_write_into_the_catalog(tmp_path):
    if not isolate.sandbox_mechanisms()["read_only"]:
        pytest.skip("this machine allows no private mount namespace (needs root or unprivileged user namespaces)")
    root = catalog(tmp_path, "vandal", """
        import os, sqlite3
        from pathlib import Path

        CATALOG = Path(CATALOG_ROOT)  # the stage runs a scratch copy; it is told the real place to attack

        def trigger():
            outcomes = []
            for name, attempt in [
                ("record", lambda: (CATALOG / "records" / "vandal.json").write_text("{}")),
                ("new record", lambda: (CATALOG / "records" / "planted.json").write_text("{}")),
                ("reproduction", lambda: (CATALOG / "reproductions" / "vandal.py").write_text("")),
                ("catalog.db", lambda: sqlite3.connect(CATALOG / "catalog.db").execute("create table t (x)")),
                ("chmod", lambda: os.chmod(CATALOG / "records", 0o777)),
                ("remount and write", lambda: (
                    os.system(f"mount -o remount,rw,bind {CATALOG / 'records'} 2>/dev/null; umount {CATALOG / 'records'} 2>/dev/null"),
                    (CATALOG / "records" / "vandal.json").write_text("{}"),
                )),
            ]:
                try:
                    attempt()
                    outcomes.append(f"{name}: written")
                except Exception as exc:
                    outcomes.append(f"{name}: refused")
            return "; ".join(outcomes)

        def fix():
            pass
        """.replace("CATALOG_ROOT", repr(str(tmp_path))))
    subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(root), "build"], check=True, capture_output=True)
    before = {p: p.read_bytes() for p in [*root.glob("records/*"), *root.glob("reproductions/*"), root / "catalog.db"]}
    result = reproduce_one(root, "vandal", MACHINE)
    assert result.stages[0].variant == (
        "record: refused; new record: refused; reproduction: refused; catalog.db: refused; chmod: refused; remount and write: refused"
    ), result.reason
    after = {p: p.read_bytes() for p in [*root.glob("records/*"), *root.glob("reproductions/*"), root / "catalog.db"]}
    assert after == before
