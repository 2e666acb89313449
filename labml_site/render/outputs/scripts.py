"""Scripts the site's pages load: the search index, each folder's English prose (the bilingual
toggle) and each folder's prose as Markdown in a language (a translation's notebooks). Scripts,
not JSON: pages opened from file:// cannot fetch JSON, but can load a script."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterator

from ...read.structure import ORIGINALS_FOLDER, Folder, SourceFile
from .. import notebooks, search_index
from ..localize import section_html
from .base import Output, Site
from .programs import prose_markdown


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
    pages: tuple[tuple[str, str, str, str], ...]  # (rel, URL, digest of its text, of its figures)

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if lang == site.config.base_lang:
            return
        prefix = site.language(lang).prefix
        for folder in _folders(site, lambda head: head.is_python and head.notebook and head.has_sections):
            pages = tuple((p.rel, p.url, site.text_digest(p.rel, lang), site.notebook_figures(p.rel, lang)) for p in with_notebooks(site, folder))
            yield prefix + markdown_path(folder.rel), cls(lang, site.config.base_lang, pages), folder.rel

    def render(self, site: Site) -> str:
        """`labmlMarkdown`: URL → each section's Markdown, its figures as `attachment:name`;
        `labmlAttachments`: URL → name → the attachment (nbformat's form), which site.js puts in
        the cells that name it."""
        found, attached = {}, {}
        for rel, url, _, figures in self.pages:
            prose = prose_markdown(site.unlinked_local(rel, self.lang), self.lang == self.base_lang)
            if figures:
                embedded = site.notebook_attachments(rel, self.lang).by_asset()
                used: dict[str, dict[str, str]] = {}
                for i, text in enumerate(prose):
                    prose[i], cell = notebooks.embed_figures(text, rel, embedded)
                    used.update(cell)
                if used:
                    attached[url] = used
            found[url] = prose
        script = "window.labmlMarkdown = " + json.dumps(found, ensure_ascii=False, separators=(",", ":")) + ";\n"
        return script + "window.labmlAttachments = " + json.dumps(attached, separators=(",", ":")) + ";\n"
