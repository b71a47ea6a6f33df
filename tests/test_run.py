"""`errkb run`, `errkb.explain`, `errkb.install` and the IPython extension."""

import os
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import errkb
from errkb import run as run_module

REPO = Path(__file__).resolve().parents[1]
SEED = "dataparallel-not-supported-when-crf-is-used"
CRASH = """
import sys
print("epoch 1 done", flush=True)
print("a warning on stderr", file=sys.stderr, flush=True)
raise ValueError('DataParallel not supported when CRF is used')
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "records").mkdir()
    shutil.copy(REPO / "tests" / "data" / "seed-record.json", tmp_path / "records" / f"{SEED}.json")  # the seed as given
    return tmp_path


def errkb_cli(root: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "from errkb.cli import main; main()", "--root", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)


def test_run_passes_output_through_and_explains_the_crash(root, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(CRASH)
    result = errkb_cli(root, "run", "--", sys.executable, str(script))
    assert result.returncode == 1
    assert result.stdout == "epoch 1 done\n"
    stderr = result.stderr
    assert stderr.startswith("a warning on stderr\nTraceback (most recent call last):")
    before, _, after = stderr.partition("ValueError: DataParallel not supported when CRF is used\n")
    assert after, stderr
    assert f"errkb: this looks like `{SEED}`" in after
    assert "Cause:" in after and "Fix:" in after and "1. Train on a single GPU" in after
    assert f"Verification: never verified (run `errkb reproduce {SEED}`)" in after
    assert "Verified:" not in after


def test_run_keeps_exit_status_and_says_nothing_without_a_traceback(root):
    result = errkb_cli(root, "run", "--", sys.executable, "-c", "import sys; print('hi'); sys.exit(3)")
    assert (result.returncode, result.stdout, result.stderr) == (3, "hi\n", "")
    result = errkb_cli(root, "run", "--", sys.executable, "-c", "print('fine')")
    assert (result.returncode, result.stdout, result.stderr) == (0, "fine\n", "")


def test_run_says_when_no_record_matches(root):
    result = errkb_cli(root, "run", "--", sys.executable, "-c", "raise KeyError('x')")
    assert result.returncode == 1
    assert result.stderr.endswith(
        "KeyError: 'x'\nerrkb: no record in the catalog matches this error.\nerrkb: to start a record for it (first cut "
        "the crash down to a snippet.py that raises it): errkb draft -- python snippet.py\n"
    )


def test_run_names_the_draft_command_for_a_python_file(root, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("raise KeyError('x')\n")
    result = errkb_cli(root, "run", "--", sys.executable, str(script))
    assert result.returncode == 1
    assert result.stderr.endswith(f"errkb: to start a record for it: errkb draft -- {sys.executable} {script}\n")


def test_run_reports_signals_like_a_shell_and_missing_commands(root):
    result = errkb_cli(root, "run", "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert result.returncode == 128 + 15
    assert errkb_cli(root, "run", "--", "no-such-command-errkb").returncode == 127


CHILD_SLEEP_S = 600
# A hang guard, not a speed check: generous for a loaded machine, and still far under the child's sleep, so
# output that is held back until the child ends cannot arrive in time.
FIRST_LINE_DEADLINE_S = 60


def read_line_before(stream, deadline_s: float) -> bytes:
    """Bytes from `stream` up to the first newline, or what arrived when the deadline passed."""
    received = b""
    deadline = time.monotonic() + deadline_s
    while not received.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(stream.fileno(), 4096)
        if not chunk:
            break
        received += chunk
    return received


def test_run_streams_output_while_the_command_runs(root):
    """The first line arrives while the command still runs. PYTHONUNBUFFERED is not in the environment, the
    child does not flush, and errkb's own stdout is a pipe: errkb run must make the child's output live and
    pass each chunk on at once."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    command = [sys.executable, "-c", "from errkb.cli import main; main()", "--root", str(root), "run", "--",
               sys.executable, "-c", f"import time; print('first'); time.sleep({CHILD_SLEEP_S})"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, env=env, start_new_session=True)
    try:
        assert read_line_before(child.stdout, FIRST_LINE_DEADLINE_S) == b"first\n"
        assert child.poll() is None  # streamed while the command runs, not written at its end
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # errkb run and the sleeping child with it
        child.wait()
        child.stdout.close()


def test_verification_status_is_the_latest_run(root):
    from errkb import catalog

    catalog.build(root)
    conn = sqlite3.connect(root / "catalog.db")
    rows = [
        (SEED, "fix-failed", "2026-11-01T10:00:00Z"),
        (SEED, "verified", "2026-11-29T15:00:00Z"),
    ]
    for slug, verdict, started in rows:
        conn.execute(
            "INSERT INTO reproduction_runs (slug, verdict, started_at, python, torch, cuda_device_count, ran_at) "
            "VALUES (?, ?, ?, '3.11.7', '2.13.0', 0, 'https://github.com/errkb/errkb/actions/runs/7')",
            [slug, verdict, started],
        )
    conn.commit()
    assert run_module.verification(root, SEED) == "verified on 2026-11-29T15:00:00Z (torch 2.13.0, python 3.11.7, CPU only, https://github.com/errkb/errkb/actions/runs/7)"
    assert run_module.verification(root, "other").startswith("never verified")


