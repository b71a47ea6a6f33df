"""The CI merge job's check of one result file a GPU job uploaded (after its Sigstore signature verified):

    python -m errkb.reproduce.incoming JOB FOLDER FILE     # JOB: verifications-<HARDWARE>-torch<RELEASE>-<BUILD>

JOB is the artifact's name, one cell of .ci/matrix.json: HARDWARE cpu, gpu-1 or gpu-2; BUILD cpu or cuda. The file
must load as a result (schema, its folder and file name, consistent with itself: verifications.load) and its
environment must be the job's: the torch release and build the job ran and the number of GPUs of its runner. Exit 0 to add
the file, 1 (with the reason) to refuse it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..problems import InvalidInput
from ..verifications import load

JOB = re.compile(r"^verifications-(?:cpu|gpu-(?P<gpus>\d+))-torch(?P<torch>[0-9][0-9A-Za-z.]*)-(?P<build>cpu|cuda)$")


def problems(job: str, folder: Path, file: Path) -> list[str]:
    found = JOB.match(job)
    if not found:
        return [f"{job}: not a matrix job's artifact name (verifications-<HARDWARE>-torch<RELEASE>-<BUILD>)"]
    relative = file.relative_to(folder)
    if len(relative.parts) != 2 or file.is_symlink():
        return [f"{relative}: expected <slug>/<environment>.json, a plain file"]
    try:
        result = load(file, folder)
    except InvalidInput as exc:
        return [str(p) for p in exc.problems]
    torch = (result.packages.get("torch") or "").split("+")[0]
    wrong = []
    if torch != found["torch"]:
        wrong.append(f"{relative}: torch {torch or 'missing'}, but job {job} ran torch {found['torch']}")
    gpus = int(found["gpus"] or 0)
    if result.hardware.gpuCount != gpus:
        wrong.append(f"{relative}: {result.hardware.gpuCount} GPU(s), but job {job} ran with {gpus}")
    build = "cuda" if (result.torchBuild or "").startswith("CUDA") else "cpu"
    if result.torchBuild is not None and build != found["build"]:
        wrong.append(f"{relative}: torch build {result.torchBuild!r}, but job {job} ran the {found['build']} build")
    if result.ranAt.kind != "github-actions":
        wrong.append(f"{relative}: ranAt.kind {result.ranAt.kind!r}, expected 'github-actions'")
    return wrong


def main(argv: list[str]) -> int:
    found = problems(argv[0], Path(argv[1]), Path(argv[2]))
    for problem in found:
        print(f"refused: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
