"""The stage sandbox on bubblewrap (issue 21, Must 3), attacked by real stages through the real `errkb reproduce`:
the catalog root, .git, errkb's source and site-packages out of reach, private copies of what a stage runs, one
memory limit for the whole stage tree, no process surviving its stage, protections announced and recorded, and
--strict refusing where bubblewrap cannot run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path

import pytest

from errkb.reproduce import protections
from reproduce_support import Case, survivors, write_catalog

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(protections.bwrap_problem() is not None, reason=f"no bubblewrap here: {protections.bwrap_problem()}")]
HEADER = 'NEEDS = {{"packages": {{}}, "cuda_devices": 0, "timeout_s": 120{extra}}}\nSOLUTIONS = {{1: "fix"}}\n'
ERRKB_SOURCE = Path(__file__).resolve().parents[1] / "errkb" / "__init__.py"


def catalog(root: Path, slug: str, source: str, extra: str = "") -> Path:
    write_catalog(root, [Case(slug, None, {}, "", "")])
    (root / "reproductions" / f"{slug}.py").write_text(HEADER.format(extra=extra) + textwrap.dedent(source))
    return root


def errkb(root: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(root), *map(str, args)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})


def result_file(root: Path, slug: str) -> dict:
    (path,) = (root / "verifications" / slug).glob("*.json")
    return json.loads(path.read_text())


ATTACKS = """
    import json, os, subprocess, sys
    from pathlib import Path

    ROOT = Path({root!r})

    def attempt(action):
        try:
            action()
            return "done"
        except Exception as exc:
            return type(exc).__name__

    def daemon():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "errkb-daemon-{marker}"])
            os._exit(0)
        os.wait()

    def trigger():
        seen = {{
            "catalog listing": sorted(os.listdir(ROOT)) if ROOT.exists() else "absent",
            "write record": attempt(lambda: (ROOT / "records" / "planted.json").write_text("{{}}")),
            "rename root": attempt(lambda: os.rename(ROOT, str(ROOT) + "-moved")),
            "git hook": attempt(lambda: (ROOT / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh")),
            "errkb source visible": os.path.exists({source!r}),
            "site-packages .pth": attempt(lambda: Path({site!r}, "planted-errkb.pth").write_text("import os")),
            "own copy": attempt(lambda: Path(__file__).write_text("def fix():\\n    raise SystemExit(3)\\n")),
            "shm": attempt(lambda: Path("/dev/shm/errkb-{marker}").write_bytes(b"x" * 2**20)),
            "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
            "home key": attempt(lambda: Path({home!r}, ".errkb", "maintainer.pem").read_bytes()),
            "interfaces": sorted(name for _, name in __import__("socket").if_nameindex()),
        }}
        daemon()
        raise RuntimeError(json.dumps(seen))

    def fix():
        pass
"""


def test_a_stage_sees_only_its_private_copies(tmp_path):
    root = tmp_path / "catalog"
    (root / ".git" / "hooks").mkdir(parents=True)
    marker = f"{os.getpid()}-{time.monotonic_ns()}"
    site = sysconfig.get_paths()["purelib"]
    home = tmp_path / "home"  # the user's home, holding a maintainer's private key
    (home / ".errkb").mkdir(parents=True)
    (home / ".errkb" / "maintainer.pem").write_text("PRIVATE")
    catalog(root, "attacker", ATTACKS.format(root=str(root), source=str(ERRKB_SOURCE), site=site, marker=marker,
                                             home=str(home)))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    outcome = errkb(root, "reproduce", "attacker", env={"HOME": str(home)})
    assert "sandbox: " in outcome.stderr and "WITHOUT" not in outcome.stderr
    data = result_file(root, "attacker")
    seen = json.loads(data["stages"][0]["message"])
    assert seen["catalog listing"] == [], seen  # an empty, read-only tmpfs where the catalog is
    for attack in ("write record", "rename root", "git hook", "site-packages .pth"):
        assert seen[attack] != "done", (attack, seen)
    assert seen["errkb source visible"] is False
    assert seen["home key"] == "FileNotFoundError", seen  # the home is an empty tmpfs
    assert seen["interfaces"] == ["lo"], seen  # a network namespace of its own
    assert seen["own copy"] == "done"  # its copy is its own to spoil (the next test: later stages get fresh ones)
    assert seen["processes"] < 10, seen  # a pid namespace of its own: the harness's processes are not there
    after = {p: p.read_bytes() for p in before}
    assert after == before, "the stage changed a file of the catalog"
    assert not Path(site, "planted-errkb.pth").exists() and not Path(f"/dev/shm/errkb-{marker}").exists()
    assert not list(root.glob("records/planted.json"))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and survivors(f"errkb-daemon-{marker}"):
        time.sleep(0.1)
    assert survivors(f"errkb-daemon-{marker}") == [], "a double-forked daemon outlived its stage"
    assert set(data["protections"]) == set(protections.WHAT) and all(data["protections"].values()), data["protections"]


def test_a_stage_rewriting_its_copy_does_not_change_what_the_claims_run(tmp_path):
    root = catalog(tmp_path / "catalog", "rewriter", """
        from pathlib import Path

        from hanlp.components.taggers.rnn_tagger import RNNTagger
        from torch import nn

        def trigger():
            Path(__file__).write_text("def fix():\\n    raise SystemExit(3)\\n")  # later stages must not run this
            RNNTagger(crf=True).build_criterion(model=nn.DataParallel(nn.Linear(1, 1)))

        def fix():
            return "the original fix"
        """)
    original = (root / "reproductions" / "rewriter.py").read_text()
    errkb(root, "reproduce", "rewriter")
    data = result_file(root, "rewriter")
    solution = next(s for s in data["stages"] if s["stage"] == "solution 1")
    assert data["stages"][0]["exceptionClass"] == "ValueError", data["reason"]
    assert (solution["outcome"], solution["variant"]) == ("returned", "the original fix"), solution  # a fresh copy
    assert (root / "reproductions" / "rewriter.py").read_text() == original


def test_memory_is_limited_for_the_whole_stage_tree(tmp_path):
    from errkb.reproduce import isolate

    if isolate.machine_protections()["memory"] is None:
        pytest.skip("no memory cgroup can be made here (the fallback, RLIMIT_AS, limits each process alone)")
    root = catalog(tmp_path / "catalog", "hoarders", """
        import subprocess, sys

        HOLD = "import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(20)"

        def trigger():
            children = [subprocess.Popen([sys.executable, "-c", HOLD]) for _ in range(5)]
            codes = [child.wait() for child in children]
            raise RuntimeError(f"children ended with {codes}")

        def fix():
            pass
        """, extra=', "memory_gb": 0.5')
    errkb(root, "reproduce", "hoarders")
    stage = result_file(root, "hoarders")["stages"][0]
    # 5 x 200 MiB under one 512 MiB limit: the kernel kills some of them (or the stage itself)
    assert stage["outcome"] == "crashed" or "-9" in (stage["message"] or ""), stage


def test_without_bubblewrap_reproduce_says_so_and_strict_refuses(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    root = catalog(tmp_path / "catalog", "plain", "def trigger():\n    pass\n\ndef fix():\n    pass\n")
    env = {"PATH": f"{fake}:{os.environ['PATH']}"}
    strict = errkb(root, "reproduce", "--strict", "plain", env=env)
    assert strict.returncode == 1 and "--strict refuses" in strict.stderr
    assert "Permission denied" in strict.stderr and not (root / "verifications").exists()  # no stage ran
    loose = errkb(root, "reproduce", "plain", env=env)
    assert "warning: stages run WITHOUT" in loose.stderr
    recorded = result_file(root, "plain")["protections"]
    assert recorded["filesystem"] is None and recorded["processes"] is None


def test_a_lock_held_elsewhere_is_a_clear_message(tmp_path):
    root = catalog(tmp_path / "catalog", "plain", "def trigger():\n    pass\n\ndef fix():\n    pass\n")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from errkb.lock import catalog_lock
        with catalog_lock(Path({str(root)!r})):
            print("held", flush=True)
            time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        outcome = errkb(root, "reproduce", "plain", env={"ERRKB_LOCK_TIMEOUT": "1"})
    finally:
        holder.kill()
        holder.wait()
    assert outcome.returncode == 1 and "Traceback" not in outcome.stderr
    assert "result of plain was not saved" in outcome.stderr and "is busy" in outcome.stderr
