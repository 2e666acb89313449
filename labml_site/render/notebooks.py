"""A Jupyter notebook per Python page: the prose as Markdown cells, the code as code cells.

The code cells, joined with newlines, are exactly the page's code. A cell holds whole top-level
statements, because Jupyter cannot run half a function: sections that continue a statement (a
method of a class, the rest of a function body) join the cell that opened it, and their prose is
gathered into the Markdown cell above it, each piece under the first line of the code it explains.

The prose is the English Markdown as written (with `$…$` math, which Jupyter renders), written
next to the page's `.py` file. Other languages' notebooks are no files: a translated page carries
the cell plan (`browser_plan`) and its sections' prose as Markdown (`render/markdown.py`, as for
page.md), and its script makes the notebook from those and the page's code.

Figures the prose shows are embedded, so that a notebook opened anywhere shows them: each is a
cell attachment (nbformat's `"attachments": {name: {mime type: base64}}`) of the Markdown cell
that shows it, named by `![alt](attachment:name)`. An SVG is embedded as the site publishes it in
that language (sanitised, themed, its labels translated: `figures.published_svg`), a PNG, JPEG,
GIF or WebP as it is. A figure that is missing, refused or larger than `MAX_FIGURE_BYTES` stays
a relative link, with a finding (`embed_plan`).
"""
from __future__ import annotations

import ast
import base64
import html
import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..findings import Finding
from ..read.rules.images import images_in
from ..typeset.page import PageData, SectionData, image_target, is_local_image
from . import figures as svg_figures

NBFORMAT = 4
NBFORMAT_MINOR = 5
_CONTINUATION_RE = re.compile(r"^(else|elif|except|finally|case)\b|^[)\]}]")
_RELATIVE_IMPORT_RE = re.compile(r"^\s*from\s+\.", re.M)


def notebook_path(rel: str) -> str:
    """`annotated_attention/mha.py` → `annotated_attention/mha.ipynb` (beside the source copy)."""
    return posixpath.splitext(rel)[0] + ".ipynb"


@dataclass
class _Cell:
    prose: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)


