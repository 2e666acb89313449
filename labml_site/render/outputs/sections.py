"""`<page>.sections.json` (with `--markdown`): each page's sections in one language, for
programs that cite or align a page by section: its id, the source lines of its code, whether it
is shown translated, and its prose as plain text."""
from __future__ import annotations

import html
import json
import posixpath
import re
from dataclasses import dataclass
from typing import Iterator

from ..math_text import mathml_text
from .base import Output, Site

_MATH_RE = re.compile(r"<math\b.*?</math>", re.S)
_TAG_RE = re.compile(r"<[^>]*>")


def sections_path(url: str) -> str:
    return posixpath.splitext(url)[0] + ".sections.json"


def plain_prose(prose_html: str) -> str:
    """A section's prose as one line of plain text (math as the text of its MathML)."""
    text = _MATH_RE.sub(lambda m: html.escape(mathml_text(m.group(0)), quote=False), prose_html)
    return " ".join(html.unescape(_TAG_RE.sub(" ", text)).split())


@dataclass(frozen=True)
class PageSections(Output):
    """Known by the page's text alone (which covers its analysis): linking the code, which other
    pages change, does not change it."""

    lang: str
    rel: str
    url: str
    text: str  # the digest of the page's text

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if not site.config.markdown:
            return
        prefix = site.language(lang).prefix
        for file in site.files.pages:
            if site.published(file) and site.heads[file.rel].has_sections:
                yield prefix + sections_path(file.url), cls(lang, file.rel, file.url, site.text_digest(file.rel, lang)), file.rel

    def render(self, site: Site) -> str:
        local = site.unlinked_local(self.rel, self.lang)
        sections = [
            {
                "id": s.id,
                "lines": [s.code_start, s.code_end] if s.code_html else None,
                "translated": s.translated,
                "prose": plain_prose(s.prose_html) if s.has_prose else "",
            }
            for s in local.sections
        ]
        page = {"page": self.url, "lang": self.lang, "title": local.title, "sections": sections}
        return json.dumps(page, ensure_ascii=False, indent=1) + "\n"
