"""Planted defect: the process dies (SIGABRT) before it can report anything."""
NEEDS = {"packages": {}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}

import os


def trigger():
    os.abort()


def fix():
    pass
