"""Planted defect: the right class and message, raised by the reproduction itself, outside the library."""
NEEDS = {"packages": {}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}


def trigger():
    raise ValueError("DataParallel not supported when CRF is used")


def fix():
    pass
