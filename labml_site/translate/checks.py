"""Checks for translation files, as small registered functions.

Translations arrive as pull requests, so everything in them is untrusted input.  Each check is a
function registered with `@file_check(...)` (sees the whole file: encoding, JSON syntax, keys) or
`@entry_check(...)` (sees one key/value pair and compares the translation with its English key).
Adding a check means writing one more decorated function here; the runners below pick it up.

Severity: "error" means the entry (or file) must not be used: `Catalog.lookup` renders the English
instead and `build.py check` fails.  "warning" is shown to translators but changes nothing.

Entry points: `run_file_checks`, `run_entry_checks` and `parse_translation_file` (`catalog.check_file`
and `Catalog.load` run them on a file).
"""
from __future__ import annotations

import bisect
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from html import unescape
from html.parser import HTMLParser
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..findings import Finding, shorten
from ..read.safe_files import UnsafeFile, check_no_links, read_regular
from . import glossary
from .sanitize import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    CELL_ALIGN_VALUES,
    PLACEHOLDER_RE,
    SPAN_TRANSLATE_VALUES,
    URL_ATTRIBUTES,
    URL_SCHEMES,
    is_protocol_relative,
    normalise_url,
)

# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

Scope = Literal["file", "entry"]


@dataclass(frozen=True)
class Check:
    name: str
    scope: Scope
    codes: tuple[str, ...]  # the finding codes it may emit (for docs and `--list-checks`)
    fn: Callable[[Any], Iterable[Finding]]
    skip_empty: bool = True  # entry checks: not run on an empty (untranslated) value


_REGISTRY: dict[str, Check] = {}


def _register(scope: Scope, codes: tuple[str, ...], skip_empty: bool = True):
    def decorate(fn):
        _REGISTRY[fn.__name__] = Check(fn.__name__, scope, codes, fn, skip_empty)
        return fn

    return decorate


def file_check(*codes: str):
    """Register `fn(ctx: FileContext) -> Iterable[Finding]`."""
    return _register("file", codes)


def entry_check(*codes: str, skip_empty: bool = True):
    """Register `fn(ctx: EntryContext) -> Iterable[Finding]`."""
    return _register("entry", codes, skip_empty)


def registered_checks(scope: Scope | None = None) -> list[Check]:
    return [c for c in _REGISTRY.values() if scope is None or c.scope == scope]


def unregister(name: str) -> None:
    """Remove a check (tests register throwaway checks and clean up after themselves)."""
    _REGISTRY.pop(name, None)


# --------------------------------------------------------------------------------------------
# Reading a file with line numbers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawPair:
    key: str
    value: Any  # whatever JSON held; only `str` is usable
    line: int
    col: int


@dataclass
class ParsedFile:
    """A translation file as read, defects included; the file checks report on it."""

    path: str
    exists: bool = True
    bom: bool = False
    utf16: bool = False
    bad_bytes: list[tuple[int, int]] = field(default_factory=list)  # (line, col) of non-UTF-8 bytes
    syntax_error: tuple[str, int, int] | None = None  # (message, line, col)
    top_level: str = "object"  # JSON type of the top-level value
    pairs: list[RawPair] = field(default_factory=list)
    # (code, why) when the file was not read at all: a link, a FIFO, a device, too large…
    refused: tuple[str, str] | None = None

    @property
    def usable(self) -> bool:
        """False when nothing in the file can be trusted (the file is then treated as empty)."""
        return (
            self.exists and self.refused is None and self.syntax_error is None
            and self.top_level == "object"
        )


_WS = re.compile(r"[ \t\n\r]*")
_BOM = b"\xef\xbb\xbf"
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of a non-UTF-8 byte
_MAX_BAD_BYTES = 5


class _Lines:
    """Offset -> (line, col), 1-based, in O(log n)."""

    def __init__(self, text: str):
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1


# Limits on what one translation file may hold. Far above any real page (the largest block of the
# tutorial is 3 KB, its largest file 35 KB); they exist so that a file of a pull request cannot make
# a build read, hold or check without bound.
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_VALUE_CHARS = 64_000  # per key and per value (for a sidecar entry: all its strings together)


def parse_translation_file(path: Path, root: Path | None = None) -> ParsedFile:
    """Read `path` without ever raising on its content; a missing file is an empty catalog.

    Only a regular file of at most `MAX_FILE_BYTES` is read (`safe_files.read_regular`: never a
    link, FIFO or device, never a blocking open); anything else is `refused`, which a file check
    reports. `root`: the translations folder, when known; a file reached through a linked folder
    below it is refused too."""
    parsed = ParsedFile(path=str(path))
    try:
        if root is not None:
            check_no_links(path, root)
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        parsed.exists = False
        return parsed
    except UnsafeFile as e:
        parsed.refused = (e.code, e.reason)
        return parsed
    except OSError as e:  # unreadable (permissions, a folder named like a file…): never a crash
        parsed.refused = ("unreadable-file", f"could not be read ({e.strerror or e})")
        return parsed
    return parse_translation_bytes(data, str(path))


