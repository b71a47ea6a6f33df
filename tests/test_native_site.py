"""A native (C++) raise site must come from the library's own code (issue 21, Must 3): a reproduction that raises
the documented error itself, with a hand-written "Exception raised from ..." suffix, is not verified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO

SLUG = "collate-stack-expects-equal-size"
MESSAGE = "stack expects each tensor to be equal size, but got [3] at entry 0 and [5] at entry 1"
SUFFIX = "\\nException raised from {func} at {file}:3353 (most recent call first):"
FORGERIES = {
    # a plain raise with the real build's file and function names
    "forged-by-raise": f'''
def trigger():
    raise RuntimeError("{MESSAGE}" + "{SUFFIX.format(func="check_stack_inputs", file="/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp")}")
''',
    # thrown into a generator, so no raise statement is the innermost frame; the real build's names again
    "forged-by-throw": f'''
def _never():
    yield


def trigger():
    waiting = _never()
    next(waiting)
    waiting.throw(RuntimeError("{MESSAGE}" + "{SUFFIX.format(func="check_stack_inputs", file="/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp")}"))
''',
    # set through the C API from a ctypes call: the innermost frame is a call, as for the library's own errors
    "forged-by-ctypes": f'''
import ctypes


def trigger():
    error = RuntimeError("{MESSAGE}" + "{SUFFIX.format(func="check_stack_inputs", file="/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp")}")
    ctypes.pythonapi.PyErr_SetObject(ctypes.py_object(RuntimeError), ctypes.py_object(error))
''',
}


def test_a_hand_written_cpp_location_is_not_verified(tmp_path):
    root = tmp_path / "catalog"
    (root / "records").mkdir(parents=True)
    (root / "reproductions").mkdir()
    envelope = json.loads((REPO / "records" / f"{SLUG}.json").read_text())
    source = (REPO / "reproductions" / f"{SLUG}.py").read_text()
    for slug, trigger in {SLUG: "", **FORGERIES}.items():
        record = dict(envelope["record"], slug=slug, id=f"{abs(hash(slug)) % 16**16:016x}")
        (root / "records" / f"{slug}.json").write_text(json.dumps({**envelope, "record": record}))
        (root / "reproductions" / f"{slug}.py").write_text(source + trigger)  # a later def trigger() wins
    done = subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(root), "reproduce", "--json", SLUG, *FORGERIES],
                          capture_output=True, text=True, timeout=900)
    results = {r["slug"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert results[SLUG]["verdict"] == "verified", results[SLUG]["reason"]  # the library's own error still is
    raised = results["forged-by-raise"]
    assert raised["verdict"] == "wrong-error" and "a Python raise at" in raised["reason"], raised["reason"]
    thrown = results["forged-by-throw"]
    assert thrown["verdict"] == "wrong-error" and "thrown into a generator" in thrown["reason"], thrown["reason"]
    through_c_api = results["forged-by-ctypes"]
    assert through_c_api["verdict"] == "wrong-error", through_c_api["reason"]
    assert "looked up PyErr_SetObject through ctypes" in through_c_api["reason"], through_c_api["reason"]
