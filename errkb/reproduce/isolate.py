"""Run one stage of a reproduction in a fresh, confined Python process, with its time budget; never raise for its
sake. The confinement itself (limits, read-only catalog, no privileges) is sandbox.py's, done in the stage's own
process before it becomes the runner; this module starts the stage, reads its output into bounded buffers, and
kills every process the stage started when it ends (its cgroup's members, its descendants, and every process
carrying its token in the environment, so that a daemon that called setsid is found too)."""

from __future__ import annotations

import functools
import itertools
import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..layout import DATABASE_FILE, RECORDS_DIR, REPRODUCTIONS_DIR
from . import protections
from .contract import ContractError, Needs, read_needs
from .environments import errkb_checkout

RUNNER = Path(__file__).with_name("runner.py")
ERRKB_RECORD = Path(__file__).with_name("errkb_record.py")  # the runner loads it from its own folder
SANDBOX = Path(__file__).with_name("sandbox.py")
PROBE = Path(__file__).with_name("probe.py")
STDERR_TAIL = 2000
OUTPUT_HEAD = OUTPUT_TAIL = 64 * 1024  # of a stage's stderr kept in memory; the bytes between are only counted
RESULT_LIMIT = 16 * 1024 * 1024  # the runner's JSON result is far smaller; more is a flood, not a result
PROCESS_LIMIT = 512  # tasks (threads count) per stage: a cgroup's pids.max, else RLIMIT_NPROC
STAGE_TOKEN = "ERRKB_STAGE_TOKEN"  # in each stage's environment, inherited by all it starts: found, killed
DRAIN_S = 5.0  # after the stage's end, how long its pipes may take to close once its processes are killed

_live: dict[subprocess.Popen, "_Stage"] = {}  # running stages, so that an interrupted run can end them
_live_lock = threading.Lock()


@dataclass
class StageRun:
    stage: str
    status: str  # "completed" (result holds the runner's JSON), "timeout", "crashed", or "exited" (exit 0, no result)
    seconds: float
    result: dict | None = None
    returncode: int | None = None
    stderr_tail: str = ""
    stderr_bytes: int = 0  # all the stage wrote to stderr, kept or not
    cause: str | None = None  # how a stage without a result ended, when the harness knows better than the exit code

    def death(self) -> str:
        """How a process without a result ended: 'signal SIGABRT (-6)' or 'exit code 3'."""
        if self.cause:
            return self.cause
        code = self.returncode
        if code is not None and code < 0:
            try:
                return f"signal {signal.Signals(-code).name} ({code})"
            except ValueError:
                return f"signal {-code}"
        return f"exit code {code}"


@dataclass(frozen=True)
class Limits:
    memory_bytes: int
    memory_kind: str  # "as" (RLIMIT_AS) or, for CUDA stages, "data" (RLIMIT_DATA: the driver reserves address space)
    processes: int = PROCESS_LIMIT

    @classmethod
    def for_reproduction(cls, path: Path) -> "Limits":
        try:
            needs = read_needs(path)
        except ContractError:
            needs = Needs()  # the harness reports the broken contract; a direct caller still gets the defaults
        return cls(int(needs.memory_gb * 2**30), "data" if needs.cuda_devices else "as")

    def describe(self) -> str:
        return f"{self.memory_bytes / 2**30:g} GiB"


# What a stage must never hold: CI's OIDC and runtime tokens (with them a stage could sign forged results with
# the workflow's identity), GitHub tokens, the maintainer's signing key.
SECRETS = ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_TOKEN", "GITHUB_TOKEN",
           "GH_TOKEN", "ERRKB_SIGNING_KEY")


def stage_environment(native: bool, threads: int | None) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in SECRETS}
    env["PYTHONFAULTHANDLER"] = "1"
    if native:
        # C++ errors then end with "Exception raised from FUNC at FILE:LINE"; skipping addr2line keeps it fast.
        env["TORCH_SHOW_CPP_STACKTRACES"] = "1"
        env.setdefault("TORCH_DISABLE_ADDR2LINE", "1")
    if threads:
        env.setdefault("OMP_NUM_THREADS", str(threads))  # parallel stages would otherwise oversubscribe the cores
    return env


