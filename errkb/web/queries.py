"""Which of Datasette's databases is an errkb catalog, and the (parameterised) SQL the pages run."""

from __future__ import annotations

import weakref

CATALOG_TABLES = {"records", "reproduction_runs"}

# Datasette instance -> {name of a database that is an errkb catalog: its table names}, found at startup.
_catalogs: "weakref.WeakKeyDictionary[object, dict[str, list[str]]]" = weakref.WeakKeyDictionary()


async def detect_catalogs(datasette) -> list[str]:
    found = {}
    for name, db in list(datasette.databases.items()):
        if name == "_internal" or db.is_memory:
            continue
        tables = await db.table_names()
        if CATALOG_TABLES <= set(tables):
            found[name] = tables
    _catalogs[datasette] = found
    return list(found)


def known_catalogs(datasette) -> list[str]:
    """Catalog names found so far; synchronous, for hooks that cannot await (metadata, render_cell)."""
    return list(_catalogs.get(datasette, {}))


def table_names(datasette, database: str) -> list[str]:
    return _catalogs.get(datasette, {}).get(database, [])


async def catalog_name(datasette) -> str | None:
    names = known_catalogs(datasette) or await detect_catalogs(datasette)
    return names[0] if names else None


async def record(db, slug: str) -> dict | None:
    rows = (await db.execute("select * from records where slug = :slug", {"slug": slug})).rows
    return dict(rows[0]) if rows else None


async def runs(db, slug: str) -> list[dict]:
    result = await db.execute(
        "select * from reproduction_runs where slug = :slug order by started_at desc, id desc",
        {"slug": slug},
    )
    return [dict(row) for row in result.rows]


async def summaries(db, slugs: list[str]) -> dict[str, dict]:
    """The few columns a list of matches shows, keyed by slug."""
    if not slugs:
        return {}
    params = {f"s{i}": slug for i, slug in enumerate(slugs)}
    placeholders = ", ".join(f":{name}" for name in params)
    result = await db.execute(
        "select slug, errorClass, errorMessage, severity, repo, lastVerdict, lastVerifiedAt "
        f"from records where slug in ({placeholders})",
        params,
    )
    return {row["slug"]: dict(row) for row in result.rows}
