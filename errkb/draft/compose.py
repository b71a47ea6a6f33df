"""The draft itself: a record (every field errkb could fill from the captured error, stubs for the rest) and its
reproduction (trigger() = the snippet, NEEDS from the installed versions, stub demonstrations)."""

from __future__ import annotations

import math
import re
import secrets
from datetime import datetime, timezone
from pprint import pformat

from packaging.version import Version

from ..model import SCHEMA_VERSION
from .capture import Captured
from .generalise import TOKEN, head
from .snippet import trigger_body
from .source import UNRESOLVED, Source
from .stubs import MARKER, stub

# A first guess of errorType from the class; the author reviews it (the summary says so).
ERROR_TYPES = {
    "ModuleNotFoundError": "compatibility", "ImportError": "compatibility", "AttributeError": "compatibility",
    "TypeError": "type", "ValueError": "validation", "IndexError": "validation", "KeyError": "configuration",
    "FileNotFoundError": "io", "OSError": "io", "PermissionError": "io", "MemoryError": "resource",
    "OutOfMemoryError": "resource", "AssertionError": "validation", "NotImplementedError": "compatibility",
}
HANDLING = {"validation": "validation", "type": "validation", "shape": "validation", "compatibility": "configuration",
            "configuration": "configuration", "io": "configuration", "resource": "fallback"}
STOP_WORDS = {"the", "a", "an", "of", "to", "in", "on", "is", "be", "and", "or", "for", "but", "got", "with", "at", "it", "this"}


def error_type(captured: Captured, api_change: bool) -> str:
    if api_change:
        return "compatibility"
    for name in captured.classes:
        bare = name.rsplit(".", 1)[-1]
        if bare in ERROR_TYPES:
            return ERROR_TYPES[bare]
    return "runtime"


def suggested_slug(captured: Captured, distribution: str) -> str:
    words = re.findall(r"[a-z]+", TOKEN.sub(" ", head(captured.message.strip("'\""))).lower())
    kept = [w for w in words if w not in STOP_WORDS and len(w) > 1][:6]
    prefix = re.sub(r"[^a-z0-9]+", "-", distribution.lower()).strip("-")
    slug = "-".join([prefix, *kept]) if prefix not in ("torch",) else "-".join(kept)
    return slug[:80].strip("-") or f"{prefix}-error"


def kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text).lower()).strip("-")


def suggested_tags(captured: Captured, distribution: str, given: tuple[str, ...], api_change: bool) -> list[str]:
    tags = [*map(kebab, given), kebab(distribution), kebab(captured.cls.rsplit(".", 1)[-1])]
    if api_change:
        tags.append("api-change")
    return [tag for i, tag in enumerate(tags) if tag and tag not in tags[:i]]


def plain_version(version: str) -> str:
    """2.13.0 for 2.13.0+cpu: the release, whatever local build of it is installed."""
    return Version(version).public if version else version


def needs_packages(captured: Captured) -> dict[str, str]:
    """Every distribution the snippet imports or the traceback passes through, pinned to its installed release."""
    packages = {}
    for name, facts in sorted(captured.distributions.items()):
        if facts.get("version"):
            packages[name] = f"=={plain_version(facts['version'])}"
    return packages


