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
from operator import attrgetter
from typing import Iterable, NamedTuple
from html import unescape
from html.parser import HTMLParser
from json.encoder import encode_basestring as _encode_string  # what json.dumps uses (not ensure_ascii)

from ..read.markup import HEADING_TAGS, TEXT_BREAK_TAGS
from ..read.structure import url_path
from ..translate.html_outline import plain_tokens
from .localize import BLOCK_MARK_RE, LocalPage
from .math_text import tex_text

GLOBAL_NAME = "labmlSearchIndex"
SNIPPET_TEXT_LIMIT = 4000  # characters of text kept per section: enough to match and quote
_HEADINGS = HEADING_TAGS
_SKIPPED_CLASSES = {"untranslated-marker", "section-link"}
_VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "mspace"})  # no end tag
_BLOCKS = TEXT_BREAK_TAGS


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

    Inline math becomes readable text (`math_text.tex_text` of its TeX annotation: `j ≤ i`,
    `QKᵀ`, never TeX) and display math "…"; code
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
        self.annotation: list[str] = []  # the TeX of the inline formula being read

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
        if tag in _VOID:
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
            if open_tag == "annotation" and self.in_annotation:
                self.in_annotation = False
                text = tex_text("".join(self.annotation))
                self.annotation = []
                self.parts.append(text)
                if self.heading_parts is not None:
                    self.heading_parts.append(text)
            if open_tag in _HEADINGS and self.heading_parts is not None:
                self.heading = _squash("".join(self.heading_parts))
                self.heading_parts = None
            if open_tag == tag:
                break
        if tag in _BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if self.in_annotation:
            self.annotation.append(data)
            return
        if self.skip_depth:
            return
        self.parts.append(data)
        if self.heading_parts is not None:
            self.heading_parts.append(data)

    def result(self) -> tuple[str, str]:
        if self.in_annotation and self.annotation:  # a formula never closed keeps its text
            self.in_annotation = False
            self.parts.append(tex_text("".join(self.annotation)))
            self.annotation = []
        return self.heading, _squash("".join(self.parts))


@lru_cache(maxsize=256)
def _has_skipped_class(classes: str) -> bool:
    """Cached: prose has a few class values (`n`, `highlight`, …), each on many tags."""
    return not _SKIPPED_CLASSES.isdisjoint(classes.split())


def _squash(text: str) -> str:
    return " ".join(text.split())  # str.split and the regex `\s` agree on what whitespace is


# The fast path. `_Text` is a small stack machine that `html.parser` drives with one call per tag
# and per text. For prose of the plain form (below), `_fast_prose_text` cuts the fragment into
# texts and tokens itself and reads each distinct token once (cached) into a `_Token` saying what
# it does to that machine. Usual prose is nested: each end tag closes the element opened last and
# no element drops its content; then each token adds a fixed text (`_static_text`). Other prose
# goes through `_Text`'s steps in one loop (`_walk`). Only a fragment with something else in it
# (a comment, a raw-text element, odd quoting) is left to the parser.
#
# MathML is most of the tags in prose (dozens per formula), but all `_Text` keeps of a formula is
# its TeX annotation (inline; kept even inside skipped content, and in the heading) or " … "
# (display). So a whole formula is one token. That is exact when the formula is of the form
# `tex_to_mathml` writes (`_FORMULA`: MathML elements with double-quoted attributes, then the TeX
# annotation as plain text; the `</math>` closes whatever they left open) and no MathML element
# is opened or closed outside a formula (its end tag could close something inside one): any other
# tag with a MathML name, or a `<math` that does not start such a formula, sends the fragment to
# the parser.
_MATHML_NAMES = (
    "semantics|annotation|mrow|mi|mn|mo|ms|mtext|mspace|msub|msup|msubsup|mfrac|msqrt|mroot|"
    "mover|munder|munderover|mstyle|mtable|mtr|mtd|menclose|mpadded|mphantom|merror|mfenced|"
    "mmultiscripts|mprescripts|none|maction|mglyph|malignmark|maligngroup|mlabeledtr"
)
_MATH_TAG_NAMES = frozenset(["math", *_MATHML_NAMES.split("|")])
_SP = "[ \\t\\n\\r\\f]"
_QUOTED_ATTRS = rf'(?:{_SP}+[a-zA-Z][-a-zA-Z0-9_:]*="[^"<>]*")*{_SP}*'
# A formula's elements before its annotation: a second annotation's text would be kept too.
_BODY_NAMES = "|".join(name for name in _MATHML_NAMES.split("|") if name != "annotation")
# Text runs end at a "<" and tags start with one, so there is one way to read a formula: one that
# does not match fails in time linear in its length (never by trying every way to split a run).
_FORMULA = re.compile(
    r'<math xmlns="http://www\.w3\.org/1998/Math/MathML" display="(inline|block)"><semantics>'
    rf"[^<]*(?:<(?:(?:{_BODY_NAMES}){_QUOTED_ATTRS}/?|/(?:{_BODY_NAMES}){_SP}*)>[^<]*)*"
    r'<annotation encoding="application/x-tex">([^<]*)</annotation></semantics></math>'
)
# A tag candidate, as `html_outline.plain_tokens` cuts them: from a "<" to the next ">", no "<" between.
_TAG_CANDIDATE = re.compile(r"(<[^<>]*>)")

