"""Run a snippet as a reproduction's trigger() in the harness's sandbox (errkb/reproduce/isolate.py) and turn what
it raised into facts: class, message, chain, frames, and the raise site inside an installed library."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..reproduce import isolate
from ..reproduce.compare import CPP_RAISE, lookup_owner
from .snippet import imported_modules, trigger_body

LOCATE = Path(__file__).with_name("locate.py")
REPRODUCE_FOLDER = Path(isolate.__file__).resolve().parent
CHAIN_SEPARATORS = re.compile(
    r"\n\n(?:The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:)\n\n"
)
# Errors that say the machine lacks a GPU: drafting them documents the missing GPU, not the snippet's error.
NO_GPU = re.compile(
    r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available|CUDA driver initialization failed"
    r"|no CUDA-capable device is detected|CUDA is not available|Attempting to deserialize object on a CUDA device"
)


class DraftError(ValueError):
    """The snippet gives nothing to draft; the message says why and what to do."""


@dataclass
class Site:
    distribution: str
    version: str
    file: str  # installed path
    relative: str  # inside site-packages: torch/nn/functional.py
    line: int
    function: str
    native: dict | None = None  # {"file", "line", "func"} from PyTorch's "Exception raised from" suffix
    missing_name: str | None = None  # a name the library lacks, looked up in the snippet's own line


@dataclass
class Captured:
    cls: str
    classes: list[str]  # the class and its bases
    message: str  # without PyTorch's C++ location suffix
    frames: list[list]
    chain: list[str]  # "Class: first line" of each exception before the last, outermost cause first
    traceback: str
    site: Site
    distributions: dict  # name -> {"version", "urls", "direct_url", "git_version"?}
    seconds: float
    python: str
    notes: list[str] = field(default_factory=list)


def trigger_module(snippet_text: str, needs: dict) -> str:
    return f"NEEDS = {needs!r}\nSOLUTIONS = {{1: \"trigger\"}}\n\n\ndef trigger():\n{trigger_body(snippet_text)}\n"


def run_snippet(snippet_text: str, timeout_s: float, python: str | None = None) -> isolate.StageRun:
    with tempfile.TemporaryDirectory(prefix="errkb-draft-") as folder:
        path = Path(folder) / "snippet_trigger.py"
        path.write_text(trigger_module(snippet_text, {"timeout_s": timeout_s}), encoding="utf-8")
        env = isolate.stage_environment(native=True, threads=None)
        return isolate.run_stage(path, "trigger", timeout_s, env, python)


def locate(files: list[str], modules: list[str], python: str | None = None) -> dict:
    request = json.dumps({"files": files, "modules": modules})
    done = subprocess.run([python or sys.executable, str(LOCATE), request], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    if done.returncode:
        raise DraftError(f"cannot read the installed distributions' metadata: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def capture(snippet_text: str, name: str, timeout_s: float, python: str | None = None, gpus: int = 0,
            allow_no_gpu: bool = False) -> Captured:
    run = run_snippet(snippet_text, timeout_s, python)
    if run.status == "timeout":
        raise DraftError(f"{name} ran past its {timeout_s:g} s budget and was stopped: a draft needs a snippet that raises "
                         "within it (make it smaller, or raise the budget with --timeout)")
    if run.status != "completed":
        tail = run.stderr_tail.strip().splitlines()[-1:] or [""]
        raise DraftError(f"{name} died with {run.death()} before it could raise a Python exception {tail[0][:300]}".rstrip())
    result = run.result
    exception = result.get("exception")
    if result.get("outcome") == "returned" or exception is None:
        raise DraftError(f"{name} ran to its end without raising: nothing to draft (a draft starts from a snippet that "
                         "raises the error)")
    message = exception["message"]
    native = CPP_RAISE.search(message)
    if native:
        message = message[: native.start()]
    if NO_GPU.search(message) and not gpus and not allow_no_gpu:
        raise DraftError(f"{name} needs a CUDA GPU, and this machine has none ({exception['class']}: {message.splitlines()[0][:200]}); "
                         "draft it on a machine with the GPU, or pass --allow-no-gpu if the missing GPU is the error to document")
    frames = [frame for frame in exception["frames"] if not _harness_file(frame[0])]
    owner, missing_name = lookup_owner(exception) or (None, None)
    facts = locate([frame[0] for frame in frames] + ([owner] if owner else []),
                   sorted(imported_modules(snippet_text)), python)
    site = _site(frames, facts, native) or _missing_name_site(owner, missing_name, facts)
    if site is None:
        where = f"{frames[-1][0]}:{frames[-1][1]}" if frames else "its first line"
        raise DraftError(f"{name} raised {exception['class']}: {message.splitlines()[0][:200] if message else ''} from your "
                         f"own code ({where}), not from inside an installed library: errkb records errors libraries raise")
    return Captured(
        cls=exception["class"], classes=exception["mro"], message=message, frames=frames,
        chain=chain_of(exception.get("traceback") or ""), traceback=exception.get("traceback") or "", site=site,
        distributions=facts["distributions"], seconds=run.seconds, python=facts.get("python", ""),
    )


def _harness_file(filename: str) -> bool:
    return Path(filename).resolve().parent == REPRODUCE_FOLDER  # the runner's own frames


def _site(frames: list, facts: dict, native) -> Site | None:
    """The innermost frame inside an installed distribution (not the standard library, not the snippet); for an
    error PyTorch raised in C++, also the C++ location it reported (then torch is the library, even when the
    innermost Python frame is the snippet's own call)."""
    where = {"file": native["file"], "line": int(native["line"]), "func": native["func"]} if native else None
    for filename, line, function in reversed(frames):
        entry = facts["files"].get(filename) or {}
        name = entry.get("distribution")
        if name and entry.get("relative") and (not native or name == "torch"):
            version = facts["distributions"].get(name, {}).get("version", "")
            return Site(name, version, filename, entry["relative"], line, function, where)
    if native and "torch" in facts["distributions"]:
        return Site("torch", facts["distributions"]["torch"]["version"], "", "", 0, "", where)
    return None


def _missing_name_site(owner: str | None, name: str | None, facts: dict) -> Site | None:
    """A name Python could not find in the snippet's own line (`from mmcv.runner import ...`): the raise site is
    the installed library's module that lacks it (docs/record-brief.md). Its line 1 stands until the author picks
    the lines that show what the module has instead."""
    entry = (facts["files"].get(owner) or {}) if owner else {}
    distribution = entry.get("distribution")
    if not distribution or not entry.get("relative"):
        return None
    version = facts["distributions"].get(distribution, {}).get("version", "")
    return Site(distribution, version, owner, entry["relative"], 1, f"lacks {name}", missing_name=name)


def chain_of(traceback_text: str) -> list[str]:
    """The earlier exceptions of a chained traceback, as their last lines ("KeyError: 'x'")."""
    parts = CHAIN_SEPARATORS.split(traceback_text)
    chain = []
    for part in parts[:-1]:
        lines = [line for line in part.strip().splitlines() if line and not line.startswith(" ")]
        if lines:
            chain.append(lines[-1][:300])
    return chain