def record_of(captured: Captured, source: Source, pattern: str, slug: str, tags: list[str], api_change: bool) -> dict:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    site = captured.site
    unresolved = stub(f"{UNRESOLVED}: the installed {site.distribution} {site.version} names no source commit "
                      "(no git_version, no VCS direct_url.json); find its release tag's commit, check the file there is "
                      "byte-identical to the installed one, and write it here (or rerun errkb draft with --sha)")
    kind = error_type(captured, api_change)
    url = (f"https://github.com/{source.repo}/blob/{source.commit}/{source.file_path}#L{source.start}-L{source.end}"
           if source.repo and source.commit else stub("the URL follows from repo, analyzedSha and filePath once both are known"))
    record = {
        "id": secrets.token_hex(8),
        "repo": source.repo or stub(f"owner/name of {site.distribution}'s GitHub repository (its metadata names none)"),
        "slug": slug,
        "errorCode": None,
        "errorMessage": captured.message,
        "messagePattern": pattern,
        "errorType": kind,
        "errorClass": captured.cls,
        "httpStatus": None,
        "severity": "error",
        "filePath": source.file_path,
        "lineNumber": source.line,
        "sourceCode": source.excerpt if source.excerpt is not None else stub(
            f"the lines around {source.file_path}:{source.line} at commit {source.commit or UNRESOLVED} (the wheel has no "
            "C++ source: copy them from upstream at that commit, and set PROVENANCE's excerpt to how they were checked)"),
        "sourceCodeStart": source.start,
        "sourceCodeEnd": source.end,
        "githubUrl": url,
        "documentation": stub("what happened and why, in your own words; older wordings and classes, and which are matched"),
        "triggerScenarios": stub("the concrete situation the reproduction's trigger() builds"),
        "commonSituations": stub("where users meet this error"),
        "solutions": [stub("solution 1: a fix that reproductions/" + slug + ".py demonstrates in solution_1()")],
        "exampleFix": stub("# before\n...\n\n# after\n... (keep the user's objects; CODE_NAMES lists the names it reads)"),
        "handlingStrategy": HANDLING.get(kind, "refactor"),
        "validationCode": stub("a check that flags the trigger's situation and passes every VALID situation (or null)"),
        "typeGuard": None,
        "tryCatchPattern": None,
        "preventionTips": [stub("how to avoid the error")],
        "tags": tags,
        "backgroundTag": kebab(f"{site.distribution}-{kind}"),
        "analyzedSha": source.commit or unresolved,
        "analyzedAt": now,
        "schemaVersion": SCHEMA_VERSION,
    }
    return {"record": record, "datasetVersion": now}


def reproduction_of(captured: Captured, source: Source, snippet_text: str, snippet_name: str, slug: str,
                    wording_source: str, extra_doc: str = "", needs: dict | None = None, extra_code: str = "") -> str:
    site = captured.site
    timeout = max(60, math.ceil(captured.seconds * 4 + 30))
    needs = needs or {"packages": needs_packages(captured), "cuda_devices": 0, "timeout_s": timeout}
    chain = "".join(f"\n  caused by / during: {line}" for line in captured.chain)
    where = f"{source.file_path}:{source.line}" + (f" ({site.native['func'][:80]})" if site.native else "")
    first_line = captured.message.split("\n")[0][:200]
    doc = (
        f'"""{MARKER}: one paragraph: the story of the error, which variant runs where.\n\n'
        f"Drafted by `errkb draft` from {snippet_name} on {site.distribution} {site.version}, Python {captured.python}:\n"
        f"  {captured.cls}: {first_line}\n  raised at {where}{chain}\n"
        f"Commit: {source.commit or UNRESOLVED} ({source.commit_from}). NEEDS pins the releases the draft ran on: widen\n"
        f"them only with results (errkb reproduce {slug} --with DIST==VERSION).{extra_doc}\n"
        '"""\n'
    )
    wordings = [
        {"text": head(captured.message), "source": wording_source, "match": "pattern"},  # a whole sentence, not a cut
    ]
    text = doc + "\n".join([
        f"NEEDS = {pformat(needs, width=110, sort_dicts=False)}",
        'SOLUTIONS = {1: "solution_1"}',
        'CODE = {"exampleFix": "example_fix", "validationCode": "guard"}',
        f'CODE_NAMES = {{"exampleFix": [], "validationCode": []}}  # {MARKER}: the user\'s names each field reads',
        f'VALID = {{"{MARKER}": "valid_situation"}}',
        "WORDINGS = [",
        *(f"    {w!r}," for w in wordings),
        f"    # {MARKER}: other wordings users paste (older releases with a committed result, or cited issues owner/repo#N)",
        "]",
        f"PROVENANCE = {source.provenance!r}",
        "",
        "import errkb_record as record",
        "",
        "",
        "def trigger():",
        trigger_body(snippet_text),
        "",
        "",
        "def solution_1():",
        f'    raise NotImplementedError("{MARKER}: apply exactly solution 1 to the trigger\'s situation and assert it works")',
        "",
        "",
        "def example_fix():",
        f'    raise NotImplementedError("{MARKER}: record.run(\\"exampleFix\\", {{...the user\'s objects...}}, section=\\"after\\")")',
        "",
        "",
        "def guard():",
        f'    raise NotImplementedError("{MARKER}: assert not record.check(\\"validationCode\\", trigger_names); '
        f'assert record.check(\\"validationCode\\", fixed_names)")',
        "",
        "",
        "def valid_situation():",
        f'    raise NotImplementedError("{MARKER}: return the names the guard sees in a valid situation")',
        extra_code,
    ])
    return text.rstrip("\n") + "\n"
