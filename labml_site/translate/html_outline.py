"""What the checks need to know about an HTML fragment (a key or a translation), from one pass.

`summarize_html` gives the tags with their positions, the top-level blocks (cut as
`read/markup.py`'s `unit_kind` says), content outside blocks, stray and unclosed tags;
`outline_html` the same without positions, shared by every fragment with the same tags (a key and,
nearly always, its translation in every language); `scan_placeholders` the good, encoded and
damaged placeholders. Two tokenizers feed one summarizer: the standard library's `html.parser`,
and a fast path for the plain HTML that keys and values are made of, which gives up (to the
parser) on anything else, so the two can only differ in speed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from html import unescape
from html.parser import HTMLParser
from itertools import accumulate
from typing import Literal, NamedTuple

from ..findings import shorten
from ..read.markup import (
    LOOSE_IN_SPAN_RE,
    ENCODED_PLACEHOLDER_RE,
    PLACEHOLDER_LENIENT_RE,
    PLACEHOLDER_RE,
    TRANSLATE_NO_RE,
    URL_ATTRIBUTES,
    VOID_TAGS,
    may_hold_caret,
    placeholder_numbers,
    unit_kind,
)
from .files import LineIndex
from .sanitize import normalise_url


# Attributes that load or navigate to a URL in some element, allowed or not.
URLISH_ATTRIBUTES = frozenset(
    {"href", "src", "action", "formaction", "data", "poster", "background", "xlink:href",
     "srcset", "cite", "codebase", "lowsrc", "dynsrc", "ping", "longdesc", "manifest", "icon",
     "profile", "usemap", "archive", "classid", "content"}
)


class Tag(NamedTuple):
    """A start tag, where it is in the fragment (1-based). A tuple: quicker to make than a
    frozen dataclass, and there is one per tag of every key and value."""

    name: str
    attrs: tuple[tuple[str, str | None], ...]
    line: int
    col: int


@dataclass
class HtmlSummary:
    """What the checks need from a fragment, from one pass of a tolerant tokenizer."""

    tags: list[Tag] = field(default_factory=list)
    top_blocks: list[str] = field(default_factory=list)  # block elements at depth 0, in order
    outside_content: bool = False  # text or inline elements at depth 0
    stray_end: list[tuple[str, int, int]] = field(default_factory=list)
    unclosed: list[tuple[str, int, int]] = field(default_factory=list)
    markup: list[str] = field(default_factory=list)  # comments, doctypes, processing instructions
    failed: str = ""  # the tokenizer gave up (never seen, but don't trust it blindly)

    @property
    def balanced(self) -> bool:
        return not self.stray_end and not self.unclosed and not self.failed

    def attr_values(self, names: Iterable[str]) -> list[str]:
        wanted = set(names)
        return [v for t in self.tags for a, v in t.attrs if a in wanted and v is not None]


class _Summarizer:
    """Builds an `HtmlSummary` from a stream of tokens; fed by either tokenizer below, so the two
    can only differ in how they split the text into tokens, never in what they conclude."""

    def __init__(self) -> None:
        self.summary = HtmlSummary()
        self._open: list[tuple[str, int, int]] = []

    def start(self, tag: str, attrs: list[tuple[str, str | None]], line: int, col: int) -> None:
        self.summary.tags.append(Tag(tag, tuple(attrs), line, col))
        if not self._open:
            kind = unit_kind(tag, attrs)
            if kind == "block":
                self.summary.top_blocks.append(tag)
            elif kind == "placeholder":  # a code block or display math, between the blocks
                self.summary.top_blocks.append("placeholder")
            else:
                self.summary.outside_content = True
        if tag not in VOID_TAGS:
            self._open.append((tag, line, col))

    def start_end(self, tag: str, attrs: list[tuple[str, str | None]], line: int, col: int) -> None:
        # `<br/>`; for a non-void tag (`<p/>`) browsers ignore the slash, but the translation
        # should not be written that way anyway: treat it as opened and closed.
        self.start(tag, attrs, line, col)
        if tag not in VOID_TAGS:
            self._open.pop()

    def end(self, tag: str, line: int, col: int) -> None:
        if self._open and self._open[-1][0] == tag:
            self._open.pop()  # the usual case, and what the search below would find first
            return
        if tag in VOID_TAGS and not any(t == tag for t, *_ in self._open):
            if tag != "br":  # `</br>` is an (odd) line break in browsers; anything else is stray
                self.summary.stray_end.append((tag, line, col))
            return
        for depth in range(len(self._open) - 1, -1, -1):
            if self._open[depth][0] == tag:
                self.summary.unclosed.extend(self._open[depth + 1:])
                del self._open[depth:]
                return
        self.summary.stray_end.append((tag, line, col))

    def data(self, text: str) -> None:
        if not self._open and text.strip():
            self.summary.outside_content = True

    def finish(self) -> HtmlSummary:
        self.summary.unclosed.extend(self._open)
        self._open = []
        return self.summary


class _Tokenizer(HTMLParser):
    """The strict path: the standard library's tolerant HTML tokenizer."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.summarizer = _Summarizer()
        self.summary = self.summarizer.summary

    def _col(self) -> tuple[int, int]:
        line, col = self.getpos()
        return line, col + 1

    def handle_starttag(self, tag, attrs):
        self.summarizer.start(tag, attrs, *self._col())

    def handle_startendtag(self, tag, attrs):
        self.summarizer.start_end(tag, attrs, *self._col())

    def handle_endtag(self, tag):
        self.summarizer.end(tag, *self._col())

    def handle_data(self, data):
        self.summarizer.data(data)

    def handle_comment(self, data):
        self.summary.markup.append(f"<!--{shorten(data, 30)}-->")

    def handle_decl(self, decl):
        self.summary.markup.append(f"<!{shorten(decl, 30)}>")

    def unknown_decl(self, data):
        self.summary.markup.append(f"<![{shorten(data, 30)}]>")

    def handle_pi(self, data):
        self.summary.markup.append(f"<?{shorten(data, 30)}>")

    def finish(self) -> HtmlSummary:
        self.close()
        return self.summarizer.finish()


