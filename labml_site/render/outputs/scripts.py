"""Scripts the site's pages load: the search index, each folder's English prose (the bilingual
toggle) and each folder's prose as Markdown in a language (a translation's notebooks). Scripts,
not JSON: pages opened from file:// cannot fetch JSON, but can load a script."""
from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Iterator

from ...read.structure import ORIGINALS_FOLDER, Folder, SourceFile
from .. import notebooks, search_index
from ..localize import section_html
from .base import Output, Site


def originals_path(folder: str) -> str:
    """The script holding the English prose of a folder's pages by page and section, for the
    bilingual toggle of every translated page (one file per folder, not per page and language:
    each file a site writes costs as much as rendering a page; loaded when the reader asks)."""
    return f"{ORIGINALS_FOLDER}/{folder + '/' if folder else ''}originals.js"


def markdown_path(folder: str) -> str:
    """The script holding, in one language (under its folder), the prose of a folder's Python
    pages as Markdown by page and section, for the notebooks site.js makes of translated pages
    (loaded on click: in the page, it made them a fifth larger)."""
    return f"{ORIGINALS_FOLDER}/{folder + '/' if folder else ''}markdown.js"


def figures_path(rel: str) -> str:
    """The script holding, in one language (under its folder), the figures a page's notebook
    embeds, for the notebook site.js makes of the translated page: one per page that shows
    figures, loaded on click (in the folder's markdown.js, every page's notebook loaded them all)."""
    folder, name = posixpath.split(posixpath.splitext(rel)[0])
    return f"{ORIGINALS_FOLDER}/{folder + '/' if folder else ''}{name}.figures.js"


def shows_figures(head) -> bool:
    """Whether a page's translated notebook takes figures from a `figures_path` script."""
    return head.is_python and head.notebook and head.has_sections and any(notebooks.is_figure(a) for a in head.assets)


def with_originals(site: Site, folder: Folder) -> list[SourceFile]:
    """The folder's pages (its index page too) that have sections to show the English of."""
    pages = ([folder.index] if folder.index else []) + [p for p in folder.pages if p is not folder.index]
    return [p for p in pages if p.rel in site.heads and site.heads[p.rel].has_sections and not site.heads[p.rel].redirect]


def with_notebooks(site: Site, folder: Folder) -> list[SourceFile]:
    return [p for p in with_originals(site, folder) if site.heads[p.rel].notebook]


def _folders(site: Site, wanted) -> list[Folder]:
    """The folders, in the order of their pages, that hold a page `wanted` says needs a script."""
    names = dict.fromkeys(f.folder for f in site.files.pages if wanted(site.heads[f.rel]))
    return [site.files.folders[name] for name in names]


@dataclass(frozen=True)
class SearchIndex(Output):
    """The language's `search-index.js`: every published page's rows (prepared with its text,
    and known by that text's digest), then the folder listings' entries."""

    lang: str
    pages: tuple[tuple[str, str], ...]  # (rel, digest of its text)
    folders: tuple[tuple[str, bytes], ...]  # (title, its rows)

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        pages = tuple((f.rel, site.text_digest(f.rel, lang)) for f in site.files.pages if site.published(f))
        listed = [(*site.folder_title(lang, f), f.url) for f in site.files.folders.values() if f.index is None]
        folders = tuple((e.title, search_index.rows([e]).encode("utf-8")) for e in search_index.folder_entries(listed))
        yield site.language(lang).prefix + "search-index.js", cls(lang, pages, folders), ""

    def render(self, site: Site) -> str:
        parts = [(site.text(rel, self.lang).title, site.text(rel, self.lang).search_rows) for rel, _ in self.pages]
        return search_index.index_js_from_rows(self.lang, parts + list(self.folders))


@dataclass(frozen=True)
class Originals(Output):
    """A folder's English prose by page, section and block, written once for every translation."""

    folder: str
    pages: tuple[tuple[str, str, str], ...]  # (rel, URL, digest of its analysis)

    per_language = False

    @classmethod
    def describe(cls, site: Site, lang: None = None) -> Iterator[tuple[str, Output, str]]:
        config = site.config
        if len(config.langs) < 2 or config.base_lang not in config.langs:
            return
        for folder in _folders(site, lambda head: head.has_sections):
            pages = tuple((p.rel, p.url, site.analysis_digest(p.rel)) for p in with_originals(site, folder))
            yield originals_path(folder.rel), cls(folder.rel, pages), folder.rel

    def render(self, site: Site) -> str:
        found = {}
        for rel, url, _ in self.pages:
            # each block's English apart: the toggle shows it under that block's translation
            found[url] = {
                s.id: [section_html((b,), (("english", ""),), "") for b in s.blocks] for s in site.analysis(rel).sections if s.has_prose
            }
        return "window.labmlOriginals = " + json.dumps(found, separators=(",", ":")) + ";\n"


@dataclass(frozen=True)
class MarkdownScript(Output):
    """Each of a folder's notebook pages' sections' prose in one language as Markdown."""

    lang: str
    base_lang: str
    pages: tuple[tuple[str, str, str, tuple], ...]  # (rel, URL, digest of its text, (asset, attachment name) embedded)

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if lang == site.config.base_lang:
            return
        prefix = site.language(lang).prefix
        for folder in _folders(site, lambda head: head.is_python and head.notebook and head.has_sections):
            # (the names of the attachments, not their bytes: an edited figure leaves the prose as it is)
            pages = tuple((p.rel, p.url, site.text_digest(p.rel, lang), _attachment_names(site, p.rel, lang)) for p in with_notebooks(site, folder))
            yield prefix + markdown_path(folder.rel), cls(lang, site.config.base_lang, pages), folder.rel

    def render(self, site: Site) -> str:
        """URL → each section's Markdown, its embedded figures named `attachment:name` (their
        bytes are in the page's `NotebookFigures` script)."""
        found = {}
        for rel, url, _, figures in self.pages:
            prose = site.markdown_prose(rel, self.lang)
            if figures:
                embedded = site.notebook_attachments(rel, self.lang).by_asset()
                prose = [notebooks.embed_figures(text, rel, embedded)[0] for text in prose]
            found[url] = prose
        return "window.labmlMarkdown = " + json.dumps(found, ensure_ascii=False, separators=(",", ":")) + ";\n"


def _attachment_names(site: Site, rel: str, lang: str) -> tuple[tuple[str, str], ...]:
    if not shows_figures(site.heads[rel]):
        return ()
    return tuple((asset, a.name) for asset, a in site.notebook_attachments(rel, lang).attachments)


@dataclass(frozen=True)
class NotebookFigures(Output):
    """The figures a translated page's notebook embeds, as nbformat attachments by name (site.js
    puts each in the cells that name it): `labmlAttachments[URL]`."""

    lang: str
    rel: str
    url: str
    figures: str  # the digest of what it embeds (`site.notebook_figures`)

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if lang == site.config.base_lang:
            return
        prefix = site.language(lang).prefix
        for file in site.files.pages:
            if site.published(file) and shows_figures(site.heads[file.rel]):
                yield prefix + figures_path(file.rel), cls(lang, file.rel, file.url, site.notebook_figures(file.rel, lang)), file.rel

    def render(self, site: Site) -> str:
        attached = {a.name: a.bundle() for _, a in site.notebook_attachments(self.rel, self.lang).attachments}
        return ("window.labmlAttachments = window.labmlAttachments || {};\n"
                f"window.labmlAttachments[{json.dumps(self.url)}] = " + json.dumps(attached, separators=(",", ":")) + ";\n")
