"""Source file → language-free page data: the work done once per file, whatever the languages.

Parsing, Markdown, math and highlighting all happen here; the result (`PageData`) is plain,
picklable data, so it can be computed in a worker process and cached by content hash. The
per-language stage then only looks keys up and fills placeholders.
"""
from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlparse

from ..typeset import highlight
from ..findings import Finding
from .math import MathError, tex_to_mathml, typeset_page
from ..read.markup import placeholder
from ..read.prose import Placeholder, ProseBlock, ProseLines, fill, page_title, section_blocks
from ..read.sections import ParsedSource, Section, SourceError, parse_source, python_syntax_error
from ..read.urls import SCHEME_RE, browser_reads, script_scheme, url_problem
from ..lazy_re import lazy


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
    redirect: str = ""  # front matter `redirect:`: a page with no prose of its own points there
    order: str = ""  # front matter `order:` (a number), for the folder's reading order
    asset_lines: tuple[tuple[str, int], ...] = ()  # (asset, the source line that first shows it)

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


_MATH_KINDS = ("math", "display_math", "env")


def math_error_html(ph: Placeholder, error: MathError, page_rel: str, findings: list[Finding]) -> str:
    """Record the error (file, line, column) and show the TeX itself, escaped and visibly marked,
    rather than half-converted garbage. Only a block placeholder (one outside any paragraph) may
    be a <pre>; a display formula inside a paragraph is a <code>, so the paragraph stays whole."""
    line = ph.line + (error.line - 1 if error.line and ph.line else 0)
    findings.append(Finding("error", "math", f"cannot typeset TeX: {error}", path=page_rel, line=line))
    tag = "pre" if ph.block else "code"
    return f'<{tag} class="math-error" title="TeX error: {html.escape(str(error))}">{html.escape(ph.text)}</{tag}>'


MAX_PAGE_MACROS = 200
MAX_MACRO_CHARS = 2000


def page_macros(meta: dict, page_rel: str = "", findings: list[Finding] | None = None) -> tuple[tuple[str, str], ...]:
    """The front matter's `macros:`, a YAML mapping of `\\name` or `name` to its TeX expansion
    (read as data by the front matter's loader, never evaluated), at most `MAX_PAGE_MACROS` of at
    most `MAX_MACRO_CHARS` characters each."""
    raw = meta.get("macros", "")
    if not raw:
        return ()
    problem = None
    if not isinstance(raw, dict):
        problem = "must be a mapping of names like '\\\\R' to TeX like '\\\\mathbb{R}'"
    elif len(raw) > MAX_PAGE_MACROS:
        problem = f"holds more than {MAX_PAGE_MACROS} macros"
    elif any(len(k) + len(v) > MAX_MACRO_CHARS for k, v in raw.items()):
        problem = f"holds a macro longer than {MAX_MACRO_CHARS} characters"
    if problem:
        if findings is not None:
            line = meta.line("macros") if hasattr(meta, "line") else 1
            findings.append(Finding("error", "math", f"front matter 'macros:' {problem}; no macro of this page is used", path=page_rel, line=line))
        return ()
    return tuple(sorted((k.lstrip("\\"), v) for k, v in raw.items()))


_YES = frozenset({"true", "yes", "on", "1"})
_NO = frozenset({"", "false", "no", "off", "0"})


def page_numbers(meta: dict, page_rel: str = "", findings: list[Finding] | None = None) -> bool:
    """The front matter's `equation_numbers: true`: number every `equation`/`align`/… of the page
    as LaTeX does. Without it only a formula with `\\tag` or `\\label` is numbered."""
    value = str(meta.get("equation_numbers", "")).strip().lower()
    if value in _YES or value in _NO:
        return value in _YES
    if findings is not None:
        line = meta.line("equation_numbers") if hasattr(meta, "line") else 1
        findings.append(Finding("warning", "math", f"front matter 'equation_numbers:' is {value!r}; write true or false "
                                "(equations are numbered only where a \\tag or \\label asks)", path=page_rel, line=line))
    return False


