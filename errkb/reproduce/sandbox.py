"""Confine one reproduction stage, then become it:

    python errkb/reproduce/sandbox.py CONFIG_JSON COMMAND...     # set the limits up, then exec COMMAND
    python errkb/reproduce/sandbox.py --probe                    # print which mechanisms work here (JSON)

Standard library only and run by path (like runner.py), in the stage's own single-threaded process, before it
execs bubblewrap (protections.py: the file system, pid namespace and /dev/shm) or, where bubblewrap cannot run,
the runner itself; isolate.py decides the configuration and watches the result. What it does, in order:
1. joins the stage's cgroups (isolate.py made them: `pids.max`, and `memory.max` or `memory.limit_in_bytes`
   for the whole tree), so that every descendant, even one that called setsid, stays countable and killable;
2. sets rlimits: memory (RLIMIT_AS, or RLIMIT_DATA for CUDA stages, whose driver reserves far more address
   space than it uses), no core files, and RLIMIT_NPROC as the process limit where no cgroup could be made
   (it counts all of one user's processes, and root ignores it);
3. only without bubblewrap: makes the catalog read-only for the stage: a private mount namespace (a user namespace too when not root)
   in which records/, reproductions/ and catalog.db are bind-mounted read-only onto themselves;
4. only without bubblewrap (which does it itself): drops every capability from the bounding set and sets
   no_new_privs, so the exec'd stage, even as root,
   cannot remount them writable, reach the harness's mounts through /proc/PID/root, or regain privileges.
A step whose mechanism the machine lacks is skipped; `--probe` says which ones work, and isolate.py records it.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source, target, flags: int) -> None:
    enc = lambda value: value.encode() if isinstance(value, str) else value  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), None, flags, None), f"mount {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def join_cgroup(folder: str | None) -> None:
    if folder:
        _write(os.path.join(folder, "cgroup.procs"), str(os.getpid()))


def set_limits(memory_bytes: int | None, memory_kind: str, nproc: int | None) -> None:
    if memory_bytes:
        limit = resource.RLIMIT_DATA if memory_kind == "data" else resource.RLIMIT_AS
        resource.setrlimit(limit, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nproc:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def enter_private_mounts() -> None:
    """A mount namespace of our own (with a user namespace first when we are not root)."""
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    else:
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", MS_REC | MS_PRIVATE)  # nothing we do here reaches the harness's namespace


def make_read_only(paths: list[str]) -> None:
    for path in paths:
        if os.path.exists(path):
            _mount(path, path, MS_BIND | MS_REC)
            _mount(None, path, MS_BIND | MS_REMOUNT | MS_RDONLY)


def drop_privileges() -> None:
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly for a cap we cannot drop
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def confine(config: dict) -> None:
    for folder in [config.get("cgroup"), *config.get("cgroups", [])]:
        join_cgroup(folder)
    set_limits(config.get("memory_bytes"), config.get("memory_kind", "as"), config.get("nproc"))
    if config.get("read_only"):
        enter_private_mounts()
        make_read_only(config["read_only"])
    if config.get("drop", True):  # not before bubblewrap, which needs its capabilities and drops them itself
        drop_privileges()


def probe() -> dict:
    """Which mechanisms work on this machine: tried in a child process, so that we stay as we are."""
    found = {}
    for name, attempt in (("read_only", lambda: (enter_private_mounts(), make_read_only(["/tmp"]))),):
        pid = os.fork()
        if pid == 0:
            try:
                attempt()
                os._exit(0)
            except BaseException:
                os._exit(1)
        found[name] = os.waitpid(pid, 0)[1] == 0
    return found


def main(argv: list[str]) -> None:
    if argv[:1] == ["--probe"]:
        print(json.dumps(probe()))
        return
    confine(json.loads(argv[0]))
    os.execv(argv[1], argv[1:])


if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    main(sys.argv[1:])
