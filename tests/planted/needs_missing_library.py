"""Planted: needs a library no environment has; a runner's hardware never explains that skip."""
NEEDS = {"packages": {"errkb-no-such-library": ">=1"}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}


def trigger():
    raise AssertionError("a skipped reproduction must not run")


def fix():
    raise AssertionError("a skipped reproduction must not run")