_START, _SKIP_START, _END, _EMPTY, _TEX = range(5)  # the kinds of `_Token`
_OPENS_HEADING, _CLOSES_HEADING = 1, 2  # `_Token.heading` of an h1-h6 start and end tag


class _Token(NamedTuple):
    """What one tag, or one whole formula, does to `_Text`'s state."""

    kind: int  # _START opens an element, _SKIP_START one whose content is dropped; _END; _EMPTY
    # opens nothing (`<br>`, `<img/>`, display math); _TEX is an inline formula
    name: str = ""  # the tag name (lowercased)
    space: str = ""  # added to the text: " " by a block's tags (words stay apart), " … " by display math
    alt: str = ""  # an image's " alt ", added to the text outside skipped content
    heading: int = 0  # _OPENS_HEADING, _CLOSES_HEADING or 0
    tex: str = ""  # an inline formula's TeX: added to the text and the heading, even when skipped
    out: str = ""  # what it adds to the text outside skipped content: space + alt + tex


_DISPLAY_MATH = _Token(_EMPTY, "math", " … ", out=" … ")


def _cut(prose_html: str) -> list[str]:
    """`prose_html` as text, token, text, …, text: a token is a tag candidate or a formula
    candidate, from a `<math` to the next `</math>`. Each `<math` starts one, so the texts and tag
    candidates hold none, and no part of the fragment is scanned twice. Formulas are found with
    `str.find`, not scanned tag by tag: they are half of prose."""
    split = _TAG_CANDIDATE.split
    pieces: list[str] = []
    pos = 0
    while (at := prose_html.find("<math", pos)) >= 0:
        end = prose_html.find("</math>", at)
        if end < 0:
            break  # the `<math` is left in a text, where it sends the fragment to the parser
        pieces += split(prose_html[pos:at])
        pos = end + len("</math>")
        pieces.append(prose_html[at:pos])
    pieces += split(prose_html[pos:])
    return pieces


@lru_cache(maxsize=4096)
def _token(source: str) -> _Token | None:
    """What a token of `_cut` does; None when the parser must read the fragment. Cached: a
    section is a few kinds of tag, repeated, and a page has the same formulas in every language."""
    if source.endswith("</math>"):
        return _formula(source)
    plain = plain_tokens(source)
    if plain is None or plain[1][0].name in _MATH_TAG_NAMES:
        return None
    name, attrs, kind = plain[1][0]
    space = " " if name in _BLOCKS else ""
    if kind == "end":
        return _Token(_END, name, space, heading=_CLOSES_HEADING if name in _HEADINGS else 0, out=space)
    attributes = dict(attrs)
    if kind == "startend" or name in _VOID:
        # Nothing opens. No such tag is both a block and an image, so `_Text`'s two orders of
        # adding a space and an alt text (start tag, self-closed tag) agree.
        alt = attributes.get("alt")
        alt = f" {alt} " if name == "img" and alt else ""
        return _Token(_EMPTY, name, space, alt, out=space + alt)
    classes = attributes.get("class")
    kind = _SKIP_START if classes and _has_skipped_class(classes) else _START
    return _Token(kind, name, space, heading=_OPENS_HEADING if name in _HEADINGS else 0, out=space)


