"""A training run (rank 0 of a one-process gloo group here) initialises the default process group with
MASTER_ADDR=127.0.0.1 and a MASTER_PORT that another process still holds: a previous run that did not exit,
another job on the same node, or a second store in the same process. Rank 0 starts the c10d TCPStore server on
that port; it binds all interfaces, and since PyTorch 2.4 its libuv backend reports the conflict when it starts
listening: "The server socket has failed to listen on any local network address. port: P, useIpv6: false,
code: -98, name: EADDRINUSE, message: address already in use", raised from UvTcpServer::makeWithPort
(torch/csrc/distributed/c10d/TCPStoreLibUvBackend.cpp) as torch.distributed.DistNetworkError, a RuntimeError.
The stale holder here is a child process listening on 127.0.0.1:P. NEEDS floor 2.4: older releases (1.13.1,
2.1.2 checked) raise the same condition from the socket backend as a plain RuntimeError without a C++ location
("... failed to bind to [::]:P (errno: 98 - Address already in use) ..."), which the record's pattern matches
but whose raise site the harness cannot place in this file. The demonstrations: a free port chosen by binding to
port 0 and passed to the ranks (and to torchrun's --master_port) while the holder still runs (solution 1); the
holder stopped, after which the same port works (solution 2); and, within one process, destroy_process_group()
releasing the port for the next group while a second store on a live group's port fails (solution 3). The
record's exampleFix "after" part and validationCode run from its own text."""
NEEDS = {"packages": {"torch": ">=2.4"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "free_port", 2: "stop_holder", 3: "destroy_group"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["rank", "world_size"], "validationCode": ["port"]}
VALID = {"free-port": "valid_free_port", "time-wait": "valid_time_wait"}
WORDINGS = [
    # the port changes from run to run: the libuv wording is pinned to a result that is not rerun here
    {"text": "The server socket has failed to listen on any local network address. port: 59879, useIpv6: false, "
             "code: -98, name: EADDRINUSE, message: address already in use", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "The server socket has failed to listen on any local network address. port: 34827, useIpv6: 0, "
             "code: -98, name: EADDRINUSE, message: address already in use", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
             "failed to bind to [::]:44796 (errno: 98 - Address already in use). The server socket has failed to bind "
             "to 0.0.0.0:44796 (errno: 98 - Address already in use).",
     "source": "intelligent-machine-learning/dlrover#443", "match": "pattern"},
    {"text": "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
             "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server "
             "socket has failed to bind to ?UNKNOWN? (errno: 98 - Address already in use).",
     "source": "meta-pytorch/torchtune#1025", "match": "pattern"},
    {"text": "[W socket.cpp:401] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - Address already "
             "in use).", "source": "wenet-e2e/wekws#93", "match": "pattern"},
    {"text": "RuntimeError: Address already in use", "source": "pytorch/pytorch#72816", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import contextlib
import datetime
import os
import socket
import subprocess
import sys
import tempfile

import errkb_record as record

import torch
import torch.distributed as dist

TIMEOUT = datetime.timedelta(seconds=30)
HOLDER = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
    "s.bind(('127.0.0.1', 0))\n"
    "s.listen(1)\n"
    "print(s.getsockname()[1], flush=True)\n"
    "sys.stdin.read()\n"
)


@contextlib.contextmanager
def _stale_holder():
    """A separate process (the run that did not exit) listening on a port; yields (process, port)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def find_free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _env(port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")


def _check_group():
    """The group works: an all_reduce over it returns the expected sum."""
    t = torch.ones(3)
    dist.all_reduce(t)
    assert torch.equal(t, torch.ones(3) * dist.get_world_size()), t


def trigger():
    with _stale_holder() as (_, port):
        _env(port)
        dist.init_process_group("gloo", rank=0, world_size=1, timeout=TIMEOUT)  # the TCPStore cannot listen on port


TRAIN = (
    "import datetime, torch, torch.distributed as dist\n"
    "dist.init_process_group('gloo', timeout=datetime.timedelta(seconds=30))\n"
    "t = torch.ones(2); dist.all_reduce(t)\n"
    "assert torch.equal(t, torch.full((2,), float(dist.get_world_size())))\n"
    "dist.destroy_process_group()\n"
    "print('trained on port', __import__('os').environ['MASTER_PORT'])\n"
)


def free_port():
    """Solution 1: a port nobody holds, picked by binding to port 0; the stale holder keeps its port meanwhile."""
    with _stale_holder() as (holder, stale):
        port = find_free_port()
        assert port != stale and holder.poll() is None
        _env(port)
        dist.init_process_group("gloo", rank=0, world_size=1, timeout=TIMEOUT)
        _check_group()
        dist.destroy_process_group()
        # The same with torchrun: --master_port set to a free port (the holder still runs).
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "train.py")
            with open(script, "w") as f:
                f.write(TRAIN)
            port = find_free_port()
            env = dict(os.environ, GLOO_SOCKET_IFNAME="lo")
            done = subprocess.run(
                [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "1", "--master_addr", "127.0.0.1",
                 "--master_port", str(port), script],
                env=env, capture_output=True, text=True, timeout=100,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            assert f"trained on port {port}" in done.stdout, done.stdout


def stop_holder():
    """Solution 2: stop the process that still holds the port (it exits), then the same port works."""
    with _stale_holder() as (holder, port):
        holder.kill()  # what `kill <pid>` does to the stale run found with `ss -ltnp` / `lsof -i :PORT`
        holder.wait(timeout=30)
        _env(port)
        dist.init_process_group("gloo", rank=0, world_size=1, timeout=TIMEOUT)
        _check_group()
        dist.destroy_process_group()


def destroy_group():
    """Solution 3: in one process, destroy_process_group() frees the port for the next group on it."""
    port = find_free_port()
    _env(port)
    dist.init_process_group("gloo", rank=0, world_size=1, timeout=TIMEOUT)
    _check_group()
    try:  # a second store on the live group's port (what a library starting its own store on MASTER_PORT does)
        dist.TCPStore("127.0.0.1", port, 1, True, timeout=TIMEOUT)
    except RuntimeError as exc:
        assert "ddress already in use" in str(exc), exc
    else:
        raise AssertionError("a second store could listen on a live group's port")
    dist.destroy_process_group()
    dist.init_process_group("gloo", rank=0, world_size=1, timeout=TIMEOUT)  # same MASTER_PORT, now free again
    _check_group()
    dist.destroy_process_group()


def example_fix():
    """The exampleFix's "after" part, with the stale holder still on the old port."""
    with _stale_holder() as (_, stale):
        _env(stale)
        names = record.run("exampleFix", {"rank": 0, "world_size": 1}, section="after")
        assert names["port"] != stale
        _check_group()
        dist.destroy_process_group()


def guard():
    """validationCode flags the held port and passes a free one, before any store is created."""
    with _stale_holder() as (_, port):
        assert not record.check("validationCode", {"port": port})
        assert record.check("validationCode", {"port": find_free_port()})


def valid_free_port():
    return {"port": find_free_port()}


def _in_time_wait(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as plain:  # without SO_REUSEADDR a TIME_WAIT blocks bind
        try:
            plain.bind(("", port))
        except OSError:
            return True
    return False


def _time_wait_port():
    """A port whose only socket is a closed connection in TIME_WAIT (the server side closed first)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()
        client.close()
    assert _in_time_wait(port), port
    return port


def valid_time_wait():
    """A port in TIME_WAIT after an earlier run: the store itself binds it, so the guard must let it pass."""
    port = _time_wait_port()
    store = dist.TCPStore("127.0.0.1", port, 1, True, timeout=TIMEOUT)
    store.set("k", "v")
    del store
    assert _in_time_wait(port), port
    return {"port": port}
