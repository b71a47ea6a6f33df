"""The records browser and the home page's numbers: what a request asks for, and the SQL that answers it.

The browser takes Datasette's parameter names (`errorClass=`, `repo=`, `lastVerdict=`, `_tag=`, `_theme=`), so a
link built for the records table works here too; `q` is the full-text search, ordered by relevance (bm25).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from datasette.database import QueryInterrupted

from .. import search, themes
from . import facets as sampled
from .themes import has_themes

PAGE_SIZE = 50
FACET_SIZE = 12
NEVER = "none"  # lastVerdict=none: records no reproduction has judged yet
# Column filters and facets: URL parameter (the records table's column) -> the label a person reads.
FACETS = {"lastVerdict": "verdict", "repo": "library", "errorClass": "class"}
TAG_PARAM = "_tag"
# Weights of the FTS columns (errorMessage, documentation, triggerScenarios, commonSituations, solutions):
# a hit in the message counts most, as on /catalog/search.
RANK_FUNCTION = "bm25(10.0, 1.0, 1.0, 1.0, 1.0)"
WORD = re.compile(r"\w+")


@dataclass
class Request:
    q: str = ""
    filters: dict[str, list[str]] = field(default_factory=dict)  # column -> accepted values
    tags: list[str] = field(default_factory=list)  # all must hold
    page: int = 1
    themes: list[str] = field(default_factory=list)  # any may hold
    plan: search.Plan | None = None  # how q is searched (errkb.search: synonyms, tags, corrected words); set by plan_search

    @classmethod
    def from_args(cls, args) -> "Request":
        q = (args.get("q") or args.get("_search") or "").strip()
        filters = {column: values for column in FACETS if (values := _unique(args.getlist(column)))}
        try:
            page = max(1, int(args.get("page") or 1))
        except ValueError:
            page = 1
        return cls(q, filters, _unique(args.getlist(TAG_PARAM)), page, _unique(args.getlist(themes.PARAM)))

    def fts_query(self) -> str:
        """The FTS5 expression of q: the plan's, else the words of q, each quoted, so no character in a search can
        be FTS5 syntax; "" for no words."""
        if self.plan is not None:
            return self.plan.fts
        return " ".join(f'"{word}"' for word in WORD.findall(self.q))

    @property
    def searching(self) -> bool:
        return bool(self.fts_query() or (self.plan and self.plan.tags))


async def plan_search(db, request: Request) -> None:
    """Work out how q is searched, on the catalog's connection (it reads the index's vocabulary)."""
    if request.q:
        request.plan = await db.execute_fn(lambda conn: search.plan(conn, request.q))


@dataclass
class Page:
    rows: list[dict]
    total: int
    facets: list[dict]  # {"param", "label", "values": [{"value", "label", "count", "selected"}]}
    has_verified_on: bool
    has_next: bool
    timed_out: bool = False  # the search ran past Datasette's time limit
    facet_sample: int | None = None  # the facets count only the first this many of `total` (most relevant first)


def _unique(values) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


def where(request: Request, search: bool = True) -> tuple[str, dict]:
    """The WHERE clause (over `records`) and its parameters for the request's filters, and its search unless
    search=False."""
    clauses, params = [], {}
    if search and request.searching:
        found = []
        if request.fts_query():
            found.append("records.rowid in (select rowid from records_fts where records_fts match :fts)")
            params["fts"] = request.fts_query()
        if request.plan and request.plan.tags:
            found.append(f"records.slug in ({_named_tags(request.plan.tags, params)})")
        clauses.append("(" + " or ".join(found) + ")")
    for column, values in request.filters.items():
        names = []
        for i, value in enumerate(values):
            names.append(f":{column}_{i}")
            params[f"{column}_{i}"] = value
        # FACETS' keys are fixed column names, never user input, so they can be written into the SQL.
        test = f"records.{column} in ({', '.join(names)})"
        if column == "lastVerdict" and NEVER in values:
            test = f"({test} or records.lastVerdict is null)"
        clauses.append(test)
    for i, tag in enumerate(request.tags):
        clauses.append(f"records.slug in (select slug from record_tags where tag = :tag_{i})")
        params[f"tag_{i}"] = tag
    if request.themes:
        clauses.append(themes.filter_sql("records.slug", "themes"))
        params["themes"] = json.dumps(request.themes)
    return (" where " + " and ".join(clauses)) if clauses else "", params


def _named_tags(tags: list[str], params: dict) -> str:
    """The slugs having every tag the search named (errkb.search._all_tags_sql, with named parameters)."""
    names = []
    for i, tag in enumerate(tags):
        params[f"qtag_{i}"] = tag
        names.append(f":qtag_{i}")
    return f"select slug from record_tags where tag in ({', '.join(names)}) group by slug having count(*) = {len(tags)}"


async def records_page(db, request: Request) -> Page:
    if request.themes and not await has_themes(db):  # a catalog built before themes: no record is of one yet
        return Page([], 0, [], False, False)
    sql_where, params = where(request)
    columns = set(await db.table_columns("records"))
    has_verified_on = "verifiedOn" in columns
    select = "records.rowid as rowid, records.slug, records.errorMessage, records.errorClass, records.repo, " \
        "records.lastVerdict, records.lastVerifiedAt, records.tags" + (", records.verifiedOn" if has_verified_on else "")
    offset = (request.page - 1) * PAGE_SIZE
    sample = None
    try:
        if request.searching:
            order, total = await _ranked(db, request, offset + PAGE_SIZE + 1)
            rows = await _rows(db, select, order[offset:])
            # The facets count the most relevant matches, at most sampled.FACET_SAMPLE: counting every match of a
            # word found in most of 100,000 records reads every matching row (seconds); the ranking holds the top.
            counted = order[:sampled.FACET_SAMPLE]
            sql_where, params = _among(counted)
            sample = len(counted) if total > len(counted) else None
        else:
            rows = [dict(row) for row in (await db.execute(
                f"select {select} from records{sql_where} order by records.slug limit {PAGE_SIZE + 1} offset {offset}",
                params)).rows]
            total = (await db.execute(f"select count(*) from records{sql_where}", params)).rows[0][0]
            if sql_where and total > sampled.FACET_SAMPLE:  # unfiltered, the facets read the indexes alone and stay exact
                first = await db.execute(
                    f"select records.rowid from records{sql_where} order by records.slug limit {sampled.FACET_SAMPLE}", params)
                sql_where, params = _among([row[0] for row in first.rows])
                sample = sampled.FACET_SAMPLE
    except QueryInterrupted:
        return Page([], 0, [], has_verified_on, False, timed_out=True)
    for row in rows:
        row["tags"] = _json_list(row["tags"])
    if request.plan and rows:
        found = await db.execute_fn(lambda conn: search.snippets(conn, request.plan, [row["rowid"] for row in rows[:PAGE_SIZE]]))
        for row in rows:
            row["why"] = search.why_matched(request.plan, row["tags"], found.get(row["rowid"]))
    return Page(rows[:PAGE_SIZE], total, await facets(db, request, sql_where, params), has_verified_on,
                len(rows) > PAGE_SIZE, facet_sample=sample)


def _among(rowids: list[int]) -> tuple[str, dict]:
    """A WHERE clause for exactly these records."""
    return " where records.rowid in (select value from json_each(:errkb_ids))", {"errkb_ids": json.dumps(rowids)}


async def _ranked(db, request: Request, wanted: int) -> tuple[list[int], int]:
    """The rowids of a search's matches, most relevant first (at least sampled.FACET_SAMPLE of them, and as many as the page
    needs), and how many records match.

    FTS5 ranks inside the index (`rank MATCH`, `ORDER BY rank`) and no row is read from `records`: ranking through
    a join with bm25() read every matching (wide) row and took over a second for a word in all of 100,000 records.
    """
    filter_where, params = where(request, search=False)
    params = {**params, "fts": request.fts_query(), "rank": RANK_FUNCTION}
    within = f" and rowid in (select records.rowid from records{filter_where})" if filter_where else ""
    limit = max(wanted, sampled.FACET_SAMPLE)
    tagged, parts = [], []
    if request.plan and request.plan.tags:  # records with the tags the search named
        tags_sql = _named_tags(request.plan.tags, params)
        tagged = [row[0] for row in (await db.execute(
            f"select rowid from records where slug in ({tags_sql}){within} order by slug limit {limit}", params)).rows]
        parts.append(f"select rowid from records where slug in ({tags_sql}){within}")
    ranked = []
    if request.fts_query():
        ranked = [row[0] for row in (await db.execute(
            f"select rowid from records_fts where records_fts match :fts and rank match :rank{within} "
            f"order by rank limit {limit}", params)).rows]
        parts.append(f"select rowid from records_fts where records_fts match :fts{within}")
    if len(parts) == 1:
        total = (await db.execute(parts[0].replace("select rowid", "select count(*)", 1), params)).rows[0][0]
    else:
        total = (await db.execute(f"select count(*) from ({' union '.join(parts)})", params)).rows[0][0]
    return list(dict.fromkeys(ranked + tagged)), total  # by relevance, then records found by their tags alone


async def _rows(db, select: str, order: list[int]) -> list[dict]:
    """The page's rows, in the order given."""
    order = order[:PAGE_SIZE + 1]
    if not order:
        return []
    names = {f"r{i}": rowid for i, rowid in enumerate(order)}
    result = await db.execute(f"select {select} from records where records.rowid in ({', '.join(':' + n for n in names)})", names)
    found = {row["rowid"]: dict(row) for row in result.rows}
    return [found[rowid] for rowid in order if rowid in found]


