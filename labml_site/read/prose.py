"""Turn section prose (a small Markdown + LaTeX dialect) into translation keys.

A key is the English HTML of a section's prose in which math, code and images are replaced by
numbered placeholders `<span translate=no>_^_N_^_</span>`; translators see the HTML, never the
TeX or code. Keys must match an existing corpus of translation files byte for byte, so the
converter is purpose-built rather than a general Markdown engine:

* blocks are separated by blank lines; fenced code blocks and `\\begin{env}...\\end{env}` are
  block placeholders (no `<p>`), `$$..$$`, `$..$`, `` `code` `` and `![alt](src)` inline ones;
* `#` lines are headings, `* `/`- `/`+ ` lines at the start of a block (or after a heading)
  are list items, `:param x:` lines are list items and `:return:` a "Returns" paragraph;
  everything else is a paragraph whose newlines become spaces;
* text is HTML-escaped (quotes too), raw HTML tags pass through, links and emphasis become HTML;
* beyond the subset of the existing corpus (where it gives otherwise meaningless text a
  meaning): `1. ` ordered lists and `> ` blockquotes; a block that starts with a `>>> ` prompt
  is a doctest session, a code block placeholder (the original joins its lines into a paragraph).

The constructs are rules registered by name and priority, like Python-Markdown's processors, one
module each in `read/rules/`: block rules (whole blank-line blocks: doctest sessions, block
quotes), line rules (block structure, line by line), placeholder rules (math, code, images) and
inline rules (links, captions, emphasis); a new construct is a new module there. This module is
the engine that runs them: blank-line blocks and the nesting of containers, fences and
environments, escaping and raw HTML, numbering placeholders, cutting long keys. It is pure and
cheap: it runs once per source file.
"""
from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass
from itertools import accumulate
from pathlib import PurePath
from typing import Callable, Sequence

from .markup import PLACEHOLDER_MARK, PLACEHOLDER_PATTERN, PLACEHOLDER_RE, placeholder
from .rules import BLOCK_RULES, INLINE_RULES, LINE_RULES, Placeholder, kept_text, placeholder_rules_by_trigger
from .sections import Section
from ..lazy_re import lazy

MAX_KEY_CHARS = 4000  # a longer section key is split into one key per top-level block



@dataclass(frozen=True)
class ProseBlock:
    key: str  # translation key: English HTML with placeholders
    placeholders: tuple[Placeholder, ...]  # index N = placeholder N in key
    line: int  # source line where this block starts


# ---------------------------------------------------------------------------------------------
# Source positions


class ProseLines:
    """Maps an offset in the prose to its source line (via Section.prose_lines)."""

    def __init__(self, prose: str, prose_lines: Sequence[int]):
        self._starts = list(accumulate((len(line) + 1 for line in prose.split("\n")[:-1]), initial=0))
        self._lines = list(prose_lines)

    def line(self, offset: int) -> int:
        if not self._lines:
            return 0
        index = max(bisect.bisect_right(self._starts, offset) - 1, 0)  # last line start <= offset
        return self._lines[min(index, len(self._lines) - 1)]


# ---------------------------------------------------------------------------------------------
# Inline HTML: text with placeholders already replaced by markers


_PH_MARK = "\ue000"  # \ue000 N \ue001 stands for placeholder N while converting
_PH_END = "\ue001"
_KEEP_MARK = "\ue002"  # \ue002 N \ue003 stands for protected raw HTML / escaped characters
_KEEP_END = "\ue003"

# Raw HTML and entities, kept as written. A tag ends at its first ">" (no "<" or ">" inside), so
# `(?:\s[^<>]*)?/?>` reads exactly what `(?:\s+[^<>]*?)?\s*/?>` did, in time linear in the
# tag: the old form tried every way to split a run of spaces between its three quantifiers, and
# "<a" and 5,000 spaces took minutes. The tag and entity alternatives are `_HTML_TAG_RE`.
_HTML_RE = lazy(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"
                      r"|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);", re.S)
