"""Planted defect: trigger() never returns; the harness must stop it at its 2 s budget."""
NEEDS = {"packages": {}, "cuda_devices": 0, "timeout_s": 2}
SOLUTIONS = {1: "fix"}

import time


def trigger():
    while True:
        time.sleep(1)


def fix():
    pass
