"""Planted defect: trigger() finishes without any error (as when a library stops raising)."""
NEEDS = {"packages": {}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}


def trigger():
    return "nothing happens"


def fix():
    pass
