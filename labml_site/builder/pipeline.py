"""The pipeline, as pure stages: plain data in, plain data out, no caching, no processes.

    source bytes ──analyse──▶ PageData                      once per file (read, typeset)
    PageData + catalog ──localize──▶ LocalText            per language (translate, render)
    PageData + the site's symbols ──link──▶ linked code   once per file, after every file's analysis
    PageData + figures' bytes ──notebook──▶ .ipynb         once per Python file (figures embedded)

The memo layer (`memo.py`) memoises each call by the digest of the stage and its inputs;
`prepare.py` schedules them (independent calls in worker processes) and `site.py` renders the
outputs. A
stage is a function of its arguments alone, which is what makes it safe to memoise and to
run anywhere.
"""
from __future__ import annotations

import posixpath
from dataclasses import replace
from pathlib import Path

from ..findings import Finding
from ..render import notebooks, search_index
from ..render.localize import label_translator, localize
from ..render.text import LocalText, local_text
from ..translate.catalog import Catalog
from ..typeset import linking
from ..typeset.page import PageData, analyse


def analyse_file(rel: str, url: str, source: bytes) -> PageData:
    """A source file's language-free page: sections, prose keys, MathML, highlighted code."""
    try:
        # Universal newlines, as Path.read_text does.
        text = source.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as e:
        return PageData(rel, url, posixpath.basename(rel), "", (), (), (), (
            Finding("error", "source-encoding", f"not UTF-8 ({e.reason} at byte {e.start}); save the file as UTF-8", path=rel),
        ))
    try:
        return analyse(rel, url, text)
    except Exception as e:  # noqa: BLE001 - one file's failure is that file's finding, never the build's
        return failed_analysis(rel, url, _why(e))


# What a page whose analysis failed carries instead of its sections (prepare.py keeps its last
# good page, and does not remember the failure: the next build tries again).
ANALYSIS_FAILED = "analysis-failed"
WORKER_DIED = "worker-died"


def failed_analysis(rel: str, url: str, why: str, code: str = ANALYSIS_FAILED) -> PageData:
    return PageData(rel, url, posixpath.basename(rel), "", (), (), (), (
        Finding("error", code, f"{why}; the page is not updated (the site keeps its last good version, if any)", path=rel),
    ))


def _why(e: Exception) -> str:
    if isinstance(e, MemoryError):
        return "analysing this file needed more memory than there is (MemoryError); look for something huge in it"
    if isinstance(e, RecursionError):
        return "this file nests something too deeply to analyse (RecursionError)"
    return f"the builder failed on this file ({type(e).__name__}: {str(e)[:200]}); this is a bug in labml-site, please report it with the file"


def localize_file(data: PageData, lang: str, catalog: Catalog | None, marker: str, published: bool) -> LocalText:
    """The page's text in `lang` (the base language when `catalog` is None) with its search
    entries; `marker` is "Not yet translated" in that language, shown on untranslated blocks."""
    page = localize(data, lang, catalog, marker)
    search = search_index.entries({data.rel: page}, {data.rel: data.url}) if published else []
    return local_text(page, catalog.findings if catalog else (), search, marker)


def localize_at(data: PageData, lang: str, catalog: str | None, root: str, marker: str, is_index: bool) -> LocalText:
    """`localize_file` with the translation file at `catalog` (and its fuzzy sidecar; None for
    the base language), under the translations folder `root`; a page is published when it has
    sections or is a folder's index."""
    loaded = Catalog.load(Path(catalog), lang, root=root or None) if catalog is not None else None
    return localize_file(data, lang, loaded, marker, is_index or bool(data.sections))


def with_links(page: PageData, code: tuple[str | None, ...]) -> PageData:
    """The page with the code `link_file` linked (None: a section it left as it was)."""
    if all(c is None for c in code):
        return page
    return replace(page, sections=tuple(s if c is None else replace(s, code_html=c) for s, c in zip(page.sections, code)))


def link_file(page: PageData, symbols: linking.Symbols) -> tuple[str | None, ...]:
    """The page's code HTML per section with the site's names linked (None where nothing changed)."""
    linked = linking.link_page(page, linking.references(page, symbols))
    return tuple(None if new.code_html == old.code_html else new.code_html for old, new in zip(page.sections, linked.sections))


def notebook_figures(data: PageData, lang: str, catalog: str | None, assets: tuple[str, ...], *contents: bytes | None) -> notebooks.Figures:
    """What the page's notebook in `lang` embeds (`notebooks.embed_plan`): `contents` are the
    bytes of each of `assets` (None: missing or refused), the inputs that make an edited figure
    rebuild the notebook; `catalog`, the page's translation file, labels the SVGs (None: as drawn)."""
    translate = label_translator(Catalog.load(Path(catalog), lang)) if catalog is not None else None
    return notebooks.embed_plan(data, dict(zip(assets, contents)), translate)


def notebook_file(data: PageData, figures: notebooks.Figures | None = None) -> str | None:
    """The page's .ipynb (None for a page that gets none), its figures embedded."""
    return notebooks.notebook_json(data, figures) if notebooks.wants_notebook(data) else None
