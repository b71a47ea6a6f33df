"""Probe the hardware once per `errkb reproduce` run, in a subprocess, so the parent never imports torch.

    python errkb/reproduce/probe.py   ->  {"torch": "2.13.0+cpu", "cuda_device_count": 0, "cuda_devices": [], ...}
"""

from __future__ import annotations

import json
import sys


def probe() -> dict:
    found = {"torch": None, "cuda_device_count": 0, "cuda_devices": [], "cuda_version": None, "error": None}
    try:
        import torch
    except ImportError:
        return found
    found["torch"] = torch.__version__
    found["cuda_version"] = torch.version.cuda
    try:
        count = torch.cuda.device_count()
        found["cuda_device_count"] = count
        found["cuda_devices"] = [torch.cuda.get_device_name(i) for i in range(count)]
    except Exception as exc:  # a broken driver counts as no device, and says why
        found["error"] = f"{type(exc).__name__}: {exc}"
        found["cuda_device_count"], found["cuda_devices"] = 0, []
    return found


if __name__ == "__main__":
    sys.stdout.write(json.dumps(probe()))