def parse_translation_bytes(data: bytes, path: str = "<input>") -> ParsedFile:
    parsed = ParsedFile(path=path)
    if data.startswith(_BOM):
        parsed.bom = True
        data = data[len(_BOM):]
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        parsed.utf16 = True
    try:
        text, bad_bytes = data.decode("utf-8"), False  # nearly always: nothing to look for
    except UnicodeDecodeError:
        # surrogateescape keeps the undecodable bytes (as lone surrogates) so we can point at
        # them and so nothing is lost if the file is rewritten.
        text, bad_bytes = data.decode("utf-8", errors="surrogateescape"), True
    lines = _Lines(text)
    if bad_bytes:
        parsed.bad_bytes = [lines.at(m.start()) for m in _ESCAPED_BYTE.finditer(text)]
    _scan_object(text, lines, parsed)
    return parsed


def _scan_object(text: str, lines: _Lines, parsed: ParsedFile) -> None:
    """Walk the top-level object member by member, recording where each key starts.

    `json.loads(object_pairs_hook=...)` would give duplicates but not positions; scanning the
    top level ourselves (and letting the json module decode each key and value) gives both.
    """
    decoder = json.JSONDecoder()

    def fail(message: str, pos: int) -> None:
        parsed.syntax_error = (message, *lines.at(pos))

    i = _WS.match(text, 0).end()
    if i == len(text):
        return fail("the file is empty; an empty translation file must contain {}", i)
    if text[i] != "{":
        try:
            value, _ = decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            return fail(e.msg, e.pos)
        except (RecursionError, ValueError, MemoryError) as e:
            return fail(_decode_problem(e), i)
        parsed.top_level = type(value).__name__
        return
    i = _WS.match(text, i + 1).end()
    if text.startswith("}", i):
        i += 1
    else:
        while True:
            if not text.startswith('"', i):
                what = "a trailing comma before }" if text.startswith("}", i) else "no key here"
                return fail(f"expected a key in double quotes ({what})", i)
            key_pos = i
            try:
                key, i = json.decoder.scanstring(text, i + 1, True)
                i = _WS.match(text, i).end()
                if not text.startswith(":", i):
                    return fail("expected ':' after the key", i)
                i = _WS.match(text, i + 1).end()
                value, i = decoder.raw_decode(text, i)
            except json.JSONDecodeError as e:
                return fail(e.msg, e.pos)
            except (RecursionError, ValueError, MemoryError) as e:
                return fail(_decode_problem(e), i)
            parsed.pairs.append(RawPair(key, value, *lines.at(key_pos)))
            i = _WS.match(text, i).end()
            if text.startswith(",", i):
                i = _WS.match(text, i + 1).end()
            elif text.startswith("}", i):
                i += 1
                break
            else:
                return fail("expected ',' or '}' after the value (is a quote unescaped?)", i)
    i = _WS.match(text, i).end()
    if i != len(text):
        fail("extra data after the closing }", i)


def _decode_problem(error: BaseException) -> str:
    """A value the json module refuses to build (not a syntax error): say what, without a traceback."""
    if isinstance(error, RecursionError):
        return "arrays or objects nested too deeply (a translation file holds strings)"
    if isinstance(error, MemoryError):
        return "a value too large to read"
    if "digits" in str(error):
        return "a number with too many digits (a translation file holds strings)"
    return f"a value that cannot be read ({error})"


# --------------------------------------------------------------------------------------------
# HTML and placeholder analysis shared by the entry checks
# --------------------------------------------------------------------------------------------

VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr", "keygen"}
)
BLOCK_TAGS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "blockquote", "table", "hr", "pre",
     "div", "dl", "figure", "section", "details"}
)
# Never allowed, even when the English has them: they run script, load or submit content, or
# switch the parser into a foreign or raw-text mode.
HARD_DENY_TAGS = frozenset(
    {"script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form",
     "input", "button", "textarea", "select", "option", "base", "meta", "link", "svg", "math",
     "template", "noscript", "xmp", "plaintext", "noembed", "noframes", "portal", "marquee",
     "html", "head", "body", "title", "video", "audio", "source", "track", "canvas", "dialog",
     "img", "image", "picture", "param", "isindex", "listing"}
)
# Attributes that load or navigate to a URL in some element, allowed or not.
URLISH_ATTRIBUTES = frozenset(
    {"href", "src", "action", "formaction", "data", "poster", "background", "xlink:href",
     "srcset", "cite", "codebase", "lowsrc", "dynsrc", "ping", "longdesc", "manifest", "icon",
     "profile", "usemap", "archive", "classid", "content"}
)
# Attributes worth naming in the message because they run script or load content.
_DANGEROUS_ATTRIBUTES = frozenset({"style", "srcdoc", "formaction", "action", "xlink:href", "src"})
_MARKUP_IN_ATTRIBUTE = re.compile(r"[<>]")


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
            if tag in BLOCK_TAGS:
                self.summary.top_blocks.append(tag)
            elif tag == "span" and ("translate", "no") in attrs:
                # a code block or display math: the prose format puts those between blocks
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
    lines by "\\n" only, as `_Lines` does."""
    # a tag starts where the text before it ends
    offsets = list(accumulate(map(len, pieces)))[0:-1:2]
    if not offsets or "\n" not in fragment[:offsets[-1]]:
        return [(1, offset + 1) for offset in offsets]
    return list(map(_Lines(fragment).at, offsets))


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
    return tuple(int(i) for i in PLACEHOLDER_RE.findall(key))


# Forms of the placeholder that are equivalent HTML (attribute quoted, extra spaces in the tag):
# accepted, and the sanitizer turns them back into the exact form.
_PLACEHOLDER_LENIENT = re.compile(
    r"""<span\s+translate\s*=\s*(?:no|"no"|'no')\s*>_\^_(\d+)_\^_</span\s*>"""
)
_CARET = r"(?:\^|＾|%5[eE]|&#0*94;|&#[xX]0*5[eE];|&Hat;)"
_UNDERSCORE = r"(?:_|＿|%5[fF])"
# Anything that still looks like a placeholder once the good ones are removed. Linear in the
# text: no two `\s*` meet (`\s*(?:U\s*)?` reads what `\s*U?\s*` did, in the same order of
# preference, without trying every split of a run of spaces), and a match does not start inside a
# run of whitespace (`(?!(?<=\s)\s)`: a match found there would have been found one character
# earlier), so a long run of spaces is not scanned once per space. Both were quadratic: a 40 KB
# value of "^" and spaces took seconds to check (tests/test_security_parsing.py).
_LOOSE_PLACEHOLDER = re.compile(
    rf"(?!(?<=\s)\s){_UNDERSCORE}?\s*{_CARET}\s*(?:{_UNDERSCORE}\s*)?(?P<index>\d+)\s*(?:{_UNDERSCORE}\s*)?{_CARET}\s*{_UNDERSCORE}?"
)
# The same language as written before the fix, kept to test the fast one against.
_LOOSE_PLACEHOLDER_REFERENCE = (
    rf"{_UNDERSCORE}?\s*{_CARET}\s*{_UNDERSCORE}?\s*(?P<index>\d+)\s*{_UNDERSCORE}?\s*{_CARET}\s*{_UNDERSCORE}?"
)
# The span around a damaged placeholder: `[^<>]*`, not `[^>]*`, so that each "<span" reads at
# most to the next "<" (with `[^>]*`, many "<span" without a ">" made every one scan to the end).
# The two differ only for a "<" inside a span's tag, which no valid value has (the attribute checks
# refuse it).
_LOOSE_IN_SPAN = re.compile(
    rf"(?:<span\b[^<>]*>\s*)?(?P<token>{_LOOSE_PLACEHOLDER.pattern})(?:\s*</span\s*>)?"
)
_TRANSLATE_NO = re.compile(r"""translate\s*=\s*["']?no\b""", re.IGNORECASE)
_ENCODED = re.compile(r"%5[eEfF]|&#|&Hat;")


@dataclass
class PlaceholderScan:
    indices: list[int]  # well-formed placeholders, in order of appearance
    encoded: list[tuple[str, int]]  # (text, index) of URL-/entity-encoded ones
    altered: list[tuple[str, int | None]]  # (text, index if known) of otherwise damaged ones


def _may_hold_caret(text: str) -> bool:
    """False when `text` holds none of the strings every caret form (`_CARET`) starts with: then
    no `_LOOSE_PLACEHOLDER` matches, and the slow search for one can be skipped. Substring
    searches are quicker than one regular expression with alternatives."""
    return "^" in text or "＾" in text or "%5" in text or "&#" in text or "&Hat;" in text


def _may_hold_translate_no(text: str) -> bool:
    """False when `_TRANSLATE_NO` cannot match in `text`. The case-blind search tries every
    position and is slow on long text; these are quick, and `casefold` maps every character the
    pattern takes for a letter of "translate" (ſ for s too) to that letter
    (tests/test_fast_html.py)."""
    return "=" in text and "translate" in text.casefold()


