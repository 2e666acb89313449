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
from html import unescape
from functools import lru_cache
from typing import Iterable, Sequence

from ..read.markup import MARKDOWN_FORMS, PLACEHOLDER_MARK, PLACEHOLDER_RE
from ..read.structure import url_path
from ..lazy_re import lazy

# A formula as `typeset.math` writes it, cut down before parsing to one element holding its TeX
# (MathML is most of the tags in prose: parsing each would be most of the work).
_FORMULA = lazy(
    r'<math xmlns="http://www\.w3\.org/1998/Math/MathML" display="(inline|block)"><semantics>(?:(?!</?math\b).)*?'
    r'<annotation encoding="application/x-tex">([^<]*)</annotation></semantics></math>',
    re.S,
)


def _short_formula(m: re.Match) -> str:
    return f'<math display="{m.group(1)}"><annotation encoding="application/x-tex">{m.group(2)}</annotation></math>'


_TAG = re.compile(r"<[^>]*>")


_MARKER = re.compile(r'<span class="(?:untranslated-marker|section-link)"[^>]*>[^<]*</span>')
_SHORT_MATH = lazy(r'<math display="(inline|block)"><annotation encoding="application/x-tex">([^<]*)</annotation></math>')
_PRE = lazy(r'<pre\b([^>]*)><code>(.*?)</code></pre>', re.S)
_LANG = lazy(r'data-lang="([^"]*)"')
_CODE = re.compile(r"<code\b[^>]*>(.*?)</code>", re.S)
_WS = lazy(r"\s+")
_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1>", re.S)
_LINK = re.compile(r'<a\b[^>]*?href="([^"]*)"[^>]*>(.*?)</a>', re.S)
_IMG = lazy(r'<img\b[^>]*?>')
_ATTR = lazy(r'(\w+)="([^"]*)"')
_STRONG = re.compile(r"</?(?:strong|b)>")
_EM = lazy(r"</?(?:em|i)>")
# A list holding no list: its content runs to its first end tag and holds no `<ul`/`<ol` (as
# `((?:(?!<(?:ul|ol)\b).)*?)` says, read a "<" at a time rather than a character at a time).
_LIST = re.compile(r"<(ul|ol)\b[^>]*>([^<]*(?:<(?!(?:ul|ol)\b|/\1>)[^<]*)*)</\1>")
# An item: up to the next `<li` or the end (`(.*?)(?=<li\b|$)`, a "<" at a time; where that stops
# before a last line break, this keeps it, and `_list_md` strips it with the spaces).
_LI = re.compile(r"<li\b[^>]*>([^<]*(?:<(?!li\b)[^<]*)*)")
_QUOTE = lazy(r"<blockquote\b[^>]*>(.*?)</blockquote>", re.S)
_TABLE = lazy(r"<table\b[^>]*>(.*?)</table>", re.S)
_ROW = lazy(r"<tr\b[^>]*>(.*?)</tr>", re.S)
_CELL = lazy(r"<t[dh]\b[^>]*>(.*?)</t[dh]>", re.S)
# The blocks Markdown has no form for (and a definition list's parts): their tags are paragraph breaks.
_BREAKS = {tag for tag, form in MARKDOWN_FORMS.items() if form == "paragraph"} | {"summary", "dt", "dd"}
_BLOCK_TAG = re.compile(r"</?(?:" + "|".join(sorted(_BREAKS)) + r")\b[^>]*>")
_TOKEN = re.compile("\x00(\\d+)\x00")


def html_to_markdown(fragment: str, placeholders: Sequence[str] | None = None) -> str:
    """Prose HTML (as the builder writes it) as Markdown, math as TeX. With `placeholders`, the
    fragment is a translation unit (`<span translate=no>_^_N_^_</span>` left in it) and
    `placeholders[N]` is the Markdown of its placeholder N (`placeholder_markdown`).

    Regular expressions over the builder's own well-formed HTML (an HTML parser spent most of the
    time of this on MathML and highlighted code): formulas and code are set aside first, as
    tokens, so that nothing later touches their text."""
    kept: list[str] = []

    def keep(text: str) -> str:
        kept.append(text)
        return f"\x00{len(kept) - 1}\x00"

    if placeholders is not None and PLACEHOLDER_MARK in fragment:
        parts = PLACEHOLDER_RE.split(fragment)  # text, number, text, …: each number kept as a token
        for i in range(1, len(parts), 2):
            parts[i] = keep(placeholders[int(parts[i])])
        fragment = "".join(parts)
    if "<math" in fragment:
        fragment = _FORMULA.sub(_short_formula, fragment)
        fragment = _SHORT_MATH.sub(
            lambda m: keep(f"\n\n$$\n{unescape(m.group(2)).strip()}\n$$\n\n" if m.group(1) == "block" else f"${unescape(m.group(2)).strip()}$"),
            fragment,
        )
    if 'class="untranslated-marker"' in fragment or 'class="section-link"' in fragment:
        fragment = _MARKER.sub("", fragment)

    def pre(m: re.Match) -> str:
        code = unescape(_TAG.sub("", m.group(2))).rstrip("\n")
        fence = "````" if "```" in code else "```"
        lang = _LANG.search(m.group(1))
        return keep(f"\n\n{fence}{lang.group(1) if lang else ''}\n{code}\n{fence}\n\n")

    def code(m: re.Match) -> str:
        text = unescape(_TAG.sub("", m.group(1)))
        fence = "``" if "`" in text else "`"
        pad = " " if text.startswith("`") or text.endswith("`") else ""
        return keep(f"{fence}{pad}{text}{pad}{fence}")

    if "<pre" in fragment:
        fragment = _PRE.sub(pre, fragment)
    if "<code" in fragment:
        fragment = _CODE.sub(code, fragment)
    fragment = _collapse_spaces(fragment)  # HTML's own whitespace rule, outside code and math
    if "<h" in fragment:
        fragment = _HEADING.sub(lambda m: "\n\n" + "#" * int(m.group(1)) + " " + m.group(2).strip() + "\n\n", fragment)
    if "<a" in fragment:
        fragment = _LINK.sub(lambda m: f"[{m.group(2).strip()}]({m.group(1)})", fragment)
    if "<img" in fragment:
        fragment = _IMG.sub(lambda m: "![{alt}]({src})".format(**{"alt": "", "src": "", **dict(_ATTR.findall(m.group(0)))}), fragment)
    if "<strong>" in fragment or "<b>" in fragment:
        fragment = _STRONG.sub("**", fragment)
    if "<em>" in fragment or "<i>" in fragment:
        fragment = _EM.sub("*", fragment)
    if "<br" in fragment:
        fragment = fragment.replace("<br>", "  \n").replace("<br/>", "  \n")
    if "<table" in fragment:
        fragment = _TABLE.sub(lambda m: "\n\n" + _table_md(m.group(1)) + "\n\n", fragment)
    while "<ul" in fragment or "<ol" in fragment:
        changed = _LIST.sub(_list_md, fragment)
        if changed == fragment:
            break
        fragment = changed
    if "<blockquote" in fragment:
        fragment = _QUOTE.sub(_quote_md, fragment)
    fragment = _BLOCK_TAG.sub("\n\n", fragment)
    fragment = _TAG.sub("", fragment)
    if "&" in fragment:
        fragment = unescape(fragment)
    lines = [line.strip(" ") if not line.startswith(("- ", "  ")) else line.rstrip(" ") for line in fragment.split("\n")]
    text = _blank_lines("\n".join(lines)).strip()
    while "\x00" in text:  # (a kept code span may hold a placeholder's token)
        parts = _TOKEN.split(text)
        parts[1::2] = [kept[int(n)] for n in parts[1::2]]
        text = "".join(parts)
    return _blank_lines(text).strip()


