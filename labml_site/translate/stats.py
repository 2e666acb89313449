"""Translation coverage per page: how many of its entries are in each state of their verdict
(`verdict.py`: translated, repaired, fuzzy, untranslated, invalid; and the file's stale entries),
and how many translations a person marked reviewed (the optional review sidecar).

Pure functions over catalogs; `build.py stats` prints `render_text` or `render_json`.
"""
from __future__ import annotations

import json
from pathlib import Path
from dataclasses import asdict, dataclass

from . import review_state
from .catalog import Catalog, file_verdicts
from .verdict import tally


@dataclass(frozen=True)
class PageStats:
    page: str
    lang: str
    blocks: int  # the page's entries: distinct keys it produces (`render/entries.py`), figures' too
    translated: int  # shown as written
    repaired: int = 0  # shown, but repaired or made from other entries (the file should be fixed)
    fuzzy: int = 0  # only a suggestion waiting for a person
    untranslated: int = 0  # no (or an empty) translation
    invalid: int = 0  # a translation exists but is refused: English is rendered
    stale: int = 0  # entries in the main file whose English the page no longer produces
    reviewed: int = 0  # shown entries whose current translation a person marked reviewed (review_state.py)
    rejected: int = 0  # entries whose current translation a reviewer rejected (`review --apply`)

    @property
    def shown(self) -> int:
        return self.translated + self.repaired

    @property
    def percent(self) -> float:
        return 100.0 * self.shown / self.blocks if self.blocks else 100.0


def page_stats(page: str, keys: list[str], catalog: Catalog | None, lang: str = "") -> PageStats:
    """One page's counts in one language: each entry's verdict (`Catalog.verdict`), counted."""
    keys = list(dict.fromkeys(keys))
    if catalog is None:
        return PageStats(page, lang, len(keys), 0, untranslated=len(keys))
    verdicts = {key: catalog.verdict(key) for key in keys}
    counts = tally(verdicts.values())
    stale = sum(1 for v in file_verdicts(catalog, set(keys)).values() if v.state == "stale")
    shown = [k for k, v in verdicts.items() if v.shown]
    values = {k: e.value for k, e in catalog.entries.items()}
    reviewed = review_state.count_current(Path(catalog.path), values, shown)
    rejected = review_state.count_current(Path(catalog.path), values, keys, "rejected")
    return PageStats(page, catalog.lang, len(keys), counts["translated"], counts["repaired"], counts["fuzzy"],
                     counts["untranslated"], counts["invalid"], stale, reviewed, rejected)


def coverage(keys_by_page: dict[str, list[str]], catalogs: dict[str, Catalog]) -> list[PageStats]:
    """One `PageStats` per page, for the language of `catalogs` (page -> catalog).

    A page without a catalog counts as wholly untranslated.  Call once per language and concatenate.
    """
    return [page_stats(page, keys_by_page[page], catalogs.get(page)) for page in sorted(keys_by_page)]


_COUNTED = ("blocks", "translated", "repaired", "fuzzy", "untranslated", "invalid", "stale", "reviewed", "rejected")


def totals(stats: list[PageStats]) -> list[PageStats]:
    """One summary row per language (page "TOTAL")."""
    by_lang: dict[str, list[PageStats]] = {}
    for row in stats:
        by_lang.setdefault(row.lang, []).append(row)
    return [
        PageStats(
            "TOTAL", lang,
            *(sum(getattr(r, f) for r in rows)
              for f in _COUNTED),
        )
        for lang, rows in sorted(by_lang.items())
    ]


_COLUMNS = ("page", "lang", "blocks", "translated", "repaired", "%", "fuzzy", "untranslated", "invalid", "stale", "reviewed", "rejected")


def _cells(row: PageStats) -> list[str]:
    return [row.page, row.lang, str(row.blocks), str(row.translated), str(row.repaired), f"{row.percent:.0f}",
            str(row.fuzzy), str(row.untranslated), str(row.invalid), str(row.stale), str(row.reviewed), str(row.rejected)]


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
    return {**asdict(row), "shown": row.shown, "percent": round(row.percent, 1)}


def render_json(stats: list[PageStats]) -> str:
    return json.dumps(
        {"pages": [to_dict(r) for r in stats], "totals": [to_dict(r) for r in totals(stats)]},
        ensure_ascii=False, indent=2,
    ) + "\n"
