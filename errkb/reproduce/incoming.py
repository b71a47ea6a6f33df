"""The CI merge job's check of one result file a GPU job uploaded (after its Sigstore signature verified):

    python -m errkb.reproduce.incoming JOB FOLDER FILE     # JOB: verifications-gpu<N>-torch<RELEASE>

It must load as a result (schema, its folder and file name, consistent with itself: verifications.load) and its
environment must be the job's: the torch release the job ran and the number of GPUs of its runner. Exit 0 to add
the file, 1 (with the reason) to refuse it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..problems import InvalidInput
from ..verifications import load

JOB = re.compile(r"^verifications-gpu(?P<gpus>\d+)-torch(?P<torch>[0-9][0-9A-Za-z.+]*)$")


def problems(job: str, folder: Path, file: Path) -> list[str]:
    found = JOB.match(job)
    if not found:
        return [f"{job}: not a GPU job's artifact name (verifications-gpu<N>-torch<RELEASE>)"]
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
    if result.hardware.gpuCount != int(found["gpus"]):
        wrong.append(f"{relative}: {result.hardware.gpuCount} GPU(s), but job {job} ran on gpu-{found['gpus']}")
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
