"""What Datasette shows about the catalog: title, description, license, facets, column descriptions."""

from __future__ import annotations

from markupsafe import Markup, escape

from ..model import FIELD_DESCRIPTIONS
from . import queries

TITLE = "errkb: ML error records"
DESCRIPTION = (
    "Errors raised by ML libraries, one record each: the message, where it is raised, why, "
    "how to fix it, and whether a reproduction proved it true."
)
LICENSE = "Apache-2.0"
LICENSE_URL = "https://www.apache.org/licenses/LICENSE-2.0"
SOURCE = "records/*.json in the errkb repository, one file per record"

# {"tags": "tags"} is tags.TagsFacet: Datasette's {"array": "tags"} times out past a few thousand records.
# {"theme": "tags"} is themes.ThemeFacet: the records of each theme (errkb/themes.py), read off their tags.
FACETS = ["repo", {"theme": "tags"}, "errorClass", "errorType", "severity", {"tags": "tags"}, "lastVerdict"]

RECORD_COLUMNS = {
    **FIELD_DESCRIPTIONS,  # one description per record field, shared with the JSON Schema
    "datasetVersion": "Version (time) of the dataset the record file belongs to",
    "contentHash": "SHA-256 of the record file, for incremental builds",
    "sourceFile": "The record file in the repository",
    "lastVerdict": "Verdict of the latest reproduction run of the record as it is now "
    "(a skipped run counts only when no run got further)",
    "lastVerifiedAt": "When a reproduction last verified the record as it is now",
}

RUN_COLUMNS = {
    "verdict": "verified, not-reproduced, wrong-error, fix-failed, skipped, timeout or crashed",
    "reason": "Why, in words (expected vs actual for wrong-error)",
    "variant": "Which variant of the reproduction ran (e.g. a CPU stand-in)",
    "drift": "Where the raise line moved in the installed library, if it did",
    "started_at": "When the run started",
    "seconds": "How long it took",
    "library": "The package the record is about",
    "library_version": "Its installed version",
    "packages": "Installed versions of the packages the reproduction needs",
    "cuda_device_count": "CUDA devices visible to the run",
    "cuda_devices": "Their names",
    "stages": "What each stage (trigger, fix) did",
}

# An empty (or all-quotes) search escapes to '', an FTS5 syntax error; '""' (an empty phrase) matches no row.
SEARCH_SQL = """
select records.slug, records.errorClass, records.errorMessage,
  snippet(records_fts, -1, char(57344), char(57345), ' … ', 24) as snippet,
  records.lastVerdict
from records_fts join records on records.rowid = records_fts.rowid
where records_fts match coalesce(nullif(escape_fts(:q), ''), '""')
order by bm25(records_fts, 10.0, 1.0, 1.0, 1.0, 1.0)
limit 50
""".strip()
SNIPPET_START, SNIPPET_END = "\ue000", "\ue001"  # char(57344), char(57345): marks the hits in snippets


def build(datasette, databases: list[str]) -> dict:
    """Metadata for the instance and each catalog database, in get_metadata's shape."""
    if not databases:
        return {}
    return {
        "title": TITLE,
        "description": DESCRIPTION,
        "license": LICENSE,
        "license_url": LICENSE_URL,
        "source": SOURCE,
        "databases": {
            database: database_metadata(queries.table_names(datasette, database)) for database in databases
        },
    }


def database_metadata(tables: list[str]) -> dict:
    # The matcher's index (match_*) is an implementation detail: hidden, like the FTS tables.
    hidden = {name: {"hidden": True} for name in tables if name.startswith("match_")}
    # The build's bookkeeping (file sizes and mtimes, when it last ran): hidden too.
    hidden.update({name: {"hidden": True} for name in ("record_files", "build_info") if name in tables})
    return {
        "description": "The errkb catalog: one row per error record, with its fixes, tags and reproduction runs.",
        "tables": {
            **hidden,
            "records": {
                "description": "One row per error record. Click a message to open the record page.",
                "facets": FACETS,
                "columns": RECORD_COLUMNS,
            },
            "reproduction_runs": {
                "description": "Every run of `errkb reproduce`: what it proved, where, with which versions.",
                "facets": ["verdict", "torch", "torch_build", "cuda_device_count"],
                "sort_desc": "started_at",
                "columns": RUN_COLUMNS,
            },
            # Derived from records, for SQL; hidden from the home page's table list.
            "solutions": {"description": "The fixes of each record, in order.", "hidden": True},
            "prevention_tips": {"description": "The prevention tips of each record, in order.", "hidden": True},
            "tags": {"description": "Every tag in use.", "hidden": True},
            "record_tags": {"description": "Which record has which tag.", "facets": ["tag"], "hidden": True},
        },
        "queries": {
            "search": {
                "title": "Search the records",
                "description": "Full-text search over messages, documentation, scenarios and solutions.",
                "sql": SEARCH_SQL,
            }
        },
    }


def snippet_html(value: str) -> Markup:
    """A search snippet with its hits marked, everything else escaped."""
    text = str(escape(value))
    return Markup(text.replace(SNIPPET_START, "<mark>").replace(SNIPPET_END, "</mark>"))
