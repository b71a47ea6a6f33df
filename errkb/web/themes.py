"""The records table's theme facet and `?_theme=` filter (themes: errkb/themes.py), through record_themes.

The facet {"theme": "tags"} (URL `?_facet_theme=tags`) counts the records of each theme; its links toggle
`_theme=`. Repeated, `_theme=` keeps the records of any of the themes given. A catalog.db built before themes
has no record_themes: no theme facet, and `_theme=` keeps no record, until `errkb build` adds it.
"""

from __future__ import annotations

import json

from datasette.database import QueryInterrupted
from datasette.facets import Facet
from datasette.filters import FilterArguments
from datasette.utils import path_with_added_args, path_with_removed_args

from .. import themes
from .facets import WHERE, counted_sql, label

PARAM = "errkb_themes"


async def has_themes(db) -> bool:
    return themes.TABLE in await db.table_names()


async def theme_filter(request, db) -> FilterArguments | None:
    wanted = list(dict.fromkeys(request.args.getlist(themes.PARAM)))
    if not wanted:
        return None
    return FilterArguments(
        [themes.filter_sql("slug", PARAM) if await has_themes(db) else "0"],
        params={PARAM: json.dumps(wanted)},
        human_descriptions=[f'about {" or ".join(themes.label(theme) for theme in wanted)}'],
    )


class ThemeFacet(Facet):
    type = "theme"

    async def suggest(self):
        return []

    async def facet_results(self):
        results, timed_out, sample = [], [], None
        selected = set(self.request.args.getlist(themes.PARAM))
        for item in self.get_configs():
            column = item["config"].get("column") or item["config"]["simple"]
            if self.table != "records" or column != "tags" or not await has_themes(self.ds.get_database(self.database)):
                continue
            counted, params, sample = await counted_sql(self)
            sql = themes.count_sql(f"select slug from ({counted})" if WHERE.search(self.sql) else None)
            try:
                rows = await self.ds.execute(
                    self.database, sql, params, truncate=False, custom_time_limit=self.ds.setting("facet_time_limit_ms"),
                )
            except QueryInterrupted:
                timed_out.append("theme")
                continue
            values = []
            for theme in themes.ordered(rows.rows):
                chosen = theme["value"] in selected
                change = path_with_removed_args if chosen else path_with_added_args
                values.append({
                    **theme, "selected": chosen,
                    "toggle_url": self.ds.absolute_url(self.request, change(self.request, {themes.PARAM: theme["value"]})),
                })
            results.append({
                "name": "theme",
                "type": "tags",  # shown as "theme (tags)": read off the records' tags
                "results": values,
                "hideable": item["source"] != "metadata",
                "toggle_url": self.ds.urls.path(path_with_removed_args(self.request, {"_facet_theme": column})),
                "truncated": False,
            })
        return await label(self, results, sample), timed_out
