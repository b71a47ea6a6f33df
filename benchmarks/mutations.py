"""The mutation check, run by hand (not in CI): one-line mutations applied to a copy of the repository, each
followed by the tests that must catch it; the table says which were caught, by which test, and which survived.

    .venv/bin/python benchmarks/mutations.py              # every mutation; the table on stdout
    .venv/bin/python benchmarks/mutations.py escaping     # those whose area or name contains "escaping"

A mutation replaces one exact piece of text that must occur exactly once in its file; when it no longer does,
the code has moved on and the mutation is reported `stale` (update it here). Before any mutation, the tests
named below run once on the unmutated copy and must pass, or the check stops. Exit status 1 when a mutation
survived or is stale. The copy holds the files git knows (tracked, or untracked and not ignored); it runs with
PYTHONPATH set to it, so subprocesses the tests start (errkb run, errkb serve) run the mutated code too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 1800  # per mutation: a hang guard


@dataclass(frozen=True)
class Mutation:
    area: str
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


RECORD_HTML = "errkb/web/templates/errkb/record.html"
ESCAPING = ("tests/test_web_escaping.py",)
CLAIMS = ("tests/test_claims.py",)
FORGED = "tests/test_trust_results.py::test_a_forged_h200_result_shows_as_unsigned_and_is_never_counted"
STALE = tuple(f"tests/test_verifications.py::{name}" for name in [
    "test_a_result_for_an_older_record_stays_visible_but_sets_no_verdict", "test_an_edited_reproduction_also_makes_results_stale",
    "test_a_run_kept_without_a_file_for_an_older_record_does_not_decide", "test_the_record_page_shows_a_result_for_an_older_record_apart",
    "test_a_no_write_run_of_a_reproduction_since_reverted_does_not_decide", "test_verified_somewhere_is_verified_with_exactly_where",
]) + ("tests/test_run.py::test_verification_status_is_the_latest_run",)


def safe(area: str, name: str, file: str, old: str, new: str) -> Mutation:
    return Mutation(area, name, file, old, new, ESCAPING)


MUTATIONS = [
    # -- escaping of each rendered field: the record page --------------------------------------------------
    safe("escaping", "errorMessage |safe", RECORD_HTML, '{% else %}\n    <pre class="errkb-message">{{ message }}</pre>', '{% else %}\n    <pre class="errkb-message">{{ message|safe }}</pre>'),
    safe("escaping", "messagePattern |safe", RECORD_HTML, "{{ r.messagePattern }}</code>", "{{ r.messagePattern|safe }}</code>"),
    safe("escaping", "errorCode |safe", RECORD_HTML, "code <code>{{ r.errorCode }}</code>", "code <code>{{ r.errorCode|safe }}</code>"),
    safe("escaping", "sourceCode excerpt |safe", RECORD_HTML, '<td class="errkb-src">{{ line.text }}</td>', '<td class="errkb-src">{{ line.text|safe }}</td>'),
    safe("escaping", "documentation raw", RECORD_HTML, "{{ r.documentation|errkb_prose }}", "{{ r.documentation|safe }}"),
    safe("escaping", "triggerScenarios raw", RECORD_HTML, "{{ r.triggerScenarios|errkb_prose }}", "{{ r.triggerScenarios|safe }}"),
    safe("escaping", "commonSituations raw", RECORD_HTML, "{{ r.commonSituations|errkb_prose }}", "{{ r.commonSituations|safe }}"),
    safe("escaping", "solutions raw", RECORD_HTML, "{{ solution|errkb_inline }}", "{{ solution|safe }}"),
    safe("escaping", "preventionTips raw", RECORD_HTML, "{{ tip|errkb_inline }}", "{{ tip|safe }}"),
    safe("escaping", "prose/inline filter does not escape", "errkb/web/present.py", 'escaped = str(escape(text)).replace("\\n", "<br>")', 'escaped = str(text).replace("\\n", "<br>")'),
    safe("escaping", "exampleFix |safe", RECORD_HTML, "<code>{{ r.exampleFix }}</code>", "<code>{{ r.exampleFix|safe }}</code>"),
    safe("escaping", "validationCode |safe", RECORD_HTML, "<code>{{ r.validationCode }}</code>", "<code>{{ r.validationCode|safe }}</code>"),
    safe("escaping", "typeGuard |safe", RECORD_HTML, "<code>{{ r.typeGuard }}</code>", "<code>{{ r.typeGuard|safe }}</code>"),
    safe("escaping", "tryCatchPattern |safe", RECORD_HTML, "<code>{{ r.tryCatchPattern }}</code>", "<code>{{ r.tryCatchPattern|safe }}</code>"),
    # -- escaping: the result files' fields on the record page ----------------------------------------------
    safe("escaping", "result reason |safe", RECORD_HTML, "{%- if run.reason %}{{ run.reason }}<br>", "{%- if run.reason %}{{ run.reason|safe }}<br>"),
    safe("escaping", "result variant |safe", RECORD_HTML, "</span> {{ run.variant }}<br>", "</span> {{ run.variant|safe }}<br>"),
    safe("escaping", "result drift |safe", RECORD_HTML, "</span> {{ run.drift }}{% endif -%}", "</span> {{ run.drift|safe }}{% endif -%}"),
    safe("escaping", "result versions |safe", RECORD_HTML, '<td>{{ run.versions|join(", ") }}</td>', '<td>{{ run.versions|join(", ")|safe }}</td>'),
    safe("escaping", "result devices |safe", RECORD_HTML, "<td>{{ run.devices }}</td>", "<td>{{ run.devices|safe }}</td>"),
    safe("escaping", "result platform |safe", RECORD_HTML, "{{ run.platform }}</span>", "{{ run.platform|safe }}</span>"),
    safe("escaping", "result ranAt linked whatever its scheme", RECORD_HTML, '<td>{% if run.ran_at and run.ran_at.startswith("http") %}<a href="{{ run.ran_at }}">CI run</a>{% else %}{{ run.ran_at or "" }}{% endif %}{% if run.platform %}', '<td>{% if run.ran_at %}<a href="{{ run.ran_at }}">CI run</a>{% else %}{{ run.ran_at or "" }}{% endif %}{% if run.platform %}'),
    safe("escaping", "matrix column title attribute |safe", RECORD_HTML, 'title="{{ column.title }}"', 'title="{{ column.title|safe }}"'),
    safe("escaping", "matrix cell title attribute |safe", RECORD_HTML, "{% if cell.title %}: {{ cell.title }}{% endif %}", "{% if cell.title %}: {{ cell.title|safe }}{% endif %}"),
    # -- escaping: the other pages -------------------------------------------------------------------------
    safe("escaping", "home: recently verified message |safe", "errkb/web/templates/errkb/home.html", "{{ row.errorMessage|errkb_title }}</a>", "{{ row.errorMessage|errkb_title|safe }}</a>"),
    safe("escaping", "browser: message |safe", "errkb/web/templates/errkb/records.html", '">{{ row.errorMessage|errkb_plain }}</a>', '">{{ row.errorMessage|errkb_plain|safe }}</a>'),
    safe("escaping", "browser: title attribute |safe", "errkb/web/templates/errkb/records.html", 'title="{{ row.errorMessage|errkb_plain }}">', 'title="{{ row.errorMessage|errkb_plain|safe }}">'),
    safe("escaping", "match page: matched title |safe", "errkb/web/templates/errkb/match.html", '<a href="{{ item.url }}">{{ item.title }}</a>', '<a href="{{ item.url }}">{{ item.title|safe }}</a>'),
    safe("escaping", "match page: the paste echoed |safe", "errkb/web/templates/errkb/match.html", "{{ text }}</textarea>", "{{ text|safe }}</textarea>"),
    safe("escaping", "search snippet not escaped", "errkb/web/metadata.py", "text = str(escape(value))", "text = str(value)"),
    safe("escaping", "Datasette cell link formatted before Markup", "errkb/web/plugin.py", """return Markup('<a class="errkb-record-link" href="{}">{}</a>').format(urls.record(datasette, slug), text)""", """return Markup('<a class="errkb-record-link" href="{}">{}</a>'.format(urls.record(datasette, slug), text))"""),
    # -- the live relay of errkb run ------------------------------------------------------------------------
    Mutation("relay", "no flush after each chunk", "errkb/run.py", "            sink.flush()\n", "            pass\n", ("tests/test_run.py::test_run_streams_output_while_the_command_runs",)),
    Mutation("relay", "child's output left buffered (no PYTHONUNBUFFERED)", "errkb/run.py", 'env.setdefault("PYTHONUNBUFFERED", "1")', 'env.get("PYTHONUNBUFFERED")', ("tests/test_run.py::test_run_streams_output_while_the_command_runs",)),
    # -- the match index after errkb add --------------------------------------------------------------------
    Mutation("match index", "errkb add leaves the index to a later refresh", "errkb/writes.py", "index.refresh(db.conn)  # the match index takes them in the same transaction", "pass", ("tests/test_match_engine.py::test_errkb_add_indexes_the_record_for_matching_in_the_same_transaction",)),
    # -- the ranking order ----------------------------------------------------------------------------------
    Mutation("ranking", "rank: lowest score first within a place", "errkb/matching/matcher.py", "-m.score, m.situation is not True, m.slug))", "m.score, m.situation is not True, m.slug))", ("tests/test_match_ranking.py", "tests/test_match_cli.py")),
    Mutation("ranking", "rank: places reversed (warnings before the fatal error)", "errkb/matching/matcher.py", "(_PLACE[m.seen_as] if m.score >= THRESHOLD else 3,", "(-_PLACE[m.seen_as] if m.score >= THRESHOLD else 3,", ("tests/test_match_ranking.py", "tests/test_match_cli.py")),
    Mutation("ranking", "match(): results lowest score first", "errkb/matching/matcher.py", "return [m for m in self.rank(text) if m.score >= threshold][:limit]", "return sorted([m for m in self.rank(text) if m.score >= threshold], key=lambda m: m.score)[:limit]", ("tests/test_match_ranking.py", "tests/test_match_cli.py")),
    # -- a stale result or run setting the verdict ----------------------------------------------------------
    Mutation("stale verdict", "a result file for an older record counts", "errkb/runs.py", '        return bool(run.get("current"))\n', "        return True\n", STALE),
    Mutation("stale verdict", "a run for an older record (no result file) counts", "errkb/runs.py", '    return run.get("current") != 0 and run.get("record_hash") in (None, content_hash)', "    return True", STALE),
    Mutation("stale verdict", "the reproduction's hash is not compared", "errkb/runs.py", "(record_hash is ? and (reproduction_hash is ? or (path is null and reproduction_hash is null)))", "(record_hash is ? and (reproduction_hash is ? or 1 or (path is null and reproduction_hash is null)))", STALE),
    Mutation("stale verdict", "the record page shows an earlier result as current", "errkb/web/present.py", 'return run.get("current") != 0  # None', "return True  # None", STALE),
    # -- each claim kind's verdict --------------------------------------------------------------------------
    Mutation("claims", "solution: a failed fix verified", "errkb/reproduce/claims.py", "ClaimVerdict(judged.verdict if not judged.ok else VERIFIED,", "ClaimVerdict(VERIFIED,", CLAIMS),
    Mutation("claims", "exampleFix: a raising stage is a claim failure, not a fix failure", "errkb/reproduce/claims.py", 'verdict = FIX_FAILED if claim.kind == "exampleFix" else CLAIM_FAILED', "verdict = CLAIM_FAILED", CLAIMS),
    Mutation("claims", "exampleFix: its fix part need not run", "errkb/reproduce/claims.py", "    if not ran:\n", "    if False:\n", CLAIMS),
    Mutation("claims", "exampleFix: a config's before part need not run in trigger()", "errkb/reproduce/claims.py", "        if not before:\n", "        if False:\n", CLAIMS),
    Mutation("claims", "guard: need not flag the trigger's situation", "errkb/reproduce/claims.py", 'if "flagged" not in outcomes:', "if False:", CLAIMS),
    Mutation("claims", "guard: need not pass the fixed situation", "errkb/reproduce/claims.py", 'if "passed" not in outcomes:', "if False:", CLAIMS),
    Mutation("claims", "code field never executed is verified", "errkb/reproduce/claims.py", 'return ClaimVerdict(CLAIM_FAILED, f"{claim.kind} was not executed', 'return ClaimVerdict(VERIFIED, f"{claim.kind} was not executed', CLAIMS),
    Mutation("claims", "tryCatchPattern: the wrong error caught is fine", "errkb/reproduce/claims.py", "    if seen.problems:\n", "    if False:\n", CLAIMS),
    Mutation("claims", "tryCatchPattern: nothing caught is fine", "errkb/reproduce/claims.py", "    if not caught:\n", "    if False:\n", CLAIMS),
    Mutation("claims", "tryCatchPattern: an escaping exception is fine", "errkb/reproduce/claims.py", 'return ClaimVerdict(CLAIM_FAILED, f"tryCatchPattern {what}', 'return ClaimVerdict(VERIFIED, f"tryCatchPattern {what}', CLAIMS),
    Mutation("claims", "guard: a rejected valid input is fine", "errkb/reproduce/claims.py", 'if entry is None or entry.get("outcome") == "passed":', "if True:", CLAIMS),
    Mutation("claims", "guard: valid inputs never reached are fine", "errkb/reproduce/claims.py", "    if missing:\n", "    if False:\n", CLAIMS),
    # -- a trigger that does not raise ----------------------------------------------------------------------
    Mutation("trigger", "a trigger that returns counts as reproduced", "errkb/reproduce/compare.py", "    return Judgement(False, NOT_REPRODUCED, reason)", "    return Judgement(True, None, reason)", CLAIMS + ("tests/test_reproduce.py::test_planted_case",)),
    # -- the assertions that could not fail before (issue 24, Must 5) ----------------------------------------
    Mutation("loose assertions", "build keeps tags no record uses", "errkb/catalog.py", "                _drop_unused_tags(db)\n", "                pass\n", ("tests/test_build.py",)),
    Mutation("loose assertions", "a committed record's results all stale (its reproduction edited)", "reproductions/torchcrf-first-timestep-mask-off.py", '"""pytorch-crf\'s CRF defaults', '"""Edited: pytorch-crf\'s CRF defaults', ("tests/test_verifications.py::test_the_committed_catalog_has_a_result_for_every_record",)),
    Mutation("loose assertions", "a skipped-only record that needs no GPU", "reproductions/numpy-on-cuda-tensor.py", '"cuda_devices": 1,', '"cuda_devices": 0,', ("tests/test_verifications.py::test_the_committed_catalog_has_a_result_for_every_record",)),
    Mutation("loose assertions", "the match page runs one match at a time", "errkb/web/matching.py", "WORKERS = 4\n", "WORKERS = 1\n", ("tests/test_reliability_web.py::test_matches_run_side_by_side",)),
    # -- trust: unsigned, failed and forged results (issue 21) ------------------------------------------------
    Mutation("trust", "show/match/MCP count an unsigned result", "errkb/evidence.py", 'return bool(row["current"] and row["trusted"])', 'return bool(row["current"])', (FORGED,)),
    Mutation("trust", "the record page counts an unsigned result", "errkb/web/present.py", 'return _is_current(run) and run.get("trusted") != 0', "return _is_current(run)", (FORGED,)),
    Mutation("trust", "a wrong-error run teaches the matcher", "errkb/verifications.py", 'TEACHES_THE_MATCHER = ("verified",)', 'TEACHES_THE_MATCHER = RAN_THE_TRIGGER', ("tests/test_trust_results.py::test_only_current_signed_verified_results_feed_the_matcher",)),
    Mutation("trust", "a C++ error thrown into a generator counts as the library's", "errkb/reproduce/compare.py", 'elif how == "throw":', 'elif how == "never":', ("tests/test_native_site.py",)),
    Mutation("trust", "a C++ error set through ctypes counts as the library's", "errkb/reproduce/compare.py", 'elif how == "c-api":', 'elif how == "never":', ("tests/test_native_site.py",)),
    Mutation("terminal", "errkb search prints escapes raw", "errkb/cli.py", 'click.echo(inert(f"   {search.plain_marks(why)}"))', 'click.echo(f"   {search.plain_marks(why)}")', ("tests/test_web_terminal_guards.py::test_escape_sequences_in_record_text_are_shown_inert",)),
    # -- an API-change record's range (issue 19) ----------------------------------------------------------------
    Mutation("ranges", "the range is always labelled by torch", "errkb/runs.py", 'return "library" if len(libraries) > 1 and len(torches) <= 1 else "torch"', 'return "torch"', ("tests/test_verifications.py::test_an_api_change_record_is_labelled_by_its_own_library_releases", "tests/test_verifications.py::test_the_readme_table_names_the_lightning_releases_that_ran")),
]