def _formula(element: str) -> _Token | None:
    """What a formula candidate does; None when it is not of the form `tex_to_mathml` writes."""
    m = _FORMULA.fullmatch(element)
    if m is None:
        return None
    if m.group(1) == "block":
        return _DISPLAY_MATH
    tex = m.group(2)
    text = tex_text(unescape(tex) if "&" in tex else tex)
    return _Token(_TEX, "math", tex=text, out=text)


def _fast_prose_text(prose_html: str) -> tuple[str, str] | None:
    """`prose_text_strict(prose_html)`, or None when the fragment is not of the plain form: a "<"
    that starts no plain tag or formula, a comment, a raw-text element, MathML outside a formula."""
    pieces = _cut(prose_html)
    texts = pieces[::2]
    joined = "".join(texts)
    if "<" in joined:
        return None  # a "<" that starts no tag or formula
    tokens = list(map(_token, pieces[1::2]))
    if not all(tokens):
        return None
    if "&" in joined:
        pieces[::2] = texts = [unescape(text) if "&" in text else text for text in texts]
    if _nested(tokens):
        return _static_text(pieces, tokens)
    return _walk(texts, tokens)


def _nested(tokens: list[_Token]) -> bool:
    """Whether each end tag closes the element opened last and no element drops its content:
    then no end tag is stray or closes more than its own element, and nothing is skipped."""
    stack = [""]  # "" matches no end tag
    push, pop = stack.append, stack.pop
    for token in tokens:
        kind = token.kind
        if kind == _START:
            push(token.name)
        elif kind == _END:
            if pop() != token.name:
                return False
        elif kind == _SKIP_START:
            return False
    return True


_OUT = attrgetter("out")
_HEADING = attrgetter("heading")


def _static_text(pieces: list[str], tokens: list[_Token]) -> tuple[str, str]:
    """`_walk` of `_nested` tokens, `pieces` being the texts (unescaped) and the tokens' sources:
    each text is kept and each token adds its `out`."""
    heading = _static_heading(pieces[::2], tokens) if _OPENS_HEADING in map(_HEADING, tokens) else ""
    pieces[1::2] = map(_OUT, tokens)
    return heading, _squash("".join(pieces))


def _static_heading(texts: list[str], tokens: list[_Token]) -> str:
    """The first heading of `_nested` tokens: from a heading start tag to the first heading end
    tag after it (one opened inside it closes first), its texts and inline TeX; an empty one does
    not count."""
    headings = list(map(_HEADING, tokens))
    end = -1
    while True:
        try:
            start = headings.index(_OPENS_HEADING, end + 1)
            end = headings.index(_CLOSES_HEADING, start + 1)
        except ValueError:
            return ""  # no more headings, or one never closed
        inside = [texts[start + 1]]
        for i in range(start + 1, end):
            inside += (tokens[i].tex, texts[i + 1])
        heading = _squash("".join(inside))
        if heading:
            return heading


def _walk(texts: list[str], tokens: list[_Token]) -> tuple[str, str]:
    """`_Text`'s steps for `tokens` with `texts` (unescaped) between them."""
    parts: list[str] = []
    append = parts.append
    heading = ""
    heading_parts: list[str] | None = None  # while in the first heading
    skip_depth = 0  # open elements whose content is dropped
    stack: list[_Token] = []  # open elements
    for text, token in zip(texts, tokens):
        if text and not skip_depth:
            append(text)
            if heading_parts is not None:
                heading_parts.append(text)
        kind = token.kind
        if kind == _START or kind == _SKIP_START:
            if token.space:
                append(" ")
            if token.heading and heading_parts is None and not heading and not skip_depth:
                heading_parts = []
            stack.append(token)
            if kind == _SKIP_START:
                skip_depth += 1
        elif kind == _END:
            name = token.name
            if all(opened.name != name for opened in stack):
                continue  # a stray end tag closes nothing
            while True:  # close what is open, up to the element it ends
                opened = stack.pop()
                if opened.kind == _SKIP_START:
                    skip_depth -= 1
                if opened.heading and heading_parts is not None:
                    heading = _squash("".join(heading_parts))
                    heading_parts = None
                if opened.name == name:
                    break
            if token.space:
                append(" ")
        elif kind == _EMPTY:
            if token.space:
                append(token.space)
            if token.alt and not skip_depth:
                append(token.alt)
        else:  # _TEX
            append(token.tex)
            if heading_parts is not None:
                heading_parts.append(token.tex)
    if texts[-1] and not skip_depth:
        append(texts[-1])
    return heading, _squash("".join(parts))


