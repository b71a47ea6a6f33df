"""How fast `errkb build` is on a large catalog of seed-shaped records.

    python benchmarks/build_speed.py [N]      (default 100000)

Prints: the time to write N record files, a full build, a no-op rebuild, an incremental build after
changing one file, and `errkb add` of one record into the built catalog (a fresh process, as a user runs it).
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from errkb import catalog  # noqa: E402

SEED = json.loads((REPO / "records" / "dataparallel-not-supported-when-crf-is-used.json").read_text())


def make_record(i: int) -> dict:
    envelope = json.loads(json.dumps(SEED))
    r = envelope["record"]
    r["slug"] = f"generated-error-{i}"
    r["id"] = f"{i:016x}"
    r["errorMessage"] = f"Generated failure number {i} in module_{i % 97}"
    r["messagePattern"] = rf"Generated failure number {i} in module_\d+"
    r["tags"] = ["generated", f"group-{i % 50}"]
    return envelope


def timed(label, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label:<44} {time.perf_counter() - start:8.2f} s")
    return result


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        records = root / "records"
        records.mkdir()

        def write_all():
            for i in range(n):
                (records / f"generated-error-{i}.json").write_text(json.dumps(make_record(i), indent=2) + "\n")

        timed(f"write {n} record files", write_all)
        report = timed("errkb build (full, empty database)", lambda: catalog.build(root))
        assert len(report.added) == n
        report = timed("errkb build again (nothing changed)", lambda: catalog.build(root))
        assert report.unchanged == n and not report.changed
        changed = make_record(7)
        changed["record"]["documentation"] += " Changed."
        (records / "generated-error-7.json").write_text(json.dumps(changed, indent=2) + "\n")
        report = timed("errkb build after changing one file", lambda: catalog.build(root))
        assert report.updated == ["generated-error-7"]
        new = root / "new.json"
        new.write_text(json.dumps(make_record(n + 1)))
        cmd = [sys.executable, "-m", "errkb.cli", "--root", str(root), "add", str(new)]
        timed("errkb add one record (fresh process)", lambda: subprocess.run(cmd, check=True, capture_output=True))
        size = (root / "catalog.db").stat().st_size / 1e6
        print(f"{'catalog.db size':<44} {size:8.1f} MB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
