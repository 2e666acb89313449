"""Source file → language-free page data: the work done once per file, whatever the languages.

Parsing, Markdown, math and highlighting all happen here; the result (`PageData`) is plain,
picklable data, so it can be computed in a worker process and cached by content hash. The
per-language stage then only looks keys up and fills placeholders.
"""
from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import urlparse

from ..typeset import highlight
from ..findings import Finding
from .math import MathError, tex_to_mathml
from ..read.prose import Placeholder, ProseBlock, fill, page_title, section_blocks
from ..read.sections import ParsedSource, Section, SourceError, parse_source


@dataclass(frozen=True)
class BlockData:
    """One translation unit: its key, and the rendered HTML of each of its placeholders."""

    key: str
    placeholders: tuple[str, ...]
    line: int

    @property
    def english(self) -> str:
        """The key with its placeholders filled (made when needed: pages are cached and sent
        between processes, and this would double their prose)."""
        return fill(self.key, self.placeholders)


@dataclass(frozen=True)
class SectionData:
    id: str
    blocks: tuple[BlockData, ...]
    code_html: str
    code_start: int
    code_end: int
    code: str  # plain code text, for notebooks and copy buttons
    prose_md: str = ""  # the section's Markdown prose as written, for notebooks

    @property
    def has_prose(self) -> bool:
        return bool(self.blocks)


@dataclass(frozen=True)
class PageData:
    rel: str
    url: str
    title: str  # the English title, also its translation key
    summary: str  # the English summary ("" when none), also a key
    sections: tuple[SectionData, ...]
    assets: tuple[str, ...]  # source-relative paths of files the prose references
    definitions: tuple[tuple[str, str], ...] = ()  # (name, section id) of classes/functions here
    findings: tuple[Finding, ...] = ()
    is_python: bool = True
    order: str = ""  # front matter `order:` (a number), for the folder's reading order

    @property
    def links(self) -> tuple[str, ...]:
        """The pages this page's English prose links to, in reading order: site paths resolved
        from the page's folder, without fragments (what a folder index lists, for the folder's
        reading order)."""
        found: list[str] = []
        folder = posixpath.dirname(self.rel)
        for section in self.sections:
            for block in section.blocks:
                for href in _HREF_RE.findall(block.key):
                    href = html.unescape(href).split("#", 1)[0]
                    if not href or urlparse(href).scheme or href.startswith(("/", "//")):
                        continue
                    found.append(posixpath.normpath(posixpath.join(folder, href)))
        return tuple(dict.fromkeys(found))

    @property
    def keys(self) -> list[str]:
        """Every key this page produces, in page order: title, summary, then prose blocks."""
        keys = [self.title] + ([self.summary] if self.summary else [])
        keys.extend(b.key for s in self.sections for b in s.blocks)
        return keys


_HREF_RE = re.compile(r'<a href="([^"]+)"')
_DEF_RE = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")
_DECORATOR_RE = re.compile(r"^\s*@")
_SLUG_RE = re.compile(r"[^\w\-]+")


def _slug(text: str) -> str:
    slug = _SLUG_RE.sub("-", text.strip().lower()).strip("-")
    return slug[:60] or "section"


