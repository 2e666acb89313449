"""KaTeX's last names that math-core lacks, as rewrites of the TeX (with `math._rewrite`'s offsets)
and, where MathML needs an attribute math-core cannot write, marker rows that `finish` turns into
it.

* ``{a \\above 2pt b}``: ``\\genfrac`` with that rule (math-core's ``rem`` made ``em``, as KaTeX);
* ``\\begin{CD}`` (amscd): an array of objects and arrows, as KaTeX draws it: ``@>a>b>`` and
  ``@<<<`` are ``\\xrightarrow``/``\\xleftarrow`` between the objects, ``@=`` a long ``=``,
  ``@VaVbV``/``@AaAbA`` a ``\\Big`` arrow with its labels to either side (the arrow centred), ``@|`` ``\\Big\\Vert``,
  ``@.`` nothing;
* ``\\cline{i-j}`` after ``\\\\``: a rule over the top of cells i…j of the next row (a border on those
  ``<mtd>``); ``\\multicolumn{n}{spec}{x}``: ``columnspan`` on its cell, aligned by the spec;
* ``\\raisebox{len}{…$x$…}`` with math inside (math-core raises text only): the raised box is an
  ``<mpadded voffset>`` round text and math;
* ``\\textcircled``: the enclosed Unicode letter or number (ⓐ Ⓐ ⓪ ①…⑳); other arguments stay an
  error;
* the ``\\textXX`` font commands stacked (``\\textsf{\\textbf{H}}``: bold sans serif; math-core kept
  only the inner one): the outer family rides on a classed row;
* ``\\@ifstar{a}{b}``: ``a`` (eating the ``*``) when a ``*`` follows, else ``b``, as KaTeX's macro;
* ``\\expandafter``, ``\\noexpand``, ``\\futurelet`` (KaTeX's macro primitives) for the parameterless
  macros of the formula (``\\def``/``\\newcommand``) and of the page: ``\\expandafter\\a\\b`` puts
  ``\\b``'s body after ``\\a`` once; ``\\noexpand\\b`` is nothing when ``\\b`` is such a macro (TeX's
  ``\\relax`` meaning) and ``\\b`` otherwise; ``\\futurelet\\cs\\a\\b`` is ``\\let\\cs=\\b\\a\\b``.
  Before any other macro (one with parameters, or a KaTeX command math-core defines) ``\\expandafter``
  is only dropped.
  Each rewrite is one pass over the formula and adds at most one definition's body per command,
  and the whole is bounded by `MAX_GROWTH` characters: no expansion runs unbounded; at most
  `MAX_COMMANDS` of these are rewritten a formula (each scans at most the formula).

``\\par`` stays an error, as in KaTeX and TeX (a paragraph cannot end inside math); math.py words it.
"""

from __future__ import annotations

import bisect
import re
from typing import Optional

from ..lazy_re import lazy
from .braces import grouped, matching_brace

__all__ = ["TRIGGER", "rewrites", "finish_marker", "MARKER_RE", "MAX_GROWTH"]

# Marker colours (math.py's `_MARKER_PREFIX` family, 01F0xx): a rule over the cell, a sans-serif
# or monospace family round stacked text, a raised box; columnspan n, aligned c/l/r, is 01F0 +
# 0x40/0x80/0xC0 + n (n < 64).
CLINE, SANS, MONO, RAISE, LEFT_RULE, RIGHT_RULE = "01F020", "01F021", "01F022", "01F023", "01F024", "01F025"
_CELL_RULES = {CLINE: "border-top", LEFT_RULE: "border-left", RIGHT_RULE: "border-right"}
_SPAN_BASE = {"c": 0x40, "l": 0x80, "r": 0xC0}
MARKER_RE = r"01F02[0-5]|01F0[4-9A-F][0-9A-F]"
MAX_GROWTH = 20_000
# Commands rewritten a formula: some scan a row or their group each (\cline, \above), so a
# formula of thousands of them would take seconds; no real formula has more than a few.
MAX_COMMANDS = 200

