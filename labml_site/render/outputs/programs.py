"""Outputs for programs rather than readers (with `--markdown`): each page as Markdown, and
`llms.txt`, each language's pages in reading order."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ...read.structure import Folder
from ...translate.verdict import SHOWN
from .. import markdown
from ..localize import LocalPage, valid_lists
from .base import Output, Site


def prose_markdown(local: LocalPage, base: bool) -> list[str]:
    """Each section's prose as Markdown: as written for the base language, else made from the
    translated HTML (math as TeX), unit by unit: a translated block's value, an untranslated
    one's English key."""
    data = local.data
    if base:
        return [s.prose_md for s in data.sections]
    return [
        markdown.section_markdown(
            (valid_lists(value if status in SHOWN and value else block.key), block.placeholders)
            for block, (status, value) in zip(section.blocks, shown.texts)
        ) if section.has_prose else ""
        for section, shown in zip(data.sections, local.sections)
    ]


@dataclass(frozen=True)
class PageMarkdown(Output):
    """`<page>.html.md`: the page as Markdown (prose, then its code)."""

    lang: str
    base_lang: str
    rel: str
    text: str  # the digest of its text (which covers its analysis)
    title: str
    is_python: bool

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if not site.config.markdown:
            return
        prefix = site.language(lang).prefix
        for file in site.files.pages:
            if site.published(file):
                head = site.heads[file.rel]
                yield prefix + file.url + ".md", cls(
                    lang, site.config.base_lang, file.rel, site.text_digest(file.rel, lang), site.text(file.rel, lang).title, head.is_python,
                ), file.rel

    def render(self, site: Site) -> str:
        local = site.unlinked_local(self.rel, self.lang)
        prose = site.markdown_prose(self.rel, self.lang)
        code = "python" if local.data.is_python else ""
        return markdown.page_markdown(local.title, local.data.url, list(zip(prose, (s.code for s in local.data.sections))), code)


@dataclass(frozen=True)
class LlmsTxt(Output):
    """`llms.txt` at the language's root: each page's Markdown, in reading order."""

    title: str
    summary: str
    rows: tuple[tuple[str, str, str], ...]
    heading: str

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if not site.config.markdown:
            return
        rows, summary = [], ""
        for item in site.reading_sequence():
            if isinstance(item, Folder):  # a folder's page, when it has a source of its own
                index = item.index
                item = index if index and index.rel in site.heads and site.heads[index.rel].has_sections else None
                if item is None:
                    continue
            text = site.text(item.rel, lang)
            summary = summary or text.summary
            rows.append((text.title, item.url + ".md", text.summary))
        language = site.language(lang)
        yield language.prefix + "llms.txt", cls(language.site_title, summary, tuple(rows), language.ui.gettext("Pages in this section")), ""

    def render(self, site: Site) -> str:
        return markdown.llms_txt(self.title, self.summary, list(self.rows), self.heading)
