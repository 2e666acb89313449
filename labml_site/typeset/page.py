"""Source file → language-free page data: the work done once per file, whatever the languages.

Parsing, Markdown, math and highlighting all happen here; the result (`PageData`) is plain,
picklable data, so it can be computed in a worker process and cached by content hash. The
per-language stage then only looks keys up and fills placeholders.
"""
from __future__ import annotations

import ast
import html
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import urlparse

from ..typeset import highlight
from ..findings import Finding
from .math import MathError, tex_to_mathml, typeset_page
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

    @property
    def keys(self) -> list[str]:
        """Every key this page produces, in page order: title, summary, then prose blocks."""
        keys = [self.title] + ([self.summary] if self.summary else [])
        keys.extend(b.key for s in self.sections for b in s.blocks)
        return keys


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


_MATH_KINDS = ("math", "display_math", "env")


def math_error_html(ph: Placeholder, error: MathError, page_rel: str, findings: list[Finding]) -> str:
    """Record the error (file, line, column) and show the TeX itself, escaped and visibly marked,
    rather than half-converted garbage. Only a block placeholder (one outside any paragraph) may
    be a <pre>; a display formula inside a paragraph is a <code>, so the paragraph stays whole."""
    line = ph.line + (error.line - 1 if error.line and ph.line else 0)
    findings.append(Finding("error", "math", f"cannot typeset TeX: {error}", path=page_rel, line=line))
    tag = "pre" if ph.block else "code"
    return f'<{tag} class="math-error" title="TeX error: {html.escape(str(error))}">{html.escape(ph.text)}</{tag}>'


def page_macros(meta: dict[str, str], page_rel: str = "", findings: list[Finding] | None = None) -> tuple[tuple[str, str], ...]:
    """The front matter's `macros:` (a mapping of `\\name` or `name` to its TeX expansion)."""
    raw = meta.get("macros", "")
    if not raw:
        return ()
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        if findings is not None:
            findings.append(Finding("error", "math", "front matter 'macros:' must map names like '\\\\R' to TeX like '\\\\mathbb{R}'", path=page_rel, line=1))
        return ()
    return tuple(sorted((k.lstrip("\\"), v) for k, v in value.items()))


def render_placeholder(
    ph: Placeholder, page_rel: str, findings: list[Finding], assets: list[str], math: object = None
) -> str:
    """The HTML that replaces one placeholder: MathML, highlighted code or an image. `math` is the
    page-level result for a math placeholder (`typeset_page`'s); without it the formula is
    converted on its own."""
    if ph.kind in _MATH_KINDS:
        if math is None:
            try:
                math = tex_to_mathml(ph.text, display=ph.kind != "math")
            except MathError as e:
                math = e
        if isinstance(math, MathError):
            return math_error_html(ph, math, page_rel, findings)
        return math
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
    all_blocks = [section_blocks(section) for section in parsed.sections]
    # The page's formulas are typeset together: equation numbers run on, \eqref finds its \label.
    formulas = [
        (ph.text, ph.kind != "math")
        for blocks in all_blocks for block in blocks for ph in block.placeholders if ph.kind in _MATH_KINDS
    ]
    math = iter(typeset_page(formulas, page_macros(parsed.meta, rel, findings)) if formulas else ())
    for index, section in enumerate(parsed.sections):
        blocks = all_blocks[index]
        rendered_blocks = []
        for block in blocks:
            rendered = tuple(
                render_placeholder(ph, rel, findings, assets, next(math) if ph.kind in _MATH_KINDS else None)
                for ph in block.placeholders
            )
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
    )
