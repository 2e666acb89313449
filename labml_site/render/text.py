"""A page in one language, in the form that is cached and sent between processes: the text
`localize` produced, without the code and placeholders that the language-free page data holds
once for all languages, and the means to put the two back together."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..findings import Finding
from ..typeset.page import PageData
from . import search_index
from .localize import BlockText, LocalPage, LocalSection


@dataclass(frozen=True)
class LocalText:
    """A page in one language without its code and placeholders: what `localize` produced, in a
    form that is cheap to cache and to send between processes. Code is left out because linking
    (which depends on every page) changes it after this is computed; the placeholders' MathML and
    code because the page data holds them once for all languages (`local_page` fills them in)."""

    title: str
    summary: str
    sections: tuple[tuple[tuple[BlockText, ...], bool], ...]  # (each block's text, all translated) per section
    counts: dict[str, int]
    findings: tuple[Finding, ...]  # lookups' findings
    catalog_findings: tuple[Finding, ...]  # the translation file's own (load-time) findings
    search_rows: str = ""  # its search entries as rows of the index (stored in its head, not with it)
    marker: str = ""  # "Not yet translated" in this language, shown on untranslated blocks
    alts: tuple[tuple[str, str], ...] = ()  # image alt text → its translation


def local_text(page: LocalPage, catalog_findings: Iterable[Finding] = (), search: Iterable = (), marker: str = "") -> LocalText:
    return LocalText(
        page.title,
        page.summary,
        tuple((s.texts, s.translated) for s in page.sections),
        dict(page.counts),
        tuple(page.findings),
        tuple(catalog_findings),
        search_index.rows(search),
        marker,
        tuple(page.alts.items()),
    )


def local_page(data: PageData, lang: str, text: LocalText) -> LocalPage:
    """The `LocalPage` that `localize` returns, rebuilt around (possibly linked) page data."""
    sections = [
        LocalSection(s.id, s.code_html, s.code_start, s.code_end, translated, s.has_prose, texts, s.blocks, text.marker, text.alts)
        for s, (texts, translated) in zip(data.sections, text.sections)
    ]
    return LocalPage(data, lang, text.title, text.summary, sections, dict(text.counts), list(text.findings), dict(text.alts))