def _complete(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _starts_statement(code: str) -> bool:
    """Can a new cell begin with this code: a top-level statement that continues nothing?"""
    first = next((line for line in code.split("\n") if line.strip() and not line.lstrip().startswith("#")), "")
    return bool(first) and not first[0].isspace() and not _CONTINUATION_RE.match(first)


def _quote_line(code: str) -> str:
    """The first code line of a section as inline Markdown code, to anchor prose to it."""
    first = next((line.strip() for line in code.split("\n") if line.strip()), "")
    if len(first) > 72:
        first = first[:71] + "…"
    fence = "``" if "`" in first else "`"
    pad = " " if first.startswith("`") or first.endswith("`") else ""
    return f"> {fence}{pad}{first}{pad}{fence}"


_FIELD_RE = re.compile(r"^:(?:param[ \t]+([^:\s]+)|(returns?))[ \t]*:[ \t]*(.*)$")


def fields_as_lists(markdown: str) -> str:
    """A docstring's reST fields as a Markdown list, as the page shows them (`read/rules/lists.py`):
    `:param x: text` → `- `x`: text`, `:return: text` → `- *Returns*: text`; a field's indented
    continuation lines stay in its item. Jupyter runs raw field lines together into one paragraph.
    Fields inside a code fence are code, kept as written."""
    if ":param" not in markdown and ":return" not in markdown:
        return markdown
    out: list[str] = []
    in_item = in_fence = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        m = None if in_fence else _FIELD_RE.match(line)
        if m:
            if not in_item and out and out[-1].strip():
                out.append("")  # a list starts a block of its own
            name, _returns, text = m.groups()
            out.append(f"- `{name}`: {text}".rstrip() if name else f"- *Returns*: {text}".rstrip())
            in_item = True
        elif in_item and line.strip() and line[:1] in (" ", "\t"):
            out.append("  " + line.strip())
        else:
            if in_item and line.strip():
                out.append("")  # the list ends before the next paragraph
            in_item = False
            out.append(line)
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Figures as cell attachments

# A figure is embedded up to this size (its bytes as embedded, before base64): a notebook is
# downloaded whole, and Jupyter keeps every attachment in memory; a larger one stays a link.
MAX_FIGURE_BYTES = 512 * 1024
RASTER_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
SVG_TYPE = "image/svg+xml"
_NAME_UNSAFE_RE = re.compile(r"[^A-Za-z0-9._-]")


def is_figure(asset: str) -> bool:
    """Whether a notebook embeds this asset when the prose shows it: an SVG or a raster image."""
    suffix = posixpath.splitext(asset)[1].lower()
    return suffix == ".svg" or suffix in RASTER_TYPES


def figure_assets(page: PageData) -> tuple[str, ...]:
    """The page's figures a notebook embeds, in the order the prose shows them."""
    return tuple(a for a in page.assets if is_figure(a))


@dataclass(frozen=True)
class Attachment:
    name: str  # the attachment's name in its cell (`attachment:<name>`)
    mime: str
    data: str  # base64

    def bundle(self) -> dict[str, str]:
        return {self.mime: self.data}


@dataclass(frozen=True)
class Figures:
    """What a page's notebook embeds in one language: asset → attachment, and why the others
    stay links (findings, with the line of the prose that shows them)."""

    attachments: tuple[tuple[str, Attachment], ...] = ()
    findings: tuple[Finding, ...] = ()

    def by_asset(self) -> dict[str, Attachment]:
        return dict(self.attachments)


def embed_plan(page: PageData, contents: Mapping[str, bytes | None],
               translate: Callable[[str], str | None] | None = None) -> Figures:
    """The attachments of a page's notebook: each of its figures (`figure_assets`) with its bytes
    in `contents` (None: missing or refused), an SVG as published (`translate`: its labels in the
    notebook's language), within `MAX_FIGURE_BYTES`; a finding for each that stays a link."""
    attachments: list[tuple[str, Attachment]] = []
    findings: list[Finding] = []
    taken: set[str] = set()
    lines = dict(page.asset_lines)

    def link(asset: str, why: str) -> None:
        findings.append(Finding("warning", "notebook-figure", f"{asset} {why}, so the page's notebook links to it "
                                "instead of embedding it (the link breaks once the notebook is downloaded)",
                                path=page.rel, line=lines.get(asset)))

    for asset in figure_assets(page):
        data = contents.get(asset)
        if data is None:
            link(asset, "is missing or not published")
            continue
        suffix = posixpath.splitext(asset)[1].lower()
        if suffix == ".svg":
            if len(data) > 4 * MAX_FIGURE_BYTES:  # (not worth sanitising: it could not fit)
                link(asset, f"is {len(data) // 1024} KiB, larger than the {MAX_FIGURE_BYTES // 1024} KiB a notebook embeds")
                continue
            svg = svg_figures.published_svg(data.decode("utf-8", "replace"), asset, translate)
            if svg is None:
                link(asset, "is refused as a figure (see its svg-refused error)")
                continue
            data, mime = svg.encode("utf-8"), SVG_TYPE
        else:
            mime = RASTER_TYPES[suffix]
        if len(data) > MAX_FIGURE_BYTES:
            link(asset, f"is {len(data) // 1024} KiB, larger than the {MAX_FIGURE_BYTES // 1024} KiB a notebook embeds")
            continue
        name = _NAME_UNSAFE_RE.sub("_", posixpath.basename(asset)) or "figure"
        if name in taken:  # two folders' figures of the same name
            stem, ext = posixpath.splitext(name)
            name = next(f"{stem}-{n}{ext}" for n in range(2, len(taken) + 3) if f"{stem}-{n}{ext}" not in taken)
        taken.add(name)
        attachments.append((asset, Attachment(name, mime, base64.b64encode(data).decode("ascii"))))
    return Figures(tuple(attachments), tuple(findings))


def embed_figures(markdown: str, page_rel: str, attachments: Mapping[str, Attachment]) -> tuple[str, dict[str, dict[str, str]]]:
    """A Markdown cell's text with each image of an embedded figure as `![alt](attachment:name)`,
    and the cell's attachments (nbformat's form). Images in code fences are code, kept."""
    if "![" not in markdown or not attachments:
        return markdown, {}
    used: dict[str, dict[str, str]] = {}
    out: list[str] = []
    in_fence = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if not in_fence and "![" in line:
            parts, last = [], 0
            for start, end, alt, src in images_in(line):
                src = html.unescape(src)
                found = attachments.get(image_target(page_rel, src)) if is_local_image(src) else None
                if found is None:
                    continue
                parts += [line[last:start], f"![{alt}](attachment:{found.name})"]
                used[found.name] = found.bundle()
                last = end
            line = "".join(parts) + line[last:]
        out.append(line)
    return "\n".join(out), used


def _cells(sections: tuple[SectionData, ...]) -> list[_Cell]:
    """The cells of a page, from its plan (`_plan`, which the page's `browser_plan` is made of
    too, so the code is parsed for cell breaks once)."""
    cells = []
    for code_parts, prose_parts in _plan(sections):
        cell = _Cell(code=list(code_parts))
        for index, quote in prose_parts:
            prose = fields_as_lists(sections[index].prose_md.strip("\n"))
            if prose:
                cell.prose.append(f"{quote}\n\n{prose}" if quote else prose)
        cells.append(cell)
    return cells


_PLANS: dict[tuple, list] = {}


def _plan(sections: tuple[SectionData, ...]) -> list:
    """Which sections' code and prose make each cell (`_english_cells`, with section indices):
    computed once per page for every language (it parses the code)."""
    key = tuple((s.code, bool(s.prose_md.strip("\n"))) for s in sections)
    found = _PLANS.get(key)
    if found is None:
        marked = tuple(SectionData(s.id, (), "", 0, 0, s.code, f"\x00{i}\x00" if s.prose_md.strip("\n") else "") for i, s in enumerate(sections))
        found = []
        for cell in _english_cells(marked):
            prose_parts = []
            for piece in cell.prose:
                quote, _, mark = piece.rpartition("\n\n") if piece.startswith("> ") else ("", "", piece)
                prose_parts.append((int(mark.strip("\x00")), quote))
            found.append((tuple(cell.code), tuple(prose_parts)))
        if len(_PLANS) > 512:
            _PLANS.clear()
        _PLANS[key] = found
    return found


def _english_cells(sections: tuple[SectionData, ...]) -> list[_Cell]:
    cells: list[_Cell] = []
    current: _Cell | None = None
    for s in sections:
        prose = s.prose_md.strip("\n")
        if not s.code:
            if prose:
                if current is not None and current.code:
                    cells.append(current)
                    current = None
                current = current or _Cell()
                current.prose.append(prose)
            continue
        # (the cheap test first: parsing the cell so far on every section is quadratic)
        joinable = current is not None and current.code and not (
            _starts_statement(s.code) and _complete("\n".join(current.code))
        )
        if current is not None and current.code and not joinable:
            cells.append(current)
            current = None
        if current is None:
            current = _Cell()
        if prose:
            # Prose for code in the middle of a cell: say which line it is about.
            current.prose.append(f"{_quote_line(s.code)}\n\n{prose}" if current.code else prose)
        current.code.append(s.code)
    if current is not None:
        cells.append(current)
    return cells


def _source_lines(text: str) -> list[str]:
    # nbformat's on-disk form: a list of lines, each keeping its newline except the last.
    return text.splitlines(keepends=True)


def notebook(page: PageData, figures: Figures | None = None) -> dict:
    """The page as an nbformat v4 notebook (a plain dict, ready for `json.dumps`), with the
    figures of `figures` (`embed_plan`) embedded."""
    cells: list[dict] = []
    intro = _intro(page)
    if intro:
        cells.append(_markdown(intro, "intro"))
    attachments = figures.by_asset() if figures else {}
    for i, cell in enumerate(_cells(page.sections)):
        if cell.prose:
            text, used = embed_figures("\n\n".join(cell.prose), page.rel, attachments)
            cells.append(_markdown(text, f"c{i}-md", used))
        if cell.code:
            cells.append({
                "cell_type": "code",
                "id": f"c{i}-code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": _source_lines("\n".join(cell.code)),
            })
    return {
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "title": page.title,
        },
        "cells": cells,
    }