def summarize_html_strict(fragment: str) -> HtmlSummary:
    """`summarize_html` through `html.parser` only (the reference the fast path is tested against)."""
    tokenizer = _Tokenizer()
    try:
        tokenizer.feed(fragment)
        return tokenizer.finish()
    except Exception as e:  # noqa: BLE001 - a parser crash must not crash the build
        tokenizer.summary.failed = f"{type(e).__name__}: {e}"
        return tokenizer.summary


# The fast path: a tokenizer for the small, regular HTML that keys and values are made of. It
# accepts a fragment only if the whole of it is text and tags of the plainest form: ASCII names,
# attributes separated by ASCII whitespace, quoted values without `<` or `>`, bare values of a few
# safe characters. For exactly those forms `html.parser` reads the same tag, attributes and text
# (tests/test_fast_html.py checks this against the parser); anything else (a comment, a
# declaration, a `<` that starts no such tag, odd quoting or spacing, a tag that switches the
# parser into a raw-text mode) sends the whole fragment to the strict path.
_SP = "[ \\t\\n\\r\\f]"


def _attr_pattern(group: str) -> str:
    """One attribute: a name, then maybe `=` and a double-quoted, single-quoted or bare value (a
    bare value must end the tag or be followed by a space: `href=x/>` puts the slash in the
    value). `group` is "(" to capture name and value, "(?:" not to."""
    g = group
    return (
        rf"{_SP}+{g}[a-zA-Z][-a-zA-Z0-9_:.]*)"
        rf"(?:{_SP}*={_SP}*(?:\"{g}[^\"<>]*)\"|'{g}[^'<>]*)'|{g}[-a-zA-Z0-9_.:]+)(?![^ \t\n\r\f>])))?"
    )


# A plain tag: start (name, attributes, "/" of `<x/>`) or end (name). No character inside it is
# `<` or `>`, so in a fragment it is always one whole `_TAG_CANDIDATE`: cutting the fragment at
# those and reading each piece alone finds the same tags as reading it from the start.
_PLAIN_TAG = re.compile(
    rf"<(?:([a-zA-Z][a-zA-Z0-9]*)((?:{_attr_pattern('(?:')})*){_SP}*(/?)"
    rf"|/([a-zA-Z][a-zA-Z0-9]*){_SP}*)>"
)
_TAG_CANDIDATE = re.compile(r"(<[^<>]*>)")
_FAST_ATTR = re.compile(_attr_pattern("("))
# Tags after which some version of `html.parser` stops reading tags (script and style in all,
# the others in newer releases): never on the fast path, whatever the Python version.
RAW_TEXT_TAGS = frozenset(
    {"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea", "title",
     "plaintext"}
)