def scan_placeholders(text: str) -> PlaceholderScan:
    # One pass: the pattern's one group puts each index between the texts around the matches.
    pieces = _PLACEHOLDER_LENIENT.split(text)
    scan = PlaceholderScan([int(index) for index in pieces[1::2]], [], [])
    rest = " ".join(pieces[::2])  # each placeholder replaced by a space

    def damaged(m: re.Match) -> str:
        token, index = m.group("token"), int(m.group("index"))
        if _ENCODED.search(token):
            scan.encoded.append((token, index))
        elif token.count("_") + token.count("＿") >= 2:  # not just "x^2^" in prose
            scan.altered.append((token, index))
        else:
            return m.group(0)
        return " "  # the span around a damaged token is part of the same damage

    if _may_hold_caret(rest):
        rest = _LOOSE_IN_SPAN.sub(damaged, rest)
    # What is left of a placeholder span: emptied, or wrapped around something else.
    if _may_hold_translate_no(rest):
        scan.altered += [(m.group(0), None) for m in _TRANSLATE_NO.finditer(rest)]
    return scan


def placeholder(index: int) -> str:
    return f"<span translate=no>_^_{index}_^_</span>"


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


# --------------------------------------------------------------------------------------------
# Contexts passed to the checks
# --------------------------------------------------------------------------------------------


@dataclass
class EntryContext:
    """One key/value pair; the key is the English HTML the value translates."""

    key: str
    value: str
    path: str = ""
    line: int = 0
    lang: str = ""

    def finding(self, severity, code: str, message: str) -> Finding:
        return Finding(severity, code, message, self.path, self.line, 0, self.key)

    def error(self, code: str, message: str) -> Finding:
        return self.finding("error", code, message)

    def warning(self, code: str, message: str) -> Finding:
        return self.finding("warning", code, message)

    @property
    def is_empty(self) -> bool:
        return not self.value.strip()

    # The built-in checks read the outlines; `key_html` and `value_html` (with positions) are
    # built only to point at a problem, or for a plugin that asks for them.
    @cached_property
    def key_outline(self) -> HtmlOutline:
        """The English's outline, shared with its other languages (immutable)."""
        return outline_key(self.key)

    @cached_property
    def value_outline(self) -> HtmlOutline:
        return outline_html(self.value)

    @cached_property
    def key_html(self) -> HtmlSummary:
        return summarize_key(self.key)

    @cached_property
    def value_html(self) -> HtmlSummary:
        return summarize_html(self.value)

    @cached_property
    def key_placeholders(self) -> list[int]:
        return list(_key_placeholders(self.key))

    @cached_property
    def value_placeholders(self) -> PlaceholderScan:
        return scan_placeholders(self.value)

    @cached_property
    def key_urls(self) -> list[str]:
        """The English's link targets (href, src): all a translation may link to."""
        return list(self.key_outline.urls)

    @cached_property
    def key_ids(self) -> list[str]:
        """The English's ids: all a translation may define."""
        return list(self.key_outline.ids)

    @cached_property
    def english_attributes(self) -> set[tuple[str, str, str | None]]:
        return set(self.key_outline.attributes)

    @cached_property
    def has_unusual_chars(self) -> bool:
        """False when the value has no lone surrogate or control character (nearly always)."""
        return _UNUSUAL_CHARS.search(self.value) is not None

    @property
    def key_is_plain_text(self) -> bool:
        return not self.key_outline.tag_names


@dataclass
class FileContext:
    parsed: ParsedFile
    lang: str = ""
    english_keys: set[str] | None = None  # None: we don't know what the source produces
    kind: Literal["main", "fuzzy", "stale"] = "main"  # sidecars hold objects/lists, not strings

    @property
    def path(self) -> str:
        return self.parsed.path

    def finding(self, severity, code, message, line=0, col=0, key="") -> Finding:
        return Finding(severity, code, message, self.path, line, col, key)


# --------------------------------------------------------------------------------------------
# File checks
# --------------------------------------------------------------------------------------------


