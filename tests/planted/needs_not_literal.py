"""Planted defect: NEEDS is computed, so it cannot be read without running the file."""
NEEDS = dict(packages={}, cuda_devices=0, timeout_s=30)
SOLUTIONS = {1: "fix"}


def trigger():
    pass


def fix():
    pass