async def facets(db, request: Request, sql_where: str, params: dict) -> list[dict]:
    """Counts per value of each facet; one whose query runs past the facet time limit is left out, as in Datasette."""
    found = []
    for column, label in FACETS.items():
        rows = await _facet_rows(
            db,
            f"select records.{column} as value, count(*) as count from records{sql_where} "
            f"group by records.{column} order by count(*) desc, value limit {FACET_SIZE}",
            params,
        )
        selected = request.filters.get(column, [])
        values = []
        for row in rows:
            value = row["value"] if row["value"] is not None else NEVER
            label_text = "never verified" if row["value"] is None and column == "lastVerdict" else value
            values.append({"value": value, "label": label_text, "count": row["count"], "selected": value in selected})
        found.append({"param": column, "label": label, "values": values})
    rows = await _facet_rows(db, themes.count_sql(f"select records.slug from records{sql_where}" if sql_where else None), params) \
        if await has_themes(db) else []
    found.insert(2, {  # after verdict and library
        "param": themes.PARAM, "label": "theme",
        "values": [{**theme, "selected": theme["value"] in request.themes} for theme in themes.ordered(rows)],
    })
    # Unfiltered, count straight from the tag index: collecting every slug first is too slow at 100k records.
    records = f"where slug in (select records.slug from records{sql_where}) " if sql_where else ""
    rows = await _facet_rows(
        db,
        f"select tag as value, count(*) as count from record_tags {records}"
        f"group by tag order by count(*) desc, tag limit {FACET_SIZE}",
        params,
    )
    found.append({
        "param": TAG_PARAM, "label": "tags",
        "values": [
            {"value": row["value"], "label": row["value"], "count": row["count"], "selected": row["value"] in request.tags}
            for row in rows
        ],
    })
    return found