class PlainTag(NamedTuple):
    """One plain tag, as `html.parser` reports it."""

    name: str  # lowercased
    attrs: tuple[tuple[str, str | None], ...]
    kind: Literal["start", "startend", "end"]  # "startend": `<br/>`


# (pieces, tags): the fragment cut into text, tag, text, …, text (as written: not unescaped; a
# text may be ""), and what each tag piece reads as.
PlainHtml = tuple[list[str], list[PlainTag]]


def plain_tokens(fragment: str) -> PlainHtml | None:
    """`fragment` as texts and plain tags; None unless every `<` in it starts a tag of the plain
    form above and none of them opens a raw-text element. Also used by the search index
    (`search_index.py`). Linear in the length of the fragment, whatever the input."""
    pieces = _TAG_CANDIDATE.split(fragment)
    sources = pieces[1::2]
    if fragment.count("<") != len(sources):
        return None  # a "<" in a text starts no plain tag (each candidate holds one "<")
    tags = list(map(_plain_tag, sources))
    return (pieces, tags) if all(tags) else None


@lru_cache(maxsize=8192)
def _plain_tag(source: str) -> PlainTag | None:
    """What the tag `source` reads as; None when it is not plain or opens a raw-text element.
    Cached: a few tags (`<p>`, `</p>`, `<span translate=no>`) are most of every fragment."""
    m = _PLAIN_TAG.fullmatch(source)
    if m is None:
        return None
    start, attr_text, close, end = m.groups("")
    if end:
        return PlainTag(end.lower(), (), "end")
    name = start.lower()
    if name in RAW_TEXT_TAGS:
        return None
    return PlainTag(name, plain_attrs(attr_text) if attr_text else (), "startend" if close else "start")


@lru_cache(maxsize=4096)
def plain_attrs(attr_text: str) -> tuple[tuple[str, str | None], ...]:
    """The attributes of a plain tag, as `html.parser` reports them (names lowercased, quotes
    removed, character references decoded). Cached: the same few attribute strings
    (`translate=no`, a page's links) come back in every block and every language."""
    attrs = []
    for a in _FAST_ATTR.finditer(attr_text):
        name, value, single, bare = a.groups()
        if value is None:
            value = single if single is not None else bare  # still None: no value at all
        if value and "&" in value:
            value = unescape(value)
        attrs.append((name.lower(), value))
    return tuple(attrs)


class HtmlOutline(NamedTuple):
    """An `HtmlSummary` without positions, and what the checks derive from its tags. The checks
    read this; positions are only needed to point at a problem, from `HtmlSummary`. Shared by
    every fragment with the same tags (a key and, nearly always, its translation in every
    language), so it is immutable: no check can change what another entry's checks see."""

    tag_names: frozenset[str]
    anchors: int  # `<a>` elements
    attributes: tuple[tuple[str, str, str | None], ...]  # (tag, attribute, value): once each
    urlish: tuple[tuple[str, str, str], ...]  # every (tag, attribute, value) that loads a URL
    urls: tuple[str, ...]  # `attr_values(URL_ATTRIBUTES)`: href and src, as written
    link_targets: frozenset[str]  # the same, as a browser reads them (`normalise_url`)
    ids: tuple[str, ...]
    top_blocks: tuple[str, ...]
    outside_content: bool
    balanced: bool
    markup: tuple[str, ...]


def _outline(summary: HtmlSummary) -> HtmlOutline:
    tags = summary.tags
    attributes = [(t.name, a, v) for t in tags for a, v in t.attrs]
    urls = tuple(summary.attr_values(URL_ATTRIBUTES))
    return HtmlOutline(
        tag_names=frozenset(t.name for t in tags),
        anchors=sum(t.name == "a" for t in tags),
        # Once each: a repeated attribute can only repeat the first one's verdict.
        attributes=tuple(dict.fromkeys(attributes)),
        urlish=tuple(
            (t, a, v) for t, a, v in attributes if a in URLISH_ATTRIBUTES and v is not None
        ),
        urls=urls,
        link_targets=frozenset(map(normalise_url, urls)),
        ids=tuple(summary.attr_values(["id"])),
        top_blocks=tuple(summary.top_blocks),
        outside_content=summary.outside_content,
        balanced=summary.balanced,
        markup=tuple(summary.markup),
    )


