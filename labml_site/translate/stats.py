"""Translation coverage per page: how many blocks are translated, fuzzy, missing or invalid, and
how many translations a person marked reviewed (the optional review sidecar).

Pure functions over catalogs; `build.py stats` prints `render_text` or `render_json`.
"""
from __future__ import annotations

import json
from pathlib import Path
from dataclasses import asdict, dataclass

from . import review_state
from .catalog import Catalog


@dataclass(frozen=True)
class PageStats:
    page: str
    lang: str
    blocks: int  # distinct English keys the page produces
    translated: int  # render translated
    fuzzy: int  # only a suggestion waiting for a person
    missing: int  # no (or an empty) translation
    invalid: int  # a translation exists but fails an error-level check: English is rendered
    stale: int  # entries in the main file whose English the page no longer produces
    reviewed: int = 0  # translated blocks whose current translation a person marked reviewed (review_state.py)

    @property
    def percent(self) -> float:
        return 100.0 * self.translated / self.blocks if self.blocks else 100.0


def coverage(keys_by_page: dict[str, list[str]], catalogs: dict[str, Catalog]) -> list[PageStats]:
    """One `PageStats` per page, for the language of `catalogs` (page -> catalog).

    A page without a catalog counts as wholly missing.  Call once per language and concatenate.
    """
    stats = []
    for page in sorted(keys_by_page):
        keys = list(dict.fromkeys(keys_by_page[page]))
        catalog = catalogs.get(page)
        counts = {"translated": 0, "fuzzy": 0, "missing": 0, "invalid": 0}
        if catalog is None:
            counts["missing"] = len(keys)
        else:
            for key in keys:
                counts[catalog.lookup(key).status] += 1
        stale = 0 if catalog is None else len(set(catalog.entries) - set(keys))
        lang = catalog.lang if catalog is not None else ""
        reviewed = 0
        if catalog is not None:
            translated = [k for k in keys if catalog.lookup(k).status == "translated"]
            values = {k: e.value for k, e in catalog.entries.items()}
            reviewed = review_state.count_current(Path(catalog.path), values, translated)
        stats.append(PageStats(page, lang, len(keys), stale=stale, reviewed=reviewed, **counts))
    return stats


def totals(stats: list[PageStats]) -> list[PageStats]:
    """One summary row per language (page "TOTAL")."""
    by_lang: dict[str, list[PageStats]] = {}
    for row in stats:
        by_lang.setdefault(row.lang, []).append(row)
    return [
        PageStats(
            "TOTAL", lang,
            *(sum(getattr(r, f) for r in rows)
              for f in ("blocks", "translated", "fuzzy", "missing", "invalid", "stale", "reviewed")),
        )
        for lang, rows in sorted(by_lang.items())
    ]


_COLUMNS = ("page", "lang", "blocks", "translated", "%", "fuzzy", "missing", "invalid", "stale", "reviewed")


def _cells(row: PageStats) -> list[str]:
    return [row.page, row.lang, str(row.blocks), str(row.translated), f"{row.percent:.0f}",
            str(row.fuzzy), str(row.missing), str(row.invalid), str(row.stale), str(row.reviewed)]


def render_text(stats: list[PageStats]) -> str:
    """A fixed-width table, one row per page and language, then the totals."""
    rows = [list(_COLUMNS)] + [_cells(r) for r in stats]
    summary = [_cells(r) for r in totals(stats)]
    widths = [max(len(row[i]) for row in rows + summary) for i in range(len(_COLUMNS))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [line(r) for r in rows]
    if summary:
        out.append("  ".join("-" * w for w in widths))
        out += [line(r) for r in summary]
    return "\n".join(out) + "\n"


def to_dict(row: PageStats) -> dict:
    return {**asdict(row), "percent": round(row.percent, 1)}


def render_json(stats: list[PageStats]) -> str:
    return json.dumps(
        {"pages": [to_dict(r) for r in stats], "totals": [to_dict(r) for r in totals(stats)]},
        ensure_ascii=False, indent=2,
    ) + "\n"
