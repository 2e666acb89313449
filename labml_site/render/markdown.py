"""Pages as Markdown, for readers that are programs: `page.html.md` beside each page (prose and
code, math as TeX) and `llms.txt` per language (llmstxt.org: the site's pages, in reading order).

Translated prose exists only as HTML (translations are HTML fragments), so each language's
Markdown is made from the page's prose HTML (`html_to_markdown`): headings, paragraphs, lists,
emphasis, links, images, code and tables map back to Markdown, and every formula to its TeX
(the MathML's annotation) between `$…$` or `$$…$$`. The "not yet translated" marker is dropped;
the English block under it is kept.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Iterable, Sequence

_VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "mspace", "area", "base", "embed", "param", "track"})
_SKIP_CLASSES = {"untranslated-marker", "section-link", "original"}


class _Node:
    __slots__ = ("tag", "attrs", "children")

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[_Node | str] = []


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(_Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def _text(node: _Node | str) -> str:
    if isinstance(node, str):
        return node
    return "".join(_text(c) for c in node.children)


def _tex(math: _Node) -> str:
    def find(node: _Node | str) -> str | None:
        if isinstance(node, str):
            return None
        if node.tag == "annotation" and node.attrs.get("encoding") == "application/x-tex":
            return _text(node)
        for child in node.children:
            found = find(child)
            if found is not None:
                return found
        return None

    found = find(math)
    return found if found is not None else _text(math)


def _skipped(node: _Node) -> bool:
    classes = node.attrs.get("class", "")
    return bool(classes) and not _SKIP_CLASSES.isdisjoint(classes.split())


def _inline(nodes: Iterable[_Node | str]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(_SPACES.sub(" ", node))
            continue
        if _skipped(node):
            continue
        tag = node.tag
        if tag == "math":
            tex = _tex(node).strip()
            out.append(f"\n\n$$\n{tex}\n$$\n\n" if node.attrs.get("display") == "block" else f"${tex}$")
        elif tag == "code":
            code = _text(node)
            fence = "``" if "`" in code else "`"
            pad = " " if code.startswith("`") or code.endswith("`") else ""
            out.append(f"{fence}{pad}{code}{pad}{fence}")
        elif tag in ("strong", "b"):
            out.append(f"**{_inline(node.children)}**")
        elif tag in ("em", "i"):
            out.append(f"*{_inline(node.children)}*")
        elif tag == "a":
            out.append(f"[{_inline(node.children)}]({node.attrs.get('href', '')})")
        elif tag == "img":
            out.append(f"![{node.attrs.get('alt', '')}]({node.attrs.get('src', '')})")
        elif tag == "br":
            out.append("  \n")
        else:
            out.append(_inline(node.children))
    return "".join(out)


def _blocks(nodes: Sequence[_Node | str], indent: str = "") -> list[str]:
    """Markdown blocks of some nodes: consecutive inline content makes one paragraph."""
    blocks: list[str] = []
    run: list[_Node | str] = []

    def flush() -> None:
        text = _inline(run).strip()
        run.clear()
        if text:
            blocks.append(text)

    for node in nodes:
        if isinstance(node, str) or node.tag not in _BLOCK_TAGS:
            if isinstance(node, _Node) and node.tag == "math" and node.attrs.get("display") == "block":
                flush()
                blocks.append(f"$$\n{_tex(node).strip()}\n$$")
                continue
            run.append(node)
            continue
        flush()
        if _skipped(node):
            continue
        tag = node.tag
        if tag in _HEADINGS:
            blocks.append("#" * int(tag[1]) + " " + " ".join(_inline(node.children).split()))
        elif tag == "p":
            text = _inline(node.children).strip()
            if text:
                blocks.append(text)
        elif tag in ("ul", "ol"):
            items = [c for c in node.children if isinstance(c, _Node) and c.tag == "li"]
            lines = []
            for n, item in enumerate(items, 1):
                marker = f"{n}. " if tag == "ol" else "- "
                inner = _blocks(item.children)
                body = "\n\n".join(inner).replace("\n", "\n" + " " * len(marker))
                lines.append(marker + body)
            blocks.append("\n".join(lines))
            blocks.extend(_blocks([c for c in node.children if isinstance(c, _Node) and c.tag == "p"]))
        elif tag == "pre":
            lang = node.attrs.get("data-lang", "")
            code = _text(node).rstrip("\n")
            fence = "````" if "```" in code else "```"
            blocks.append(f"{fence}{lang}\n{code}\n{fence}")
        elif tag == "blockquote":
            inner = "\n\n".join(_blocks(node.children))
            blocks.append("\n".join("> " + line if line else ">" for line in inner.split("\n")))
        elif tag == "table":
            blocks.append(_table(node))
        elif tag == "hr":
            blocks.append("---")
        else:  # div, section, figure, …: their content
            blocks.extend(_blocks(node.children))
    flush()
    return blocks


def _rows(node: _Node) -> list[list[str]]:
    rows = []
    for child in node.children:
        if isinstance(child, _Node):
            if child.tag == "tr":
                rows.append([" ".join(_inline(c.children).split()).replace("|", "\\|") for c in child.children if isinstance(c, _Node) and c.tag in ("td", "th")])
            else:
                rows.extend(_rows(child))
    return rows


def _table(node: _Node) -> str:
    rows = [r for r in _rows(node) if r]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCK_TAGS = _HEADINGS | {"p", "ul", "ol", "pre", "blockquote", "table", "hr", "div", "section", "figure", "details", "dl"}
_BLANKS = re.compile(r"\n{3,}")
_SPACES = re.compile(r"[ \t\r\n]+")


def html_to_markdown(fragment: str) -> str:
    """Prose HTML (as the builder writes it) as Markdown, math as TeX."""
    tree = _Tree()
    tree.feed(fragment)
    tree.close()
    return _BLANKS.sub("\n\n", "\n\n".join(b for b in _blocks(tree.root.children) if b)).strip()


def page_markdown(title: str, url: str, sections: Sequence[tuple[str, str]], source_lang: str = "python") -> str:
    """A page as Markdown: each section's prose (Markdown) then its code, fenced."""
    parts = []
    first = sections[0][0].lstrip() if sections else ""
    if not first.startswith("# "):
        parts.append(f"# {title}")
    for prose, code in sections:
        if prose.strip():
            parts.append(prose.strip())
        if code.strip():
            fence = "````" if "```" in code else "```"
            parts.append(f"{fence}{source_lang}\n{code.rstrip()}\n{fence}")
    return "\n\n".join(parts) + "\n"


def llms_txt(site_title: str, summary: str, pages: Sequence[tuple[str, str, str]], section: str = "Pages") -> str:
    """`llms.txt`: the site's name, its summary, and a link per page's Markdown (title, URL, summary)."""
    lines = [f"# {site_title}", ""]
    if summary:
        lines += [f"> {summary}", ""]
    lines += [f"## {section}", ""]
    for title, url, page_summary in pages:
        lines.append(f"- [{title}]({url})" + (f": {page_summary}" if page_summary else ""))
    return "\n".join(lines) + "\n"