# The intro cell in a translation's notebook (site.js makes those): this text, in the reader's
# language from the UI catalogs (labml_site/locales), with the page's values. The English
# notebook's intro is the same text (`_intro`), so the two cannot drift.
INTRO_MESSAGE = (
    "*Generated from `{rel}`. This code imports other modules of its package "
    "(`from .… import …`): install the package as its README says and run "
    "`__package__ = \"{package}\"` in a cell of your own before the cells below.*"
)


def _intro(page: PageData) -> str:
    """A first cell for code that imports its own package's modules, which a notebook cannot."""
    code = "\n".join(s.code for s in page.sections if s.code)
    if not _RELATIVE_IMPORT_RE.search(code):
        return ""
    return INTRO_MESSAGE.format(rel=page.rel, package=posixpath.dirname(page.rel).replace("/", "."))


def browser_plan(page: PageData) -> dict:
    """How the page's script makes a translation's notebook (site.js): the file name, the intro
    cell, and per cell the sections whose code it holds and (section, quote) for its prose, as
    `notebook` makes them. A notebook per language is then no file of its own, with the same cells
    as the English one. The same for every language (the page adds its title and its sections'
    prose as Markdown); made with the analysis, which plans the English notebook's cells anyway."""
    with_code = iter([i for i, s in enumerate(page.sections) if s.code])
    cells = []
    for code_parts, prose_parts in _plan(page.sections):
        cells.append([[next(with_code) for _ in code_parts], [[i, quote] for i, quote in prose_parts]])
    return {"name": posixpath.basename(notebook_path(page.rel)), "intro": _intro(page), "cells": cells}


def _markdown(text: str, cell_id: str, attachments: dict | None = None) -> dict:
    cell = {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": _source_lines(text)}
    if attachments:
        cell["attachments"] = attachments
    return cell


def notebook_json(page: PageData, figures: Figures | None = None) -> str:
    return json.dumps(notebook(page, figures), ensure_ascii=False, indent=1) + "\n"


def code_cells(nb: dict) -> list[str]:
    """The source of each code cell, for checks: joined with "\\n" they are the page's code."""
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"] if c["cell_type"] == "code"]


def wants_notebook(page: PageData) -> bool:
    return page.is_python and any(s.code for s in page.sections)


def translated_intro(rel: str, english: str, gettext: Callable[..., str]) -> str:
    """The intro cell of the notebook of the page `rel` in a language (`gettext`: the UI
    catalog's), from its English intro (`browser_plan`'s); "" when the notebook has none."""
    if not english:
        return ""
    return gettext(INTRO_MESSAGE, rel=rel, package=posixpath.dirname(rel).replace("/", "."))
