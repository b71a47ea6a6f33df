"""Explaining a crash as it happens: `errkb run -- CMD`, `errkb.install()`, `errkb.explain(exc)`, and an
IPython extension (`%load_ext errkb`).

`errkb run` passes the command's stdout and stderr through unchanged and live, keeps their last
part, and when the command fails with a traceback prints, after it, the matching record's cause,
fix and verification status. The command's exit status is kept (128+N when killed by signal N).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
import threading
import traceback
from collections import deque
from pathlib import Path

import click

from .catalog import last_run
from .problems import InvalidInput
from .store import file_hash, record_path
from .terminal import inert
from .validate import load_envelope

TAIL_BYTES = 256 * 1024  # per stream: a traceback is at the end
CAUSE_CHARS = 700


# -- explaining one error ---------------------------------------------------------------------------


def explain(exc: BaseException, root: Path | str | None = None):
    """The catalog record that best matches an exception (or warning) object, as a Match, or None.

    A Match names the record and why it was chosen (`slug`, `score`, `why()`); it holds no cause
    or fix. For the text errkb prints (cause, fix and verification) use `explanation(exc)`.
    """
    from .matching import match

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    best, _ = explained_and_also_seen(match(text, root=root))
    return best


def explained_and_also_seen(found: list) -> tuple:
    """(the match that explains the raised exception or None, the other matches).

    A record that only explains a warning in the output is never offered as the explanation of a
    crash: it is listed as "also seen".
    """
    from .matching.matcher import WARNING

    best = next((m for m in found if m.seen_as != WARNING), None)
    return best, [m for m in found if m is not best]


def explanation(exc: BaseException, root: Path | str | None = None) -> str | None:
    """What errkb prints after a traceback: cause, fix and verification of the matching record, or None."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return explain_text(text, Path(root) if root else None)


def explain_text(text: str, root: Path | None) -> str | None:
    """The explanation for a pasted traceback or log, or None when no record matches.

    `root` None: the catalog errkb finds (errkb.bundled.locate); NoCatalog when there is none.
    """
    from .bundled import locate
    from .matching import matcher_for

    root = locate(root)
    matcher = matcher_for(root)
    best, others = explained_and_also_seen(matcher.match(text, limit=3))
    if best is None and not others:
        return None
    return render(best, others, root)


def render(best, others: list, root: Path) -> str:
    rule = "-" * 72
    if best is None:  # only a warning matched: it did not end the run
        lines = ["", rule, "errkb: no record in the catalog matches the error that ended the run."]
        lines += [_also_seen(others), rule]
        return "\n".join(lines)
    details = record_details(root, best.slug)
    lines = ["", rule, f"errkb: this looks like `{best.slug}` (score {best.score:.2f}; {best.why()})"]
    if details:
        lines += ["", "Cause:", textwrap.fill(_shorten(details.documentation), width=88, initial_indent="  ",
                                              subsequent_indent="  ")]
        lines += ["", "Fix:"]
        lines += [textwrap.fill(s, width=88, initial_indent=f"  {i}. ", subsequent_indent="     ")
                  for i, s in enumerate(details.solutions, 1)]
        if details.exampleFix:
            lines += ["", "Example fix:", textwrap.indent(details.exampleFix, "    ")]
    lines += ["", "Verification: " + verification(root, best.slug)]
    if others:
        lines += [_also_seen(others)]
    lines += [f"More: errkb show {best.slug}", rule]
    return inert("\n".join(lines))


def _also_seen(others: list) -> str:
    def label(m) -> str:
        return f"{m.slug} ({m.score:.2f}, a warning in the output)" if m.seen_as == "warning" else f"{m.slug} ({m.score:.2f})"

    return "Also seen: " + ", ".join(label(m) for m in others)


def _shorten(text: str) -> str:
    if len(text) <= CAUSE_CHARS:
        return text
    cut = text.rfind(". ", 0, CAUSE_CHARS)
    return text[: cut + 1 if cut > 0 else CAUSE_CHARS] + " [...]"


def record_details(root: Path, slug: str):
    """The record behind a match, from records/<slug>.json (the source of truth), or None."""
    try:
        return load_envelope(record_path(root, slug)).record
    except InvalidInput:
        return None


def verification(root: Path, slug: str) -> str:
    """The latest reproduction run of the record, in words, or "never verified"."""
    run = last_run(root, slug)
    if run is None:
        return f"never verified (run `errkb reproduce {slug}`)"
    where = []
    if run.get("torch"):
        where.append(f"torch {run['torch']}")
    if run.get("library") and run.get("library_version") and run.get("library") != "torch":
        where.append(f"{run['library']} {run['library_version']}")
    if run.get("python"):
        where.append(f"python {run['python']}")
    devices = run.get("cuda_device_count")
    where.append(f"{devices} CUDA device(s)" if devices else "CPU only")
    if (run.get("ran_at") or "").startswith("http"):
        where.append(run["ran_at"])
    text = f"{run.get('verdict')} on {run.get('started_at')} ({', '.join(where)})"
    if run.get("verdict") == "skipped" and run.get("reason"):
        text += f": {run['reason']}"
    current = file_hash(record_path(root, slug))
    if run.get("record_hash") and current and run["record_hash"] != current:
        text += "; the record has changed since"
    return text


