"""Planted defect: module-level code fails, before trigger() is reached."""
NEEDS = {"packages": {}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}

import errkb_no_such_module  # noqa: F401


def trigger():
    pass


def fix():
    pass