def run_stage(
    path: Path, stage: str, timeout_s: float, env: dict[str, str], python: str | None = None, code_path: Path | None = None
) -> StageRun:
    """Run the function `stage` of the reproduction at `path` in a fresh, confined interpreter (`python`, default
    this one; the record's code fields from `code_path`), in a private scratch directory, within `timeout_s` and the memory and process limits of its NEEDS.

    The facts come from the runner's result, which must carry this run's nonce: a stage that ends without
    it is "exited" (exit status 0) or "crashed", whatever it wrote. Every process the stage started is
    killed when its first process ends.
    """
    path = path.resolve()
    limits = Limits.for_reproduction(path)
    nonce, token = secrets.token_hex(16), secrets.token_hex(8)
    with tempfile.TemporaryDirectory(prefix=f"errkb-{stage}-") as scratch:
        os.chmod(scratch, 0o700)
        # The stage gets copies: it may rewrite them, never the files later stages or the harness read.
        stage_dir, harness_dir = Path(scratch, "stage"), Path(scratch, "harness")
        stage_dir.mkdir()
        harness_dir.mkdir()
        reproduction = Path(shutil.copy(path, stage_dir / path.name))
        code = [shutil.copy(code_path, stage_dir / "record_code.json")] if code_path else []
        for source in (RUNNER, ERRKB_RECORD):
            shutil.copy(source, harness_dir)
        stage_process = _Stage(token, _Cgroup.make(limits.processes), _MemoryCgroup.make(limits.memory_bytes))
        sandboxed = protections.bwrap_problem() is None
        config = {
            "cgroups": [c.folder for c in stage_process.cgroups],
            "memory_bytes": limits.memory_bytes,
            "memory_kind": limits.memory_kind,
            "nproc": None if stage_process.cgroup or os.geteuid() == 0 else _user_tasks() + limits.processes,
            "read_only": [] if sandboxed or not sandbox_mechanisms()["read_only"] else protected_paths(path),
            "drop": not sandboxed,
        }
        stage_python = python or sys.executable
        command = [stage_python, str(harness_dir / RUNNER.name), str(reproduction), stage, *map(str, code)]
        if sandboxed:
            hidden = protections.hidden_folders(path, errkb_checkout())
            command = protections.bwrap_command(stage_dir, [harness_dir], hidden, stage_python) + command
        command = [sys.executable, str(SANDBOX), json.dumps(config), *command]
        started = time.perf_counter()
        # A new session, so that Ctrl-C reaches the harness only; the stage's processes are found by its token.
        process = subprocess.Popen(
            command, cwd=scratch, env={**env, STAGE_TOKEN: token}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        stage_process.process = process
        with _live_lock:
            _live[process] = stage_process
        try:
            _send_nonce(process, nonce)
            out, err, timed_out = _collect(process, timeout_s, stage_process.kill_all)
        finally:
            stage_process.kill_all()
            with _live_lock:
                _live.pop(process, None)
            for cgroup in stage_process.cgroups:
                cgroup.remove()
        seconds = _since(started)
        if sandboxed and process.returncode is not None and process.returncode > 128:
            process.returncode = 128 - process.returncode  # bwrap reports a child killed by signal N as 128+N
    # The stage ran a copy: its frames, warnings and tracebacks name the reproduction where it really is.
    copy, original = str(reproduction), str(path)
    tail = err.text()[-STDERR_TAIL:].replace(copy, original)
    if timed_out:
        return StageRun(stage, "timeout", seconds, None, process.returncode, tail, err.total)
    result = _renamed(_parse(out.data), copy, original) if not out.dropped else None
    if result is None or not secrets.compare_digest(str(result.pop("nonce", "")), nonce):
        status = "exited" if process.returncode == 0 else "crashed"
        return StageRun(stage, status, seconds, None, process.returncode, tail, err.total, _no_result_cause(process.returncode, out))
    if _out_of_memory(result):
        cause = f"{result['exception']['class']} at its {limits.describe()} memory limit (NEEDS memory_gb)"
        return StageRun(stage, "crashed", seconds, None, process.returncode, tail, err.total, cause)
    return StageRun(stage, "completed", seconds, result, process.returncode, tail, err.total)


def protected_paths(reproduction: Path) -> list[str]:
    """What a stage must not change: its reproductions/ folder and, in a catalog, records/ and catalog.db."""
    folder = reproduction.parent
    paths = [folder]
    if folder.name == REPRODUCTIONS_DIR:
        paths += [folder.parent / RECORDS_DIR, folder.parent / DATABASE_FILE]
    return [str(p) for p in paths if p.exists()]


@functools.lru_cache(maxsize=1)
def sandbox_mechanisms() -> dict:
    """What confines a stage on this machine (sandbox.py's mechanisms are probed once, in a subprocess)."""
    try:
        done = subprocess.run([sys.executable, str(SANDBOX), "--probe"], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        found = _parse(done.stdout) or {}
    except (OSError, subprocess.TimeoutExpired):
        found = {}
    found["read_only"] = bool(found.get("read_only"))
    if _Cgroup.base():
        found["process_limit"] = "cgroup pids.max"
    else:
        found["process_limit"] = "none: root ignores RLIMIT_NPROC" if os.geteuid() == 0 else "RLIMIT_NPROC"
    return found


def _no_result_cause(returncode: int | None, out: "_Buffer") -> str | None:
    if out.dropped:
        return f"a flood on the result channel ({out.total} bytes, over {RESULT_LIMIT}); no result was read"
    if returncode == 0:
        wrote = f"; the {out.total} bytes it left on the result channel are not the runner's result" if out.total else ""
        return f"exit code 0 before the runner could report (os._exit?){wrote}"
    return None


def _out_of_memory(result: dict) -> bool:
    """The stage ran into its memory limit: Python's MemoryError, or PyTorch's CPU allocator refusing."""
    exception = result.get("exception") or {}
    return "MemoryError" in (exception.get("mro") or []) or "DefaultCPUAllocator: can't allocate memory" in str(
        exception.get("message")
    )


def _send_nonce(process: subprocess.Popen, nonce: str) -> None:
    try:
        process.stdin.write(f"{nonce}\n".encode())
        process.stdin.close()
    except OSError:
        pass  # the stage died before reading it: it has no result then


class _Buffer:
    """What a pipe delivered, bounded: its first `head` bytes and its last `tail` bytes; the rest is counted."""

    def __init__(self, head: int, tail: int = 0):
        self.head_limit, self.tail_limit = head, tail
        self.head, self.tail = bytearray(), bytearray()
        self.total = self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    @property
    def data(self) -> bytes:
        return bytes(self.head + self.tail)

    def text(self) -> str:
        gap = f"\n[... {self.dropped} bytes of output left out ...]\n" if self.dropped else ""
        return self.head.decode("utf-8", "replace") + gap + self.tail.decode("utf-8", "replace")


def _collect(process: subprocess.Popen, timeout_s: float, kill_all) -> tuple[_Buffer, _Buffer, bool]:
    """Read the stage's stdout (the result) and stderr into bounded buffers until both close.

    When the stage's first process ends, or its time is up, everything it started is killed, so that a
    descendant holding the pipes (a daemon that called setsid) cannot hold the verdict up.
    """
    out, err = _Buffer(RESULT_LIMIT), _Buffer(OUTPUT_HEAD, OUTPUT_TAIL)
    buffers = {process.stdout.fileno(): out, process.stderr.fileno(): err}
    selector = selectors.DefaultSelector()
    for fd in buffers:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    ended_at = None  # when the first process ended or was killed; the pipes then get DRAIN_S to close
    timed_out = False
    try:
        while selector.get_map():
            now = time.monotonic()
            if ended_at is None and _has_exited(process):
                kill_all()  # before the first process is reaped, so that its pid cannot have been reused
                ended_at = now
            elif ended_at is None and now >= deadline:
                timed_out = True
                kill_all()
                ended_at = now
            if ended_at is not None and now - ended_at > DRAIN_S:
                break  # something we cannot kill holds a pipe: stop listening
            for key, _ in selector.select(timeout=0.05):
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if chunk:
                    buffers[key.fd].add(chunk)
                else:
                    selector.unregister(key.fd)
    finally:
        selector.close()
        process.stdout.close()
        process.stderr.close()
    if process.poll() is None:
        kill_all()
    try:
        process.wait(timeout=DRAIN_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return out, err, timed_out


def _has_exited(process: subprocess.Popen) -> bool:
    """Whether the process has ended, without reaping it (its pid stays reserved until `wait`)."""
    if process.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


@functools.lru_cache(maxsize=4)
def _cgroup_base(controller: str) -> str | None:
    """The folder of this process's cgroup of `controller`, when we may create cgroups in it."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, where = line.split(":", 2)
        if controller in controllers.split(","):
            folder = f"/sys/fs/cgroup/{controller}{where}"
        elif controllers == "" and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            folder = f"/sys/fs/cgroup{where}"
            try:  # v2: the controller must be enabled for our children
                if controller not in Path(folder, "cgroup.subtree_control").read_text().split():
                    continue
            except OSError:
                continue
        else:
            continue
        if os.access(folder, os.W_OK) and os.path.exists(os.path.join(folder, "cgroup.procs")):
            return folder
    return None


class _Cgroup:
    """A pids cgroup of one stage, where the machine lets us make one (cgroup v1, or v2 with pids delegated)."""

    counter = itertools.count()
    CONTROLLER, LIMIT_FILES = "pids", ("pids.max",)

    def __init__(self, folder: str):
        self.folder = folder

    @classmethod
    def base(cls) -> str | None:
        return _cgroup_base(cls.CONTROLLER)

    @classmethod
    def make(cls, limit: int) -> "_Cgroup | None":
        base = cls.base()
        if base is None:
            return None
        folder = os.path.join(base, f"errkb-stage-{os.getpid()}-{next(cls.counter)}")
        try:
            os.mkdir(folder)
        except OSError:
            return None
        for name in cls.LIMIT_FILES:  # the first that exists: v2's file, else v1's
            try:
                with open(os.path.join(folder, name), "w") as handle:
                    handle.write(str(limit))
                return cls(folder)
            except OSError:
                continue
        os.rmdir(folder)
        return None

    @classmethod
    def mechanism(cls) -> str | None:
        """How this machine limits a stage tree by this controller, for people and result files."""
        base = cls.base()
        if base is None:
            return None
        v1 = base.startswith(f"/sys/fs/cgroup/{cls.CONTROLLER}/") or base == f"/sys/fs/cgroup/{cls.CONTROLLER}"
        return f"cgroup {'v1 ' + cls.LIMIT_FILES[-1] if v1 else 'v2 ' + cls.LIMIT_FILES[0]}"

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in Path(self.folder, "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def remove(self) -> None:
        for _ in range(200):
            try:
                os.rmdir(self.folder)
                return
            except FileNotFoundError:
                return
            except OSError:  # not empty yet: its last processes are being reaped
                for pid in self.pids():
                    _kill(pid)
                time.sleep(0.01)


class _MemoryCgroup(_Cgroup):
    """A memory cgroup of one stage: one limit for all its processes and their /dev/shm (v2 memory.max, v1
    memory.limit_in_bytes); where none can be made, only each process's RLIMIT_AS holds."""

    CONTROLLER, LIMIT_FILES = "memory", ("memory.max", "memory.limit_in_bytes")


def machine_protections() -> dict:
    """What confines stages here (protections.active), probed once: recorded in every result file."""
    return protections.active(_MemoryCgroup.mechanism(), _Cgroup.mechanism())


class _Stage:
    """Every process of one stage: its cgroup's members, its descendants, and whatever carries its token."""

    def __init__(self, token: str, cgroup: _Cgroup | None, memory: _Cgroup | None = None):
        self.token, self.cgroup = token, cgroup
        self.cgroups = [c for c in (cgroup, memory) if c]
        self.process: subprocess.Popen | None = None  # the stage's first process
        self._marker = f"{STAGE_TOKEN}={token}".encode()

    def processes(self) -> set[int]:
        found = set(self.cgroup.pids()) if self.cgroup else set()
        parents: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    parents[pid] = int(handle.read().rsplit(b")", 1)[1].split()[1])
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if self._marker in handle.read().split(b"\0"):
                        found.add(pid)
            except (OSError, ValueError, IndexError):
                continue
        if self._unreaped():  # its descendants too, even one that cleared its environment
            frontier = {self.process.pid}
            while frontier:
                frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
                found |= frontier
        found.discard(os.getpid())
        return found

    def kill_all(self) -> None:
        """SIGKILL every process of the stage, and again until none is left (one may fork between two scans)."""
        first = self.process.pid if self._unreaped() else None
        if first is not None:
            _kill(first)
        for _ in range(50):
            alive = {pid for pid in self.processes() - {first} if not _is_zombie(pid)}
            if not alive:
                return
            for pid in alive:
                _kill(pid)
            time.sleep(0.01)


    def _unreaped(self) -> bool:
        """Its first process's pid still names it (running, or a zombie not yet waited for)."""
        return self.process is not None and self.process.returncode is None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True  # gone


def _user_tasks() -> int:
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                continue
    return count


def probe_environment(python: str | None = None, wanted: list[str] = (), timeout_s: float = 300) -> dict:
    """What the Python environment offers (versions, package folders, CUDA devices), from one subprocess of
    that interpreter (the parent never imports torch). `wanted`: "package=distribution" items to locate."""
    try:
        done = subprocess.run(
            [python or sys.executable, str(PROBE), *wanted], capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
        found = _parse(done.stdout)
        if found is not None:
            return found
        error = f"probe failed ({done.returncode}): {_tail(done.stderr)[-300:]}"
    except subprocess.TimeoutExpired:
        error = f"probe ran past {timeout_s:.0f} s"
    except OSError as exc:
        error = f"cannot run {python}: {exc}"
    return {"torch": None, "cuda_device_count": 0, "cuda_devices": [], "cuda_version": None, "error": error,
            "packages": {}, "locations": {}}


def kill_running() -> None:
    """End every running stage with all its processes (they run in sessions of their own, out of Ctrl-C's reach)."""
    with _live_lock:
        running = list(_live.values())
    for stage_process in running:
        stage_process.kill_all()


def _parse(out: bytes):
    try:
        value = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _renamed(value, old: str, new: str):
    """`value` (the runner's JSON) with every string's `old` path replaced by `new`."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_renamed(item, old, new) for item in value]
    if isinstance(value, dict):
        return {key: _renamed(item, old, new) for key, item in value.items()}
    return value


def _tail(data: bytes) -> str:
    return data.decode("utf-8", "replace")[-STDERR_TAIL:]


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)
