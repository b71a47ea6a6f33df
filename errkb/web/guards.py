"""What the served catalog refuses before it costs anything: requests for another Host (DNS rebinding), page numbers
SQLite cannot hold, POSTs to pages that only read, responses larger than MAX_RESPONSE_BYTES, and SQL printf()
widths that build gigabyte strings in one uninterruptible step. Each refusal is a 4xx with a sentence."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import parse_qsl

MAX_PAGE = 1_000_000  # far past the last page of any catalog; SQLite's OFFSET overflows near 2**63
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_PRINTF_WIDTH = 100_000  # printf('%.*c', 2147483647, 'x') ran 8-40 s in one step the time limit cannot stop
READ_ONLY_PAGES = re.compile(r"^/$|^/-/errkb/records$|^/-/errkb/record/[^/]+$")
# %[flags][width][.precision][size]type, as SQLite's printf reads it (width and precision may be `*`: an argument)
_DIRECTIVE = re.compile(r"%([-+ 0#,!]*)(\*|\d+)?(?:\.(\*|\d+))?(?:ll|l)?([a-zA-Z%])")


def printf_problem(arguments: tuple) -> str | None:
    """Why a printf()/format() call is refused (a width or precision above MAX_PRINTF_WIDTH), or None."""
    if not arguments or not isinstance(arguments[0], str):
        return None
    rest = list(arguments[1:])
    for match in _DIRECTIVE.finditer(arguments[0]):
        for part in match.group(2), match.group(3):
            if part == "*":
                number = _as_integer(rest.pop(0) if rest else 0)
            else:
                number = int(part) if part else 0
            if abs(number) > MAX_PRINTF_WIDTH:
                return f"printf width or precision {number} is above errkb's limit of {MAX_PRINTF_WIDTH}"
        if match.group(4) != "%" and rest:
            rest.pop(0)
    return None


def _as_integer(value) -> int:
    """The integer SQLite reads from a `*` argument: a number, or the leading digits of text or a blob."""
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    found = re.match(r"\s*([-+]?\d+)", value) if isinstance(value, str) else None
    return int(found.group(1)) if found else 0


def bound_printf(conn: sqlite3.Connection) -> None:
    """Replace printf() and format() on a served connection by ones that refuse huge widths and otherwise call
    SQLite's own (on a private in-memory connection, with the same length limit)."""
    own = sqlite3.connect(":memory:", check_same_thread=False)
    own.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH))

    def printf(*arguments):
        problem = printf_problem(arguments)
        if problem:
            raise ValueError(problem)
        placeholders = ", ".join("?" * len(arguments))
        return own.execute(f"SELECT printf({placeholders})", arguments).fetchone()[0]

    for name in ("printf", "format"):
        conn.create_function(name, -1, printf, deterministic=True)


def allowed_hosts(host: str, port: int) -> set[str]:
    """The Host headers a server bound to host:port answers: its own names only on a loopback address."""
    names = {host, "localhost", "127.0.0.1", "[::1]"} if host in ("127.0.0.1", "localhost", "::1", "[::1]") else {host}
    names = {f"[{name}]" if ":" in name and not name.startswith("[") else name for name in names}
    return {name for name in names} | {f"{name}:{port}" for name in names}


def host_check(app, hosts: set[str] | None):
    """Refuse (421) a request whose Host header is not one of `hosts`: a web page on another site that rebinds
    its name to 127.0.0.1 cannot read the local catalog. None: any host (a server meant for other machines)."""

    async def checked(scope, receive, send):
        if scope["type"] == "http" and hosts is not None:
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
            if host not in hosts:
                return await _answer(send, 421, f"errkb serve answers only for {', '.join(sorted(hosts))}, not Host: {host[:100]!r}.\n")
        return await app(scope, receive, send)

    return checked


def request_guard(app):
    """Page numbers, methods and response size (see the module's docstring)."""

    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        path = scope["path"]
        if scope["method"] == "POST" and READ_ONLY_PAGES.match(path):
            return await _answer(send, 405, "This page does not accept POST; only canned queries and the match page do.\n")
        for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
            if name == "page" and value.strip().lstrip("-").isdigit() and abs(int(value)) > MAX_PAGE:
                return await _answer(send, 400, f"page={value[:40]} is past the last page (at most {MAX_PAGE}).\n")
        return await app(scope, receive, _capped(send))

    return guarded


def _capped(send):
    """Hold the response until it ends; past MAX_RESPONSE_BYTES answer 413 instead and drop the rest."""
    start, body, refused = None, [], False
    size = 0

    async def capped(message):
        nonlocal start, size, refused
        if refused:
            return None
        if message["type"] == "http.response.start":
            start = message
            return None
        if message["type"] != "http.response.body" or start is None:
            return await send(message)
        size += len(message.get("body", b""))
        if size > MAX_RESPONSE_BYTES:
            refused = True
            body.clear()
            return await _answer(send, 413, f"The response is larger than {MAX_RESPONSE_BYTES // 2**20} MB; "
                                            "select fewer rows or columns (LIMIT, substr()).\n")
        body.append(message.get("body", b""))
        if not message.get("more_body", False):
            await send(start)
            await send({"type": "http.response.body", "body": b"".join(body)})
        return None

    return capped


async def _answer(send, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [[b"content-type", b"text/plain; charset=utf-8"]]})
    await send({"type": "http.response.body", "body": text.encode()})
