"""One writer at a time per catalog: `errkb add`, `errkb build` and the harness's history writes take this lock.

The lock is an advisory `flock` on the catalog root folder itself: no lock file to create, ignore or leave
behind, and it works on a read-only checkout. The kernel drops it when its holder dies (even by SIGKILL), so a
crashed writer never leaves the catalog locked. Inside one process the lock is re-entrant (a build called
while `add` holds it does not wait for itself); threads of one process take turns.
"""

from __future__ import annotations

import fcntl
import functools
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .store import RECORDS_DIR, remove_stale_temp_files

DEFAULT_TIMEOUT_S = 60.0  # $ERRKB_LOCK_TIMEOUT overrides it
POLL_S = 0.02


class CatalogBusy(Exception):
    """Another process held the catalog's write lock for the whole timeout; nothing was written."""

    def __init__(self, root: Path, timeout_s: float):
        super().__init__(
            f"catalog {root} is busy: another errkb command held its write lock for {timeout_s:g} s "
            f"(set ERRKB_LOCK_TIMEOUT to wait longer); nothing was written"
        )
        self.root, self.timeout_s = root, timeout_s


class _Held:
    def __init__(self) -> None:
        self.guard = threading.RLock()  # threads of this process
        self.fd: int | None = None
        self.depth = 0


_held: dict[str, _Held] = {}
_held_lock = threading.Lock()


def lock_timeout() -> float:
    try:
        return max(0.0, float(os.environ.get("ERRKB_LOCK_TIMEOUT", DEFAULT_TIMEOUT_S)))
    except ValueError:
        return DEFAULT_TIMEOUT_S


@contextmanager
def catalog_lock(root: Path, timeout_s: float | None = None):
    """Hold the write lock of the catalog at `root`; raise CatalogBusy after `timeout_s`."""
    timeout_s = lock_timeout() if timeout_s is None else timeout_s
    if not root.is_dir():  # nothing there to protect; the caller says what is missing
        yield
        return
    key = os.path.realpath(root)
    with _held_lock:
        held = _held.setdefault(key, _Held())
    deadline = time.monotonic() + timeout_s
    if not held.guard.acquire(timeout=max(timeout_s, 0.001)):
        raise CatalogBusy(root, timeout_s)
    try:
        if held.depth == 0:
            held.fd = _flock(key, deadline, root, timeout_s)
            _remove_stale_temp_files(root)
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                os.close(held.fd)  # closing the only descriptor releases the flock
                held.fd = None
    finally:
        held.guard.release()


def _flock(folder: str, deadline: float, root: Path, timeout_s: float) -> int:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise CatalogBusy(root, timeout_s) from None
                time.sleep(POLL_S)
    except BaseException:
        os.close(fd)
        raise


def _remove_stale_temp_files(root: Path) -> None:
    # With the lock held no writer is half-way, so any temp file left in records/ belongs to a dead one.
    remove_stale_temp_files(root / RECORDS_DIR)


def tidy_if_idle(root: Path) -> None:
    """Remove dead writers' temp files when no writer holds the catalog now; never wait for one."""
    if (root / "records").is_dir():
        try:
            with catalog_lock(root, timeout_s=0):
                pass
        except (CatalogBusy, OSError):
            pass


def with_catalog_lock(function):
    """Decorate a function whose first argument is a catalog root so that it runs under that catalog's lock."""

    @functools.wraps(function)
    def locked(root, *args, **kwargs):
        with catalog_lock(Path(root)):
            return function(root, *args, **kwargs)

    return locked
