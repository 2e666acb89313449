"""What the rest of the site needs to know about a page, without loading the page.

A page's listing on its folder index, the breadcrumbs under it, the translation status table, the
search index and code links on other pages read only a page's *head*: its titles, counts, flags,
definitions and search entries. Heads are small, so every head of the site is kept in one cache
record and read in one go, while the pages themselves (sections, highlighted code, MathML) are
loaded only for the outputs that must be rendered again. That is what makes a one-file edit cost
one file, not the whole site.
"""
from __future__ import annotations

import json

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..findings import Finding

if TYPE_CHECKING:
    from ..typeset.page import PageData
    from ..render.text import LocalText


@dataclass(frozen=True)
class PageHead:
    """The language-free facts about a page (from its `PageData`)."""

    rel: str
    url: str
    title: str  # English, also the title's translation key
    summary: str
    has_sections: bool  # False for a file that failed to parse (it is not published)
    is_python: bool
    definitions: tuple[tuple[str, str], ...]  # what code on other pages can link to
    assets: tuple[str, ...]
    findings: tuple[Finding, ...]
    blocks: int  # prose blocks, for the translation status table
    notebook: bool  # the page gets an .ipynb
    redirect: str = ""  # a page without prose that only points elsewhere (front matter `redirect:`)
    order: str = ""  # front matter `order:`, for the folder's reading order
    links: tuple[str, ...] = ()  # site paths the prose links to, in order (a folder index's list)
    notebook_plan: str = ""  # JSON: how a translated page makes its notebook (notebooks.browser_plan)


@dataclass(frozen=True)
class TextHead:
    """The facts about a page in one language (from its `LocalText`)."""

    title: str
    summary: str
    counts: dict[str, int]
    prose_sections: int
    translated_sections: int
    findings: tuple[Finding, ...]
    catalog_findings: tuple[Finding, ...]
    search_rows: bytes  # the page's search entries in this language, as rows of the index (UTF-8)

    @property
    def fully_translated(self) -> bool:
        return self.translated_sections == self.prose_sections and self.counts.get("title") != "missing"


def page_head(data: PageData) -> PageHead:
    from ..render.notebooks import browser_plan, wants_notebook

    return PageHead(
        data.rel,
        data.url,
        data.title,
        data.summary,
        bool(data.sections),
        data.is_python,
        data.definitions,
        data.assets,
        data.findings,
        sum(len(s.blocks) for s in data.sections),
        wants_notebook(data),
        data.redirect,
        data.order,
        data.links,
        json.dumps(browser_plan(data), ensure_ascii=False, separators=(",", ":")) if wants_notebook(data) else "",
    )


def text_head(text: LocalText, data: PageData) -> TextHead:
    prose = [translated for (_texts, translated), s in zip(text.sections, data.sections) if s.has_prose]
    return TextHead(
        text.title,
        text.summary,
        dict(text.counts),
        len(prose),
        sum(prose),
        text.findings,
        text.catalog_findings,
        text.search_rows.encode("utf-8"),
    )
