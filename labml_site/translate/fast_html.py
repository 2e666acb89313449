"""The HTML5 parse of a fragment that needs none of the HTML5 parser's corrections, without it.

Most translation values (and every key) are clean HTML: well nested, a few known tags, attributes
in double quotes, no entities but `&amp;`, `&lt;` and `&gt;`. For such a fragment, html5lib's
tree is the tags as written and its serialisation is the tokens written back one by one, so the
repair's readers of a fragment's top-level structure (`repair.units`, `top_blocks`, the key's
top level) need no parser: `tree` reads the fragment with one regular expression and a stack,
and returns None as soon as anything could make the HTML5 parser do more than nest what is
written (an unknown or misnested tag, a block inside a paragraph, a stray `<` or `&`, a control
character). Then the caller parses with html5lib as before.

The rules below are the HTML5 tree builder's for the tags accepted: the tags it would move, close
or reopen (a `<p>` in a `<p>`, a block inside an inline element, an `<a>` inside an `<a>`, an
`<li>` outside a list, `<pre>`'s first newline, tables) are not accepted. `tests/test_fast_html.py`
checks it against html5lib on fixtures, and `benchmarks/fast_html_check.py` on every key and
value of a corpus (both corpora: every one is equal, or falls back).
"""
from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass, field

from ..read.markup import HEADING_TAGS, INLINE_TAGS, LIST_TAGS, canonical_placeholders, unit_kind

# Elements whose content is only phrasing (text and the inline elements below).
_PHRASING_BLOCKS = HEADING_TAGS | {"p"}
# Elements that hold blocks or phrasing.
_FLOW = frozenset({"div", "blockquote", "li"})
_LISTS = LIST_TAGS  # only `<li>` children (and whitespace)
_INLINE = INLINE_TAGS | {"ins", "b", "i", "s", "u", "kbd", "var", "mark", "q", "abbr", "cite"}
_VOID_INLINE = frozenset({"br", "img"})
_VOID_BLOCK = frozenset({"hr"})
_KNOWN = _PHRASING_BLOCKS | _FLOW | _LISTS | _INLINE | _VOID_INLINE | _VOID_BLOCK

_TOKEN = re.compile(r"<(/?)([a-z][a-z0-9]*)((?:[ \t\n]+[a-z][a-z0-9-]*=(?:\"[^\"<>&]*(?:&amp;[^\"<>&]*)*\"|[A-Za-z0-9_.:/-]+))*)[ \t\n]*>")
_ATTR = re.compile(r"([a-z][a-z0-9-]*)=(?:\"([^\"]*)\"|([A-Za-z0-9_.:/-]+))")
# Text that the parser keeps as written: no `<` (every one must start a tag above), `&` only in
# the three entities the serialiser writes back the same, and no character it replaces, drops or
# reports (NUL, CR, controls, surrogates, non-characters).
_BAD_TEXT = re.compile("[<\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]|&(?!amp;|lt;|gt;)")


@dataclass
class Node:
    """An element: its tag, its attributes, its HTML as html5lib serialises it (placeholders in
    the keys' form), its child elements, and whether text with content sits right after it."""

    tag: str
    attrs: tuple[tuple[str, str], ...]
    html: str = ""
    children: list["Node"] = field(default_factory=list)
    tail_content: bool = False
    text: str = ""  # the text inside, unescaped, when there are no child elements


@dataclass
class Fragment:
    text_content: bool  # text with content before the first element
    children: list[Node]


def _start_tag(tag: str, attrs: tuple[tuple[str, str], ...]) -> str:
    return "<" + tag + "".join(f' {n}="{v}"' for n, v in attrs) + ">"


def tree(fragment: str) -> Fragment | None:
    """The fragment's elements as html5lib would parse them, or None where it might not."""
    root = Node("", ())
    stack: list[Node] = [root]
    starts: list[int] = [0]  # where each open element's serialisation starts in `out`
    content_at: list[int] = [0]  # where each open element's content starts in `fragment`
    out: list[str] = []
    text_content_first = False
    pos = 0
    anchors = 0
    for m in _TOKEN.finditer(fragment):
        text = fragment[pos:m.start()]
        if text:
            if _BAD_TEXT.search(text):
                return None
            parent = stack[-1]
            if text.strip():
                if parent.tag in _LISTS:
                    return None
                if parent is root:
                    if root.children:
                        root.children[-1].tail_content = True
                    else:
                        text_content_first = True
            out.append(text.replace(">", "&gt;"))
        pos = m.end()
        closing, tag, raw_attrs = m.group(1), m.group(2), m.group(3)
        if tag not in _KNOWN:
            return None
        parent = stack[-1]
        if closing:
            if parent.tag != tag or parent is root:
                return None
            out.append(f"</{tag}>")
            parent.html = canonical_placeholders("".join(out[starts[-1]:]))
            if not parent.children:
                parent.text = _html.unescape(fragment[content_at[-1]:m.start()])
            stack.pop()
            starts.pop()
            content_at.pop()
            if tag == "a":
                anchors -= 1
            continue
        attrs: tuple[tuple[str, str], ...] = ()
        if raw_attrs:
            found = tuple((a, c or b) for a, b, c in _ATTR.findall(raw_attrs))
            if len({n for n, _ in found}) != len(found):
                return None  # the parser keeps the first of duplicates
            attrs = tuple((n, v.replace("&amp;", "&").replace("&", "&amp;")) for n, v in found)
        inside = parent.tag
        if inside in _LISTS:
            if tag != "li":
                return None
        elif tag == "li":
            return None
        elif inside in _PHRASING_BLOCKS or inside in _INLINE:
            if tag not in _INLINE and tag not in _VOID_INLINE:
                return None
        if tag == "a":
            if anchors:
                return None
        node = Node(tag, attrs)
        parent.children.append(node)
        out.append(_start_tag(tag, attrs))
        if tag in _VOID_INLINE or tag in _VOID_BLOCK:
            node.html = canonical_placeholders(out[-1])
            continue
        if tag == "a":
            anchors += 1
        stack.append(node)
        starts.append(len(out) - 1)
        content_at.append(m.end())
    if len(stack) != 1:
        return None
    text = fragment[pos:]
    if text:
        if _BAD_TEXT.search(text):
            return None
        if text.strip():
            if root.children:
                root.children[-1].tail_content = True
            else:
                text_content_first = True
    return Fragment(text_content_first, root.children)


def unit(node: Node) -> str | None:
    """`markup.unit_kind` of a top-level element (a placeholder holds only text)."""
    kind = unit_kind(node.tag, node.attrs)
    return None if kind == "placeholder" and node.children else kind