# -- errkb run ------------------------------------------------------------------------------------------


class _Tail:
    def __init__(self, limit: int = TAIL_BYTES):
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.limit = limit

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        while self.size - len(self.chunks[0]) >= self.limit:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks)[-self.limit:].decode("utf-8", errors="replace")


def _pump(source, sink, tail: _Tail) -> None:
    """Copy a child's stream to ours as it comes, byte for byte, keeping its end."""
    fd = source.fileno()
    while True:
        data = os.read(fd, 65536)
        if not data:
            break
        tail.add(data)
        try:
            sink.write(data)
            sink.flush()
        except (BrokenPipeError, ValueError):
            pass  # our reader went away; keep draining so the child is not blocked


def run_and_explain(command: list[str], root: Path | None = None, err=None) -> int:
    """Run `command`, passing its output through; explain a traceback it dies with. Returns its exit status."""
    err = err or sys.stderr
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # live output from Python children writing to a pipe
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except FileNotFoundError:
        print(f"errkb run: command not found: {command[0]}", file=err)
        return 127
    except PermissionError:
        print(f"errkb run: permission denied: {command[0]}", file=err)
        return 126
    tails = {"stdout": _Tail(), "stderr": _Tail()}
    out = getattr(sys.stdout, "buffer", sys.stdout)
    errb = getattr(sys.stderr, "buffer", sys.stderr)
    pumps = [
        threading.Thread(target=_pump, args=(child.stdout, out, tails["stdout"]), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, errb, tails["stderr"]), daemon=True),
    ]
    for pump in pumps:
        pump.start()
    while True:
        try:
            status = child.wait()
            break
        except KeyboardInterrupt:
            continue  # the terminal sent it to the child too; wait for the child to decide
    for pump in pumps:
        pump.join()
    if status != 0:
        _explain_failure(tails["stderr"].text(), tails["stdout"].text(), root, err, command)
    return status if status >= 0 else 128 - status


def draft_hint(command: list[str]) -> str:
    """How to start a record for an error no record matches: `errkb draft` runs one Python file that raises it."""
    runs_a_file = len(command) == 2 and os.path.basename(command[0]).startswith("python") and command[1].endswith(".py")
    target = shlex.join(command) if runs_a_file else "python snippet.py"
    where = "" if runs_a_file else " (first cut the crash down to a snippet.py that raises it)"
    return f"errkb: to start a record for it{where}: errkb draft -- {target}"


def _explain_failure(stderr_text: str, stdout_text: str, root: Path | None, err, command: list[str] = ()) -> None:
    from . import paste
    from .bundled import NoCatalog

    for text in (stderr_text, stdout_text):  # some tools log their tracebacks to stdout
        parsed = paste.parse(text)
        if not any(item.kind == "error" for item in parsed.raised):
            continue
        try:
            message = explain_text(text, root)
        except NoCatalog as exc:
            message = f"errkb: cannot explain this error: {exc}"
        except Exception as exc:  # noqa: BLE001 - never hide the command's own failure behind ours
            message = f"errkb: could not match this error ({type(exc).__name__}: {exc})"
        if message is None:
            message = "errkb: no record in the catalog matches this error.\n" + draft_hint(list(command))
        print(message, file=err)
        err.flush()
        return


@click.command(
    name="run",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_context
def run_command(ctx: click.Context, command: tuple[str, ...]) -> None:
    """Run COMMAND; if it dies with a traceback, explain it from the catalog.

    Output is passed through unchanged and the exit status is kept. Put `--` before the command:
    errkb run -- python train.py --epochs 3
    """
    from .matching.command import catalog_root

    sys.exit(run_and_explain(list(command), catalog_root(ctx)))


# -- inside a program -------------------------------------------------------------------------------------


def install(root: Path | str | None = None) -> None:
    """Explain uncaught exceptions of this program (and its threads) after their tracebacks."""
    root = Path(root) if root else None
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        _print_explanation(exc_type, exc, tb, root)

    sys.excepthook = hook
    previous_thread_hook = threading.excepthook

    def thread_hook(args):
        previous_thread_hook(args)
        if args.exc_value is not None:
            _print_explanation(args.exc_type, args.exc_value, args.exc_traceback, root)

    threading.excepthook = thread_hook


def _print_explanation(exc_type, exc, tb, root: Path | None) -> None:
    if exc_type is None or issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
        return
    from .bundled import NoCatalog

    try:
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        message = explain_text(text, root)
    except NoCatalog as missing:
        message = f"errkb: cannot explain this error: {missing}"
    except Exception:  # noqa: BLE001 - an excepthook must not fail
        return
    if message:
        print(message, file=sys.stderr)


def load_ipython_extension(ipython) -> None:
    """`%load_ext errkb`: after a cell's traceback, the matching record's cause and fix."""

    def handler(shell, etype, evalue, tb, tb_offset=None):
        shell.showtraceback((etype, evalue, tb), tb_offset=tb_offset)
        _print_explanation(etype, evalue, tb, None)

    ipython.set_custom_exc((Exception,), handler)