TRIGGER = lazy(
    r"\\(?:above|cline|multicolumn|raisebox|textcircled|expandafter|noexpand|futurelet|@ifstar|text(?:sf|tt))(?![A-Za-z])"
    r"|\\begin\s*\{CD\}"
)
_DIMENSION = lazy(r"\s*(?:\{\s*(-?[\d.]+\s*[a-z]{2})\s*\}|(-?[\d.]+\s*[a-z]{2}))")
_TOKEN = lazy(r"\\[A-Za-z]+|\\.|[^\s\\{}]")
_DEFINITION = lazy(r"\\def\s*(\\[A-Za-z]+)\s*\{|\\(?:re)?newcommand\s*\{?\s*(\\[A-Za-z]+)\s*\}?\s*\{")
_TEXT_FAMILY = lazy(r"\\text(sf|tt)\s*\{")
_TEXT_FONT = lazy(r"\\text(?:bf|it|md|up|rm|sf|tt|normal)\s*\{")
_CIRCLED = {**{c: chr(0x24B6 + i) for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ")},
            **{c: chr(0x24D0 + i) for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")},
            "0": "\u24ea", **{str(n): chr(0x2460 + n - 1) for n in range(1, 21)}}


def _group(tex: str, i: int) -> Optional[tuple[int, int]]:
    """The brace group starting at `i` (spaces skipped): (open, close), or None."""
    while i < len(tex) and tex[i].isspace():
        i += 1
    if i >= len(tex) or tex[i] != "{":
        return None
    close = matching_brace(tex, i)
    return (i, close) if close > 0 else None


def _enclosing_group(tex: str, pos: int) -> tuple[int, int]:
    """(index after the "{", index of the "}") of the group round `pos`; the formula when none."""
    depth = 0
    i = pos - 1
    while i >= 0:
        c = tex[i]
        escaped = i > 0 and tex[i - 1] == "\\"
        if c == "}" and not escaped:
            depth += 1
        elif c == "{" and not escaped:
            if depth == 0:
                close = matching_brace(tex, i)
                return i + 1, (close if close > 0 else len(tex))
            depth -= 1
        i -= 1
    return 0, len(tex)


class _Rows:
    """The cells of the rows `\\cline` rules go over, each row read once: a run of rules before
    one row (`\\cline{1-1}\\cline{2-2}…`) would otherwise read the row once per rule, and a
    formula is long enough for that to take seconds."""

    def __init__(self, tex: str) -> None:
        self.tex = tex
        self.start = self.end = -1  # the row read last: from `start` to its end
        self.ands: list[int] = []  # where its cells after the first begin
        self.level: set[int] = set()  # offsets in it at its own depth (after a group closes)

    def cells(self, start: int, wanted: int) -> list[int]:
        """Start offsets of the first `wanted` cells of the row beginning at `start` (to its
        `\\\\` or `\\end`)."""
        if not (self.start < start < self.end and start in self.level):
            self._read(start)
        first = bisect.bisect_right(self.ands, start)
        return [start, *self.ands[first : first + max(0, wanted - 1)]]

    def _read(self, start: int) -> None:
        tex, ands, level = self.tex, [], set()
        end = len(tex)
        for i, c, depth in grouped(tex, start, marks="&"):
            if c == "\\" and depth == 0 and (tex.startswith("\\\\", i) or tex.startswith("\\end", i)):
                end = i
                break
            if depth < 0:  # (the "}" of a group the row is inside)
                end = i
                break
            if c == "&" and depth == 0:
                ands.append(i + 1)
            elif c == "}" and depth == 0:
                level.add(i + 1)
        self.start, self.end, self.ands, self.level = start, end, ands, level


def _definitions(tex: str) -> dict[str, str]:
    """Parameterless macros the formula defines: name → body."""
    out = {}
    for m in _DEFINITION.finditer(tex):
        close = matching_brace(tex, m.end() - 1)
        if close > 0:
            out[m.group(1) or m.group(2)] = tex[m.end():close]
    return out


def _cd(tex: str, begin: re.Match, marker_ok: bool) -> Optional[list[tuple[int, int, str]]]:
    end = tex.find(r"\end{CD}", begin.end())
    if end < 0:
        return None
    body_start = begin.end()
    repl: list[tuple[int, int, str]] = []
    rows: list[tuple[int, int]] = []
    pos = body_start
    depth = 0
    i = body_start
    while i < end:  # rows at the top level
        c = tex[i]
        if c == "\\" and tex.startswith("\\\\", i) and depth == 0:
            rows.append((pos, i))
            pos = i + 2
            i += 2
            continue
        if c == "\\":
            i += 2
            continue
        depth += c == "{"
        depth -= c == "}"
        i += 1
    rows.append((pos, end))
    columns = 1
    for a, b in rows:
        tokens = list(_cd_arrows(tex, a, b))
        if tokens is None:
            return None
        vertical = [t for t in tokens if t[2] in "VA|."]
        horizontal = [t for t in tokens if t[2] in "<>="]
        if vertical and horizontal:
            return None  # a row is either objects and horizontal arrows or vertical arrows only
        columns = max(columns, 2 * len(horizontal) + 1, 2 * len(vertical) - 1)
        for index, (s, e, kind, above, below) in enumerate(tokens):
            if kind in "<>=":
                arrow = {">": r"\xrightarrow", "<": r"\xleftarrow", "=": r"\xlongequal"}[kind]
                text = f"&{arrow}" + (f"[{below}]" if below else "") + f"{{{above}}}&"
            else:
                glyph = {"V": r"\Big\downarrow", "A": r"\Big\uparrow", "|": r"\Big\Vert", ".": ""}[kind]
                # the labels beside the arrow, each side padded by the other's phantom: the arrow
                # stays on the column's axis and the labels inside the table (lapped, they were
                # clipped at the formula's edges)
                left = rf"{{\scriptstyle {above}\,}}" if above else ""
                right = rf"{{\,\scriptstyle {below}}}" if below else ""
                pad_left = rf"\hphantom{{{right}}}" if right else ""
                pad_right = rf"\hphantom{{{left}}}" if left else ""
                text = ("&&" if index else "") + pad_left + left + glyph + right + pad_right
            repl.append((s, e, text))
    repl.append((begin.start(), begin.end(), rf"\begin{{array}}{{{'c' * columns}}}"))
    repl.append((end, end + len(r"\end{CD}"), r"\end{array}"))
    return repl


def _cd_arrows(tex: str, a: int, b: int):
    """(start, end, kind, above/left label, below/right label) of each `@` arrow in tex[a:b]."""
    i = a
    while i < b:
        at = tex.find("@", i, b)
        if at < 0 or at + 1 >= b:
            return
        kind = tex[at + 1]
        if kind in "=|.":
            yield at, at + 2, kind, "", ""
            i = at + 2
            continue
        if kind not in "<>VA":
            i = at + 1
            continue
        labels = []
        j = at + 2
        for _ in range(2):  # two labels, each up to the next `kind` at brace depth 0
            depth, k = 0, j
            while k < b and not (tex[k] == kind and depth == 0):
                depth += tex[k] == "{"
                depth -= tex[k] == "}"
                k += 1
            labels.append(tex[j:k].strip())
            j = k + 1
        yield at, min(j, b), kind, labels[0], labels[1]
        i = j


def rewrites(tex: str, marker_ok: bool, macros: tuple[tuple[str, str], ...] = ()) -> list[tuple[int, int, str]]:
    """Edits (start, end, text) in the author's TeX for the names above; `marker_ok`: the TeX does
    not itself spell the marker colours (so markers may be written); `macros`: the page's (name
    without the backslash, body), whose parameterless ones \\expandafter and \\noexpand know too."""
    repl: list[tuple[int, int, str]] = []
    definitions: Optional[dict[str, str]] = None
    rows = _Rows(tex)
    growth = 0
    for index, m in enumerate(TRIGGER.finditer(tex)):
        if index == MAX_COMMANDS:
            break  # (the rest stay as written: math-core names them)
        name = m.group()
        start, end = m.start(), m.end()
        if name.startswith("\\begin"):
            cd = _cd(tex, m, marker_ok)
            if cd:
                repl += cd
        elif name == r"\above":
            dim = _DIMENSION.match(tex, end)
            if dim:
                inner_start, inner_end = _enclosing_group(tex, start)
                width = dim.group(1) or dim.group(2)
                repl += [(inner_start, inner_start, rf"\genfrac{{}}{{}}{{{width}}}{{}}{{"),
                         (start, dim.end(), "}{"), (inner_end, inner_end, "}")]
        elif name == r"\cline":
            group = _group(tex, end)
            span = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", tex[group[0] + 1:group[1]]) if group else None
            if span and marker_ok:
                first, last = int(span.group(1)), int(span.group(2))
                repl.append((start, group[1] + 1, ""))
                cells = rows.cells(group[1] + 1, last)
                for cell in cells[first - 1:last]:
                    repl.append((cell, cell, rf"\textcolorhtml{{{CLINE}}}{{}}"))
        elif name == r"\multicolumn":
            count, spec, content = _group(tex, end), None, None
            if count:
                spec = _group(tex, count[1] + 1)
            if spec:
                content = _group(tex, spec[1] + 1)
            n = tex[count[0] + 1:count[1]].strip() if count else ""
            written = re.sub(r"\s", "", tex[spec[0] + 1:spec[1]]) if spec else ""
            align = written.strip("|")
            if content and n.isdigit() and 0 < int(n) < 64 and align in _SPAN_BASE and marker_ok:
                marker = f"01F0{_SPAN_BASE[align] + int(n):02X}"
                # the spec's own rules (`|c|`), not those of the columns it spans
                rules = "".join(rf"\textcolorhtml{{{rule}}}{{}}" for rule, bar in ((LEFT_RULE, written.startswith("|")),
                                                                               (RIGHT_RULE, written.endswith("|"))) if bar)
                repl += [(start, content[0] + 1, rf"\textcolorhtml{{{marker}}}{{{rules}"), (content[1], content[1] + 1, "}")]
        elif name == r"\raisebox":
            length, content = _group(tex, end), None
            if length:
                content = _group(tex, length[1] + 1)
            if content and "$" in tex[content[0]:content[1]] and marker_ok:
                raise_by = tex[length[0]:length[1] + 1]
                repl += [(start, content[0] + 1, rf"\textcolorhtml{{{RAISE}}}{{\raisebox{raise_by}{{.}}\text{{"),
                         (content[1], content[1] + 1, "}}")]
        elif name == r"\textcircled":
            group = _group(tex, end)
            if group:
                arg, stop = tex[group[0] + 1:group[1]].strip(), group[1] + 1
            else:
                token = re.match(r"\s*([A-Za-z0-9])", tex[end:])
                arg, stop = (token.group(1), end + token.end()) if token else ("", end)
            if arg in _CIRCLED:
                repl.append((start, stop, _CIRCLED[arg]))
        elif name in (r"\textsf", r"\texttt"):
            group = _group(tex, end)
            if group and marker_ok and _TEXT_FONT.search(tex, group[0] + 1, group[1]):
                marker = SANS if name == r"\textsf" else MONO
                repl += [(start, start, rf"\textcolorhtml{{{marker}}}{{"), (group[1] + 1, group[1] + 1, "}")]
        elif name == r"\@ifstar":
            groups = [_group(tex, end)]
            if groups[0]:
                groups.append(_group(tex, groups[0][1] + 1))
            if all(groups):
                (a0, a1), (b0, b1) = groups
                after = b1 + 1
                while after < len(tex) and tex[after].isspace():
                    after += 1
                if after < len(tex) and tex[after] == "*":
                    repl.append((start, after + 1, tex[a0:a1 + 1]))
                else:
                    repl.append((start, b1 + 1, tex[b0:b1 + 1]))
        else:  # \expandafter, \noexpand, \futurelet
            if definitions is None:
                definitions = {"\\" + name: body for name, body in macros if "#" not in body} | _definitions(tex)
            first = _TOKEN.match(tex, _skip(tex, end))
            if name == r"\noexpand":
                if first and first.group() in definitions:
                    repl.append((start, first.end(), " "))  # a macro: TeX's \relax meaning, nothing
                else:
                    repl.append((start, end, ""))
                continue
            second = _TOKEN.match(tex, _skip(tex, first.end())) if first else None
            if name == r"\futurelet":
                third = _TOKEN.match(tex, _skip(tex, second.end())) if second else None
                if first and second and third and first.group().startswith("\\"):
                    repl.append((start, second.start(), rf"\let{first.group()}={third.group()} "))
                continue
            # \expandafter
            if second and second.group() in definitions and growth + len(definitions[second.group()]) <= MAX_GROWTH:
                body = definitions[second.group()]
                growth += len(body)
                repl += [(start, end, ""), (second.start(), second.end(), " " + body)]
            else:
                repl.append((start, end, ""))
    return repl


def _skip(tex: str, i: int) -> int:
    while i < len(tex) and tex[i].isspace():
        i += 1
    return i


_CELL_START = lazy(r"<mtd((?: [a-z]+=\"[^\"]*\")*)>((?:<mrow>)*)$")


def finish_marker(body: str, marker: str, start: int, end: int, inner: str) -> Optional[str]:
    """`body` with the marker row body[start:end] (its inner MathML `inner`) made what it stands
    for; None when `marker` is not one of these."""
    if marker in (SANS, MONO):
        family = "text-sans" if marker == SANS else "text-mono"
        return body[:start] + f'<mrow class="{family}">' + inner + "</mrow>" + body[end:]
    if marker == RAISE:
        if inner.startswith("<mrow><mpadded") and inner.endswith("</mrow>"):
            inner = inner[6:-7]
        # (the length as math-core read it; its pt are rem, TeX's are of the font size)
        m = re.match(r'<mpadded voffset="([^"]*)"><mtext>\.</mtext></mpadded>', inner)
        if m is None:
            return body[:start] + "<mrow>" + inner + "</mrow>" + body[end:]
        voffset = re.sub(r"rem$", "em", m.group(1))
        return body[:start] + f'<mpadded voffset="{voffset}"><mrow>' + inner[m.end():] + "</mrow></mpadded>" + body[end:]
    code = int(marker[4:], 16)
    if marker in _CELL_RULES or code >= 0x40:
        cell = _CELL_START.search(body, 0, start)
        if cell is None:  # not at the start of a cell: the marker draws nothing
            return body[:start] + "<mrow>" + inner + "</mrow>" + body[end:]
        attributes = cell.group(1)
        style = re.search(r' style="([^"]*)"', attributes)
        css = style.group(1) if style else ""
        if marker in _CELL_RULES:
            css += f"{_CELL_RULES[marker]}: 0.05em solid currentcolor;"
            span = ""
            content = ""
        else:
            align = {0x40: "center", 0x80: "left", 0xC0: "right"}[code & 0xC0]
            css = re.sub(r"text-align: [a-z]+;justify-items: [a-z]+;|border-(?:left|right): [^;]*;", "", css)
            css += f"text-align: {align};justify-items: {({'center': 'center', 'left': 'start', 'right': 'end'})[align]};"
            span = f' columnspan="{code & 0x3F}"'
            content = "<mrow>" + inner + "</mrow>"
        attributes = re.sub(r' style="[^"]*"', "", attributes) + span + f' style="{css}"'
        return body[:cell.start()] + f"<mtd{attributes}>" + cell.group(2) + content + body[end:]
    return None
