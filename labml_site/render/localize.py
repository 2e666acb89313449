"""Language-free page data + a translation catalog → the page's text in one language.

This is the whole per-language stage: each entry's verdict (`Catalog.verdict`: the lookup, the
checks, the repair, the sanitiser), a placeholder substitution. A block whose translation is not
shown (untranslated, fuzzy, invalid) is shown in English with a visible marker, so a bad
translation never breaks a page.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ..findings import Finding
from ..typeset.page import BlockData, PageData
from ..read.prose import fill
from ..translate.catalog import Catalog
from ..translate.repair import UNTRANSLATED_MARK
from ..translate.verdict import SHOWN, tally
from .figures import image_alts

_TAG_RE = re.compile(r"<[^>]+>")
# The key format puts a docstring's `:return:` paragraph inside the `:param` list
# (`<ul><li>…</li>\n<p><em>Returns</em> …</p></ul>`). Keys must keep that shape to match existing
# translation files, but a page must not: `<ul>` may only hold `<li>`, for screen readers too.
_PARAGRAPH_IN_LIST = re.compile(r"(<p>(?:(?!</?(?:ul|p)>).)*</p>)</ul>", re.S)
_EMPTY_LIST = re.compile(r"<ul>\s*</ul>")


def valid_lists(fragment: str) -> str:
    """Move paragraphs that the key format nests in a list to just after it."""
    if "</p></ul>" not in fragment:
        return fragment
    return _EMPTY_LIST.sub("", _PARAGRAPH_IN_LIST.sub(r"</ul>\1", fragment))


# What one block shows in a language: (its verdict's state, the translation's HTML with
# placeholders still unfilled) when the page shows it (translated, repaired), ("english", "") for
# the base language, or (the state that keeps it English: untranslated, fuzzy, invalid; "").
BlockText = tuple[str, str]


@dataclass(frozen=True)
class LocalSection:
    id: str
    code_html: str
    code_start: int
    code_end: int
    translated: bool  # every block of this section is in the reader's language (shown)
    has_prose: bool
    texts: tuple[BlockText, ...] = ()  # what prose_html is made of (`section_html`), per block
    blocks: tuple[BlockData, ...] = ()  # the page's blocks of this section, which `texts` fill
    marker: str = ""  # "Not yet translated" in the page's language
    alts: tuple[tuple[str, str], ...] = ()  # the page's image alt texts → their translations

    @cached_property
    def prose_html(self) -> str:
        """The section's prose in its language (`section_html`), made when first read: the
        outputs that read a page's blocks and texts alone (its notebook's Markdown) never
        need it."""
        return section_html(self.blocks, self.texts, self.marker, dict(self.alts) if self.alts else None)


@dataclass
class LocalPage:
    data: PageData
    lang: str
    title: str
    summary: str
    sections: list[LocalSection]
    counts: dict[str, int] = field(default_factory=dict)  # verdict state → entries (title, summary, blocks, alt texts)
    findings: list[Finding] = field(default_factory=list)
    alts: dict[str, str] = field(default_factory=dict)  # image alt text → its translation


def plain_text(translated_html: str) -> str:
    """Titles and summaries are plain text: drop any markup a translator put in."""
    return html.unescape(_TAG_RE.sub("", translated_html)).strip()


def label_translator(catalog: Catalog | None) -> Callable[[str], str | None] | None:
    """How a figure's labels read in the language of `catalog` (the translation file of a page
    that shows it): a label's shown translation as plain text, else None (drawn as it is)."""
    if catalog is None:
        return None

    def translate(label: str) -> str | None:
        if label not in catalog:
            return None
        found = catalog.verdict(label)
        return plain_text(found.html) if found.shown and found.html else None

    return translate


def _untranslated(block: BlockData, marker: str, status: str) -> str:
    return (
        f'<div class="untranslated" lang="en" data-status="{status}">'
        f'<span class="untranslated-marker" role="note">{html.escape(marker)}</span>'
        f"{block.english}</div>"
    )


BLOCK_MARK_RE = re.compile(r"<!--en:\d+-->")


def block_mark(index: int) -> str:
    """The comment before a translated block of a section's prose: the page's script finds the
    block's English by it (site.js), the search index drops it (`BLOCK_MARK_RE`)."""
    return f"<!--en:{index}-->"


