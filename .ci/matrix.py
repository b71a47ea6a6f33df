#!/usr/bin/env python3
"""The release x hardware matrix from .ci/matrix.json, as the workflow, the README and the job script use it.

    python3 .ci/matrix.py cells          # JSON list of cells: the workflow's job matrix (GITHUB_OUTPUT)
    python3 .ci/matrix.py lines          # one "HARDWARE RELEASE BUILD" line per cell: the README's loop
    python3 .ci/matrix.py flags HARDWARE RELEASE BUILD
                                         # the errkb reproduce flags of one cell: hardware declaration and --with
    python3 .ci/matrix.py python         # the Python version every cell runs on (the workflow's setup-python)

A cell is a hardware entry and a torch release, run on the registry's build (CUDA on Linux); one more cell
runs the CPU build of `cpu_build.release`, the only place a CPU-build-only record can run. Standard library only.
"""

import json
import sys
from pathlib import Path

MATRIX = Path(__file__).with_name("matrix.json")


def load() -> dict:
    return json.loads(MATRIX.read_text(encoding="utf-8"))


def cells(matrix: dict) -> list[dict]:
    found = [
        {"hardware": name, "release": release, "build": "cuda", "runs_on": spec["runs_on"], "python": matrix["python"]}
        for name, spec in matrix["hardware"].items() for release in matrix["releases"]
    ]
    cpu = matrix["cpu_build"]
    found.append({"hardware": cpu["hardware"], "release": cpu["release"], "build": "cpu",
                  "runs_on": matrix["hardware"][cpu["hardware"]]["runs_on"], "python": matrix["python"]})
    return found


def flags(matrix: dict, hardware: str, release: str, build: str) -> list[str]:
    if hardware not in matrix["hardware"]:
        raise SystemExit(f"error: no hardware {hardware!r} in {MATRIX.name} (known: {', '.join(matrix['hardware'])})")
    if build not in ("cpu", "cuda"):
        raise SystemExit(f"error: build is cpu or cuda, not {build!r}")
    spec = matrix["hardware"][hardware]
    declared = ["--gpus", str(spec["gpus"]), "--driver" if spec["driver"] else "--no-driver", "--torch-build", build]
    # Every cell runs in a --with environment of its own, which also gets the other packages the records need
    # (lightning cannot live beside errkb's own dependencies); the CPU build is the release's +cpu wheel.
    return [*declared, "--with", f"torch=={release}+cpu" if build == "cpu" else f"torch=={release}"]


def main(argv: list[str]) -> None:
    matrix = load()
    if argv[:1] == ["cells"]:
        print(json.dumps(cells(matrix)))
    elif argv[:1] == ["lines"]:
        print("\n".join(f"{c['hardware']} {c['release']} {c['build']}" for c in cells(matrix)))
    elif argv[:1] == ["python"]:
        print(matrix["python"])
    elif argv[:1] == ["flags"] and len(argv) == 4:
        print(" ".join(flags(matrix, *argv[1:])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