async def _facet_rows(db, sql: str, params: dict) -> list:
    # Datasette's limit for facets (200 ms by default): over a large result, the rows still come back quickly.
    try:
        return (await db.execute(sql, params, custom_time_limit=db.ds.setting("facet_time_limit_ms"))).rows
    except QueryInterrupted:
        return []


async def home_numbers(db) -> dict:
    """What the home page counts: records by verdict, by library and by theme, and the records verified last."""
    total = (await db.execute("select count(*) from records")).rows[0][0]
    by_verdict = await db.execute(
        "select lastVerdict as value, count(*) as count from records group by lastVerdict order by count(*) desc"
    )
    by_library = await db.execute(
        f"select repo as value, count(*) as count from records group by repo order by count(*) desc, repo "
        f"limit {FACET_SIZE}"
    )
    # records.lastVerifiedAt has no index (sorting 100k wide rows by it ran past Datasette's 1 s limit): start
    # from the latest verified runs instead; lastVerifiedAt then keeps only runs of the records as they are now.
    recent = await db.execute(
        "select slug, errorMessage, errorClass, repo, lastVerdict, lastVerifiedAt from records "
        "where slug in (select slug from reproduction_runs where verdict = 'verified' order by started_at desc "
        "limit 100) and lastVerifiedAt is not null order by lastVerifiedAt desc, slug limit 5"
    )
    by_theme = await _facet_rows(db, themes.count_sql(), {}) if await has_themes(db) else []
    return {
        "total": total,
        "by_verdict": [
            {"value": row["value"] or NEVER, "label": row["value"] or "never verified", "count": row["count"]}
            for row in by_verdict.rows
        ],
        "by_library": [dict(row) for row in by_library.rows],
        "by_theme": themes.ordered(by_theme),
        "recent": [dict(row) for row in recent.rows],
    }


def _json_list(value) -> list:
    try:
        parsed = json.loads(value) if value else []
    except ValueError:
        return []
    return parsed if isinstance(parsed, list) else []
