"""What `errkb reproduce` costs per record beyond the reproduction's own work.

    python benchmarks/reproduce_overhead.py [-n 16] [--no-seed]

1. Near-empty records: N reproductions whose trigger() raises json.JSONDecodeError from the standard library's
   json package and whose fix() parses "{}" (the benchmark adds python/cpython -> json to the library table).
   Their own work, timed in this process, is microseconds; the harness's time per record is then nearly all
   overhead: two fresh interpreters (one per stage), the JSON result, the comparison, the history row.
   Timed serially (-j 1) and with -j 2; the hardware probe is reported on its own, since it is paid once
   per run, not per record (on a machine without GPU device files it needs no subprocess).
2. The seed record (unless --no-seed): the harness's time against the same trigger() and fix() run one after
   the other in a single fresh process, so the difference is what isolating the stages costs for a real
   record (chiefly importing torch and HanLP twice).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from errkb.reproduce import harness, isolate, libraries  # noqa: E402

SEED_SLUG = "dataparallel-not-supported-when-crf-is-used"

TRIVIAL_REPRODUCTION = '''"""Benchmark: almost no work."""
NEEDS = {"packages": {}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "fix"}

import json


def trigger():
    json.loads("")


def fix():
    assert json.loads("{}") == {}
'''

IN_ONE_PROCESS = """
import importlib.util, sys, time
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("repro", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
try:
    module.trigger()
except Exception:
    pass
module.fix()
print(time.perf_counter() - started)
"""


def trivial_record(slug: str) -> dict:
    envelope = json.loads((REPO / "records" / f"{SEED_SLUG}.json").read_text(encoding="utf-8"))
    record = envelope["record"]
    lines = ["def raw_decode(self, s, idx=0):", "    try:", "        obj, end = self.scan_once(s, idx)",
             "    except StopIteration as err:", '        raise JSONDecodeError("Expecting value", s, err.value) from None']
    record.update(
        slug=slug, repo="python/cpython", filePath="Lib/json/decoder.py", errorClass="json.JSONDecodeError",
        errorMessage="Expecting value: line 1 column 1 (char 0)", messagePattern="Expecting value",
        sourceCode="\n".join(lines), sourceCodeStart=343, sourceCodeEnd=347, lineNumber=347,
        analyzedSha="0" * 40, solutions=["Parse a non-empty document"], exampleFix=None, validationCode=None,
        typeGuard=None, tryCatchPattern=None,
    )
    record["githubUrl"] = f"https://github.com/python/cpython/blob/{'0' * 40}/Lib/json/decoder.py#L343-L347"
    return envelope


def in_process_seconds(path: Path, repeat: int = 3) -> float:
    """The reproduction's own work (import, trigger, fix) in one fresh interpreter, best of `repeat`."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", IN_ONE_PROCESS, str(path)], capture_output=True, text=True, check=True)
        runs.append(float(done.stdout.strip().splitlines()[-1]))
    return min(runs)


def interpreter_seconds(repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        runs.append(time.perf_counter() - started)
    return min(runs)


def timed_run(root: Path, slugs: list[str], jobs: int, machine, repeat: int = 3) -> tuple[float, list]:
    """Best of `repeat` (the machine is shared: the best run is the least disturbed)."""
    best, results = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        results = harness.reproduce(root, slugs, jobs=jobs, environment=machine)
        best = min(best, time.perf_counter() - started)
    return best, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=16, help="near-empty records (default 16)")
    parser.add_argument("--no-seed", action="store_true", help="skip the seed record")
    args = parser.parse_args()
    libraries.LIBRARIES["python/cpython"] = ("json", None)

    with tempfile.TemporaryDirectory(prefix="errkb-bench-") as tmp:
        root = Path(tmp)
        (root / "records").mkdir()
        (root / "reproductions").mkdir()
        slugs = [f"bench-{i:03d}" for i in range(args.n)]
        for slug in slugs:
            (root / "records" / f"{slug}.json").write_text(json.dumps(trivial_record(slug)), encoding="utf-8")
            (root / "reproductions" / f"{slug}.py").write_text(TRIVIAL_REPRODUCTION, encoding="utf-8")

        started = time.perf_counter()
        machine = harness.Environment.probe()
        probe = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run([sys.executable, str(isolate.PROBE)], capture_output=True, check=True)
        subprocess_probe = time.perf_counter() - started
        own = in_process_seconds(root / "reproductions" / f"{slugs[0]}.py")
        bare = interpreter_seconds()
        serial, results = timed_run(root, slugs, jobs=1, machine=machine)
        assert all(r.verdict == "verified" for r in results), [(r.slug, r.verdict, r.reason) for r in results]
        parallel, _ = timed_run(root, slugs, jobs=2, machine=machine)
        stage = sum(s.seconds for r in results for s in r.stages) / (2 * len(results))

        print(f"near-empty records: {args.n}, python {sys.version.split()[0]}, {harness.default_jobs()} core(s)")
        print(f"  hardware probe (once per run)            {probe:6.3f} s  (subprocess importing torch: {subprocess_probe:.3f} s)")
        print(f"  bare interpreter start (python -c pass)  {bare:6.3f} s")
        print(f"  one stage, start to JSON result          {stage:6.3f} s")
        print(f"  own work in one process (import+trigger+fix) {own * 1000:6.2f} ms")
        for label, total in [("-j 1", serial), ("-j 2", parallel)]:
            per_record = total / args.n
            print(f"  harness {label}: {total:6.2f} s for {args.n} records (+ probe), {per_record:6.3f} s per record, "
                  f"overhead {per_record - own:6.3f} s per record")

        if not args.no_seed:
            shutil.copy(REPO / "records" / f"{SEED_SLUG}.json", root / "records")
            shutil.copy(REPO / "reproductions" / f"{SEED_SLUG}.py", root / "reproductions")
            own = in_process_seconds(root / "reproductions" / f"{SEED_SLUG}.py", repeat=1)
            total, (seed,) = timed_run(root, [SEED_SLUG], jobs=1, machine=machine, repeat=1)
            print(f"seed record ({seed.verdict}):")
            print(f"  trigger+fix in one fresh process         {own:6.2f} s")
            print(f"  harness, 2 isolated stages               {total:6.2f} s "
                  f"(stages {seed.stages[0].seconds:.2f} s + {seed.stages[1].seconds:.2f} s)")
            print(f"  isolation overhead                       {total - own:6.2f} s")


if __name__ == "__main__":
    main()
