"""A two-process job is started with torchrun (torch.distributed.run, --standalone, gloo on CPU). Rank 1 cannot
open its data shard (a FileNotFoundError in torch.load), exits with code 1, and the elastic agent stops rank 0
with SIGTERM while rank 0 waits in all_reduce (rank 0 has already printed gloo's lost-connection error,
a consequence). When the workers are done, launch_agent (torch/distributed/launcher/api.py) raises
ChildFailedError, whose message is only a summary: "<script> FAILED", the other failures, and "Root Cause (first
observed failure)" with the rank, exit code and, without an error file, no traceback. The trigger runs torchrun's
own main() in this process, so the exception is the launcher's. The demonstrations: find the root cause's rank
in the summary and read that rank's own traceback from the launcher's output (the lines prefixed [rank1]:);
decorate the worker's entry point with @record so the summary itself carries the worker's exception; and fix the
first failure (the shard exists), after which the same command succeeds. The record's tryCatchPattern runs from
its own text around the same launch. CPU only."""
NEEDS = {"packages": {"torch": ">=2.2"}, "cuda_devices": 0, "timeout_s": 240}
SOLUTIONS = {1: "read_root_cause", 2: "record_decorator", 3: "fix_first_failure"}
CODE = {"tryCatchPattern": "try_catch"}
CODE_NAMES = {"tryCatchPattern": ["argv"]}
WORDINGS = [
    {"text": "train.py FAILED\n------------------------------------------------------------\nFailures:",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "train.py FAILED\n------------------------------------------------------------\nFailures:\n[1]:\n"
             "  time      : 2023-05-19_16:39:58\n  host      : n136-117-136.byted.org\n  rank      : 1 (local_rank: 1)\n"
             "  exitcode  : 1 (pid: 78971)\n  error_file: <N/A>\n"
             "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
             "------------------------------------------------------------\nRoot Cause (first observed failure):",
     "source": "Vision-CAIR/MiniGPT-4#237", "match": "pattern"},
    {"text": "src/open_r1/grpo_gsm.py FAILED\n------------------------------------------------------------\nFailures:\n"
             "  <NO_OTHER_FAILURES>\n------------------------------------------------------------\n"
             "Root Cause (first observed failure):\n[0]:\n  time      : 2025-05-21_15:43:03\n"
             "  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker\n  rank      : 0 (local_rank: 0)\n"
             "  exitcode  : -9 (pid: 14750)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 14750",
     "source": "lzhxmu/CPPO#6", "match": "pattern"},
    {"text": "failed (exitcode: 1) local_rank: 0 (pid: 2694) of binary: /usr/bin/python",
     "source": "AFeng-x/SMT#18", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import contextlib
import os
import re
import subprocess
import sys
import tempfile

import errkb_record as record

import torch
from torch.distributed import run as torchrun
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

# The worker: each rank loads its own shard and sums it across ranks. Rank 1's shard is missing in the trigger.
BODY = """
import os
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    data = torch.load(os.path.join(os.environ["DATA_DIR"], f"shard-{rank}.pt"))
    total = data.sum().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank} total {total.item():g}", flush=True)
    dist.destroy_process_group()
"""
PLAIN = BODY + '\n\nif __name__ == "__main__":\n    main()\n'
RECORDED = (
    BODY.replace("def main():", "@record\ndef main():")
    + '\n\nif __name__ == "__main__":\n    main()\n'
).replace("import torch.distributed as dist\n",
          "import torch.distributed as dist\nfrom torch.distributed.elastic.multiprocessing.errors import record\n", 1)


@contextlib.contextmanager
def _job(script_text, shards=(0,)):
    """A temporary folder with train.py and the shards that exist; the environment torchrun's workers inherit."""
    with tempfile.TemporaryDirectory() as tmp:
        for rank in shards:
            torch.save(torch.full((3,), float(rank + 1)), os.path.join(tmp, f"shard-{rank}.pt"))
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write(script_text)
        os.environ["DATA_DIR"] = tmp
        if sys.platform.startswith("linux"):
            os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # keep gloo on the loopback interface
        yield script


def _argv(script):
    return ["--standalone", "--nproc_per_node", "2", "--max_restarts", "0", script]


def trigger():
    with _job(PLAIN) as script:
        torchrun.main(_argv(script))  # ChildFailedError: ... train.py FAILED ... Root Cause ... rank 1


ROOT_RANK = re.compile(r"Root Cause \(first observed failure\):\s*\[0\]:.*?rank\s*:\s*(\d+)", re.S)


def read_root_cause():
    """Solution 1: the rank under 'Root Cause' is the first failure; its own traceback is in its [rankN]: lines."""
    with _job(PLAIN) as script:
        done = subprocess.run([sys.executable, "-m", "torch.distributed.run", *_argv(script)],
                              capture_output=True, text=True, timeout=200, env=dict(os.environ))
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert "ChildFailedError" in out and "Root Cause (first observed failure)" in out, out[-3000:]
    rank = int(ROOT_RANK.search(out).group(1))
    assert rank == 1, out[-3000:]
    own = [line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith(f"[rank{rank}]:")]
    assert own and own[-1].startswith("FileNotFoundError") and "shard-1.pt" in own[-1], own[-5:]
    # The other rank's error is a consequence: it lost its peer in all_reduce and was stopped by the agent.
    other = [line for line in out.splitlines() if line.startswith("[rank0]:")]
    assert not any("FileNotFoundError" in line for line in other), other[-5:]
    return f"root cause rank {rank}: {own[-1]}"


def record_decorator():
    """Solution 2: @record on the worker's entry point writes its exception to an error file the summary shows."""
    with _job(RECORDED) as script:
        try:
            torchrun.main(_argv(script))
        except ChildFailedError as exc:
            rank, failure = exc.get_first_failure()
            summary = str(exc)
        else:
            raise AssertionError("the job was expected to fail on rank 1")
    assert rank == 1 and failure.exitcode == 1, (rank, failure)
    assert failure.error_file != "<N/A>", failure
    message = failure.message  # from the error file: {"message": ..., "extraInfo": {"py_callstack": ...}}
    assert isinstance(message, dict), message
    assert message["message"].startswith("FileNotFoundError") and "shard-1.pt" in message["message"], message
    assert "torch.load" in message["extraInfo"]["py_callstack"], message
    assert "FileNotFoundError" in summary and "To enable traceback see" not in summary.split("Root Cause")[1], summary


def fix_first_failure():
    """Solution 3: fix the root cause (rank 1's shard exists); the same launch then succeeds on every rank."""
    with _job(PLAIN, shards=(0, 1)) as script:
        done = subprocess.run([sys.executable, "-m", "torch.distributed.run", *_argv(script)],
                              capture_output=True, text=True, timeout=200, env=dict(os.environ))
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    # The two workers share one pipe, so their lines may interleave ("rank 1 total 9rank 0 total 9\n\n"):
    # read each total as a number, not up to the next whitespace.
    totals = re.findall(r"rank (\d) total (\d+)", done.stdout)
    assert sorted(totals) == [("0", "9"), ("1", "9")], done.stdout  # (1+1+1) + (2+2+2) on both ranks


def try_catch():
    """The record's tryCatchPattern around the trigger's launch (workers with @record): it names the root cause."""
    with _job(RECORDED) as script:
        names = record.run("tryCatchPattern", {"argv": _argv(script)})
    assert names["root_rank"] == 1, names
    assert "FileNotFoundError" in names["root_cause"], names["root_cause"]
