"""A page's entries: every key a translator translates for it, in one list for every count.

Title, summary and prose blocks come from the page's analysis (`PageData.keys`); its images' alt
texts and its SVG figures' labels (`render/figures.py`) are entries too, in the same translation
file. `check`, `stats`, `extract`, `review`, the editor and the status page all count and judge
these, so a page has one total everywhere. The figures are read here, at the edge: `figure_keys`
itself does no I/O.
"""
from __future__ import annotations

from collections.abc import Callable

from ..read.safe_files import UnsafeFile, read_regular
from ..read.structure import MAX_SOURCE_BYTES, SiteFiles
from ..render.figures import figure_keys, image_alts
from ..typeset.page import PageData


def asset_reader(files: SiteFiles) -> Callable[[str], str | None]:
    """`read(asset)`: the text of one of the site's assets (a figure), or None when it is not
    there, not UTF-8, not a plain file or larger than a source may be."""

    def read(asset: str) -> str | None:
        found = files.assets.get(asset)
        if found is None:
            return None
        try:
            return read_regular(found.path, MAX_SOURCE_BYTES).decode("utf-8")
        except (OSError, UnsafeFile, UnicodeDecodeError):
            return None

    return read


def entry_keys(page: PageData, read: Callable[[str], str | None]) -> list[str]:
    """The page's entries in page order, each once: its own keys, then its figures'."""
    own = page.keys
    known = set(own)
    placeholders = [ph for s in page.sections for b in s.blocks for ph in b.placeholders]
    return list(dict.fromkeys(own)) + [k for k in figure_keys(placeholders, page.assets, read) if k not in known]


def figure_entries(page: PageData, read: Callable[[str], str | None]) -> list[str]:
    """Only the figures' entries (what `entry_keys` adds to the page's own)."""
    return entry_keys(page, read)[len(dict.fromkeys(page.keys)):]


def svg_entries(page: PageData, read: Callable[[str], str | None]) -> list[str]:
    """Only its SVG figures' labels: the entries `localize` does not see (it reads no files)."""
    placeholders = [ph for s in page.sections for b in s.blocks for ph in b.placeholders]
    known = set(page.keys) | set(image_alts(placeholders))
    return [k for k in figure_keys([], page.assets, read) if k not in known]
