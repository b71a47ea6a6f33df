"""Planted: needs two CUDA devices; on a machine with fewer it must be skipped, never run."""
NEEDS = {"packages": {}, "cuda_devices": 2, "timeout_s": 30}
SOLUTIONS = {1: "fix"}


def trigger():
    raise AssertionError("a skipped reproduction must not run")


def fix():
    raise AssertionError("a skipped reproduction must not run")