def prose_text(prose_html: str) -> tuple[str, str]:
    """(first heading, plain text) of a section's prose HTML."""
    fast = _fast_prose_text(prose_html)
    # Not plain HTML: html.parser reads it, MathML and all.
    return fast if fast is not None else prose_text_strict(prose_html)


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
        url = url_path(url)  # search.js joins it to the language's root: a path, whatever the name
        names_by_section: dict[str, list[str]] = {}
        for name, section_id in page.data.definitions:
            names_by_section.setdefault(section_id, []).append(name)
        found.append(Entry(page.title, url, "", "", page.summary))
        for section in page.sections:
            if not section.has_prose and section.id not in names_by_section:
                continue
            prose = section.prose_html
            if "<!--en:" in prose:  # the bilingual toggle's block marks: no text, and the slow path
                prose = BLOCK_MARK_RE.sub("", prose)
            heading, text = prose_text(prose)
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
    return [Entry(title, url_path(url), "", "", summary) for title, summary, url in folders]


def index_js(lang: str, items: list[Entry]) -> str:
    """The script that defines the index. Compact arrays keep it small: [title, url, section,
    heading, text, names]; titles are stored once and referenced by number."""
    return index_js_from_rows(lang, ((e.title, rows([e]).encode("utf-8")) for e in items)).decode("utf-8")


_TITLE = "\x00"  # stands for a row's title number in `rows`: JSON text never holds a raw NUL


def _inert_json(value: object) -> str:
    return _inert(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _inert(body: str) -> str:
    # "</" inside a string would not end a script loaded by src, but keep the file inert anyway.
    return body.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def rows(entries: Iterable[Entry]) -> str:
    """Entries that share one title (a page's), as the index's rows with the title's number left
    open: a page's part of the index, made once with its text and joined by `index_js_from_rows`
    into the same script `index_js` writes."""
    entries = list(entries)
    try:
        # `_inert_json` of each row, in one go: every row ends with "]", so no "</" spans two.
        return _inert(",".join(map(_row, entries)))
    except TypeError:  # a field that is not a string: json.dumps writes it
        return ",".join(f"[{_TITLE}," + _inert_json([e.url, e.section, e.heading, e.text, list(e.names)])[1:] for e in entries)


def _row(e: Entry) -> str:
    """json.dumps of [title number, url, section, heading, text, names] (compact, not ASCII)
    from the C string encoder that json.dumps uses, without building an encoder per row."""
    names = ",".join(map(_encode_string, e.names))
    return f"[{_TITLE},{_encode_string(e.url)},{_encode_string(e.section)},{_encode_string(e.heading)},{_encode_string(e.text)},[{names}]]"


def index_js_from_rows(lang: str, parts: Iterable[tuple[str, bytes]]) -> bytes:
    """`index_js`, in UTF-8, of the entries given as (title, `rows` of the entries with that
    title, in UTF-8). Bytes: a language's index is megabytes of text in any script, which as a
    `str` would be decoded from the heads, widened and encoded again on every rebuild."""
    titles: list[str] = []
    title_ids: dict[str, int] = {}
    pieces: list[bytes] = []
    title = _TITLE.encode("utf-8")  # UTF-8 holds a NUL byte only for a NUL character
    for page_title, page_rows in parts:
        if not page_rows:
            continue
        if page_title not in title_ids:
            title_ids[page_title] = len(titles)
            titles.append(page_title)
        pieces.append(page_rows.replace(title, str(title_ids[page_title]).encode("ascii")))
    start = f'window.{GLOBAL_NAME}={{"lang":{_inert_json(lang)},"titles":{_inert_json(titles)},"entries":['
    return b"".join([start.encode("utf-8"), b",".join(pieces), b"]};\n"])


def parse_index_js(text: str) -> dict:
    """The data inside a `search-index.js` (for tests and tools)."""
    prefix = f"window.{GLOBAL_NAME}="
    if not text.startswith(prefix):
        raise ValueError(f"not a search index: expected it to start with {prefix!r}")
    return json.loads(text[len(prefix):].rstrip().rstrip(";"))
