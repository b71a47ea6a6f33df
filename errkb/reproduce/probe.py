"""Probe a Python environment once per `errkb reproduce` run, in a subprocess, so the parent never imports torch.

    python errkb/reproduce/probe.py [PACKAGE=DISTRIBUTION ...]
      ->  {"torch": "2.13.0+cpu", "cuda_device_count": 0, "cuda_devices": [], "packages": {...}, "locations": {...}}

It runs under the interpreter whose environment is probed (this one, or a `--with` environment's), so the
versions and package folders it reports are the ones the stages will import. Standard library only.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import sys

# Without one of these, no CUDA (or ROCm, or WSL) device can be reached, so torch would count none.
GPU_DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia", "/dev/kfd", "/dev/dxg")


def version_of(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def location_of(package: str) -> str | None:
    """The real path of an installed package folder (or single-module file), found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return os.path.realpath(list(spec.submodule_search_locations)[0])
    if spec.origin and os.path.isfile(spec.origin):
        return os.path.realpath(spec.origin)
    return None


def project_urls(dist) -> list[str]:
    """The URLs a distribution's metadata gives (Project-URL entries, Home-page): where its repository is named."""
    meta = dist.metadata
    urls = [value.split(",", 1)[-1].strip() for value in meta.get_all("Project-URL") or []]
    return urls + ([meta["Home-page"]] if meta.get("Home-page") else [])


def top_level_packages(dist) -> list[str]:
    """The import names a distribution installs (top_level.txt, else the first part of its files' paths)."""
    named = (dist.read_text("top_level.txt") or "").split()
    if named:
        return named
    tops = []
    for file in dist.files or []:
        first = str(file).split("/", 1)[0]
        name = first[:-3] if first.endswith(".py") else first if "/" in str(file) else None
        if name and name.isidentifier() and not first.endswith((".dist-info", ".data")) and name not in tops:
            tops.append(name)
    return tops


def distribution_facts(distribution: str) -> dict | None:
    """What a record's library can be found by, when no table names it: its packages and repository URLs."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    return {"packages": top_level_packages(dist), "urls": project_urls(dist)}


def cpu_name() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def torch_build(found: dict) -> None:
    """The CUDA release torch was built for, read from torch/version.py without importing torch (None: a CPU build)."""
    folder = location_of("torch")
    if not folder:
        return
    try:
        with open(os.path.join(folder, "version.py"), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return
    for name, key in (("cuda", "cuda_version"), ("git_version", "torch_git_version")):
        for line in text.splitlines():
            if line.startswith(f"{name}:") or line.startswith(f"{name} ="):
                value = line.split("=", 1)[1].strip().strip("'\"")
                found[key] = None if value in ("None", "") else value


def nvidia_driver() -> bool | None:
    """Whether the NVIDIA kernel driver is loaded (None: cannot tell on this platform)."""
    if sys.platform.startswith("linux"):
        return os.path.exists("/proc/driver/nvidia/version")
    return None


def gpus(found: dict) -> None:
    """CUDA device count and names. On Linux without GPU device files the answer is known without importing
    torch (which costs ~2 s)."""
    if sys.platform.startswith("linux") and not any(os.path.exists(path) for path in GPU_DEVICE_FILES):
        return
    try:
        import torch
    except ImportError:
        return
    found["cuda_version"] = torch.version.cuda
    try:
        count = torch.cuda.device_count()
        found["cuda_device_count"] = count
        found["cuda_devices"] = [torch.cuda.get_device_name(i) for i in range(count)]
        found["cudnn_version"] = torch.backends.cudnn.version() if count else None
    except Exception as exc:  # a broken driver counts as no device, and says why
        found["error"] = f"{type(exc).__name__}: {exc}"
        found["cuda_device_count"], found["cuda_devices"] = 0, []


def probe(wanted: list[str]) -> dict:
    found = {
        "torch": version_of("torch"), "cuda_device_count": 0, "cuda_devices": [], "cuda_version": None,
        "cudnn_version": None, "error": None, "python": platform.python_version(), "platform": platform.platform(),
        "cpu": cpu_name(), "cpu_count": os.cpu_count(), "packages": {}, "locations": {}, "distributions": {},
    }
    for item in wanted:
        package, _, distribution = item.partition("=")
        if package:
            found["locations"][package] = location_of(package)
        if distribution:
            found["packages"][distribution] = version_of(distribution)
        if distribution and not package:  # a distribution no table knows: how to find its package and repository
            facts = distribution_facts(distribution)
            if facts:
                found["distributions"][distribution] = facts
                for top in facts["packages"]:
                    found["locations"][top] = location_of(top)
    torch_build(found)
    found["nvidia_driver"] = nvidia_driver()
    gpus(found)
    return found


if __name__ == "__main__":
    # Run as a script, Python put this folder first on sys.path; errkb's modules must not shadow anything.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    sys.stdout.write(json.dumps(probe(sys.argv[1:])))
