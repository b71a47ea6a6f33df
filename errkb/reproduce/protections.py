"""Which protections confine a stage on this machine, and bubblewrap's command line that applies them.

A stage runs under bubblewrap (`bwrap`, Debian's `bubblewrap`: the small, audited sandbox Flatpak is built on):
the whole file system read-only; the catalog root, its git checkout and errkb's own source hidden under empty
tmpfs; the stage's private scratch copy of its reproduction and the record's code the only writable folder
besides a private /tmp and /dev/shm; the user's home hidden under an empty tmpfs (a maintainer's signing key, tokens: the environment the stage runs in is
re-bound read-only); a network namespace with only loopback (reproductions are offline, and distributed ones
rendezvous on 127.0.0.1); a pid namespace of its own, so that when the stage's first process ends
the kernel kills every process left in it, double-forked daemons included; a new session, no capabilities, no
new privileges. Memory is limited for the whole stage tree by a memory cgroup (v2 `memory.max`, or v1
`memory.limit_in_bytes`); where none can be made, only each process's address space is limited (RLIMIT_AS),
which many processes together can exceed.

Where bwrap is missing or refused (GitHub's ubuntu-24.04 runners restrict unprivileged user namespaces through
AppArmor), `errkb reproduce` says which protections are missing before the first stage, the result file records
them, and `--strict` refuses to run.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

FILESYSTEM, PROCESSES, SHM, MEMORY, PROCESS_LIMIT = "filesystem", "processes", "shm", "memory", "process_limit"
HOME, NETWORK = "home", "network"
WHAT = {
    FILESYSTEM: "catalog, .git and errkb's source hidden, the rest read-only",
    HOME: "the user's home hidden (signing keys, tokens, caches)",
    NETWORK: "no network but loopback",
    PROCESSES: "every process killed at the stage's end",
    SHM: "a private /dev/shm",
    MEMORY: "one memory limit for the whole stage tree",
    PROCESS_LIMIT: "a process limit",
}
MISSING_HINT = ("install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces "
                "(on Ubuntu 24.04: sysctl kernel.apparmor_restrict_unprivileged_userns=0)")


def bwrap_binary() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap can make a sandbox here, else why not (its own words)."""
    binary = bwrap_binary()
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        done = subprocess.run([binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                               "--die-with-parent", "true"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot run: {exc}"
    if done.returncode:
        return f"bwrap refused: {(done.stderr or done.stdout).strip()[:300] or f'exit code {done.returncode}'}"
    return None


@functools.lru_cache(maxsize=1)
def bwrap_version() -> str:
    try:
        return subprocess.run([bwrap_binary(), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired, TypeError):
        return "bubblewrap"


def active(memory_cgroup: str | None, process_cgroup: str | None) -> dict[str, str | None]:
    """Protection -> the mechanism that provides it here, None when missing (recorded in each result file)."""
    sandbox = bwrap_problem() is None
    name = bwrap_version() if sandbox else None
    return {
        FILESYSTEM: f"{name}: read-only /, tmpfs over the catalog" if sandbox else None,
        HOME: f"{name}: tmpfs over {Path.home()}" if sandbox else None,
        NETWORK: f"{name}: network namespace" if sandbox else None,
        PROCESSES: f"{name}: pid namespace" if sandbox else None,
        SHM: f"{name}: tmpfs /dev/shm" if sandbox else None,
        MEMORY: memory_cgroup,
        PROCESS_LIMIT: process_cgroup,
    }


def summary(found: dict[str, str | None]) -> str:
    """One line for people, before the first stage runs."""
    on = [f"{WHAT[k]} ({v})" for k, v in found.items() if v]
    off = [WHAT[k] for k, v in found.items() if not v]
    line = "sandbox: " + ("; ".join(on) or "no protection active")
    if off:
        why = bwrap_problem()
        line += f"\nwarning: stages run WITHOUT {', '.join(off)}" + (f" ({why})" if why else "") + f"; to fix: {MISSING_HINT}"
    return line


def missing(found: dict[str, str | None]) -> list[str]:
    return [key for key, value in found.items() if not value]


def hidden_folders(reproduction: Path, checkout: Path | None) -> list[str]:
    """What a stage must never see: the catalog root (records/, reproductions/, catalog.db), the git checkout
    around it and errkb's own source; the outermost of nested ones suffices."""
    folder = reproduction.parent
    root = folder.parent if folder.name == "reproductions" else folder
    found = [root]
    for parent in [root, *root.parents]:
        if (parent / ".git").exists():
            found.append(parent)
            break
    if checkout:
        found.append(checkout)
    outermost: list[Path] = []
    for path in sorted({p.resolve() for p in found}, key=lambda p: len(p.parts)):
        if path != Path("/") and not any(path.is_relative_to(o) for o in outermost):
            outermost.append(path)
    return [str(p) for p in outermost]


def bwrap_command(writable: Path, readable: list[Path], hidden: list[str], python: str) -> list[str]:
    """bwrap's arguments (order matters: later mounts go on top of earlier ones)."""
    args = [bwrap_binary(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    for device in sorted(Path("/dev").glob("nvidia*")):  # CUDA stages reach the GPU through these
        args += ["--dev-bind-try", str(device), str(device)]
    home = str(Path.home())
    args += ["--tmpfs", home]
    for folder in hidden:
        args += ["--tmpfs", folder]
    # The environment the stage's Python belongs to (and the interpreter that one links to), re-bound read-only
    # where a mount above hid it: a venv inside the checkout, an `errkb reproduce --with` environment in the user's
    # cache folder, or under /tmp ($ERRKB_ENV_DIR there: the private /tmp is empty)
    covered = [*hidden, home, "/tmp", "/dev/shm"]
    prefixes = dict.fromkeys([Path(python).parent.parent, Path(python).resolve().parent.parent])
    for prefix in prefixes:
        if any(place.is_relative_to(folder) for place in (prefix, prefix.resolve()) for folder in covered):
            args += ["--ro-bind", str(prefix), str(prefix)]
    for folder in hidden:  # empty and read-only: nothing planted there outlives the stage or misleads it
        args += ["--remount-ro", folder]
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(writable), str(writable), "--chdir", str(writable),
             "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try", "--die-with-parent",
             "--new-session", "--setenv", "HOME", home]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    return args