def copy_repository(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def run_tests(copy: Path, tests: tuple[str, ...]) -> tuple[int, str, float]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONUNBUFFERED", None)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *tests]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        return -1, f"timed out after {TIMEOUT_S} s\n{exc.stdout or ''}", time.monotonic() - started
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def first_failure(output: str) -> str:
    found = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, re.M)
    return found.group(1) if found else "(see output)"


def main(argv: list[str]) -> int:
    if any(word.startswith("-") for word in argv):
        print(__doc__)
        return 0 if set(argv) <= {"-h", "--help"} else 2
    chosen = [m for m in MUTATIONS if not argv or any(word in f"{m.area} {m.name}" for word in argv)]
    if not chosen:
        print(f"no mutation's area or name contains any of {argv}; areas: {sorted({m.area for m in MUTATIONS})}")
        return 2
    with tempfile.TemporaryDirectory(prefix="errkb-mutations-") as folder:
        copy = Path(folder) / "repo"
        copy_repository(copy)
        baseline = tuple(dict.fromkeys(test for m in chosen for test in m.tests))
        code, output, seconds = run_tests(copy, baseline)
        if code != 0:
            print(f"The tests fail without any mutation ({seconds:.0f} s); fix them first:\n{output[-3000:]}")
            return 2
        print(f"Baseline: {len(baseline)} test targets pass unmutated ({seconds:.0f} s).\n")
        print("| # | area | mutation | file | result | caught by | s |")
        print("|---|---|---|---|---|---|---|")
        bad = 0
        for number, mutation in enumerate(chosen, 1):
            path = copy / mutation.file
            original = path.read_text(encoding="utf-8")
            if original.count(mutation.old) != 1:
                result, by, seconds = f"stale ({original.count(mutation.old)} occurrences)", "", 0.0
            else:
                path.write_text(original.replace(mutation.old, mutation.new), encoding="utf-8")
                try:
                    code, output, seconds = run_tests(copy, mutation.tests)
                finally:
                    path.write_text(original, encoding="utf-8")
                result, by = ("caught", first_failure(output)) if code != 0 else ("SURVIVED", "")
            bad += result != "caught"
            cells = [str(number), mutation.area, mutation.name, f"`{mutation.file}`", result, by, f"{seconds:.0f}"]
            print("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |", flush=True)
        print(f"\n{len(chosen) - bad} of {len(chosen)} mutations caught.")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