def render_placeholder(
    ph: Placeholder, page_rel: str, findings: list[Finding], assets: list[str], math: object = None,
    in_link: bool = False,
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
        return _image(ph, page_rel, findings, assets, in_link)
    findings.append(Finding("error", "placeholder-kind", f"unknown placeholder kind {ph.kind!r}", path=page_rel, line=ph.line))
    return html.escape(ph.text)


_SCHEME_RE = SCHEME_RE
as_browser_reads = browser_reads  # (the name other modules and tests know)


def is_outside(url: str) -> bool:
    """Whether a browser would fetch `url` from somewhere other than the site: a scheme
    (`https:`, `data:`…), or an authority, which browsers also read from `\\host`, `/\\host` and
    `\\/host`, and after tabs or newlines inside (`/<tab>/host`). `%2F%2Fhost` is a path."""
    seen = as_browser_reads(url)
    return bool(urlparse(url.strip()).scheme) or seen[:2] in {"//", "\\\\", "/\\", "\\/"} or bool(_SCHEME_RE.match(seen))


def is_local_image(src: str) -> bool:
    """Whether an image's `src` names a file of the source tree (else it is shown as a link)."""
    src = src.strip()
    return not (urlparse(src).scheme or src.startswith("//") or is_outside(src))


def image_target(page_rel: str, src: str) -> str:
    """The source-relative path of the file a page's image `src` (a local one) names: what the
    page's `assets` list, and what its notebook embeds (render/notebooks.py)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(page_rel), urlparse(src.strip()).path))


def _image(ph: Placeholder, page_rel: str, findings: list[Finding], assets: list[str], in_link: bool = False) -> str:
    src, alt = ph.text.strip(), ph.alt
    if not is_local_image(src):
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
        if script_scheme(src) or url_problem(src, relative=False):
            # never a link that runs script, nor one a browser reads otherwise than as written
            # (controls, backslashes, no host): the alt text alone
            return html.escape(alt or src)
        if in_link:
            # A badge (`[![Open In Colab](…badge.svg)](notebook)`): its alt text inside the link
            # it sits in (a link inside a link is no link at all)
            return f'<span class="outside-image">{html.escape(alt or src)}</span>'
        # alone: a link to the image, marked as standing in for it (as the badge's text is)
        return f'<a class="outside-image" href="{html.escape(src)}">{html.escape(alt or src)}</a>'
    assets.append(image_target(page_rel, src))
    return f'<img src="{html.escape(src)}" alt="{html.escape(alt)}" loading="lazy">'


# --------------------------------------------------------------------------------------------
# Checks of a page's own prose, registered like the translation checks: each is called with the
# page's path and its prose blocks and yields findings. They only warn: author HTML is the
# author's, and stays as written.
# --------------------------------------------------------------------------------------------

SourceCheck = Callable[[str, Section, "list[ProseBlock]"], Iterable[Finding]]
SOURCE_CHECKS: dict[str, SourceCheck] = {}


def source_check(fn: SourceCheck) -> SourceCheck:
    """Register `fn(rel, section, blocks) -> Iterable[Finding]`, run on every section by `analyse`."""
    SOURCE_CHECKS[fn.__name__] = fn
    return fn


# Elements that run script, embed another document, or change how the page loads or submits.
SCRIPT_CAPABLE_TAGS = frozenset(
    {"script", "iframe", "frame", "frameset", "object", "embed", "applet", "portal", "svg",
     "base", "meta", "link", "style", "form", "noscript", "template"}
)
_URL_ATTRIBUTES = frozenset(
    {"href", "src", "action", "formaction", "data", "poster", "background", "xlink:href",
     "srcset", "codebase", "cite", "ping", "lowsrc", "dynsrc"}
)
_LOADING_ATTRIBUTES = frozenset({"src", "srcset", "data", "poster", "background", "lowsrc", "dynsrc", "codebase"})
# Most prose holds none of this: the HTML parser reads only the blocks where this finds something
# (one linear pass; no two quantifiers of it can read the same characters). Its letters are all
# lowercase: `_risky` searches an ASCII fragment's lowercase copy with it, case-sensitively.
_RISKY_PATTERN = (
    r"<[ \t\n/]*(?:script|iframe|frame|object|embed|applet|portal|svg|base|meta|link|style|form|noscript|template)\b"
    r"|[\s\"'/]on[a-z]+[\s/]*="
    r"|(?:href|src|action|formaction|data|poster|background|xlink:href|srcset|srcdoc|codebase|ping|lowsrc|dynsrc)\s*="
    r"\s*(?:[\"'][\x00-\x20]*)?(?:[/\\&:]|[a-zA-Z0-9+.\-]+(?:[\t\n\r]+[a-zA-Z0-9+.\-]*)*[:&])"
)
_RISKY_RE = lazy(_RISKY_PATTERN, re.IGNORECASE)
_RISKY_LOWER_RE = re.compile(_RISKY_PATTERN)


def _risky(fragment: str) -> bool:
    """Whether `_RISKY_RE` finds something in `fragment`. Nearly all prose is ASCII, and in ASCII
    text ignoring case is matching the lowercase copy (each letter of the pattern matches a
    character exactly when it matches that character lowercased; nothing else changes): a
    quarter of the time, where the case-insensitive search tries each name at each character."""
    if fragment.isascii():
        return _RISKY_LOWER_RE.search(fragment.lower()) is not None
    return _RISKY_RE.search(fragment) is not None


class _TagLister(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]], str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs, self.get_starttag_text() or ""))

    handle_startendtag = handle_starttag


def script_capable_markup(fragment: str) -> list[tuple[str, str]]:
    """What in this HTML can run script or load from elsewhere: (why, where: the start tag as
    written, and for a script URL also the Markdown link's "](url", NUL-separated)."""
    if not _risky(fragment):
        return []
    lister = _TagLister()
    try:
        lister.feed(fragment)
        lister.close()
    except Exception:  # noqa: BLE001 - a parser failure must not fail the build
        return [("HTML the parser could not read", "")]
    found: list[tuple[str, str]] = []
    for tag, attrs, source in lister.tags:
        if tag in SCRIPT_CAPABLE_TAGS:
            found.append((f"a <{tag}> element", source))
        for name, value in attrs:
            if name.startswith("on"):
                found.append((f"an event handler {name}= on <{tag}>", source))
            elif name == "srcdoc":
                found.append((f"srcdoc= on <{tag}>", source))
            elif name in _URL_ATTRIBUTES and value is not None:
                scheme = script_scheme(value)
                if scheme:
                    # a Markdown link's tag is not in the prose, its URL as written is
                    raw = re.search(rf"""{re.escape(name)}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", source)
                    written = next((g for g in raw.groups() if g), "") if raw else ""
                    found.append((f"a {scheme}: URL in {name}= of <{tag}>", f"{source}\0]({written}"))
                elif (name in _LOADING_ATTRIBUTES or (tag == "link" and name == "href")) and is_outside(value):
                    found.append((f"{name}= of <{tag}> loads from outside the site ({value})", source))
    return found


# A Markdown link's target as written (`](target` or `](<target>`): what the links rule refused.
_MARKDOWN_TARGET_RE = re.compile(r"\]\(\s*<?([^\s)>]+)")


@source_check
def check_refused_links(rel: str, section: Section, blocks: "list[ProseBlock]") -> Iterator[Finding]:
    """Markdown links whose target runs script are shown as their label (read/rules/links.py):
    say so at the line, so the author can fix or remove them."""
    if "](" not in section.prose:
        return
    lines = ProseLines(section.prose, section.prose_lines)
    for m in _MARKDOWN_TARGET_RE.finditer(section.prose):
        scheme = script_scheme(html.unescape(m.group(1)))
        if scheme is None:
            continue
        yield Finding(
            "error", "refused-link",
            f"a link to a {scheme}: URL runs script when followed, so it is shown as its text only; "
            "link to a page or an http(s) URL instead",
            path=rel, line=lines.line(m.start()) or section.span[0],
        )


@source_check
def check_author_html(rel: str, section: Section, blocks: "list[ProseBlock]") -> Iterator[Finding]:
    for block in blocks:
        found = script_capable_markup(block.key)
        if not found:
            continue
        lines = ProseLines(section.prose, section.prose_lines)
        for why, source in found:
            # The line of the tag as written in the prose (author HTML is kept as written);
            # else (a Markdown link) the block's first line.
            at = next((a for a in (section.prose.find(c) for c in source.split("\0") if c) if a >= 0), -1)
            line = (lines.line(at) if at >= 0 else 0) or block.line
            yield Finding(
                "warning", "script-in-source",
                f"the prose holds {why}: it is published as written (author HTML is the "
                "author's), but check that it is meant to be there",
                path=rel, line=line,
            )


def analyse(rel: str, url: str, text: str) -> PageData:
    """Parse and render one source file. Never raises for bad content: problems are findings."""
    findings: list[Finding] = []
    try:
        parsed: ParsedSource = parse_source(text, rel)
    except SourceError as e:
        findings.append(Finding("error", "source", f"{e.message}; fix the file and rebuild (meanwhile the site keeps the page as it last parsed, if it ever did)", path=rel, line=e.line, col=e.col))
        return PageData(rel, url, posixpath.basename(rel), "", (), (), (), tuple(findings))

    is_python = rel.endswith(".py")
    if is_python:
        # It tokenized (so it has sections), but a learner who runs it gets Python's error: say
        # where, as Python would (about 0.5 ms a file, once per change).
        found = python_syntax_error(text, rel)
        if found is not None:
            line, col, msg = found
            findings.append(Finding("warning", "invalid-python",
                                    f"invalid Python ({msg}): the page is built, but the code does not run; fix the syntax there",
                                    path=rel, line=line, col=col))
    lines = highlight.highlight_python_lines(text, parsed.tokens) if is_python else []
    ids = _Ids()
    assets: list[str] = []
    asset_lines: dict[str, int] = {}  # where the prose first shows each (for the notebooks' findings)
    sections: list[SectionData] = []
    definitions: list[tuple[str, str]] = []
    all_blocks = [section_blocks(section) for section in parsed.sections]
    # The page's formulas are typeset together: equation numbers run on, \eqref finds its \label.
    formulas = [
        (ph.text, ph.kind != "math")
        for blocks in all_blocks for block in blocks for ph in block.placeholders if ph.kind in _MATH_KINDS
    ]
    macros = page_macros(parsed.meta, rel, findings)  # (checked with or without formulas)
    numbers = page_numbers(parsed.meta, rel, findings)
    math = iter(typeset_page(formulas, macros, numbers) if formulas else ())
    for index, section in enumerate(parsed.sections):
        blocks = all_blocks[index]
        for check in SOURCE_CHECKS.values():
            findings.extend(check(rel, section, blocks))
        rendered_blocks = []
        for block in blocks:
            rendered = tuple(
                render_placeholder(ph, rel, findings, assets, next(math) if ph.kind in _MATH_KINDS else None,
                                   ph.kind == "image" and _inside_link(block.key, i))
                for i, ph in enumerate(block.placeholders)
            )
            rendered_blocks.append(BlockData(block.key, rendered, block.line))
            for ph in block.placeholders:
                if ph.kind == "image" and is_local_image(ph.text):
                    asset_lines.setdefault(image_target(rel, ph.text), ph.line)
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
    # The summary is a translation key as the front matter has it (only stripped): the caches
    # key `summary: a  b` with both spaces, and a folded summary with its line break.
    summary = parsed.meta.get("summary", "")
    redirect = redirect_target(parsed.meta.get("redirect", ""), rel, findings, parsed.meta.line("redirect"))
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
        redirect,
        parsed.meta.get("order", "").strip(),
        tuple(asset_lines.items()),
    )


_LINK_TAG_RE = lazy(r"<a\b[^>]*>|</a>")


def _inside_link(key: str, index: int) -> bool:
    """Whether placeholder `index` of `key` sits inside an `<a>` element."""
    at = key.find(placeholder(index))
    if at < 0:
        return False
    depth = 0
    for m in _LINK_TAG_RE.finditer(key, 0, at):
        depth = max(0, depth + (-1 if m.group(0) == "</a>" else 1))
    return depth > 0


def redirect_target(value: str, rel: str, findings: list[Finding], line: int = 1) -> str:
    """The front matter's `redirect:` URL if a browser reads it as written and it is http(s) or a
    path (`read.urls.url_problem`), else "" and an error at `line`."""
    if not value:
        return ""
    problem = url_problem(value)
    if problem:
        findings.append(Finding("error", "redirect-url", f"redirect: {value[:80]!r} is refused: {problem}; "
                                "no redirect page is written", path=rel, line=line))
        return ""
    return value
