"""`errkb serve`: bring catalog.db up to date, then browse it in Datasette, read-only."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

import click

from .. import writes
from ..problems import InvalidInput
from ..store import DATABASE_FILE
from . import guards

SETTINGS = {"suggest_facets": False}  # suggestions cost ~3 s per table page at 100k records


def make_datasette(db_path: Path):
    """A Datasette serving catalog.db read-only, with the errkb plugin loaded.

    The live file, not a copy: catalog.db is in WAL mode (catalog.open_db), so each page reads the last
    committed catalog while `errkb add` or `build` writes beside it, and sees their changes once committed.
    """
    from datasette.app import Datasette  # ~0.5 s: only the serve command pays for it
    from datasette.plugins import pm

    from . import plugin

    if not pm.is_registered(plugin) and pm.get_plugin("errkb") is None:
        pm.register(plugin, name="errkb")  # running from a checkout without the entry point installed
    return Datasette(files=[str(db_path)], settings=SETTINGS)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--open", "open_browser", is_flag=True, help="Open the catalog in a web browser.")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, open_browser: bool) -> None:
    """Browse the catalog in Datasette: record pages, search, facets, paste a traceback.

    Serves catalog.db read-only and brings it up to date from records/ (first, when there is none yet;
    else in the background, pages answering from the last commit); later changes show as they commit.
    Outside a catalog folder (and without --root) it serves the catalog bundled with errkb.
    """
    from ..matching.command import catalog_root

    root = catalog_root(ctx)
    db_path = root / DATABASE_FILE
    # With a catalog already built, serve it at once and bring it up to date in a child process: a build checks
    # every record file (seconds at 100,000 records), and pages answer from the last commit meanwhile (WAL).
    background = db_path.exists() and _writable(root)
    if not background:
        try:
            report = writes.build(root)
        except InvalidInput as exc:
            for problem in exc.problems:
                click.echo(f"error: {problem}", err=True)
            sys.exit(1)
        if report.changed:
            click.echo(f"updated {db_path}: {len(report.added)} added, {len(report.updated)} updated, {len(report.removed)} removed")
    if not is_loopback(host):
        click.echo(
            f"warning: --host {host} serves the catalog to other machines on the network, with no login; "
            "its SQL page runs any read-only query anyone sends. Use 127.0.0.1 unless you mean it.",
            err=True,
        )
    problem = port_problem(host, port)
    if problem:
        click.echo(f"error: cannot listen on {host}:{port}: {problem}; choose another with --port", err=True)
        sys.exit(1)

    import asyncio

    import uvicorn

    from . import matching

    problem = matching.prepare(root)  # build keeps the match index; this only opens it (or says why it cannot)
    if problem:
        click.echo(f"warning: errkb.matching failed ({problem}); the match page will show the error", err=True)
    ds = make_datasette(db_path)
    asyncio.run(ds.invoke_startup())
    url = f"http://{host}:{port}/"
    click.echo(f"errkb: serving {db_path} at {url} (read-only; changes from errkb add and build show as they commit)")
    if background:
        click.echo("errkb: updating it from records/ in the background (an invalid file is reported here; "
                   "the catalog as it was stays served)", err=True)
        subprocess.Popen([sys.executable, "-m", "errkb.cli", "--root", str(root), "build"], stdin=subprocess.DEVNULL)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    hosts = guards.allowed_hosts(host, port) if is_loopback(host) else None  # DNS rebinding targets local servers
    uvicorn.run(guards.host_check(ds.app(), hosts), host=host, port=port, log_level="warning", lifespan="on")


def _writable(root: Path) -> bool:
    """Whether a build may write here (not, e.g., the catalog bundled inside a read-only installation)."""
    return os.access(root, os.W_OK) and os.access(root / DATABASE_FILE, os.W_OK)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def port_problem(host: str, port: int) -> str | None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None