def test_verification_without_a_runs_table(tmp_path):
    sqlite3.connect(tmp_path / "catalog.db").execute("CREATE TABLE other (x)")
    assert run_module.verification(tmp_path, SEED).startswith("never verified")


def test_explain_an_exception_object(root):
    try:
        raise ValueError("DataParallel not supported when CRF is used")
    except ValueError as exc:
        found = errkb.explain(exc, root=root)
        text = run_module.explanation(exc, root=root)
    assert found.slug == SEED
    assert "Cause:" in text
    assert errkb.explain(KeyError("nothing like it"), root=root) is None


def test_explanation_from_the_package_is_the_text_and_explain_is_the_match(root):
    try:
        raise ValueError("DataParallel not supported when CRF is used")
    except ValueError as exc:
        found = errkb.explain(exc, root=root)
        text = errkb.explanation(exc, root=root)
    assert (found.slug, found.score) == (SEED, 1.0) and "pattern matched" in found.why()
    assert f"errkb: this looks like `{SEED}`" in text
    assert "Cause:" in text and "Fix:" in text and "Verification: never verified" in text
    assert errkb.explanation(KeyError("nothing like it"), root=root) is None
    assert "explanation" in errkb.__all__
    assert "Match" in errkb.explain.__doc__ and "explanation(exc)" in errkb.explain.__doc__
    assert "Match" in run_module.explain.__doc__ and "explanation(exc)" in run_module.explain.__doc__


def test_match_api_from_the_package(root):
    found = errkb.match("ValueError: DataParallel not supported when CRF is used", root=root)
    assert [m.slug for m in found] == [SEED]


def test_install_explains_uncaught_exceptions(root, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(f"import errkb\nerrkb.install(root={str(root)!r})\n" + CRASH)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert f"errkb: this looks like `{SEED}`" in result.stderr


def test_importing_errkb_stays_cheap():
    code = "import sys, errkb; print(sorted(m for m in ('torch', 'datasette', 'sqlite_utils', 'errkb.matching', 'errkb.run') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]"


def test_ipython_extension_prints_after_the_traceback(root, monkeypatch, capsys):
    monkeypatch.setenv("ERRKB_ROOT", str(root))

    class Shell:
        def set_custom_exc(self, types, handler):
            self.handler = handler

        def showtraceback(self, exc_tuple, tb_offset=None):
            print("TRACEBACK SHOWN", file=sys.stderr)

    shell = Shell()
    errkb.load_ipython_extension(shell)
    try:
        raise ValueError("DataParallel not supported when CRF is used")
    except ValueError as exc:
        shell.handler(shell, type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert err.index("TRACEBACK SHOWN") < err.index(f"errkb: this looks like `{SEED}`")


GATHER_WARNING = (
    "/site-packages/torch/nn/parallel/_functions.py:68: UserWarning: Was asked to gather along dimension 0, "
    "but all input tensors were scalars; will instead unsqueeze and return a vector.\n"
    "  warnings.warn('Was asked to gather along dimension 0, but all '\n"
)


@pytest.fixture
def root_with_warning_record(root: Path) -> Path:
    for slug in ("dataparallel-gather-scalars-warning", "dataparallel-object-has-no-attribute"):
        shutil.copy(REPO / "records" / f"{slug}.json", root / "records")
    return root


def test_run_explains_the_fatal_error_not_the_warning_before_it(root_with_warning_record, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        f"import sys\nsys.stderr.write({GATHER_WARNING!r})\n"
        "raise AttributeError(\"'DataParallel' object has no attribute 'generate'\")\n"
    )
    result = errkb_cli(root_with_warning_record, "run", "--", sys.executable, str(script))
    assert "errkb: this looks like `dataparallel-object-has-no-attribute`" in result.stderr
    assert "Also seen: dataparallel-gather-scalars-warning (1.00, a warning in the output)" in result.stderr


def test_run_offers_a_warning_record_only_as_also_seen(root_with_warning_record, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(f"import sys\nsys.stderr.write({GATHER_WARNING!r})\nraise KeyError('x')\n")
    result = errkb_cli(root_with_warning_record, "run", "--", sys.executable, str(script))
    assert "errkb: no record in the catalog matches the error that ended the run." in result.stderr
    assert "Also seen: dataparallel-gather-scalars-warning" in result.stderr
    assert "this looks like" not in result.stderr


def test_the_same_error_scores_the_same_from_every_entry_point(root_with_warning_record):
    message = "'DataParallel' object has no attribute 'generate'"
    try:
        raise AttributeError(message)
    except AttributeError as exc:
        explained = errkb.explain(exc, root=root_with_warning_record)
    from_traceback = errkb.match(f"AttributeError: {message}", root=root_with_warning_record)[0]
    from_message = errkb.match(message, root=root_with_warning_record)[0]  # str(exc): no class
    assert explained.score == from_traceback.score == from_message.score == 1.0
    assert explained.why() == "pattern matched the final exception line; same class"
