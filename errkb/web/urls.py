"""URLs of the plugin's pages, and of the GitHub pages a record points to."""

from __future__ import annotations

from urllib.parse import quote, urlencode

RECORD_PATH = "/-/errkb/record/"
MATCH_PATH = "/-/errkb/match"
BROWSE_PATH = "/-/errkb/records"
STATIC_PATH = "/-/static-plugins/errkb/"


def record(datasette, slug: str) -> str:
    return datasette.urls.path(RECORD_PATH + quote(slug, safe=""))


def match(datasette) -> str:
    return datasette.urls.path(MATCH_PATH)


def static(datasette, name: str) -> str:
    return datasette.urls.path(STATIC_PATH + name)


def records_table(datasette, database: str, browse: bool = False, **filters) -> str:
    """The records browser (browse=True: errkb's own page, a few columns) or Datasette's table of every column.

    Both take the same filters: errorClass=, repo=, lastVerdict=, _tag=, _theme=.
    """
    base = datasette.urls.path(BROWSE_PATH) if browse else datasette.urls.table(database, "records")
    return f"{base}?{urlencode(list(filters.items()))}" if filters else str(base)


def github(repo: str, sha: str, file_path: str, line: int, end: int | None = None) -> str:
    """https://github.com/owner/name/blob/sha/path#Lline[-Lend], each part quoted: no field can leave the URL."""
    url = f"https://github.com/{quote(repo, safe='/')}/blob/{quote(sha, safe='')}/{quote(file_path, safe='/')}"
    return url + f"#L{int(line)}" + (f"-L{int(end)}" if end is not None else "")


def github_commit(repo: str, sha: str) -> str:
    return f"https://github.com/{quote(repo, safe='/')}/commit/{quote(sha, safe='')}"