_HTML_TAG_RE = lazy(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"
                          r"|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def _keep_html(text: str, keep: Callable[[str], str]) -> str:
    """`_HTML_RE.sub(keep…, text)` in linear time. After the last "-->" no comment can close, and
    no match crosses the end of that "-->" (a match never holds a ">" but at its end): the rest
    is read without the comment alternative, which would scan to the end from every "<!--"."""
    cut = text.rfind("-->") + 3 if "<!--" in text else 0
    if cut < 3:
        cut = 0
    head = _HTML_RE.sub(lambda m: keep(m.group(0)), text[:cut]) if cut else ""
    return head + _HTML_TAG_RE.sub(lambda m: keep(m.group(0)), text[cut:])
_AUTOLINK_RE = lazy(r"<((?:https?|ftp)://[^<>\s]+)>")
_ESCAPE_RE = lazy(r"\\([\\`*_{}\[\]()>#+\-.!])")


_SPACES_RE = lazy(r" {2,}")
_KEEP_RE = lazy(f"{_KEEP_MARK}(\\d+){_KEEP_END}")
_PH_MARK_RE = re.compile(f"{_PH_MARK}(\\d+){_PH_END}")


_TRIGGERS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _triggers() -> re.Pattern[str]:
    """A pattern for the characters placeholder rules start at (rules may be added later)."""
    keys = tuple(sorted(placeholder_rules_by_trigger()))
    pattern = _TRIGGERS.get(keys)
    if pattern is None:
        pattern = _TRIGGERS[keys] = re.compile("[" + re.escape("".join(keys) + "\\") + "]")
    return pattern


class _Inline:
    """Converts inline Markdown, collecting placeholders (numbered from `first`)."""

    def __init__(self, lines: ProseLines):
        self.lines = lines
        self.placeholders: list[Placeholder] = []

    def convert(self, text: str, offset: int) -> str:
        marked = self._extract(text, offset)
        kept: list[str] = []

        def keep(s: str) -> str:
            kept.append(s)
            return f"{_KEEP_MARK}{len(kept) - 1}{_KEEP_END}"

        # Most prose is plain text: a substitution is skipped when the text lacks a character
        # its pattern cannot match without (`\\` escapes, `<` autolinks and tags, `&` entities);
        # tests/test_prose.py checks every such pattern really needs its character.
        if "\\" in marked:
            marked = _ESCAPE_RE.sub(lambda m: keep(html.escape(m.group(1))), marked)
        if "<" in marked:
            marked = _AUTOLINK_RE.sub(lambda m: keep(f'<a href="{m.group(1)}">{m.group(1)}</a>'), marked)
        if "<" in marked or "&" in marked:
            marked = _keep_html(marked, keep)
        marked = html.escape(marked, quote=True)
        context = kept_text()
        outer = context.resolve
        context.resolve = lambda text: _KEEP_RE.sub(lambda m: kept[int(m.group(1))], text) if _KEEP_MARK in text else text
        try:
            for rule in INLINE_RULES:
                marked = rule(marked)
        finally:
            context.resolve = outer
        # runs of spaces collapse; then the newlines inside a block become spaces
        if "  " in marked:
            marked = _SPACES_RE.sub(" ", marked)
        marked = marked.replace("\n", " ")
        if _KEEP_MARK in marked:
            # A kept piece can hold earlier ones (an autolink or an escape inside a raw tag):
            # each refers only to pieces kept before it, so resolving them in order is enough.
            for i, piece in enumerate(kept):
                if _KEEP_MARK in piece:
                    kept[i] = _KEEP_RE.sub(lambda m: kept[int(m.group(1))], piece)
            marked = _KEEP_RE.sub(lambda m: kept[int(m.group(1))], marked)
        if _PH_MARK in marked:
            marked = _PH_MARK_RE.sub(lambda m: placeholder(int(m.group(1))), marked)
        return marked

    def _extract(self, text: str, offset: int) -> str:
        out: list[str] = []
        i = start = 0
        triggers = _triggers()
        rules = placeholder_rules_by_trigger()
        while True:
            # Jump to the next character a rule (or an escape) starts at: most text is plain.
            next_trigger = triggers.search(text, i)
            if next_trigger is None:
                break
            i = next_trigger.start()
            c = text[i]
            if c == "\\" and i + 1 < len(text) and text[i + 1] in "`$":
                i += 2  # an escaped delimiter is text
                continue
            found = None
            for rule in rules.get(c, ()):
                found = rule(text, i)
                if found:
                    break
            if not found:
                i += 1
                continue
            ph, end = found
            ph = Placeholder(ph.kind, ph.text, ph.lang, ph.alt, self.lines.line(offset + i))
            out.append(text[start:i])
            out.append(f"{_PH_MARK}{len(self.placeholders)}{_PH_END}")
            self.placeholders.append(ph)
            i = start = end
        out.append(text[start:])
        return "".join(out)

    def add_inline(self, ph: Placeholder, offset: int) -> str:
        self.placeholders.append(Placeholder(ph.kind, ph.text, ph.lang, ph.alt, self.lines.line(offset)))
        return placeholder(len(self.placeholders) - 1)

    def add_block(self, ph: Placeholder) -> str:
        self.placeholders.append(ph)
        return placeholder(len(self.placeholders) - 1)


# ---------------------------------------------------------------------------------------------
# Blocks


@dataclass(frozen=True)
class _Item:
    """One list item: `* text`, `:param name: text` (name becomes code) or `:return: text`."""

    text: str
    offset: int  # prose offset of text
    kind: str = "li"  # "li" | "returns"
    code: str = ""  # the :param name
    code_offset: int = 0


@dataclass(frozen=True)
class _Element:
    """One top-level element of a key: a paragraph, heading, list or block placeholder."""

    kind: str  # "p" | "h1".."h6" | "ul" | "ol" | a container's tag | "code_block" | "env" | "claimed"
    text: str = ""  # raw Markdown of a paragraph or heading
    offset: int = 0  # prose offset of text
    items: tuple[_Item, ...] = ()
    placeholder: Placeholder | None = None
    children: tuple["_Element", ...] | None = None  # the blocks inside a container (`BlocksState.nest`)
    # an element a line rule renders itself (tables, rules): given the inline converter
    # `convert(markdown, prose_offset) -> html`, its HTML (`BlockState.claim`)
    render: Callable[[Callable[[str, int], str]], str] | None = None


_FENCE_RE = lazy(r"^[ \t]*(```+|~~~+)[ \t]*([^`\s]*)[^\n]*$", re.M)
_BEGIN_RE = lazy(r"^[ \t]*\\begin\{([A-Za-z*]+)\}", re.M)


_CLOSER_RE = {c: re.compile(r"^[ \t]*(" + re.escape(c) + r"{3,})[ \t]*$", re.M) for c in "`~"}
_ENV_TOKEN_RE = lazy(r"\\(begin|end)\{([A-Za-z*]+)\}")


class _Closers:
    """The lines that may close a fence of one character (only that character, three or more, and
    spaces), to find the first closing a fence of length L after a position without searching the
    rest of the prose from every fence (quadratic with many fences that never close)."""

    def __init__(self, prose: str, char: str) -> None:
        found = list(_CLOSER_RE[char].finditer(prose))
        self.starts = [m.start() for m in found]
        self.ends = [m.end() for m in found]
        self.runs = [len(m.group(1)) for m in found]
        # the next line with a longer run: following these, runs only grow, so a search visits at
        # most as many lines as there are distinct lengths on the way (fewer than sqrt(2·size))
        self.longer = [len(found)] * len(found)
        stack: list[int] = []
        for j in range(len(found) - 1, -1, -1):
            while stack and self.runs[stack[-1]] <= self.runs[j]:
                stack.pop()
            self.longer[j] = stack[-1] if stack else len(found)
            stack.append(j)

    def first(self, at: int, length: int) -> tuple[int, int] | None:
        """(start, end) of the first line at or after `at` with `length` or more characters."""
        j = bisect.bisect_left(self.starts, at)
        while j < len(self.runs) and self.runs[j] < length:
            j = self.longer[j]
        return (self.starts[j], self.ends[j]) if j < len(self.runs) else None


class _Environments:
    """Every `\\begin{name}` / `\\end{name}` token, by name, and for each where its nesting first
    goes back below it: where each environment ends, found in one pass."""

    def __init__(self, prose: str) -> None:
        tokens: dict[str, list[tuple[int, int, int]]] = {}  # name → (start, end, +1 / -1)
        for m in _ENV_TOKEN_RE.finditer(prose):
            tokens.setdefault(m.group(2), []).append((m.start(), m.end(), 1 if m.group(1) == "begin" else -1))
        self.tokens = tokens
        self.closing: dict[str, list[int]] = {}
        for name, items in tokens.items():
            depth, depths = 0, []
            for _, _, step in items:
                depth += step
                depths.append(depth)
            closing = [-1] * len(items)
            first_at: dict[int, int] = {}
            for j in range(len(items) - 1, -1, -1):
                # the environment opened by token j ends at the first later token where the depth
                # is one less than just before j
                before = depths[j] - items[j][2]
                closing[j] = first_at.get(before, -1)
                first_at[depths[j]] = j
            self.closing[name] = closing

    def end(self, name: str, at: int) -> int:
        """The end of the environment `name` whose `\\begin` is the first token at or after `at`."""
        items = self.tokens.get(name, [])
        j = bisect.bisect_left(items, (at, -1, -2))
        if j >= len(items):
            return -1
        k = self.closing[name][j]
        return items[k][1] if k >= 0 else -1


def _special_blocks(prose: str, lines: ProseLines) -> list[tuple[int, int, Placeholder]]:
    """Fenced code blocks and LaTeX environments: (start, end, placeholder) over the prose.
    `start` is a line start; `end` is past the closing line's text (before its newline).

    Every candidate (fence line, `\\begin` line, closing line, environment token) is found once,
    by one pass over the prose each; the loop below then only looks them up (it searched the rest
    of the prose again from every fence and environment that never closed: quadratic)."""
    found: list[tuple[int, int, Placeholder]] = []
    if "```" not in prose and "~~~" not in prose and "\\begin{" not in prose:
        return found  # neither pattern can match (most prose has no such block)
    fences = list(_FENCE_RE.finditer(prose))
    fence_starts = [m.start() for m in fences]
    begins = list(_BEGIN_RE.finditer(prose))
    begin_starts = [m.start() for m in begins]
    closers: dict[str, _Closers] = {}
    environments: _Environments | None = None
    pos = 0
    while True:
        i = bisect.bisect_left(fence_starts, pos)
        fence = fences[i] if i < len(fences) else None
        i = bisect.bisect_left(begin_starts, pos)
        begin = begins[i] if i < len(begins) else None
        m = min((x for x in (fence, begin) if x), key=lambda x: x.start(), default=None)
        if m is None:
            return found
        if m is fence:
            marker = fence.group(1)
            if marker[0] not in closers:
                closers[marker[0]] = _Closers(prose, marker[0])
            c = closers[marker[0]].first(fence.end(), len(marker))
            if c is None:
                pos = fence.end()
                continue
            c_start, c_end = c
            body = prose[fence.end() + 1:c_start] if c_start > fence.end() else ""
            body = body[:-1] if body.endswith("\n") else body
            ph = Placeholder("code_block", body, lang=fence.group(2), line=lines.line(fence.start()))
            found.append((fence.start(), c_end, ph))
            pos = c_end
        else:
            if environments is None:
                environments = _Environments(prose)
            end = environments.end(begin.group(1), begin.start())
            if end < 0:
                pos = begin.end()
                continue
            text_start = prose.index("\\begin", begin.start())
            ph = Placeholder("env", prose[text_start:end], line=lines.line(begin.start()))
            found.append((begin.start(), end, ph))
            pos = end


_SENTINEL_MARK = "\ue010"  # \ue010 N \ue011 stands for special block N (`_Text`)
_SENTINEL_RE = re.compile("^\ue010(\\d+)\ue011")


class _Text:
    """The prose with each fenced code block / environment replaced by a one-line sentinel, so
    that splitting on blank lines never cuts through one; offsets map back to the prose."""

    def __init__(self, prose: str, lines: ProseLines):
        self.lines = lines
        self.specials: list[Placeholder] = []
        pieces: list[str] = []
        self._map: list[tuple[int, int]] = []  # (offset in self.text, offset in prose)
        pos = new = 0
        for start, end, ph in _special_blocks(prose, lines):
            self._map.append((new, pos))
            pieces.append(prose[pos:start])
            new += start - pos
            sentinel = f"\ue010{len(self.specials)}\ue011"
            self.specials.append(ph)
            self._map.append((new, start))
            pieces.append(sentinel)
            new += len(sentinel)
            pos = end
        self._map.append((new, pos))
        pieces.append(prose[pos:])
        self.text = "".join(pieces)

    def source_offset(self, offset: int) -> int:
        # the last mapping at or before `offset` (by bisection: a scan made many code blocks
        # quadratic)
        if getattr(self, "_news", None) is None or len(self._news) != len(self._map):
            self._news = [new for new, _ in self._map]
        i = bisect.bisect_right(self._news, offset) - 1
        best = self._map[i] if i >= 0 else (0, 0)
        return best[1] + (offset - best[0])


class _BlockParser:
    """Parses one blank-line separated block, line by line, with the LINE_RULES.

    Shared state: an open paragraph (line indexes) and open list items. A paragraph ends before
    a heading or block placeholder without taking the newline in between; a list item keeps its
    newline (so it ends with a space) when another item follows.
    """

    def __init__(self, text: str, offset: int, doc: _Text):
        self.doc = doc
        self.lines = text.split("\n")
        # prose offset of each line; offsets in doc.text are prose offsets until a special block
        self.starts: list[int] = list(accumulate((len(line) + 1 for line in self.lines[:-1]),
                                                 initial=offset))
        if doc.specials:
            self.starts = [doc.source_offset(pos) for pos in self.starts]
        self.elements: list[_Element] = []
        self.para: list[int] = []
        self.items: list[dict] = []  # open list items: lines, kind, code, code_at
        self.list_allowed = True  # at the start of a block or right after a heading
        self.column: dict[int, int] = {}  # where the text starts on a line that opens a chunk
        self.suffix: dict[int, str] = {}  # text kept after a line's newline (nested items)
        self.resume = 0  # the first line not yet taken by a rule that claimed several (`claim`)

    def parse(self) -> list[_Element]:
        for k, line in enumerate(self.lines):
            if k < self.resume:
                continue
            for rule in LINE_RULES:
                if rule(self, k, line):
                    break
            else:
                self.add_text(k, line)
        self.close()
        return self.elements

    # -- helpers used by the rules --

    def add_text(self, k: int, line: str) -> None:
        (self.items[-1]["lines"] if self.items else self.para).append(k)
        if line:
            self.list_allowed = False

    def chunk(self, idx: list[int], newline: bool) -> str:
        first = self.lines[idx[0]][self.column.get(idx[0], 0):]
        body = "\n".join([first] + [self.lines[k] for k in idx[1:]])
        return body + ("\n" + self.suffix.get(idx[-1], "") if newline else "")

    def close_para(self) -> None:
        if self.para:
            body = self.chunk(self.para, False)
            if body:
                k = self.para[0]
                self.elements.append(_Element("p", body, self.starts[k] + self.column.get(k, 0)))
            self.para = []

    def close_list(self) -> None:
        if self.items:
            built = []
            for n, it in enumerate(self.items):
                k = it["lines"][0]
                built.append(_Item(self.chunk(it["lines"], n < len(self.items) - 1),
                                   self.starts[k] + self.column.get(k, 0), it["kind"], it["code"],
                                   self.starts[k] + it["code_at"]))
            kind = "ol" if self.items[0]["ordered"] else "ul"
            self.elements.append(_Element(kind, items=tuple(built)))
            self.items = []

    def close(self) -> None:
        self.close_para()
        self.close_list()

    def add(self, kind: str, text: str = "", offset: int = 0, placeholder: Placeholder | None = None) -> None:
        """A heading (its text and where it starts), a block placeholder or a paragraph."""
        self.elements.append(_Element(kind, text, offset, placeholder=placeholder))

    def claim(self, k: int, last: int, render: Callable[[Callable[[str, int], str]], str]) -> None:
        """Lines `k` … `last` are one element that `render(convert)` writes (a table, a rule):
        the open paragraph and list end before it, and its lines are read by no other rule."""
        self.close()
        self.elements.append(_Element("claimed", offset=self.starts[k], render=render))
        self.resume = last + 1
        self.list_allowed = True

    def special(self, line: str) -> tuple[Placeholder, int] | None:
        """The block placeholder whose sentinel starts `line`, and where the sentinel ends."""
        m = _SENTINEL_RE.match(line)
        return (self.doc.specials[int(m.group(1))], m.end()) if m else None

    def open_item(self, k: int, at: int, kind: str = "li", code: str = "", code_at: int = 0,
                  ordered: bool = False) -> None:
        if self.items and self.items[0]["ordered"] != ordered:
            self.close_list()  # `1.` after `*` (or the reverse) starts another list
        self.column[k] = at
        self.items.append({"lines": [k], "kind": kind, "code": code, "code_at": code_at,
                           "ordered": ordered})



def _elements(prose: str, lines: ProseLines) -> list[_Element]:
    """Top-level elements of the prose in source order."""
    doc = _Text(prose, lines)
    return _Level(doc.text, 0, doc, 0).parse()


# Containers (block quotes) nested deeper than this are read as text: no page has more than two
# levels, and each level is parsed again inside the one around it (a crafted "> > > …" exhausted
# the stack).
MAX_NESTING = 16


class _Level:
    """The blank-line separated blocks of one level (the prose, or a container's inside), each
    tried with the BLOCK_RULES (`rules.BlocksState`) and, when none takes it, read line by line."""

    def __init__(self, text: str, offset: int, doc: _Text, depth: int):
        self.doc = doc
        self.depth = depth
        self.can_nest = depth < MAX_NESTING
        self.blocks = text.split("\n\n")
        self._start = offset
        self._offsets: list[int] | None = None  # made when a rule asks (most blocks take none)
        self.elements: list[_Element] = []

    def parse(self) -> list[_Element]:
        rules = tuple(BLOCK_RULES)
        blocks = self.blocks
        k, pos = 0, self._start
        while k < len(blocks):
            block = blocks[k]
            for rule in rules:
                taken = rule(self, k, block)
                if taken:
                    pos += sum(len(b) + 2 for b in blocks[k:k + taken])
                    k += taken
                    break
            else:
                # more than one blank line between blocks separates them like one (the original
                # key rule: no leading space in the next block); the prose's own first line is kept
                lead = len(block) - len(block.lstrip("\n")) if k > 0 and block.strip() else 0
                if block:
                    self.elements.extend(_BlockParser(block[lead:], pos + lead, self.doc).parse())
                pos += len(block) + 2
                k += 1
        return self.elements

    # -- what block rules see --

    def offset(self, k: int) -> int:
        if self._offsets is None:
            self._offsets = list(accumulate((len(b) + 2 for b in self.blocks[:-1]), initial=self._start))
        return self._offsets[k]

    def source_offset(self, offset: int) -> int:
        return self.doc.source_offset(offset)

    def line(self, source_offset: int) -> int:
        return self.doc.lines.line(source_offset)

    def has_special(self, text: str) -> bool:
        return _SENTINEL_MARK in text

    def add(self, kind: str, text: str = "", offset: int = 0, placeholder: Placeholder | None = None) -> None:
        self.elements.append(_Element(kind, text, offset, placeholder=placeholder))

    def nest(self, tag: str, text: str, offset: int) -> None:
        children = _Level(text, offset, self.doc, self.depth + 1).parse()
        self.elements.append(_Element(tag, offset=offset, children=tuple(children)))


_A_OPEN_RE = re.compile(r"<a\b[^>]*>")
_A_CLOSE = "</a>"


def _balance_anchors(body: str) -> str:
    """Close an `<a ...>` left open at the end of the element, as an HTML parser would (old
    sources write `<a id="x">` and `</a>` around a heading, in separate elements)."""
    if "<a" not in body:  # nothing to balance (most elements have no anchor)
        return body
    missing = len(_A_OPEN_RE.findall(body)) - body.count(_A_CLOSE)
    return body + _A_CLOSE * missing if missing > 0 else body


def _render(element: _Element, inline: _Inline) -> str:
    if element.placeholder is not None:
        return inline.add_block(element.placeholder)
    if element.render is not None:
        return element.render(inline.convert)
    if element.kind in ("ul", "ol"):
        items = "\n".join(_render_item(item, inline) for item in element.items)
        return f"<{element.kind}>{items}</{element.kind}>\n"
    if element.children is not None:
        inner = "".join(_render(e, inline) for e in element.children)
        return f"<{element.kind}>\n{inner}</{element.kind}>\n"
    body = _balance_anchors(inline.convert(element.text, element.offset))
    if element.kind == "p":
        if body.strip() and not body.replace(_A_CLOSE, "").strip():
            return ""  # only stray closing tags: an HTML parser drops them, leaving nothing
        return f"<p>{body}</p>\n"
    return f"<{element.kind}>{body}</{element.kind}>\n"


def _render_item(item: _Item, inline: _Inline) -> str:
    if item.kind == "returns":
        return f"<p><em>Returns</em> {_balance_anchors(inline.convert(item.text, item.offset))}</p>"
    # the :param name comes first, so it takes the lower placeholder number
    prefix = inline.add_inline(Placeholder("code", item.code), item.code_offset) + " " if item.code else ""
    return f"<li>{prefix}{_balance_anchors(inline.convert(item.text, item.offset))}</li>"


def _mark_standalone(element: _Element, html_: str, phs: list[Placeholder]) -> list[Placeholder]:
    """Mark display math that is alone in its paragraph (rendered as a block)."""
    if element.kind == "p" and len(phs) == 1 and phs[0].kind == "display_math" \
            and html_ == f"<p>{placeholder(0)}</p>\n":
        return [Placeholder("display_math", phs[0].text, line=phs[0].line, standalone=True)]
    return phs


def section_blocks(section: Section) -> list[ProseBlock]:
    """Translation keys of a section: one key, or one per top-level element when the key would
    be longer than MAX_KEY_CHARS (placeholder numbering restarts in each)."""
    prose = section.prose
    if not prose:
        return []
    lines = ProseLines(prose, section.prose_lines)
    parts: list[tuple[str, list[Placeholder], int]] = []  # (html, placeholders, line) per element
    for e in _elements(prose, lines):
        inline = _Inline(lines)
        html_ = _render(e, inline)
        if not html_:
            continue
        line = e.placeholder.line if e.placeholder else lines.line(e.items[0].offset if e.items else e.offset)
        parts.append((html_, _mark_standalone(e, html_, inline.placeholders), line))
    if not parts:
        return []
    first_line = section.prose_lines[0] if section.prose_lines else 0
    pieces, all_phs = [], []
    for html_, phs, _ in parts:
        pieces.append(_renumber(html_, len(all_phs)))
        all_phs.extend(phs)
    key = "".join(pieces)  # (not `key +=`: quadratic when a section has thousands of elements)
    if len(key) <= MAX_KEY_CHARS:
        return [ProseBlock(key, tuple(all_phs), first_line)]
    return [ProseBlock(html_, tuple(phs), line or first_line) for html_, phs, line in parts]


def _renumber(html_: str, offset: int) -> str:
    if not offset:
        return html_
    return PLACEHOLDER_RE.sub(lambda m: placeholder(int(m.group(1)) + offset), html_)


# ---------------------------------------------------------------------------------------------
# Page title and filling


def _plain(markdown_text: str) -> str:
    """Plain text of one line of inline Markdown (for titles)."""
    inline = _Inline(ProseLines("", ()))
    converted = inline.convert(markdown_text, 0)
    converted = PLACEHOLDER_RE.sub(lambda m: inline.placeholders[int(m.group(1))].text
                                   if inline.placeholders[int(m.group(1))].kind == "code"
                                   else "", converted)
    return html.unescape(re.sub(r"<[^>]+>", "", converted)).strip()


def page_title(meta: dict[str, str], sections: Sequence[Section], path: str) -> str:
    """The page title key: front-matter title, else the first `# ` heading, else the file name."""
    title = (meta.get("title") or "").strip()
    if title:
        return title
    for section in sections:
        for line in section.prose.split("\n"):
            if line.startswith("# "):
                text = _plain(line[2:].strip().rstrip("#").strip())
                if text:
                    return text
    return PurePath(path).name


# Closing punctuation that must not start a line. A browser may break a line between a formula
# and the text after it (an atomic inline: UAX #14 class CB, breakable on both sides), so "$x$."
# could put the full stop at the start of the next line.
_CLOSING_PUNCTUATION = frozenset(".,;:!?)]}»”’…%。，、；：！？）」』】〉》")
# A placeholder (group 1: its number) and the run of closing punctuation right after it (group 2,
# maybe empty; the next placeholder starts with "<", so a run never reaches into it).
_FILLED_RE = re.compile(PLACEHOLDER_PATTERN + "([" + re.escape("".join(sorted(_CLOSING_PUNCTUATION))) + "]*)")


def fill(html_: str, rendered: Sequence[str]) -> str:
    """Put rendered HTML back for each placeholder, by number (translations may reorder them).
    Inline math and the closing punctuation right after it are kept on one line.

    One split (text, number, punctuation, text, …), not a scan match by match and character by
    character: it is called for every block of every page in every language."""
    if PLACEHOLDER_MARK not in html_:
        return html_
    parts = _FILLED_RE.split(html_)
    count = len(rendered)
    for i in range(1, len(parts), 3):
        n = int(parts[i])
        if n >= count:
            raise IndexError(f"placeholder {n} has no rendering (only {count} given)")
        shown = rendered[n]
        if parts[i + 1] and shown.startswith("<math") and 'display="inline"' in shown[:120]:
            parts[i] = f'<span class="nowrap">{shown}{parts[i + 1]}</span>'
            parts[i + 1] = ""
        else:
            parts[i] = shown
    return "".join(parts)