@file_check("bom")
def check_bom(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.bom:
        yield ctx.finding(
            "error", "bom",
            "the file starts with a byte order mark (BOM); save it as UTF-8 without BOM "
            "(the build reads it anyway, but other tools don't)", 1, 1,
        )


@file_check("not-utf8")
def check_utf8(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.utf16:
        yield ctx.finding("error", "not-utf8", "the file is saved as UTF-16; save it as UTF-8", 1, 1)
        return
    for line, col in ctx.parsed.bad_bytes[:_MAX_BAD_BYTES]:
        yield ctx.finding(
            "error", "not-utf8",
            "bytes that are not valid UTF-8 (entries containing them are not used); "
            "save the file as UTF-8", line, col,
        )
    if len(ctx.parsed.bad_bytes) > _MAX_BAD_BYTES:
        yield ctx.finding(
            "error", "not-utf8",
            f"…and {len(ctx.parsed.bad_bytes) - _MAX_BAD_BYTES} more invalid UTF-8 sequences",
        )


@file_check("json-syntax")
def check_json_syntax(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.syntax_error:
        message, line, col = ctx.parsed.syntax_error
        yield ctx.finding(
            "error", "json-syntax",
            f"invalid JSON: {message}; the whole file is ignored until this is fixed "
            "(a common cause is an unescaped \" inside a value: write \\\")", line, col,
        )


@file_check("not-a-regular-file", "file-too-large", "unreadable-file")
def check_refused(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.refused:
        code, why = ctx.parsed.refused
        if code not in ("file-too-large", "unreadable-file"):
            code = "not-a-regular-file"  # a link, FIFO, device, socket, linked folder
        yield ctx.finding(
            "error", code,
            f"the file {why}; it was not read and the whole file is ignored (a translation file "
            f"must be a plain file of at most {MAX_FILE_BYTES // (1024 * 1024)} MB)", 1, 1,
        )


def _string_size(value: Any) -> int:
    """The characters of every string in a parsed JSON value (its nesting is bounded: it parsed)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + _string_size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(map(_string_size, value))
    return 0


@file_check("value-too-large")
def check_sizes(ctx: FileContext) -> Iterator[Finding]:
    for pair in ctx.parsed.pairs:
        if len(pair.key) > MAX_VALUE_CHARS:
            what = "key"
        elif _string_size(pair.value) > MAX_VALUE_CHARS:
            what = "value"
        else:
            continue
        yield ctx.finding(
            "error", "value-too-large",
            f"this {what} is longer than {MAX_VALUE_CHARS} characters; split the block in the "
            "source (the entry is not used)", pair.line, pair.col, pair.key,
        )


def oversized(pair: RawPair) -> bool:
    """True for an entry `check_sizes` refuses: no other check reads it."""
    return len(pair.key) > MAX_VALUE_CHARS or _string_size(pair.value) > MAX_VALUE_CHARS


@file_check("not-an-object")
def check_top_level(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.syntax_error is None and ctx.parsed.top_level != "object":
        yield ctx.finding(
            "error", "not-an-object",
            f"the file holds a JSON {ctx.parsed.top_level}, not an object; it must be "
            '{"English HTML": "translated HTML", …}', 1, 1,
        )


@file_check("duplicate-key")
def check_duplicates(ctx: FileContext) -> Iterator[Finding]:
    first: dict[str, RawPair] = {}
    for pair in ctx.parsed.pairs:
        if pair.key not in first:
            first[pair.key] = pair
            continue
        earlier = first[pair.key]
        if pair.value == earlier.value:
            yield ctx.finding(
                "warning", "duplicate-key",
                f"this key also appears on line {earlier.line} with the same value; delete one",
                pair.line, pair.col, pair.key,
            )
        else:
            yield ctx.finding(
                "error", "duplicate-key",
                f"this key also appears on line {earlier.line} with a different value; keep one "
                "(the entry is not used until then)", pair.line, pair.col, pair.key,
            )


@file_check("not-a-string")
def check_value_types(ctx: FileContext) -> Iterator[Finding]:
    if ctx.kind != "main":
        return
    for pair in ctx.parsed.pairs:
        if not isinstance(pair.value, str):
            kind = "null" if pair.value is None else type(pair.value).__name__
            yield ctx.finding(
                "error", "not-a-string",
                f"the value is a JSON {kind}; it must be a string of translated HTML "
                '(use "" for not translated yet)', pair.line, pair.col, pair.key,
            )


@file_check("stale-key")
def check_stale(ctx: FileContext) -> Iterator[Finding]:
    if ctx.english_keys is None or ctx.kind != "main":
        return
    for pair in ctx.parsed.pairs:
        if pair.key not in ctx.english_keys:
            yield ctx.finding(
                "warning", "stale-key",
                "the English for this key no longer exists (it changed or was removed); run the "
                "builder's `extract --lang "
                f"{ctx.lang or 'xx'}` command to move it aside and get a suggestion for the new text",
                pair.line, pair.col, pair.key,
            )


# --------------------------------------------------------------------------------------------
# Entry checks: placeholders
# --------------------------------------------------------------------------------------------


@entry_check("placeholder-encoded", "placeholder-altered")
def check_placeholder_form(ctx: EntryContext) -> Iterator[Finding]:
    scan = ctx.value_placeholders
    for token, index in scan.encoded:
        yield ctx.error(
            "placeholder-encoded",
            f"placeholder {index} came back encoded as `{token}`; write it as "
            f"`{placeholder(index)}`, exactly as in the English",
        )
    for token, index in scan.altered:
        fix = f"`{placeholder(index)}`" if index is not None else "the placeholder span"
        yield ctx.error(
            "placeholder-altered",
            f"a placeholder was changed (`{token}`); copy {fix} unchanged from the English "
            "(math and code live in it: don't edit, space or unwrap it)",
        )


@entry_check("placeholder-missing", "placeholder-duplicated", "placeholder-extra")
def check_placeholder_set(ctx: EntryContext) -> Iterator[Finding]:
    if sorted(ctx.key_placeholders) == sorted(ctx.value_placeholders.indices):
        return  # each placeholder as often as in the English: none missing, duplicated or extra
    expected = Counter(ctx.key_placeholders)
    found = Counter(ctx.value_placeholders.indices)
    damaged = {i for _, i in ctx.value_placeholders.encoded + ctx.value_placeholders.altered}
    for index in sorted(expected):
        if index not in found and index not in damaged:
            yield ctx.error(
                "placeholder-missing",
                f"placeholder {index} (math or code from the English) is missing; copy "
                f"`{placeholder(index)}` into the translation where it belongs "
                "(placeholders may be reordered, not dropped)",
            )
    for index, count in sorted(found.items()):
        if index in expected and count > expected[index]:
            yield ctx.error(
                "placeholder-duplicated",
                f"placeholder {index} appears {count} times but {expected[index]} in the English; "
                "keep each placeholder exactly once",
            )
        elif index not in expected:
            yield ctx.error(
                "placeholder-extra",
                f"placeholder {index} does not exist in the English; remove it (only "
                f"{', '.join(map(str, sorted(expected))) or 'none'} exist for this block)",
            )


# --------------------------------------------------------------------------------------------
# Entry checks: HTML shape
# --------------------------------------------------------------------------------------------


@entry_check("html-unbalanced")
def check_balanced(ctx: EntryContext) -> Iterator[Finding]:
    if not ctx.key_outline.balanced or ctx.value_outline.balanced:
        # nothing to report, or the English itself is irregular: don't hold the translation to more
        return
    value = ctx.value_html  # with positions, to point at each problem
    if value.failed:
        yield ctx.error("html-unbalanced", f"the HTML could not be read ({value.failed})")
    for tag, line, col in value.stray_end:
        yield ctx.error(
            "html-unbalanced",
            f"stray `</{tag}>` (line {line}, column {col} of the value) closes nothing; delete it",
        )
    for tag, line, col in value.unclosed:
        yield ctx.error(
            "html-unbalanced",
            f"`<{tag}>` (line {line}, column {col} of the value) is never closed; add `</{tag}>` "
            "where the English has it",
        )


@entry_check("html-structure")
def check_block_structure(ctx: EntryContext) -> Iterator[Finding]:
    english = ctx.key_outline.top_blocks
    if not english:
        return
    translated = ctx.value_outline.top_blocks
    if translated != english:
        yield ctx.error(
            "html-structure",
            f"the English has the blocks {' '.join(english)} but the translation has "
            f"{' '.join(translated) or 'none'}; translate each block into the same kind of block, "
            "in the same order (don't merge, split or drop paragraphs, headings or lists)",
        )


@entry_check("html-outside-block")
def check_outside_block(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.key_outline.top_blocks and not ctx.key_outline.outside_content:
        if ctx.value_outline.outside_content:
            yield ctx.error(
                "html-outside-block",
                "text outside any paragraph, heading or list; move it inside the block it "
                "belongs to, as in the English",
            )


@entry_check("html-in-plain-text")
def check_plain_text(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.key_is_plain_text and ctx.value_outline.tag_names:
        names = sorted(ctx.value_outline.tag_names)
        yield ctx.error(
            "html-in-plain-text",
            f"this entry (a title or summary) is plain text but the translation has HTML tags "
            f"({', '.join(names)}); remove them",
        )


# --------------------------------------------------------------------------------------------
# Entry checks: unsafe content
# --------------------------------------------------------------------------------------------


@entry_check("unsafe-tag", "markup-dropped")
def check_tags(ctx: EntryContext) -> Iterator[Finding]:
    not_allowed = ctx.value_outline.tag_names - ALLOWED_TAGS
    if not not_allowed:
        return
    english = ctx.key_outline.tag_names
    for name in sorted(not_allowed):
        if name in english and name not in HARD_DENY_TAGS:
            # Copied from the English (raw HTML in the source): not the translator's doing, but
            # the sanitizer removes it, so say so.
            yield ctx.warning(
                "markup-dropped",
                f"the English uses `<{name}>`, which translations can't carry; the translated "
                "block is shown without it (a maintainer can change the English to avoid it)",
            )
            continue
        yield ctx.error(
            "unsafe-tag",
            f"the tag `<{name}>` is not allowed in translations; only "
            f"{', '.join(sorted(ALLOWED_TAGS))} are. Remove it",
        )


@entry_check("unsafe-attribute")
def check_attributes(ctx: EntryContext) -> Iterator[Finding]:
    seen = set()
    english = ctx.key_outline.attributes
    for name, attr, value in ctx.value_outline.attributes:
        if (name, attr) in seen:
            continue
        if name == "span" and attr == "translate" and value in SPAN_TRANSLATE_VALUES:
            continue
        if name in ("th", "td") and attr == "align" and value in CELL_ALIGN_VALUES:
            continue
        dangerous = (
            attr.startswith("on") or attr in _DANGEROUS_ATTRIBUTES or attr in URLISH_ATTRIBUTES
        )
        if not dangerous and (name, attr, value) in english:
            continue  # e.g. a footnote link's class: the sanitizer drops it, harmlessly
        if attr in ALLOWED_ATTRIBUTES.get(name, ()):
            if value is None or not _MARKUP_IN_ATTRIBUTE.search(value):
                continue
            if any(a == attr and v == value for _, a, v in english):
                continue
            seen.add((name, attr))
            yield ctx.error(
                "unsafe-attribute",
                f"the `{attr}` of `<{name}>` contains `<` or `>`; markup inside an "
                "attribute can turn into real tags when the page is re-parsed. Remove it",
            )
            continue
        seen.add((name, attr))
        why = (
            "event handlers run script" if attr.startswith("on")
            else "it can run script or load content" if attr in _DANGEROUS_ATTRIBUTES
            else "only a[href, id, title], span[translate=no] and th/td[align] are allowed"
        )
        yield ctx.error(
            "unsafe-attribute",
            f"the attribute `{attr}` on `<{name}>` is not allowed ({why}); remove it",
        )


@entry_check("unsafe-url")
def check_urls(ctx: EntryContext) -> Iterator[Finding]:
    for name, attr, value in ctx.value_outline.urlish:
        scheme = url_scheme(value)
        if scheme is not None and scheme not in URL_SCHEMES:
            yield ctx.error(
                "unsafe-url",
                f"`{attr}` on `<{name}>` uses the URL scheme `{scheme}:`; only "
                "http, https, mailto and relative links are allowed, and only those of the "
                "English. Copy the link from the English",
            )


@entry_check("unsafe-markup")
def check_markup(ctx: EntryContext) -> Iterator[Finding]:
    for item in ctx.value_outline.markup:
        yield ctx.error(
            "unsafe-markup",
            f"comments, doctypes and processing instructions are not allowed (`{item}`); "
            "remove it",
        )


@entry_check("link-changed", "link-missing")
def check_links(ctx: EntryContext) -> Iterator[Finding]:
    english = ctx.key_outline.link_targets
    translated = ctx.value_outline.link_targets
    for url in sorted(translated):
        if url not in english:
            where = " (it loads from another site)" if is_protocol_relative(url) else ""
            yield ctx.error(
                "link-changed",
                f"the link `{shorten(url, 60)}` is not in the English{where}; a translation may "
                "not add or change link targets. Use the English's href unchanged",
            )
    for url in sorted(english):
        if url not in translated:
            yield ctx.warning(
                "link-missing",
                f"the English links to `{shorten(url, 60)}` but the translation does not; keep "
                "the link around the translated words",
            )


@entry_check("link-added")
def check_anchor_count(ctx: EntryContext) -> Iterator[Finding]:
    translated = ctx.value_outline.anchors
    if not translated:
        return  # cannot be more than the English's
    english = ctx.key_outline.anchors
    if translated > english:
        yield ctx.error(
            "link-added",
            f"the translation has {translated} `<a>` elements but the English has {english}; "
            "a translation may not add links or anchors. Keep only the English's",
        )


@entry_check("id-changed", "id-missing")
def check_ids(ctx: EntryContext) -> Iterator[Finding]:
    english = set(ctx.key_outline.ids)
    translated = set(ctx.value_outline.ids)
    for ident in sorted(translated - english):
        yield ctx.error(
            "id-changed",
            f"the id `{ident}` is not in the English; ids are link anchors and must be copied "
            "unchanged (a new id could clash with the page's own)",
        )
    for ident in sorted(english - translated):
        yield ctx.warning(
            "id-missing",
            f"the English has the anchor `id=\"{ident}\"` but the translation does not; links to "
            f"#{ident} won't work in this language. Copy it from the English",
        )


# --------------------------------------------------------------------------------------------
# Entry checks: characters and warnings
# --------------------------------------------------------------------------------------------

_SURROGATES = "\ud800-\udfff"
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff"
_LONE_SURROGATE = re.compile(f"[{_SURROGATES}]")
_SUSPICIOUS_CHARS = re.compile(f"[{_CONTROLS}]")
# Either of those: nearly every value has none, and one search says so for both checks.
_UNUSUAL_CHARS = re.compile(f"[{_SURROGATES}{_CONTROLS}]")


@entry_check("bad-characters", skip_empty=False)
def check_bad_characters(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.has_unusual_chars and _LONE_SURROGATE.search(ctx.value):
        yield ctx.error(
            "bad-characters",
            "the value holds bytes that are not valid UTF-8 (or a lone \\ud8xx escape); "
            "retype the damaged characters and save as UTF-8",
        )


@entry_check("control-chars")
def check_control_chars(ctx: EntryContext) -> Iterator[Finding]:
    found = _SUSPICIOUS_CHARS.findall(ctx.value) if ctx.has_unusual_chars else []
    extra = sorted(set(found) - set(ctx.key)) if found else []
    if extra:
        names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'control')}" for c in extra)
        yield ctx.warning(
            "control-chars",
            f"invisible control characters not in the English ({names}); delete them",
        )


def _leading_ws(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _trailing_ws(text: str) -> str:
    # str.strip and the regex `\s` agree on what whitespace is; this is `\s*$`, without the
    # regex's retry at every position of the text.
    return text[len(text.rstrip()):]


@entry_check("whitespace-differs")
def check_edge_whitespace(ctx: EntryContext) -> Iterator[Finding]:
    for name, edge in (("leading", _leading_ws), ("trailing", _trailing_ws)):
        english = edge(ctx.key)
        translated = edge(ctx.value)
        if english != translated:
            yield ctx.warning(
                "whitespace-differs",
                f"{name} whitespace differs from the English ({english!r} vs {translated!r}); "
                "match the English",
            )


_WORD = re.compile(r"[^\W\d_]{2,}")


def _same_words(a: str, b: str) -> bool:
    """`a` and `b` are the same words, whatever the whitespace between them. The first words are
    compared first: a translation nearly always differs from its English there already, and
    splitting just the first word off is much quicker than splitting all of both."""
    if a.split(None, 1)[:1] != b.split(None, 1)[:1]:
        return False
    return a.split() == b.split()


@entry_check("untranslated")
def check_identical(ctx: EntryContext) -> Iterator[Finding]:
    if not _same_words(ctx.value, ctx.key):
        return
    if len(_WORD.findall(visible_text(ctx.key))) >= 2:  # "Dropout" may well stay "Dropout"
        yield ctx.warning(
            "untranslated",
            "the value is the same as the English; translate it, or set it to \"\" so the page "
            "shows the English until someone does",
        )


@entry_check("empty-value", skip_empty=False)
def check_empty(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.is_empty:
        yield ctx.warning("empty-value", "not translated yet (the English is shown)")


@entry_check("glossary-term")
def check_glossary(ctx: EntryContext) -> Iterator[Finding]:
    """The glossary's translation for each glossary term of the English (`glossary.py` says how
    terms are found and matched). A warning: a sentence may have good reason to word a term
    differently."""
    found = glossary.for_catalog(ctx.path, ctx.lang)
    if found is None or not found.terms:
        return
    for match in glossary.missing_terms(found, ctx.lang, ctx.key, ctx.value):
        wanted = " / ".join(f"“{w}”" for w in match.term.expected)
        yield ctx.warning(
            "glossary-term",
            f"the English says “{match.found}”; the glossary ({Path(found.path).name}) translates it "
            f"as {wanted}, which this translation does not use",
        )


# --------------------------------------------------------------------------------------------
# Runners
# --------------------------------------------------------------------------------------------


def run_entry_checks(ctx: EntryContext) -> list[Finding]:
    findings: list[Finding] = []
    empty = ctx.is_empty
    for check in _REGISTRY.values():  # as `registered_checks("entry")`, without a list per entry
        if check.scope != "entry" or (check.skip_empty and empty):
            continue
        findings.extend(check.fn(ctx))
    return findings


def run_file_checks(ctx: FileContext) -> list[Finding]:
    findings: list[Finding] = []
    for check in registered_checks("file"):
        findings.extend(check.fn(ctx))
    return findings


def check_entry(key: str, value: str, *, path: str = "", line: int = 0, lang: str = "") -> list[Finding]:
    """All entry findings for one pair (convenient for tests and editors)."""
    return run_entry_checks(EntryContext(key, value, path, line, lang))