class _Ids:
    """Stable, unique section ids: a definition's qualified name, else its heading, else a number.

    Named ids survive edits elsewhere in the file, so links into a page keep working.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.scope: list[tuple[int, str]] = []  # (indent, class name) of enclosing classes

    def qualify(self, indent: int, name: str) -> str:
        while self.scope and self.scope[-1][0] >= indent:
            self.scope.pop()
        return ".".join([n for _, n in self.scope] + [name])

    def for_section(self, index: int, section: Section, blocks: list[ProseBlock]) -> tuple[str, list[str]]:
        names: list[str] = []
        candidate = ""
        for line in section.code:
            if _DECORATOR_RE.match(line) or not line.strip():
                continue
            m = _DEF_RE.match(line)
            if m:
                qual = self.qualify(len(m.group(1)), m.group(3))
                if m.group(2) == "class":
                    self.scope.append((len(m.group(1)), m.group(3)))
                names.append(qual)
                candidate = candidate or qual.replace(".", "-")
            break
        if not candidate and section.prose:
            heading = re.match(r"\s*#{1,6}\s+(.+)", section.prose.lstrip("\n"))
            if heading:
                candidate = _slug(heading.group(1))
        candidate = candidate or f"section-{index}"
        unique, n = candidate, 2
        while unique in self.used:
            unique, n = f"{candidate}-{n}", n + 1
        self.used.add(unique)
        return unique, names


def render_placeholder(ph: Placeholder, page_rel: str, findings: list[Finding], assets: list[str]) -> str:
    """The HTML that replaces one placeholder: MathML, highlighted code or an image."""
    if ph.kind in ("math", "display_math", "env"):
        display = ph.kind != "math"
        try:
            return tex_to_mathml(ph.text, display=display)
        except MathError as e:
            findings.append(Finding("error", "math", f"cannot typeset TeX: {e}", path=page_rel, line=ph.line))
            # Show the TeX itself, visibly marked, rather than half-converted garbage.
            tag = "pre" if display else "code"
            return f'<{tag} class="math-error" title="TeX error">{html.escape(ph.text)}</{tag}>'
    if ph.kind == "code":
        return highlight.highlight_inline(ph.text)
    if ph.kind == "code_block":
        return highlight.highlight_block(ph.text, ph.lang)
    if ph.kind == "image":
        return _image(ph, page_rel, findings, assets)
    findings.append(Finding("error", "placeholder-kind", f"unknown placeholder kind {ph.kind!r}", path=page_rel, line=ph.line))
    return html.escape(ph.text)


def _image(ph: Placeholder, page_rel: str, findings: list[Finding], assets: list[str]) -> str:
    src, alt = ph.text.strip(), ph.alt
    parsed = urlparse(src)
    if parsed.scheme or src.startswith("//"):
        # The site makes no outside requests: an outside image becomes a plain link.
        findings.append(
            Finding(
                "warning",
                "outside-image",
                f"image {src} is outside the site and is shown as a link; copy it under the source folder to show it",
                path=page_rel,
                line=ph.line,
            )
        )
        return f'<a href="{html.escape(src)}">{html.escape(alt or src)}</a>'
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page_rel), parsed.path))
    assets.append(target)
    return f'<img src="{html.escape(src)}" alt="{html.escape(alt)}" loading="lazy">'


def analyse(rel: str, url: str, text: str) -> PageData:
    """Parse and render one source file. Never raises for bad content: problems are findings."""
    findings: list[Finding] = []
    try:
        parsed: ParsedSource = parse_source(text, rel)
    except SourceError as e:
        findings.append(Finding("error", "source", f"{e.message}; the page was skipped, fix the file and rebuild", path=rel, line=e.line))
        return PageData(rel, url, posixpath.basename(rel), "", (), (), (), tuple(findings))

    is_python = rel.endswith(".py")
    lines = highlight.highlight_python_lines(text, parsed.tokens) if is_python else []
    ids = _Ids()
    assets: list[str] = []
    sections: list[SectionData] = []
    definitions: list[tuple[str, str]] = []
    for index, section in enumerate(parsed.sections):
        blocks = section_blocks(section)
        rendered_blocks = []
        for block in blocks:
            rendered = tuple(render_placeholder(ph, rel, findings, assets) for ph in block.placeholders)
            rendered_blocks.append(BlockData(block.key, rendered, block.line))
        section_id, names = ids.for_section(index, section, blocks)
        definitions.extend((name, section_id) for name in names)
        code_html = ""
        end = 0
        if section.code:
            start = section.code_start
            end = start + len(section.code) - 1
            code_lines = lines[start - 1 : end] if is_python else [html.escape(l) for l in section.code]
            code_html = highlight.render_code(code_lines, start)
        sections.append(
            SectionData(section_id, tuple(rendered_blocks), code_html, section.code_start, end, "\n".join(section.code), section.prose)
        )
    title = page_title(parsed.meta, parsed.sections, rel)
    summary = " ".join(parsed.meta.get("summary", "").split())
    return PageData(
        rel,
        url,
        title,
        summary,
        tuple(sections),
        tuple(dict.fromkeys(assets)),
        tuple(definitions),
        tuple(findings),
        is_python,
        parsed.meta.get("order", "").strip(),
    )