class _Shape(NamedTuple):
    """What `_Summarizer` concludes from a fragment's tags alone: everything but the tags'
    positions and whether a text sits outside any block. A translation has the same tags as its
    English nearly always, so a key and its translations in every language share one."""

    summary: HtmlSummary  # each position is (index of the tag among the tags, 0); never handed out
    top_texts: tuple[int, ...]  # the texts (by index among them) read with no element open
    inline_at_top: bool  # an inline element at depth 0: content outside blocks, whatever the texts
    outlines: tuple[HtmlOutline, HtmlOutline]  # without, with content outside any block


@lru_cache(maxsize=8192)
def _shape(sources: tuple[str, ...]) -> _Shape | None:
    """The `_Shape` of the tags `sources` (as `plain_tokens` cuts them); None unless all are plain.
    The summarizer itself draws the conclusions, each tag's index standing in for its position,
    so the fast path cannot conclude differently from the strict one."""
    tags = [_plain_tag(source) for source in sources]
    if not all(tags):
        return None
    out = _Summarizer()
    top_texts = []
    for index, (name, attrs, kind) in enumerate(tags):
        if not out._open:  # the text before this tag is read at depth 0
            top_texts.append(index)
        if kind == "end":
            out.end(name, index, 0)
        elif kind == "start":
            out.start(name, attrs, index, 0)
        else:
            out.start_end(name, attrs, index, 0)
    if not out._open:
        top_texts.append(len(tags))
    summary = out.finish()
    outline = _outline(summary)
    outlines = (outline._replace(outside_content=False), outline._replace(outside_content=True))
    return _Shape(summary, tuple(top_texts), summary.outside_content, outlines)


def _has_text(text: str) -> bool:
    """What `_Summarizer.data` counts as content: anything but whitespace, once unescaped."""
    return bool(text.strip()) and ("&" not in text or bool(unescape(text).strip()))


def _plain_cut(fragment: str) -> tuple[list[str], _Shape, bool] | None:
    """`fragment` cut into text, tag, text, …, text; its shape; whether it has content outside any
    block. None when the strict parser must read it."""
    pieces = _TAG_CANDIDATE.split(fragment)
    if fragment.count("<") != len(pieces) // 2:
        return None  # a "<" in a text starts no plain tag (each candidate holds one "<")
    shape = _shape(tuple(pieces[1::2]))
    if shape is None:
        return None
    texts = pieces[::2]
    outside = shape.inline_at_top or any(_has_text(texts[i]) for i in shape.top_texts)
    return pieces, shape, outside


def _fast_summary(fragment: str) -> HtmlSummary | None:
    """The summary of a plain fragment, or None when the strict parser must read it."""
    cut = _plain_cut(fragment)
    if cut is None:
        return None
    pieces, shape, outside = cut
    at = _tag_positions(fragment, pieces)
    s = shape.summary
    return HtmlSummary(
        [Tag(name, attrs, *at[index]) for name, attrs, index, _ in s.tags],
        list(s.top_blocks),
        outside,
        [(name, *at[index]) for name, index, _ in s.stray_end],
        [(name, *at[index]) for name, index, _ in s.unclosed],
        [],
        "",
    )


def _tag_positions(fragment: str, pieces: list[str]) -> list[tuple[int, int]]:
    """(line, col) of each tag in `pieces` (text, tag, text, …), 1-based. `html.parser` counts
    lines by "\\n" only, as `LineIndex` does."""
    # a tag starts where the text before it ends
    offsets = list(accumulate(map(len, pieces)))[0:-1:2]
    if not offsets or "\n" not in fragment[:offsets[-1]]:
        return [(1, offset + 1) for offset in offsets]
    return list(map(LineIndex(fragment).at, offsets))


def summarize_html(fragment: str) -> HtmlSummary:
    """What the checks need to know about an HTML fragment; never raises."""
    if "<" not in fragment and "&" not in fragment:
        return HtmlSummary(outside_content=bool(fragment.strip()))  # plain text: titles, summaries
    fast = _fast_summary(fragment)
    return fast if fast is not None else summarize_html_strict(fragment)


