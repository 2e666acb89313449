"""The client-side search index of one language, built at build time.

One entry per section with prose (and one per folder index page): the page title, the section's
heading, its plain text and the names it defines. It is written as `search-index.js`, a script
that assigns a global, because pages opened from file:// cannot fetch JSON but can load scripts.
The browser side (`templates/static/search.js`) matches lower-cased substrings, which also works
for Chinese (no spaces between words) and for Russian word stems.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable
from html import unescape
from html.parser import HTMLParser

from .checks import PlainHtml, plain_tokens
from .localize import LocalPage

GLOBAL_NAME = "labmlSearchIndex"
SNIPPET_TEXT_LIMIT = 4000  # characters of text kept per section: enough to match and quote
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_SKIPPED_CLASSES = {"untranslated-marker", "section-link"}
_BLOCKS = {"p", "li", "div", "pre", "table", "tr", "ul", "ol", "blockquote", "dt", "dd", "br", "section"} | _HEADINGS


@dataclass(frozen=True)
class Entry:
    title: str  # the page title
    url: str  # page URL relative to the language root
    section: str  # section id ("" for the page itself)
    heading: str  # the section's first heading, "" when it has none
    text: str  # plain text of the prose
    names: tuple[str, ...] = ()  # names the section's code defines


class _Text(HTMLParser):
    """Plain text and the first heading of some prose HTML.

    Math keeps its TeX (from the MathML annotation) inline and becomes "…" in display; code
    keeps its text; translator notes and the "not yet translated" marker are dropped.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.heading_parts: list[str] | None = None
        self.heading = ""
        self.skip_depth = 0  # inside something whose text we drop
        self.stack: list[tuple[str, bool]] = []  # (tag, starts a skip)
        self.math_display = False
        self.in_annotation = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs) if attrs else {}
        classes = attributes.get("class")
        skip = bool(classes) and _has_skipped_class(classes)
        if tag == "math":
            self.math_display = attributes.get("display") == "block"
            if self.math_display:
                self.parts.append(" … ")
            skip = skip or self.math_display
            if not skip:
                # Inline math: only the TeX annotation's text is kept.
                self.skip_depth += 1
                self.stack.append((tag, True))
                return
        if tag == "annotation" and self.stack and not self.math_display:
            self.in_annotation = True
        if tag in _BLOCKS:
            self.parts.append(" ")
        if tag in _HEADINGS and not self.heading and self.heading_parts is None and not self.skip_depth:
            self.heading_parts = []
        if tag in ("br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "mspace"):
            if tag == "img" and attributes.get("alt") and not self.skip_depth:
                self.parts.append(f" {attributes['alt']} ")
            return  # void elements have no end tag
        self.stack.append((tag, skip))
        if skip:
            self.skip_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # `<br/>`, `<mspace/>`: nothing opens, so nothing must be closed.
        alt = dict(attrs).get("alt")
        if tag == "img" and alt and not self.skip_depth:
            self.parts.append(f" {alt} ")
        elif tag in _BLOCKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        stack = self.stack
        if not (stack and stack[-1][0] == tag) and all(open_tag != tag for open_tag, _ in stack):
            return  # a stray end tag closes nothing
        while self.stack:
            open_tag, skip = self.stack.pop()
            if skip:
                self.skip_depth -= 1
            if open_tag == "annotation":
                self.in_annotation = False
            if open_tag in _HEADINGS and self.heading_parts is not None:
                self.heading = _squash("".join(self.heading_parts))
                self.heading_parts = None
            if open_tag == tag:
                break
        if tag in _BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if self.in_annotation:
            self.parts.append(data)
            if self.heading_parts is not None:
                self.heading_parts.append(data)
            return
        if self.skip_depth:
            return
        self.parts.append(data)
        if self.heading_parts is not None:
            self.heading_parts.append(data)

    def result(self) -> tuple[str, str]:
        return self.heading, _squash("".join(self.parts))


@lru_cache(maxsize=256)
def _has_skipped_class(classes: str) -> bool:
    """Cached: prose has a few class values (`n`, `highlight`, …), each on many tags."""
    return not _SKIPPED_CLASSES.isdisjoint(classes.split())


def _squash(text: str) -> str:
    return " ".join(text.split())  # str.split and the regex `\s` agree on what whitespace is


# MathML is most of the tags in prose (dozens per formula), but all `_Text` keeps of a formula is
# its TeX annotation (inline) or " … " (display). `_compact_math` cuts each `<math>` element down
# to `<math …><annotation>TeX</annotation></math>`, which `_Text` turns into the same text,
# heading and state as the whole element: inside `<math>` it drops everything but the
# annotation's text, and MathML names mean nothing to it. That holds when the formula is of the
# form `tex_to_mathml` writes (MathML elements with double-quoted attributes, one TeX
# annotation of plain text) and no MathML element is opened or closed outside a formula (its end
# tag could close something inside one). `prose_text` uses the result only when the plain
# tokenizer accepts it, which also rules out a `<math>` in a comment, a script or an attribute
# value, and when no tag outside the formulas has a MathML name.
_MATHML_NAMES = (
    "semantics|annotation|mrow|mi|mn|mo|ms|mtext|mspace|msub|msup|msubsup|mfrac|msqrt|mroot|"
    "mover|munder|munderover|mstyle|mtable|mtr|mtd|menclose|mpadded|mphantom|merror|mfenced|"
    "mmultiscripts|mprescripts|none|maction|mglyph|malignmark|maligngroup|mlabeledtr"
)
_MATH_TAG_NAMES = frozenset(["math", *_MATHML_NAMES.split("|")])
_SP = "[ \\t\\n\\r\\f]"
_QUOTED_ATTRS = rf'(?:{_SP}+[a-zA-Z][-a-zA-Z0-9_:]*="[^"<>]*")*{_SP}*'
# A text run must reach the next "<", and the alternatives cannot match at the same place: there
# is one way to read a formula, so one that does not match fails in time linear in its length
# (never by trying every way to split its text, which never ends).
_MATH_ELEMENT = re.compile(
    rf"<math{_QUOTED_ATTRS}>"
    rf"((?:[^<]+(?=<)|<(?:{_MATHML_NAMES}){_QUOTED_ATTRS}/?>|</(?:{_MATHML_NAMES}){_SP}*>)*)</math>"
)
_TEX_ANNOTATION = re.compile(rf"<annotation{_QUOTED_ATTRS}>([^<]*)</annotation>")


def _compact_math(prose_html: str) -> tuple[str, int]:
    """`prose_html` with each formula compacted, and how many were; `(prose_html, 0)` when one
    of them is not of the form above."""
    if "<math" not in prose_html:
        return prose_html, 0
    parts: list[str] = []
    pos = formulas = 0
    while (at := prose_html.find("<math", pos)) >= 0:
        # A formula of the form above ends at the first "</math>": nothing inside it can be read
        # as that end tag.
        end = prose_html.find("</math>", at)
        compact = _compact_formula(prose_html[at:end + len("</math>")]) if end >= 0 else None
        if compact is None:
            return prose_html, 0
        parts += (prose_html[pos:at], compact)
        pos = end + len("</math>")
        formulas += 1
    parts.append(prose_html[pos:])
    return "".join(parts), formulas


@lru_cache(maxsize=2048)
def _compact_formula(element: str) -> str | None:
    """One `<math …>…</math>` cut down to its TeX annotation, or None when it is not of the form
    `tex_to_mathml` writes. Cached: a page has the same formulas in every language."""
    m = _MATH_ELEMENT.fullmatch(element)
    if m is None:
        return None
    inner = m.group(1)
    annotation = _TEX_ANNOTATION.search(inner)
    if annotation is None or inner.count("<annotation") != 1:
        return None
    return f"{element[:m.start(1)]}<annotation>{annotation.group(1)}</annotation></math>"


def _feed_plain(parser: _Text, plain: PlainHtml) -> None:
    """Feed what the plain-HTML tokenizer of `checks` read to `parser`'s handlers: the same calls
    as `html.parser` makes for that HTML (tests/test_fast_html.py)."""
    pieces, tags = plain
    data, start, start_end, end = (
        parser.handle_data, parser.handle_starttag, parser.handle_startendtag, parser.handle_endtag
    )
    for (name, attrs, kind), text in zip(tags, pieces[::2]):
        if text:
            data(unescape(text) if "&" in text else text)
        if kind == "end":
            end(name)
        elif kind == "start":
            start(name, attrs)
        else:
            start_end(name, attrs)
    rest = pieces[-1]
    if rest:
        data(unescape(rest) if "&" in rest else rest)


def _mathml_only_in_formulas(plain: PlainHtml, formulas: int) -> bool:
    """Each compact formula has four tags with MathML names (math, annotation and their end
    tags): any more are outside the formulas, where compacting is not exact."""
    return not formulas or sum(tag.name in _MATH_TAG_NAMES for tag in plain[1]) == 4 * formulas


def prose_text(prose_html: str) -> tuple[str, str]:
    """(first heading, plain text) of a section's prose HTML."""
    compact, formulas = _compact_math(prose_html)
    plain = plain_tokens(compact)
    if plain is not None and _mathml_only_in_formulas(plain, formulas):
        parser = _Text()
        _feed_plain(parser, plain)
        return parser.result()
    # Not plain HTML: html.parser reads it, MathML and all.
    return prose_text_strict(prose_html)


def prose_text_strict(prose_html: str) -> tuple[str, str]:
    """`prose_text` through `html.parser` alone: the reference the fast path is tested against."""
    parser = _Text()
    parser.feed(prose_html)
    parser.close()
    return parser.result()


def entries(local: dict[str, LocalPage], urls: dict[str, str]) -> list[Entry]:
    """Index entries of one language. `urls` maps a page's source rel to its URL (language-relative)."""
    found: list[Entry] = []
    for rel, page in local.items():
        url = urls.get(rel)
        if url is None or not page.sections:
            continue
        names_by_section: dict[str, list[str]] = {}
        for name, section_id in page.data.definitions:
            names_by_section.setdefault(section_id, []).append(name)
        found.append(Entry(page.title, url, "", "", page.summary))
        for section in page.sections:
            if not section.has_prose and section.id not in names_by_section:
                continue
            heading, text = prose_text(section.prose_html)
            if heading and text.startswith(heading):
                text = text[len(heading):].lstrip()  # shown as the result's title, not twice
            if heading == page.title:
                heading = ""  # the page's own H1: the title already says it
            found.append(
                Entry(page.title, url, section.id, heading, text[:SNIPPET_TEXT_LIMIT], tuple(names_by_section.get(section.id, ())))
            )
    return found


def folder_entries(folders: list[tuple[str, str, str]]) -> list[Entry]:
    """Entries for generated folder listings: (title, summary, url)."""
    return [Entry(title, url, "", "", summary) for title, summary, url in folders]


def index_js(lang: str, items: list[Entry]) -> str:
    """The script that defines the index. Compact arrays keep it small: [title, url, section,
    heading, text, names]; titles are stored once and referenced by number."""
    return index_js_from_rows(lang, ((e.title, rows([e])) for e in items))


_TITLE = "\x00"  # stands for a row's title number in `rows`: JSON text never holds a raw NUL


def _inert_json(value: object) -> str:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # "</" inside a string would not end a script loaded by src, but keep the file inert anyway.
    return body.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def rows(entries: Iterable[Entry]) -> str:
    """Entries that share one title (a page's), as the index's rows with the title's number left
    open: a page's part of the index, made once with its text and joined by `index_js_from_rows`
    into the same script `index_js` writes."""
    return ",".join(f"[{_TITLE}," + _inert_json([e.url, e.section, e.heading, e.text, list(e.names)])[1:] for e in entries)


def index_js_from_rows(lang: str, parts: Iterable[tuple[str, str]]) -> str:
    """`index_js` of the entries given as (title, `rows` of the entries with that title)."""
    titles: list[str] = []
    title_ids: dict[str, int] = {}
    pieces: list[str] = []
    for title, page_rows in parts:
        if not page_rows:
            continue
        if title not in title_ids:
            title_ids[title] = len(titles)
            titles.append(title)
        pieces.append(page_rows.replace(_TITLE, str(title_ids[title])))
    body = f'{{"lang":{_inert_json(lang)},"titles":{_inert_json(titles)},"entries":[{",".join(pieces)}]}}'
    return f"window.{GLOBAL_NAME}={body};\n"


def parse_index_js(text: str) -> dict:
    """The data inside a `search-index.js` (for tests and tools)."""
    prefix = f"window.{GLOBAL_NAME}="
    if not text.startswith(prefix):
        raise ValueError(f"not a search index: expected it to start with {prefix!r}")
    return json.loads(text[len(prefix):].rstrip().rstrip(";"))
