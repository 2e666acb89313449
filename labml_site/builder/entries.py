"""A page's entries: every key a translator translates for it, in one list for every count.

Title, summary and prose blocks come from the page's analysis (`PageData.keys`); its images' alt
texts and its SVG figures' labels (`render/figures.py`) are entries too, in the same translation
file. `check`, `stats`, `extract`, `review`, the editor and the status page all count and judge
these, so a page has one total everywhere. The figures are read here, at the edge: `figure_keys`
itself does no I/O.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..read.safe_files import UnsafeFile, read_regular
from ..read.structure import MAX_SOURCE_BYTES, SiteFiles
from ..render.figures import figure_keys, image_alts, svg_labels
from ..typeset.page import PageData


def asset_bytes(path: Path) -> bytes | None:
    """The bytes of an asset (a figure), or None when it is not there, not a plain file or larger
    than a source may be."""
    try:
        return read_regular(path, MAX_SOURCE_BYTES)
    except (OSError, UnsafeFile):
        return None


def asset_reader(files: SiteFiles) -> Callable[[str], str | None]:
    """`read(asset)`: the text of one of the site's assets (a figure), or None when it is not
    there, not UTF-8, not a plain file or larger than a source may be."""

    def read(asset: str) -> str | None:
        found = files.assets.get(asset)
        data = asset_bytes(found.path) if found is not None else None
        try:
            return data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            return None

    return read


def labels_reader(read: Callable[[str], str | None]) -> Callable[[str], list[str]]:
    """`labels(asset)`: an SVG figure's labels, read with `read` each time (the build knows them by
    the file's bytes instead: `BuildResult.figure_labels`)."""

    def labels(asset: str) -> list[str]:
        text = read(asset)
        return svg_labels(text) if text else []

    return labels


def entry_keys(page: PageData, read: Callable[[str], str | None], labels: Callable[[str], list[str]] | None = None) -> list[str]:
    """The page's entries in page order, each once: its own keys, then its figures' (`labels`,
    when given, tells a figure's labels instead of reading it with `read`)."""
    own = page.keys
    known = set(own)
    placeholders = [ph for s in page.sections for b in s.blocks for ph in b.placeholders]
    figures = figure_keys(placeholders, page.assets, labels or labels_reader(read))
    return list(dict.fromkeys(own)) + [k for k in figures if k not in known]


def figure_entries(page: PageData, read: Callable[[str], str | None], labels: Callable[[str], list[str]] | None = None) -> list[str]:
    """Only the figures' entries (what `entry_keys` adds to the page's own)."""
    return entry_keys(page, read, labels)[len(dict.fromkeys(page.keys)):]


def svg_entries(page: PageData, labels: Callable[[str], list[str]]) -> list[str]:
    """Only its SVG figures' labels: the entries `localize` does not see (it reads no files)."""
    placeholders = [ph for s in page.sections for b in s.blocks for ph in b.placeholders]
    known = set(page.keys) | set(image_alts(placeholders))
    return [k for k in figure_keys([], page.assets, labels) if k not in known]