# The outlines of fragments without tags: titles, summaries (without, with text in them).
_TEXT_OUTLINES = (_outline(HtmlSummary()), _outline(HtmlSummary(outside_content=True)))


def outline_html(fragment: str) -> HtmlOutline:
    """`summarize_html(fragment)` without positions, as the checks read it; never raises. Much
    cheaper: most fragments share their outline with others (see `_Shape`)."""
    if "<" not in fragment and "&" not in fragment:
        return _TEXT_OUTLINES[bool(fragment.strip())]
    cut = _plain_cut(fragment)
    if cut is None:
        return _outline(summarize_html_strict(fragment))
    _, shape, outside = cut
    return shape.outlines[outside]


@lru_cache(maxsize=4096)
def outline_key(key: str) -> HtmlOutline:
    """`outline_html(key)`, remembered: each English key is checked once per language."""
    return outline_html(key)


@lru_cache(maxsize=1024)
def _shared_summary(fragment: str) -> HtmlSummary:
    return summarize_html(fragment)


def summarize_key(key: str) -> HtmlSummary:
    """`summarize_html(key)`, remembered: each English key is checked once per language. Each
    caller gets its own copy of the lists, so a check that changed one could not reach another
    language's (the tags and positions in them are immutable)."""
    s = _shared_summary(key)
    return HtmlSummary(
        list(s.tags), list(s.top_blocks), s.outside_content, list(s.stray_end), list(s.unclosed),
        list(s.markup), s.failed,
    )


@lru_cache(maxsize=4096)
def _key_placeholders(key: str) -> tuple[int, ...]:
    return tuple(placeholder_numbers(key))


@dataclass
class PlaceholderScan:
    indices: list[int]  # well-formed placeholders, in order of appearance
    encoded: list[tuple[str, int]]  # (text, index) of URL-/entity-encoded ones
    altered: list[tuple[str, int | None]]  # (text, index if known) of otherwise damaged ones


def _may_hold_translate_no(text: str) -> bool:
    """False when `TRANSLATE_NO_RE` cannot match in `text`. The case-blind search tries every
    position and is slow on long text; these are quick, and `casefold` maps every character the
    pattern takes for a letter of "translate" (ſ for s too) to that letter
    (tests/test_fast_html.py)."""
    return "=" in text and "translate" in text.casefold()


def scan_placeholders(text: str) -> PlaceholderScan:
    # One pass: the pattern's one group puts each index between the texts around the matches.
    pieces = PLACEHOLDER_LENIENT_RE.split(text)
    scan = PlaceholderScan([int(index) for index in pieces[1::2]], [], [])
    rest = " ".join(pieces[::2])  # each placeholder replaced by a space

    def damaged(m: re.Match) -> str:
        token, index = m.group("token"), int(m.group("index"))
        if ENCODED_PLACEHOLDER_RE.search(token):
            scan.encoded.append((token, index))
        elif token.count("_") + token.count("＿") >= 2:  # not just "x^2^" in prose
            scan.altered.append((token, index))
        else:
            return m.group(0)
        return " "  # the span around a damaged token is part of the same damage

    if may_hold_caret(rest):
        rest = LOOSE_IN_SPAN_RE.sub(damaged, rest)
    # What is left of a placeholder span: emptied, or wrapped around something else.
    if _may_hold_translate_no(rest):
        scan.altered += [(m.group(0), None) for m in TRANSLATE_NO_RE.finditer(rest)]
    return scan


def visible_text(fragment: str) -> str:
    """Text a reader sees, without tags or placeholders, whitespace collapsed."""
    text = PLACEHOLDER_RE.sub(" ", fragment)
    text = re.sub(r"<[^>]*>", " ", text)
    return " ".join(text.split())


@lru_cache(maxsize=4096)
def url_scheme(value: str) -> str | None:
    """The scheme a browser would see, after entity decoding, control/space stripping, casefold."""
    url = re.sub(r"[\x00-\x20\x7f]", "", normalise_url(value)).lower()
    m = re.match(r"([a-z][a-z0-9+.\-]*):", url)
    return m.group(1) if m else None