def _collapse_spaces(text: str) -> str:
    """Each run of white space as one space (`re.sub(r"\\s+", " ", text)`, several times faster
    on long runs of CJK text, which the regular expression tests letter by letter)."""
    collapsed = " ".join(text.split())
    if text[:1].isspace():
        collapsed = " " + collapsed
    if text[-1:].isspace() and collapsed != " ":
        collapsed += " "
    return collapsed


def _blank_lines(text: str) -> str:
    """Each run of three or more line breaks as two (`re.sub(r"\n{3,}", "\n\n", text)`), by
    replacing three with two until none is left: several times quicker on a page's worth of text."""
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def section_markdown(blocks: Iterable[tuple[str, Sequence[str]]]) -> str:
    """A section's prose as Markdown from its translation units: (HTML with its placeholders
    unfilled, the placeholders' HTML) per block. Much cheaper than `html_to_markdown` of the
    filled section: the MathML, most of a page's prose HTML, is never scanned, its TeX read
    straight from each formula's annotation."""
    parts = []
    for unit, rendered in blocks:
        text = html_to_markdown(unit, [placeholder_markdown(p) for p in rendered])
        if text:
            parts.append(text)
    return "\n\n".join(parts)


_ANNOTATION = '<annotation encoding="application/x-tex">'


@lru_cache(maxsize=8192)
def placeholder_markdown(rendered: str) -> str:
    """A placeholder's Markdown: a formula's TeX between dollars, else its HTML's Markdown (a
    code span, an image, a code block)."""
    if rendered.startswith("<math"):
        start = rendered.find(_ANNOTATION)
        end = rendered.find("</annotation>", start)
        if start >= 0 and end >= 0:
            tex = unescape(rendered[start + len(_ANNOTATION):end]).strip()
            return f"\n\n$$\n{tex}\n$$\n\n" if 'display="block"' in rendered[:120] else f"${tex}$"
    return html_to_markdown(rendered)


def _quote_md(m: re.Match) -> str:
    inner = _blank_lines(_BLOCK_TAG.sub("\n\n", m.group(1))).strip()
    lines = [line.strip(" ") for line in inner.split("\n")]
    return "\n\n" + "\n".join("> " + line if line else ">" for line in lines) + "\n\n"


def _list_md(m: re.Match) -> str:
    items = [item.strip() for item in _LI.findall(m.group(2).replace("</li>", ""))]
    lines = []
    for n, item in enumerate((i for i in items if i), 1):
        marker = f"{n}. " if m.group(1) == "ol" else "- "
        body = _blank_lines(_BLOCK_TAG.sub("\n\n", item)).strip().replace("\n", "\n" + " " * len(marker))
        lines.append(marker + body)
    return "\n\n" + "\n".join(lines) + "\n\n"


def _table_md(inner: str) -> str:
    rows = [[_WS.sub(" ", unescape(_TAG.sub("", c))).strip().replace("|", "\\|") for c in _CELL.findall(r)] for r in _ROW.findall(inner)]
    rows = [r for r in rows if r]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])


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
        lines += [f"> {_one_line(summary)}", ""]
    lines += [f"## {section}", ""]
    for title, url, page_summary in pages:
        # The URL as a path (`url_path`: no ")" or space ends the link early), the texts on one
        # line and with their brackets escaped, so neither can make a link of its own.
        lines.append(f"- [{_link_text(title)}]({url_path(url)})" + (f": {_one_line(page_summary)}" if page_summary else ""))
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _link_text(text: str) -> str:
    return re.sub(r"([\\\[\]])", r"\\\1", _one_line(text))
