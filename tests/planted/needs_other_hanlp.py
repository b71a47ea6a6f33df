"""Planted: needs a HanLP version that is not installed, and a distribution that does not exist."""
NEEDS = {"packages": {"hanlp": "==0.0.1", "errkb-no-such-distribution": ">=1"}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}


def trigger():
    raise AssertionError("a skipped reproduction must not run")


def fix():
    raise AssertionError("a skipped reproduction must not run")