def section_html(blocks: tuple[BlockData, ...], texts: tuple[BlockText, ...], marker: str, alts: dict[str, str] | None = None) -> str:
    """A section's prose in a language: each block's text with the page's placeholders filled
    in. Kept apart from `localize` so that texts are cached and sent between processes without
    the MathML and code, which the page data already holds once for every language."""
    parts = []
    for index, (block, (status, translation)) in enumerate(zip(blocks, texts)):
        if status in SHOWN:
            if UNTRANSLATED_MARK in translation:  # partly translated: some blocks fell back
                translation = translation.replace(UNTRANSLATED_MARK, html.escape(marker))
            # Where each translated block starts, for the bilingual toggle, which puts the English
            # of that block (`block_mark`) under it: a comment, which no selector or layout sees.
            parts.append(block_mark(index) + fill(translation, block.placeholders))
        elif status == "english":
            parts.append(block.english)
        else:
            parts.append(_untranslated(block, marker, status))
    joined = valid_lists("".join(parts))
    return _with_alts(joined, alts) if alts and "<img" in joined else joined


_IMG_ALT = re.compile(r'(<img\b[^>]*?\balt=")([^"]*)(")')


def _alts(page: PageData, catalog: Catalog) -> dict[str, str]:
    """English alt text → its translation, for the page's images whose alt text the translation
    file translates (images keep their placeholder HTML in every language; their alt texts are
    extra keys of the page, like its figures' labels: `render/figures.py`)."""
    found: dict[str, str] = {}
    for s in page.sections:
        for block in s.blocks:
            for ph in block.placeholders:
                if not ph.startswith("<img"):
                    continue
                for alt in _IMG_ALT.findall(ph):
                    key = html.unescape(alt[1])
                    if key and key in catalog and key not in found:
                        hit = catalog.verdict(key)
                        if hit.shown and hit.html:
                            found[key] = plain_text(hit.html)
    return found


def _alt_keys(page: PageData) -> list[str]:
    """The English alt texts of the page's images, each once (entries of the page)."""
    return list(dict.fromkeys(image_alts(ph for s in page.sections for block in s.blocks for ph in block.placeholders)))


def _with_alts(fragment: str, alts: dict[str, str]) -> str:
    def alt(m: re.Match) -> str:
        translated = alts.get(html.unescape(m.group(2)))
        return m.group(0) if translated is None else m.group(1) + html.escape(translated, quote=True) + m.group(3)

    return _IMG_ALT.sub(alt, fragment)


def localize(page: PageData, lang: str, catalog: Catalog | None, marker: str) -> LocalPage:
    """The page in `lang`. With no catalog (the base language) everything is the English."""
    findings: list[Finding] = []
    if catalog is None:
        sections = []
        for s in page.sections:
            texts = (("english", ""),) * len(s.blocks)
            sections.append(LocalSection(s.id, s.code_html, s.code_start, s.code_end, True, s.has_prose, texts, s.blocks, marker))
        entries = dict.fromkeys([page.title, page.summary, *(b.key for s in page.sections for b in s.blocks), *_alt_keys(page)])
        counts = {state: 0 for state in tally(())} | {"translated": len([k for k in entries if k])}
        return LocalPage(page, lang, page.title, page.summary, sections, counts, [])

    verdicts = {}  # every entry of the page but its SVG figures' labels (the builder reads those)

    def text(key: str) -> str:
        if not key:
            return ""
        found = verdicts[key] = catalog.verdict(key)
        findings.extend(found.findings)
        return plain_text(found.html) if found.shown and found.html else key

    alts = _alts(page, catalog)
    alt_items = tuple(alts.items())
    sections = []
    for s in page.sections:
        texts: list[BlockText] = []
        for block in s.blocks:
            found = verdicts[block.key] = catalog.verdict(block.key)
            findings.extend(found.findings)
            texts.append((found.state, found.html if found.shown and found.html is not None else ""))
        translated = all(status in SHOWN for status, _ in texts)
        sections.append(LocalSection(s.id, s.code_html, s.code_start, s.code_end, translated, s.has_prose, tuple(texts), s.blocks, marker, alt_items))
    title, summary = text(page.title), text(page.summary)
    for key in _alt_keys(page):
        if key not in verdicts:
            verdicts[key] = catalog.verdict(key)
            findings.extend(verdicts[key].findings)
    return LocalPage(page, lang, title, summary, sections, tally(verdicts.values()), findings, alts)
