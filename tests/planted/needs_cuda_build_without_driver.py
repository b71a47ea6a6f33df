"""Planted: needs a CUDA build of torch on a machine without an NVIDIA driver; the tests run on the CPU build
(torch==2.13.0+cpu, as the README's test command installs), so it must be skipped, never run."""
NEEDS = {"packages": {"torch": ">=1.13"}, "torch_build": "cuda", "nvidia_driver": False, "timeout_s": 30}
SOLUTIONS = {1: "fix"}


def trigger():
    raise AssertionError("a skipped reproduction must not run")


def fix():
    raise AssertionError("a skipped reproduction must not run")
