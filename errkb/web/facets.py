"""Column facets that stay fast on a large filtered records table: past FACET_SAMPLE rows, count a labelled sample.

Datasette's column facet counts `select col, count(*) from (<the page's query>) group by col`. With a search
that matches two records in three of 100,000, each facet reads every matching (wide) row again, ~150 ms apiece,
so the page takes seconds and facets past `facet_time_limit_ms` silently disappear. Here, on the records table
of an errkb catalog, a filtered result larger than FACET_SAMPLE rows is counted over its first FACET_SAMPLE rows,
read once per request, and the facet says so (`sample`, `sample_of`, shown by _facet_results.html).
Unfiltered, the counts read the column's index and stay exact; anywhere else this is Datasette's column facet.
"""

from __future__ import annotations

import json
import re

from datasette.facets import ColumnFacet

from . import queries

FACET_SAMPLE = 2000
WHERE = re.compile(r"\bwhere\b", re.I)
SCOPE_KEY = "errkb_facet_sample"


async def counted_sql(facet) -> tuple[str, dict, int | None]:
    """The SQL and parameters the facet should count over, and the sample size when it is a sample (else None).

    The sample's slugs are read once per request and shared by its facets (kept in the request's scope).
    """
    catalog = facet.table == "records" and facet.database in queries.known_catalogs(facet.ds)
    if not catalog or not WHERE.search(facet.sql) or await facet.get_row_count() <= FACET_SAMPLE:
        return facet.sql, facet.params, None
    scope = facet.request.scope
    if SCOPE_KEY not in scope:
        rows = await facet.ds.execute(facet.database, f"select slug from ({facet.sql}) limit {FACET_SAMPLE}", facet.params)
        scope[SCOPE_KEY] = json.dumps([row[0] for row in rows.rows])
    sql = "select * from records where slug in (select value from json_each(:errkb_sample))"
    return sql, {**facet.params, "errkb_sample": scope[SCOPE_KEY]}, FACET_SAMPLE


async def label(facet, results: list[dict], sample: int | None) -> list[dict]:
    if sample is not None:
        for result in results:
            result.update(sample=sample, sample_of=await facet.get_row_count())
    return results


class SampledColumnFacet(ColumnFacet):
    async def facet_results(self):
        sql, params, sample = await counted_sql(self)
        whole = self.sql, self.params
        self.sql, self.params = sql, params
        try:
            results, timed_out = await super().facet_results()
        finally:
            self.sql, self.params = whole
        return await label(self, results, sample), timed_out
