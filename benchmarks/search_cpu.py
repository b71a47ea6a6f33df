"""CPU seconds per search page of a built catalog, in one process (Datasette's test client, no HTTP).

    python benchmarks/search_cpu.py CATALOG.db [--pages 5]

For a busy machine: wall time there measures the other processes (at a load of 10-20 on 2 cores, pages that
take 0.1 s alone took 0.5-1.3 s, and Datasette's table search hit its time limit); CPU time of the request is
close to its wall time on an idle machine. The cases are run.py's records-browser and table cases, on the
catalog run.py generates (BROAD_WORD in two records of three, TAG_WORD a tag of one in five).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import generate  # noqa: E402
import run  # noqa: E402
from web_support import Client  # noqa: E402

from errkb.web.serve import make_datasette  # noqa: E402

CASES = {
    "browse_broad_search": f"/-/errkb/records?q={generate.BROAD_WORD}",
    "browse_tag_filter": f"/-/errkb/records?_tag={generate.TAG_WORD}",
    "browse_synonym_search": "/-/errkb/records?q=OOM",
    "browse_typo_search": f"/-/errkb/records?q={run.TYPO}",
    "browse_tag_search": f"/-/errkb/records?q={generate.TAG_WORD}",
    "broad_search": f"/catalog/records?{run.BROWSE}&_search={generate.BROAD_WORD}",
    "tag_filter": f"/catalog/records?{run.BROWSE}&_tag={generate.TAG_WORD}",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database", type=Path)
    parser.add_argument("--pages", type=int, default=5, help="timed requests per case, after one to warm up")
    args = parser.parse_args()
    client = Client(make_datasette(args.database))
    try:
        for name, path in CASES.items():
            cpu, wall, body = [], [], ""
            for i in range(args.pages + 1):
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                body = client.get(path).text
                if i:
                    cpu.append(time.process_time() - cpu_start)
                    wall.append(time.perf_counter() - wall_start)
            found = body.split('class="errkb-summary">', 1)[1].split(" record", 1)[0].strip() if "errkb-summary" in body else ""
            note = " (timed out)" if "took too long" in body else ""
            print(f"{name:24} CPU {statistics.median(cpu):.3f} s  wall {statistics.median(wall):.3f} s  "
                  f"{found + ' records' if found else ''}{note}", flush=True)
    finally:
        client.close()


if __name__ == "__main__":
    main()
