"""TeX → MathML at build time: no JavaScript on the page, no CDN.

The conversion itself is math-core's (a Rust TeX → MathML Core converter: TeX's spacing classes,
equation numbering, ``\\label``/``\\eqref``, macros with an expansion limit; ~250,000 formulas per
CPU-second). This module is the contract around it:

* before: the formula is bounded (length, nesting: math-core recurses and would overflow its
  stack, killing the process), and what math-core does not know is rewritten on a copy, with the
  offsets kept so errors still point into the author's TeX (`_rewrite`): CSS colour names and
  ``#rrggbb``, ``\\pmb``, ``\\\\{…\\\\}`` read from a non-raw docstring, ``\\`` + newline,
  ``alignat``, ``split``, ``smallmatrix``, ``matrix*``, ``\\substack``, math inside ``\\text``,
  sizes in math (a marker row sized like KaTeX's), ``\\tag`` in a plain display formula,
  ``\\mathop{name}`` in math italic (as TeX; math-core's multi-letter <mi> is upright); other KaTeX
  commands it lacks are macros (`_COMPAT_MACROS`), and a few (``\\smash``, the laps,
  ``\\colorbox``, ``\\ref``) go through in a marker colour that `_unmark` turns into what they
  draw;
* after (`_finish`): the MathML is wrapped as ``<math xmlns display><semantics>…<annotation>TeX``;
  entities become numeric references; Chromium's quirks are worked around (a sized delimiter as
  the base of a script, ``\\left(`` round short content or a fraction, ``\\vec``, a numbered
  equation's width);
  ``d_{model}`` becomes one identifier and ``\\mathop`` takes limits in display; then the result
  passes the allow-list of elements, attributes, styles, classes, ids and links;
* errors are `MathError` with the 1-based line and column in the formula.

Each distinct formula is converted once (`tex_to_mathml` is cached); a page whose formulas are
numbered or refer to each other is converted as a whole (`typeset_page`), so numbers run on,
``\\eqref`` finds its equation and a label defined twice is an error.
"""

from __future__ import annotations

import colorsys
import functools
import html
import re
import threading
from html.entities import html5 as _HTML5_ENTITIES
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from math_core import LatexError, LatexToMathML

from labml_site.typeset import math_katex
from ..lazy_re import lazy
from .braces import grouped, matching_brace

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

__all__ = [
    "MathError",
    "MATHML_NS",
    "MATHML_ELEMENTS",
    "MATHML_ATTRIBUTES",
    "EQUATION_ID_PREFIX",
    "tex_to_mathml",
    "typeset_page",
    "validate_mathml",
]

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# Ids of numbered equations (`\label{x}` → id="eq-x"), apart from the page's section ids.
EQUATION_ID_PREFIX = "eq-"

MAX_TEX_CHARS = 20_000
MAX_NESTING = 150
MAX_EXPANSIONS = 500


class MathError(Exception):
    """The TeX cannot be turned into valid MathML; the message says what is wrong.

    `line` and `column` (1-based, in the formula's own text) say where, when known, so a caller
    that knows where the formula starts in its file can point at the spot.
    """

    def __init__(self, message: str, column: Optional[int] = None, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.column = column
        self.line = line if line is not None else (1 if column is not None else None)


# --------------------------------------------------------------------------------------------------
# KaTeX commands math-core lacks, as macros (math-core expands them like the author's own)

_COMPAT_MACROS: dict[str, str] = {
    "pmb": r"\boldsymbol{#1}",
    "mathnormal": r"\mathit{#1}",
    "Bbb": r"\mathbb{#1}",
    "bold": r"\mathbf{#1}",
    "textcolorhtml": r"{\color[HTML]{#1}{#2}}",
    "KaTeX": r"\text{KaTeX}",
    "LaTeX": r"\text{LaTeX}",
    "TeX": r"\text{TeX}",
    "allowbreak": "",
    "nobreak": "",
    "long": "",
    "makeatletter": "",
    "centerdot": r"\cdot",
    "sdot": r"\cdot",
    "dotsb": r"\cdots",
    "dotsm": r"\cdots",
    "dotsi": r"\!\cdots",
    "dotsc": r"\ldots",
    "dotso": r"\ldots",
    "mathellipsis": r"\ldots",
    "intop": r"\int",
    "smallint": r"{\textstyle\int}",
    "shortmid": r"\mid",
    "nshortmid": r"\nmid",
    "shortparallel": r"\parallel",
    "nshortparallel": r"\nparallel",
    "smallfrown": r"\frown",
    "smallsmile": r"\smile",
    "smallsetminus": r"\setminus",
    "thickapprox": r"\approx",
    "thicksim": r"\sim",
    "varpropto": r"\propto",
    "varinjlim": r"\mathop{\underrightarrow{\mathrm{lim}}}",
    "varprojlim": r"\mathop{\underleftarrow{\mathrm{lim}}}",
    "varliminf": r"\mathop{\underline{\mathrm{lim}}}",
    "varlimsup": r"\mathop{\overline{\mathrm{lim}}}",
    "textmd": r"\text{#1}",
    "mbox": r"\text{#1}",
    "hbox": r"\text{#1}",
    "textnormal": r"\text{#1}",
    "textup": r"\text{#1}",
    "vcenter": r"{#1}",  # math is centred on the axis already, as \vcenter would set it
    "overlinesegment": r"\overline{#1}",  # without the segment's end ticks
    "underlinesegment": r"\underline{#1}",
}


# --------------------------------------------------------------------------------------------------
# Rewrites before conversion, with an offset map back to the author's TeX

# CSS named colours (KaTeX passes any CSS colour through, so `green` is #008000 there, where
# math-core's xcolor `green` is #03FF00): CSS names are resolved here, xcolor-only names
# (dvipsnames such as `Apricot`) are left to math-core.
_CSS_COLOURS: dict[str, str] = {
    "aliceblue": "F0F8FF", "antiquewhite": "FAEBD7", "aqua": "00FFFF", "aquamarine": "7FFFD4",
    "azure": "F0FFFF", "beige": "F5F5DC", "bisque": "FFE4C4", "black": "000000",
    "blanchedalmond": "FFEBCD", "blue": "0000FF", "blueviolet": "8A2BE2", "brown": "A52A2A",
    "burlywood": "DEB887", "cadetblue": "5F9EA0", "chartreuse": "7FFF00", "chocolate": "D2691E",
    "coral": "FF7F50", "cornflowerblue": "6495ED", "cornsilk": "FFF8DC", "crimson": "DC143C",
    "cyan": "00FFFF", "darkblue": "00008B", "darkcyan": "008B8B", "darkgoldenrod": "B8860B",
    "darkgray": "A9A9A9", "darkgreen": "006400", "darkgrey": "A9A9A9", "darkkhaki": "BDB76B",
    "darkmagenta": "8B008B", "darkolivegreen": "556B2F", "darkorange": "FF8C00",
    "darkorchid": "9932CC", "darkred": "8B0000", "darksalmon": "E9967A", "darkseagreen": "8FBC8F",
    "darkslateblue": "483D8B", "darkslategray": "2F4F4F", "darkslategrey": "2F4F4F",
    "darkturquoise": "00CED1", "darkviolet": "9400D3", "deeppink": "FF1493",
    "deepskyblue": "00BFFF", "dimgray": "696969", "dimgrey": "696969", "dodgerblue": "1E90FF",
    "firebrick": "B22222", "floralwhite": "FFFAF0", "forestgreen": "228B22", "fuchsia": "FF00FF",
    "gainsboro": "DCDCDC", "ghostwhite": "F8F8FF", "gold": "FFD700", "goldenrod": "DAA520",
    "gray": "808080", "grey": "808080", "green": "008000", "greenyellow": "ADFF2F",
    "honeydew": "F0FFF0", "hotpink": "FF69B4", "indianred": "CD5C5C", "indigo": "4B0082",
    "ivory": "FFFFF0", "khaki": "F0E68C", "lavender": "E6E6FA", "lavenderblush": "FFF0F5",
    "lawngreen": "7CFC00", "lemonchiffon": "FFFACD", "lightblue": "ADD8E6", "lightcoral": "F08080",
    "lightcyan": "E0FFFF", "lightgoldenrodyellow": "FAFAD2", "lightgray": "D3D3D3",
    "lightgreen": "90EE90", "lightgrey": "D3D3D3", "lightpink": "FFB6C1", "lightsalmon": "FFA07A",
    "lightseagreen": "20B2AA", "lightskyblue": "87CEFA", "lightslategray": "778899",
    "lightslategrey": "778899", "lightsteelblue": "B0C4DE", "lightyellow": "FFFFE0",
    "lime": "00FF00", "limegreen": "32CD32", "linen": "FAF0E6", "magenta": "FF00FF",
    "maroon": "800000", "mediumaquamarine": "66CDAA", "mediumblue": "0000CD",
    "mediumorchid": "BA55D3", "mediumpurple": "9370DB", "mediumseagreen": "3CB371",
    "mediumslateblue": "7B68EE", "mediumspringgreen": "00FA9A", "mediumturquoise": "48D1CC",
    "mediumvioletred": "C71585", "midnightblue": "191970", "mintcream": "F5FFFA",
    "mistyrose": "FFE4E1", "moccasin": "FFE4B5", "navajowhite": "FFDEAD", "navy": "000080",
    "oldlace": "FDF5E6", "olive": "808000", "olivedrab": "6B8E23", "orange": "FFA500",
    "orangered": "FF4500", "orchid": "DA70D6", "palegoldenrod": "EEE8AA", "palegreen": "98FB98",
    "paleturquoise": "AFEEEE", "palevioletred": "DB7093", "papayawhip": "FFEFD5",
    "peachpuff": "FFDAB9", "peru": "CD853F", "pink": "FFC0CB", "plum": "DDA0DD",
    "powderblue": "B0E0E6", "purple": "800080", "rebeccapurple": "663399", "red": "FF0000",
    "rosybrown": "BC8F8F", "royalblue": "4169E1", "saddlebrown": "8B4513", "salmon": "FA8072",
    "sandybrown": "F4A460", "seagreen": "2E8B57", "seashell": "FFF5EE", "sienna": "A0522D",
    "silver": "C0C0C0", "skyblue": "87CEEB", "slateblue": "6A5ACD", "slategray": "708090",
    "slategrey": "708090", "snow": "FFFAFA", "springgreen": "00FF7F", "steelblue": "4682B4",
    "tan": "D2B48C", "teal": "008080", "thistle": "D8BFD8", "tomato": "FF6347",
    "turquoise": "40E0D0", "violet": "EE82EE", "wheat": "F5DEB3", "white": "FFFFFF",
    "whitesmoke": "F5F5F5", "yellow": "FFFF00", "yellowgreen": "9ACD32",
}

_COLOUR_ARG = r"\{\s*(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[A-Za-z]+)\s*\}"
_REWRITE = lazy(
    r"\\(?:"
    r"(?P<color>(?P<ccmd>color|textcolor)\s*" + _COLOUR_ARG.replace("(#", "(?P<cval>#", 1) + ")"
    r"|(?P<pmb>pmb(?![A-Za-z]))"
    r"|(?P<bsnl>\n)"
    r"|(?P<env>(?P<eaction>begin|end)\{(?P<ename>alignat\*?|alignedat|xalignat\*?|xxalignat|split|smallmatrix|[pbBvV]?matrix\*)\}"
    r"(?:(?<=begin\{alignat\})\{\d+\}|(?<=begin\{alignat\*\})\{\d+\}|(?<=begin\{alignedat\})\{\d+\}|(?<=matrix\*\})\[[lcr]\])?)"
    r"|(?P<kern>(?P<kcmd>kern|mkern|mskip|hskip|hspace\*)\s*\{(?P<kval>[^{}]*)\})"
    r"|(?P<edef>[ex]def(?![A-Za-z]))"
    r"|(?P<substack>substack\s*\{)"
    r"|(?P<cbox>(?P<cboxcmd>colorbox|fcolorbox)\s*" + _COLOUR_ARG.replace("(#", "(?P<cbox1>#", 1) + r"(?:\s*" + _COLOUR_ARG.replace("(#", "(?P<cbox2>#", 1) + r")?\s*\{)"
    r"|(?P<ref>ref\s*\{)"
    r"|(?P<verb>verb\*?(?P<vdelim>[^A-Za-z\s*])(?P<vtext>.*?)(?P=vdelim))"
    r"|(?P<char>char\s*(?:\"(?P<chex>[0-9A-Fa-f]+)|'(?P<coct>[0-7]+)|(?P<cdec>[0-9]+)))"
    r"|(?P<sfit>mathsfit\s*\{(?P<sftext>[A-Za-z0-9 ]*)\})"
    r"|(?P<choice>(?P<choicecmd>mathchoice|TextOrMath)\s*\{)"
    r"|(?P<lap>(?P<lapcmd>smash|rlap|llap|clap|mathrlap|mathllap|mathclap)(?:\[[tb]\])?\s*\{)"
    r"|(?P<size>(?:tiny|scriptsize|footnotesize|small|normalsize|large|Large|LARGE|huge|Huge)(?![A-Za-z]))"
    r"|(?P<nulldelim>(?:big|Big|bigg|Bigg)[lrm]?\s*\.)"
    r"|(?P<textesc>[%&#$_] )"
    r"|(?P<mathop>mathop\s*\{(?P<opname>[A-Za-z]{2,})\})"
    r")"
)
# Substrings without which no _REWRITE alternative can match (one search for them is cheaper than
# _REWRITE's scan).
_REWRITE_TRIGGERS = (
    "color", "pmb", "\\\n", "alignat", "alignedat", "split", "matrix*", "smallmatrix", "mathop", "kern", "skip", "hspace", "def",
    "substack", "smash", "lap", "colorbox", "ref", "verb", "char", "sfit", "choice", "TextOrMath", "tiny", "size", "small", "arge", "LARGE", "uge", "g.", "g .", "l.", "r.", "m.",
    "\\% ", "\\& ", "\\# ", "\\$ ", "\\_ ",
)
# Marker colours for constructs math-core lacks, replaced in _finish (see _unmark).
_MARKER_PREFIX = "01F0"
_MARKERS = {"smash": "01F00A", "rlap": "01F00B", "llap": "01F00C", "clap": "01F00D", "box": "01F00E", "ref": "01F00F", "small": "01F009"}
# xcolor's names as math-core resolves them, for \colorbox (which _rewrite resolves itself).
_MATH_CORE_HEX = {
    "red": "FF0000", "green": "03FF00", "blue": "0000FF", "cyan": "00B9F2", "magenta": "FB3199",
    "yellow": "FFEB3D", "black": "000000", "gray": "808080", "white": "FFFFFF", "darkgray": "404040",
    "lightgray": "BFBFBF", "brown": "BF803F", "lime": "BFFF04", "olive": "9F8C18", "orange": "FF8001",
    "pink": "FFBFBF", "purple": "BF0140", "teal": "008080", "violet": "800080",
}
_MARKED = {
    "01F00A": ('<mpadded height="0" depth="0">', "</mpadded>"),
    "01F00B": ('<mpadded width="0">', "</mpadded>"),
    "01F00C": ('<mpadded width="0"><mrow class="tex-llap">', "</mrow></mpadded>"),
    "01F00D": ('<mpadded width="0"><mrow class="tex-clap">', "</mrow></mpadded>"),
}
# \tiny … \Huge in math: LaTeX's sizes for 10pt text, as KaTeX has them (ems of the text size).
_SIZES = {"tiny": 0.5, "scriptsize": 0.7, "footnotesize": 0.8, "small": 0.9, "normalsize": 1.0,
          "large": 1.2, "Large": 1.44, "LARGE": 1.728, "huge": 2.074, "Huge": 2.488}
_SIZE_MARKERS = {name: f"01F01{i}" for i, name in enumerate(_SIZES)}
_MARKED.update({marker: (f'<mstyle scriptlevel="0"><mrow style="font-size:{_SIZES[name]:g}em;">', "</mrow></mstyle>")
                for name, marker in _SIZE_MARKERS.items()})
_MARKER_START = lazy(r'<mrow style="color:#(01F00[9A-F]|01F01[0-9]|' + math_katex.MARKER_RE + r');">')
_MATRIX_FENCES = {"matrix": ("", ""), "pmatrix": ("(", ")"), "bmatrix": ("[", "]"), "Bmatrix": (r"\{", r"\}"),
                  "vmatrix": ("|", "|"), "Vmatrix": (r"\|", r"\|")}
_EQUATION_ID = lazy(r' id="([^"]*)"')
_REFERENCE_NUMBER = lazy(r'(<a href="[^"]*">)\((.*?)\)(</a>)')
_BOX_COLOURS = lazy(r'^(<mrow>)?((?:<mrow style="color:#[0-9A-F]{6};"><mrow></mrow></mrow>){1,2})')
_REWRITE_TRIGGER = lazy("|".join(map(re.escape, _REWRITE_TRIGGERS)))
_BRACED_LINE_BREAK = lazy(r"\\\\(?=[{}])")
_NUMBERED_ENV = lazy(r"\\(begin|end)\{(equation|align|gather|multline)\}")
_LAST_ROW = lazy(r"\\\\\s*(?=\\end\s*\{)")
_TAG_OR_LABEL = lazy(r"\\(?:tag|label)(?![A-Za-z])")

def _colour_hex(value: str) -> Optional[str]:
    if value.startswith("#"):
        digits = value[1:]
        return "".join(c * 2 for c in digits).upper() if len(digits) == 3 else digits.upper()
    return _CSS_COLOURS.get(value.lower())


_VERB_ESCAPES = {
    "\\": r"\textbackslash ", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%",
    "_": r"\_", "^": r"\textasciicircum ", "~": r"\textasciitilde ", " ": r"\ ",
}
_TEX_SPECIALS = {c: "\\" + c for c in "{}$&#%_"} | {"\\": r"\backslash", "^": r"\hat{}", "~": r"\sim"}


def _sans_italic(c: str) -> str:
    if "A" <= c <= "Z":
        return chr(0x1D608 + ord(c) - ord("A"))
    if "a" <= c <= "z":
        return chr(0x1D622 + ord(c) - ord("a"))
    if "0" <= c <= "9":
        return chr(0x1D7E2 + ord(c) - ord("0"))  # sans-serif digits (there are no italic ones)
    return c


def _brace_groups(tex: str, open_index: int, count: int) -> Optional[list[tuple[int, int]]]:
    """`count` brace groups, the first at `open_index`, separated by spaces: (open, close) each."""
    groups = []
    i = open_index
    for _ in range(count):
        while i < len(tex) and tex[i] in " \t\n":
            i += 1
        if i >= len(tex) or tex[i] != "{":
            return None
        close = matching_brace(tex, i)
        if close < 0:
            return None
        groups.append((i, close))
        i = close + 1
    return groups


def _group_end(tex: str, pos: int) -> int:
    """Where the group around `pos` ends (its closing brace, a cell's `&`, a row's `\\\\`, an
    `\\end`, `\\right`, `\\middle`, or the formula's end): how far a size command reaches."""
    depth = 0
    i = pos
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            if depth == 0 and (tex.startswith("\\\\", i) or re.match(r"\\(?:end|right|middle|tag|label)(?![A-Za-z])", tex[i:])):
                return i
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return i
            depth -= 1
        elif c == "&" and depth == 0:
            return i
        i += 1
    return len(tex)


def _starred_matrix(tex: str, m: "re.Match[str]", name: str, action: str) -> str:
    """`pmatrix*[r]`: an array with that alignment in every column, in the matrix's fences (what
    mathtools draws); without an alignment, the plain matrix (its columns are centred)."""
    base = name[:-1]
    align = m.group()[-2] if m.group().endswith("]") else ""
    left, right = _MATRIX_FENCES[base]
    if action == "begin":
        close = tex.find(rf"\end{{{name}}}", m.end())
        body = tex[m.end() : close] if close > 0 else ""
        if not align or "\\begin" in body:
            return rf"\begin{{{base}}}"
        depth, columns, most = 0, 1, 1
        for j, c in enumerate(body):
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "&" and depth == 0 and (j == 0 or body[j - 1] != "\\"):
                columns += 1
                most = max(most, columns)
            elif c == "\\" and body.startswith("\\\\", j) and depth == 0:
                columns = 1
        return (rf"\left{left} " if left else "") + rf"\begin{{array}}{{{align * most}}}"
    start = tex.rfind(rf"\begin{{{name}}}", 0, m.start())
    opening = _REWRITE.match(tex, start) if start >= 0 else None
    if not opening or not opening.group().endswith("]") or "\\begin" in tex[opening.end() : m.start()]:
        return rf"\end{{{base}}}"
    return r"\end{array}" + (rf" \right{right}" if right else "")


def _rewrite(tex: str, display: bool = False, numbers: bool = False,
             macros: tuple[tuple[str, str], ...] = ()) -> tuple[str, list[tuple[int, int, int]]]:
    """The TeX math-core gets, and the edits made: (start in the result, length there, length in
    the author's TeX), in order, so `_source_offset` can map an error's offset back.

    Equation numbers only when asked (`numbers`: the page opted in; or a `\\tag` / `\\label` in
    the formula, which numbers it as LaTeX would): otherwise `equation`, `align`, `gather`,
    `multline` (and `alignat`) are their starred forms. Neither the corpus nor the tutorial refers
    to an equation, and the original site showed no numbers."""
    repl: list[tuple[int, int, str]] = []  # (start, end, text) in the author's TeX
    unnumbered = not numbers and "\\begin" in tex and not _TAG_OR_LABEL.search(tex)
    text_ranges: Optional[list[tuple[int, int]]] = None

    def in_text(index: int) -> bool:
        nonlocal text_ranges
        if text_ranges is None:
            text_ranges = _text_ranges(tex)
        return any(a <= index < b for a, b in text_ranges)

    matches = _REWRITE.finditer(tex) if _REWRITE_TRIGGER.search(tex) else ()
    for m in matches:
        start, end = m.start(), m.end()
        if m.group("size"):
            # KaTeX sizes math too (\large: 1.2 × the text size, in a script as well); math-core
            # only text. In math the rest of the group is a marker row _unmark sizes; inside
            # \text{…} math-core applies it.
            if not in_text(start):
                while end < len(tex) and tex[end] == " ":
                    end += 1
                stop = _group_end(tex, end)
                if _MARKER_PREFIX in tex.upper():
                    repl.append((start, end, ""))
                else:
                    repl.append((start, end, rf"\textcolorhtml{{{_SIZE_MARKERS[m.group('size')]}}}{{"))
                    repl.append((stop, stop, "}"))
        elif m.group("color"):
            value = m.group("cval")
            hex_ = _colour_hex(value)
            if hex_ is not None:  # else math-core names the unknown colour
                command = r"\color[HTML]" if m.group("ccmd") == "color" else r"\textcolorhtml"
                repl.append((start, end, f"{command}{{{hex_}}}"))
        elif m.group("textesc"):
            # In text a control symbol keeps the space after it (TeX; math-core drops it).
            if in_text(start):
                repl.append((start, end, m.group()[:2] + "\\ "))
        elif m.group("nulldelim"):
            repl.append((start, end, ""))  # a sized null delimiter (\Bigg.) draws nothing
        elif m.group("pmb"):
            repl.append((start, end, r"\boldsymbol"))
        elif m.group("bsnl"):
            repl.append((start, end, "\\ "))
        elif m.group("env"):
            name, action = m.group("ename"), m.group("eaction")
            if name == "split":
                new = rf"\{action}{{aligned}}"
            elif name == "smallmatrix":  # a matrix in script size (see _unmark)
                if _MARKER_PREFIX in tex.upper():
                    continue
                new = rf"\textcolorhtml{{{_MARKERS['small']}}}{{\begin{{matrix}}" if action == "begin" else r"\end{matrix}}"
            elif name.endswith("matrix*"):
                new = _starred_matrix(tex, m, name, action)
            else:  # alignat, alignedat, xalignat: align's column pairs
                new = rf"\{action}{{{'aligned' if name == 'alignedat' else ('align*' if name.endswith('*') or unnumbered else 'align')}}}"
            repl.append((start, end, new))
        elif m.group("mathop"):
            # \mathop{softmax}: letters in math are math italic, in \mathop too (TeX; KaTeX), where a
            # multi-letter <mi> would be upright
            repl.append((start, end, rf"\mathop{{\mathrm{{{''.join(_italic(c) for c in m.group('opname'))}}}}}"))
        elif m.group("kern"):
            command, value = m.group("kcmd"), m.group("kval").strip()
            if command.startswith("hspace"):
                repl.append((start, end, rf"\hspace{{{value}}}"))
                continue
            em = re.fullmatch(r"(-?[\d.]+)\s*em", value)
            if command in ("mkern", "mskip") and em:  # KaTeX warns and takes em; math-core wants mu
                value = f"{float(em.group(1)) * 18:g}mu"
            repl.append((start, end, rf"\{command} {value}"))
        elif m.group("edef"):
            repl.append((start, end, r"\def"))
        elif m.group("cbox"):
            # \colorbox{bg}{text}, \fcolorbox{frame}{bg}{text}: a marker row holding the colours
            # (as empty coloured rows) and the text; _unmark makes it a padded box.
            two = m.group("cboxcmd") == "fcolorbox"
            colours = [m.group("cbox1")] + ([m.group("cbox2")] if two else [])
            hexes = [_colour_hex(c) or _MATH_CORE_HEX.get(c) for c in colours]
            close = matching_brace(tex, end - 1)
            if close > 0 and None not in hexes and (m.group("cbox2") is not None) == two and _MARKER_PREFIX not in tex.upper():
                inner = "".join(rf"\textcolorhtml{{{h}}}{{}}" for h in hexes)
                repl.append((start, end, rf"\textcolorhtml{{{_MARKERS['box']}}}{{{inner}\text{{"))
                repl.append((close, close + 1, "}}"))
        elif m.group("verb"):
            text = "".join(_VERB_ESCAPES.get(c, c) for c in m.group("vtext"))
            repl.append((start, end, rf"\texttt{{{text}}}"))
        elif m.group("char"):
            code = int(m.group("chex"), 16) if m.group("chex") else int(m.group("coct"), 8) if m.group("coct") else int(m.group("cdec"))
            if 0x20 < code < 0x110000 and not 0xD800 <= code < 0xE000:
                repl.append((start, end, _TEX_SPECIALS.get(chr(code), chr(code)) + " "))
        elif m.group("sfit"):
            repl.append((start, end, "".join(_sans_italic(c) for c in m.group("sftext"))))
        elif m.group("choice"):
            # \mathchoice{D}{T}{S}{SS}: the display or the text form; \TextOrMath{T}{M}: M.
            groups = _brace_groups(tex, end - 1, 4 if m.group("choicecmd") == "mathchoice" else 2)
            if groups:
                keep = (0 if display else 1) if m.group("choicecmd") == "mathchoice" else 1
                a, b = groups[keep]
                repl.append((start, groups[-1][1] + 1, tex[a : b + 1]))
        elif m.group("ref"):
            # \ref{x}: math-core has only \eqref; its "(1)" loses the parentheses in _unmark.
            close = matching_brace(tex, end - 1)
            if close > 0 and _MARKER_PREFIX not in tex.upper():
                repl.append((start, end, rf"\textcolorhtml{{{_MARKERS['ref']}}}{{\eqref{{"))
                repl.append((close, close + 1, "}}"))
        elif m.group("lap"):
            # \smash, \rlap, \llap, \clap (and \math… forms), which math-core lacks: the argument
            # in a marker colour that _finish turns into the <mpadded> KaTeX would draw.
            close = matching_brace(tex, end - 1)
            if close > 0 and _MARKER_PREFIX not in tex.upper():
                command = m.group("lapcmd")
                text = command in ("rlap", "llap", "clap")
                repl.append((start, end, rf"\textcolorhtml{{{_MARKERS[command.replace('math', '')]}}}{{" + (r"\text{" if text else "")))
                repl.append((close, close + 1, "}}" if text else "}"))
        elif m.group("substack"):
            close = matching_brace(tex, end - 1)
            if close > 0:
                repl.append((start, end, r"{\begin{subarray}{c}"))
                repl.append((close, close + 1, r"\end{subarray}}"))
    # KaTeX's last names math-core lacks (\above, CD, \cline, \multicolumn, …): typeset/math_katex.py
    if math_katex.TRIGGER.search(tex):
        repl += math_katex.rewrites(tex, _MARKER_PREFIX not in tex.upper(), macros)
    if unnumbered:
        repl += [(m.start(), m.end(), rf"\{m.group(1)}{{{m.group(2)}*}}") for m in _NUMBERED_ENV.finditer(tex)]
    if "\\\\" in tex and "\\end" in tex:
        # `\\` ending the last row: TeX and KaTeX draw no row after it (math-core drew an empty
        # one, numbered in a numbered environment); not the second half of a `\\\\`.
        repl += [(m.start(), m.end(), "") for m in _LAST_ROW.finditer(tex)
                 if (m.start() - len(tex[:m.start()].rstrip("\\"))) % 2 == 0]
    # Math inside text (`\text{for $x > 0$}`, as KaTeX reads it): the text closes before the
    # formula and opens again after it, with the same command.
    if "$" in tex:
        repl += _math_in_text(tex)
    # `\\{…\\}` outside any environment: a non-raw docstring's spelling of `\{…\}` (Python reads
    # "\\{" as "\{", and so did the original site); a line break there would mean nothing.
    if "\\\\" in tex and "\\begin" not in tex:
        repl += [(m.start(), m.end(), "\\") for m in _BRACED_LINE_BREAK.finditer(tex)]
    # KaTeX takes \tag and \label in any display formula; math-core only in a numbered environment.
    if display and "\\begin" not in tex and _TAG_OR_LABEL.search(tex):
        repl += [(0, 0, r"\begin{equation*}"), (len(tex), len(tex), r"\end{equation*}")]
    if not repl:
        return tex, []
    repl.sort(key=lambda r: (r[0], r[1]))
    out: list[str] = []
    edits: list[tuple[int, int, int]] = []
    pos = shift = 0
    for start, end, text in repl:
        if start < pos:
            continue  # overlaps an earlier rewrite
        out.append(tex[pos:start])
        out.append(text)
        edits.append((start + shift, len(text), end - start))
        shift += len(text) - (end - start)
        pos = end
    out.append(tex[pos:])
    return "".join(out), edits


_TEXT_START = lazy(r"\\(?:text[a-z]*|mbox|hbox|emph)\s*\{")


_TEXT_ARGUMENT = lazy(r"\\(?:text[a-z]*|mbox|hbox|emph)\s*\{|\\(f?colorbox|raisebox)\s*\{[^{}]*\}(?:\s*\{[^{}]*\})??\s*\{(?=[^{}]*\$)")


def _math_in_text(tex: str) -> list[tuple[int, int, str]]:
    """Rewrites for `$…$` pairs at the top level of a text argument: `$` → `}` and `$` → `\\text{`."""
    repl = []
    for m in _TEXT_ARGUMENT.finditer(tex):
        close = matching_brace(tex, m.end() - 1)
        if close < 0:
            continue
        command = tex[m.start() : m.end() - 1].rstrip() if not m.group(1) else r"\text"
        opened = -1
        for i, c, depth in grouped(tex, m.end(), close, marks="$"):
            if c == "$" and depth == 0:
                if opened < 0:
                    opened = i
                else:
                    repl += [(opened, opened + 1, "}"), (i, i + 1, command + "{")]
                    opened = -1
    return repl


def _text_ranges(tex: str) -> list[tuple[int, int]]:
    """(start, end) of every text-mode argument, braces included."""
    ranges = []
    for m in _TEXT_START.finditer(tex):
        close = matching_brace(tex, m.end() - 1)
        ranges.append((m.start(), (close if close >= 0 else len(tex)) + 1))
    return ranges


def _source_offset(offset: int, edits: list[tuple[int, int, int]]) -> int:
    """Map an offset in the rewritten TeX back to the author's TeX."""
    shift = 0
    for start, new_len, old_len in edits:
        if offset < start:
            break
        if offset < start + new_len:
            return start - shift
        shift += new_len - old_len
    return offset - shift


# --------------------------------------------------------------------------------------------------
# Bounds: math-core recurses per nesting level (and would overflow the stack, killing the process)

_NEST_TOKEN = lazy(r"\\(?:begin|left)(?![A-Za-z])|\\(?:end|right)(?![A-Za-z])|\\[A-Za-z]+|\\.|[{}]|[^\\{}\s]+|\s+", re.S)
_DEFINES_MACROS = lazy(r"\\(?:[egx]?def|newcommand|renewcommand|providecommand|let)(?![A-Za-z])")


def _check_bounds(tex: str) -> None:
    if len(tex) > MAX_TEX_CHARS:
        raise MathError(f"formula is {len(tex):,} characters long, more than {MAX_TEX_CHARS:,}: split it into smaller formulas")
    if tex.count("{") + tex.count("\\") <= MAX_NESTING:
        return  # nothing can nest deeper than the braces and commands there are
    depth = 0
    run = 0  # consecutive commands, which may nest without braces (\sqrt\sqrt\sqrt x)
    for m in _NEST_TOKEN.finditer(tex):
        token = m.group()
        if token == "{" or token in ("\\begin", "\\left"):
            depth += 1
            run = 0
        elif token == "}" or token in ("\\end", "\\right"):
            depth -= 1
            run = 0
        elif token[0] == "\\" and token[1:2].isalpha():
            run += 1
        elif not token.isspace():
            run = 0
        if depth + run > MAX_NESTING:
            offset = m.start()
            line, column = _line_column(tex, offset)
            raise MathError(
                f"formula nests more than {MAX_NESTING} levels deep (line {line}, column {column}): "
                "split it into smaller formulas",
                column,
                line,
            )


_BIG_STACK = 512 * 1024 * 1024


def _converter_failure(error: BaseException) -> bool:
    """An exception from math-core other than LatexError, which is a failure of one formula: a
    Rust panic reaches Python as pyo3's PanicException, a BaseException not importable by name."""
    return not isinstance(error, (KeyboardInterrupt, SystemExit, GeneratorExit, MathError, LatexError))


def _convert_safely(converter: LatexToMathML, call: str, *args, **kwargs):
    """Call math-core; in a thread with a large stack when macros could nest deeper than the
    source shows (each expansion may add `MAX_NESTING` levels)."""
    result: list = []

    def run() -> None:
        try:
            result.append((True, getattr(converter, call)(*args, **kwargs)))
        except LatexError as error:
            result.append((False, error))
        except BaseException as error:  # reported as a failure below
            if not _converter_failure(error):
                raise

    for size in (_BIG_STACK, _BIG_STACK // 8):
        old = threading.stack_size(size)
        try:
            thread = threading.Thread(target=run, name="math-core")
            thread.start()
            break
        except (RuntimeError, MemoryError):  # the system would not reserve the stack
            continue
        finally:
            threading.stack_size(old)
    else:
        raise MathError("formula needs more memory to convert than this system gives: simplify its macros")
    thread.join()
    if not result:  # the conversion raised something other than LatexError
        raise MathError("the converter failed on this formula: simplify it")
    ok, value = result[0]
    if not ok:
        raise value
    return value


# --------------------------------------------------------------------------------------------------
# Converters: one per set of page macros


@functools.lru_cache(maxsize=64)
def _converter(macros: tuple[tuple[str, str], ...] = ()) -> LatexToMathML:
    try:
        return _new_converter(macros)
    except LatexError as error:  # math-core checks the macros as it builds the converter
        message = re.sub(r"^macro\d+:\d+: ", "", str(error)).rstrip(".")
        raise MathError(f"a page macro (front matter 'macros:') is not valid TeX: {message[:1].lower() + message[1:]}") from None


def _new_converter(macros: tuple[tuple[str, str], ...]) -> LatexToMathML:
    return LatexToMathML(
        macros={**_COMPAT_MACROS, **dict(macros)},
        fancy_error=False,
        max_expansions=MAX_EXPANSIONS,
        id_prefix=EQUATION_ID_PREFIX,
        # \widetilde, \widecheck, \utilde: KaTeX has them, and Chromium draws them (stretched).
        allow_unreliable_rendering=True,
    )


def _line_column(tex: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(tex)))
    line = tex.count("\n", 0, offset) + 1
    column = offset - (tex.rfind("\n", 0, offset) + 1) + 1
    return line, column


_ERROR = lazy(r"^(\d+): (.*?)\.?$", re.S)
# math-core's word for a name math_katex rewrites only in its usual form: what that form is
_UNREWRITTEN = {
    'unknown command "\\par"': "\\par (a paragraph break) cannot appear inside math (as in TeX and KaTeX): "
                                "end the formula before it, or write \\\\ for a new row",
    'unknown command "\\textcircled"': "\\textcircled takes one letter or a number from 0 to 20 here "
                                        "(drawn as its enclosed character)",
    'unknown command "\\multicolumn"': "\\multicolumn needs {n}{l, c or r}{cell}, n from 1 to 63, in a table",
    'unknown command "\\cline"': "\\cline needs {i-j} after a \\\\ in a table",
    'unknown command "\\above"': "\\above needs a thickness (\\above 1pt) between the two halves of a group",
}


def _math_error(error: LatexError, tex: str, edits: list[tuple[int, int, int]]) -> MathError:
    message = str(error)
    m = _ERROR.match(message)
    if not m:
        return MathError(message)
    offset = _source_offset(int(m.group(1)), edits)
    line, column = _line_column(tex, offset)
    text = m.group(2)
    text = text[:1].lower() + text[1:]
    text = _UNREWRITTEN.get(text, text)
    where = f"column {column}" if "\n" not in tex else f"line {line}, column {column}"
    return MathError(f"{text} (at {where} of the formula)", column, line)


# Characters that cannot appear in the page's MathML (outside XML's Char production, or a carriage
# return, which an HTML parser turns into a line feed, so the annotation would not hold the TeX).
# Written as the characters it matches, the complement of [\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-
# \U0010ffff]: that negated class takes ~8 ms to compile, this one a twentieth of it.
_NOT_XML = lazy(r"[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]")
# A comment sign whose comment runs to the end of the formula: in prose that hides the rest of the
# formula, and is almost always a percent sign meant as \%. (A comment that ends at a line break,
# in a formula of several lines, is TeX as KaTeX reads it.)
_LAST_LINE_COMMENT = lazy(r"(?<!\\)(?:\\\\)*%[^\n]*\S[^\n]*$")


def _prepare(tex: str, display: bool = False, numbers: bool = False,
             macros: tuple[tuple[str, str], ...] = ()) -> tuple[str, list[tuple[int, int, int]]]:
    if not isinstance(tex, str):
        raise TypeError(f"tex must be str, not {type(tex).__name__}")
    if not tex.strip():
        raise MathError("empty formula: write the TeX between the delimiters or remove them")
    bad = _NOT_XML.search(tex)
    if bad:
        line, column = _line_column(tex, bad.start())
        raise MathError(
            f"character U+{ord(bad.group()):04X} at column {column} cannot appear in a web page's math: remove it",
            column,
            line,
        )
    if "%" in tex:
        comment = _LAST_LINE_COMMENT.search(tex)
        if comment:
            offset = comment.end() - len(comment.group().lstrip("\\"))
            line, column = _line_column(tex, offset)
            raise MathError(
                f"unescaped % at column {column} starts a TeX comment that hides the rest of the "
                r"formula: write \% for a percent sign",
                column,
                line,
            )
    _check_bounds(tex)
    return _rewrite(tex, display, numbers, macros)


def _needs_big_stack(prepared: str, macros: tuple) -> bool:
    return (
        bool(macros)
        or len(prepared) > 2000
        or (("def" in prepared or "command" in prepared or "\\let" in prepared) and bool(_DEFINES_MACROS.search(prepared)))
    )


# --------------------------------------------------------------------------------------------------
# Public API


@functools.lru_cache(maxsize=8192)
def tex_to_mathml(tex: str, display: bool, macros: tuple[tuple[str, str], ...] = (), numbers: bool = False) -> str:
    """Convert one formula to a ``<math>`` element (a string of MathML) or raise MathError.

    `tex` is the TeX between the delimiters (``$…$``, ``$$…$$``) or a whole environment
    (``\\begin{align}…\\end{align}``); `display` chooses ``display="block"`` or ``"inline"``;
    `macros` are the page's (name → expansion, without the backslash). The result carries the
    TeX in ``<annotation encoding="application/x-tex">``. Cached per distinct formula. Equations
    are numbered when the formula has a ``\\tag`` or ``\\label``, or with `numbers` (the page's
    opt-in) every ``equation``/``align``/…; numbers run from (1): use `typeset_page` for a page's
    formulas together.
    """
    prepared, edits = _prepare(tex, display, numbers, macros)
    converter = _converter(macros)
    try:
        if _needs_big_stack(prepared, macros):
            raw = _convert_safely(converter, "convert_with_local_state", prepared, displaystyle=display)
        else:
            raw = converter.convert_with_local_state(prepared, displaystyle=display)
    except LatexError as error:
        raise _math_error(error, tex, edits) from None
    except BaseException as error:
        if not _converter_failure(error):
            raise
        raise MathError(f"the converter failed on this formula ({type(error).__name__}): simplify it") from None
    return _finish(raw, tex, display)


# A page's formulas need converting together when one is numbered or refers to another.
_REFERENCES = lazy(r"\\(?:label|eqref|ref|tag)(?![A-Za-z])")
_NUMBERING = lazy(
    r"\\(?:label|eqref|ref|tag)(?![A-Za-z])|\\begin\{(?:equation|align|gather|alignat|multline|flalign|xalignat)\}"
)


def typeset_page(
    formulas: Sequence[tuple[str, bool]], macros: tuple[tuple[str, str], ...] = (), numbers: bool = False
) -> list[object]:
    """Each formula of a page as MathML (a str) or the MathError it raises, in order.

    Numbers of ``equation``/``align``/``gather``/… run on through the page, and ``\\eqref`` /
    ``\\ref`` link to a ``\\label`` anywhere on it (forward references too). A page without numbering
    converts formula by formula, from the cache.
    """
    numbering = _NUMBERING if numbers else _REFERENCES
    if not any(numbering.search(tex) for tex, _ in formulas):
        return [_or_error(tex, display, macros, numbers) for tex, display in formulas]
    try:
        return _unique_labels(list(_typeset_together(tuple(formulas), macros, numbers)))
    except _BatchFailed:
        pass
    # Some formula fails: the others are numbered together, each failing one is its own error.
    results = [_or_error(tex, display, macros, numbers) for tex, display in formulas]
    good = [i for i, r in enumerate(results) if isinstance(r, str)]
    try:
        together = _typeset_together(tuple(formulas[i] for i in good), macros, numbers)
    except _BatchFailed:  # only their combination fails (a label defined twice, say)
        return results
    for i, markup in zip(good, together):
        results[i] = markup
    return _unique_labels(results)


def _unique_labels(results: list[object]) -> list[object]:
    """A label defined by an earlier formula of the page makes a later one an error (ids must be
    unique on a page; KaTeX refuses a label defined twice too)."""
    seen: set[str] = set()
    for index, markup in enumerate(results):
        if isinstance(markup, str) and ' id="' in markup:
            ids = _EQUATION_ID.findall(markup)
            again = [i for i in ids if i in seen]
            if again:
                label = again[0][len(EQUATION_ID_PREFIX):]
                results[index] = MathError(
                    f"\\label{{{label}}} is already defined by an earlier equation on this page: give each equation its own label"
                )
            seen.update(ids)
    return results


def _or_error(tex: str, display: bool, macros: tuple[tuple[str, str], ...], numbers: bool = False) -> object:
    try:
        return tex_to_mathml(tex, display, macros, numbers)
    except MathError as error:
        return error


class _BatchFailed(Exception):
    pass


@functools.lru_cache(maxsize=256)
def _typeset_together(formulas: tuple[tuple[str, bool], ...], macros: tuple[tuple[str, str], ...], numbers: bool = False) -> tuple[str, ...]:
    """A page's formulas converted in one batch (numbers run on, references resolve); raises
    _BatchFailed when any of them fails."""
    try:
        prepared = [(_prepare(tex, display, numbers, macros)[0], display) for tex, display in formulas]
        converter = _converter(macros)
        if any(_needs_big_stack(tex, macros) for tex, _ in prepared):
            raws = _convert_safely(converter, "convert_all", prepared)
        else:
            raws = converter.convert_all(prepared)
        return tuple(_finish(raw, tex, display) for raw, (tex, display) in zip(raws, formulas))
    except BaseException as error:
        if isinstance(error, (MathError, LatexError)) or _converter_failure(error):
            raise _BatchFailed from None
        raise


# --------------------------------------------------------------------------------------------------
# After conversion

_NAMED_ENTITY = lazy(r"&([A-Za-z][A-Za-z0-9]*);")
_REM_LENGTH = lazy(r'(linethickness|voffset)="(-?[0-9.]+)rem"')
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot"})
# A sized delimiter (\bigg), \Big\Vert) as the base of a script: Chromium draws it at normal size
# unless it is wrapped in an <mrow> and marked stretchy and symmetric (DESIGN.md).
_SIZED_BASE = lazy(r"<(msub|msup|msubsup)><mo( [^>]*?minsize=\"[^\"]*\"[^>]*)>([^<]*)</mo>")
# A script that is only letters in the default (italic) font: `d_{model}`, `W^{in}`, on a simple base.
_TOKEN = r"<m[ino](?: [^>]*)?>[^<]*</m[ino]>"
_LETTERS = r"<mrow>(?:<mi>[A-Za-z]</mi>){2,}</mrow>"
_LETTER_SCRIPT = lazy(
    rf"<(msub|msup)>({_TOKEN})({_LETTERS})</\1>|<msubsup>({_TOKEN})({_LETTERS}|{_TOKEN})({_LETTERS}|{_TOKEN})</msubsup>"
)
_LETTER = lazy(r"<mi>([A-Za-z])</mi>")


# math-core writes text styles as HTML inside <mtext>; the site keeps <mtext> text-only (and styled
# by math.css), so each becomes an attribute.
_TEXT_STYLES = {
    "<b>": ("</b>", ' mathvariant="bold"'),
    "<i>": ("</i>", ' mathvariant="italic"'),
    "<em>": ("</em>", ' mathvariant="italic"'),
    "<b><i>": ("</i></b>", ' mathvariant="bold-italic"'),
    "<code>": ("</code>", ' mathvariant="monospace"'),
    '<span class="math-core-sans-serif-font">': ("</span>", ' mathvariant="sans-serif"'),
    '<span class="math-core-serif-font">': ("</span>", ' class="text-serif"'),
    '<span style="font-variant-caps: small-caps">': ("</span>", ' class="text-small-caps"'),
    "<s>": ("</s>", ' class="text-strike"'),
    "<u>": ("</u>", ' class="text-underline"'),
}
_STYLED_TEXT = lazy(
    r'<mtext((?: style="[^"]*")?)>(' + "|".join(re.escape(k) for k in sorted(_TEXT_STYLES, key=len, reverse=True))
    + r')([^<]*)(</[a-z]+>(?:</b>)?)</mtext>'
)


def _styled_text(m: re.Match) -> str:
    close, attribute = _TEXT_STYLES[m.group(2)]
    if m.group(4) != close:
        return m.group()
    return f"<mtext{m.group(1)}{attribute}>{m.group(3)}</mtext>"


def _entity(m: re.Match) -> str:
    name = m.group(1)
    if name in _XML_ENTITIES:
        return m.group()
    chars = _HTML5_ENTITIES.get(name + ";")
    if chars is None:
        return "&amp;" + name + ";"
    return "".join(f"&#x{ord(c):X};" for c in chars)


def _sized_base(m: re.Match) -> str:
    attributes = m.group(2)
    if "stretchy=" not in attributes:
        attributes += ' stretchy="true"'
    if "symmetric=" not in attributes:
        attributes += ' symmetric="true"'
    return f"<{m.group(1)}><mrow><mo{attributes}>{m.group(3)}</mo></mrow>"


def _italic(letter: str) -> str:
    if letter == "h":
        return "\u210e"
    if "a" <= letter <= "z":
        return chr(0x1D44E + ord(letter) - ord("a"))
    return chr(0x1D434 + ord(letter) - ord("A"))


def _one_identifier(script: str) -> str:
    if not script.startswith("<mrow>"):
        return script
    return "<mi>" + "".join(_italic(letter) for letter in _LETTER.findall(script)) + "</mi>"


def _merged_script(m: re.Match) -> str:
    if m.group(1):
        return f"<{m.group(1)}>{m.group(2)}{_one_identifier(m.group(3))}</{m.group(1)}>"
    return f"<msubsup>{m.group(4)}{_one_identifier(m.group(5))}{_one_identifier(m.group(6))}</msubsup>"


def _merge_letters(body: str) -> str:
    """`<msub><mi>d</mi><mrow><mi>m</mi><mi>o</mi>…</mrow></msub>` → the script as one `<mi>` in
    math italic (a multi-letter <mi> would be upright): it reads as one name, as TeX sets it."""
    return _LETTER_SCRIPT.sub(_merged_script, body)


# \mathop{…} with scripts: TeX puts them under and over in display style (\displaylimits);
# math-core writes them as side scripts.
_MATHOP_SCRIPTS = lazy(
    r"<(msub|msup|msubsup)>(<mpadded style=\"padding-left:[^\"]*;padding-right:[^\"]*;\">)"
)
_LIMITS = {"msub": "munder", "msup": "mover", "msubsup": "munderover"}


def _mathop_limits(body: str) -> str:
    """Each msub/msup/msubsup whose base is \\mathop's <mpadded>, as munder/mover/munderover."""
    out: list[str] = []
    pos = 0
    for m in _MATHOP_SCRIPTS.finditer(body):
        tag = m.group(1)
        end = _closing_tag(body, m.start(), tag)
        if end < 0 or m.start() < pos:
            continue
        limits = _LIMITS[tag]
        out.append(body[pos : m.start()])
        out.append(f"<{limits}>" + body[m.end(1) + 1 : end] + f"</{limits}>")
        pos = end + len(f"</{tag}>")
    out.append(body[pos:])
    return "".join(out)


def _closing_tag(body: str, start: int, tag: str) -> int:
    """Index of the end tag matching the <tag> at `start` (-1: none)."""
    depth = 0
    for m in re.finditer(rf"<(/?){tag}(?:\s[^>]*)?>", body[start:]):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            return start + m.start()
    return -1


def _unmark(body: str) -> str:
    """Each marker-coloured <mrow> (from _rewrite) as the element it stands for."""
    while True:
        m = _MARKER_START.search(body)
        if m is None:
            return body
        end = _closing_tag(body, m.start(), "mrow")
        if end < 0:
            return body
        inner = body[m.end() : end]
        extra = math_katex.finish_marker(body, m.group(1), m.start(), end + len("</mrow>"), inner)
        if extra is not None:
            body = extra
            continue
        if m.group(1) == _MARKERS["small"]:
            inner = inner.replace('<mtable displaystyle="false" scriptlevel="0"', '<mtable displaystyle="false" scriptlevel="1"', 1)
            start_tag, end_tag = ("<mrow>", "</mrow>")
        elif m.group(1) == _MARKERS["ref"]:
            inner = _REFERENCE_NUMBER.sub(r"\1\2\3", inner)
            start_tag, end_tag = ("<mrow>", "</mrow>")
        elif m.group(1) == _MARKERS["box"]:
            colours = _BOX_COLOURS.match(inner)
            hexes = re.findall(r"#([0-9A-F]{6})", colours.group(2)) if colours else []
            inner = (colours.group(1) or "") + inner[colours.end() :] if colours else inner
            style = f"background-color:#{hexes[-1]};padding:0.1em 0.25em;" if hexes else ""
            if len(hexes) == 2:
                style += f"border:0.06em solid #{hexes[0]};"
            start_tag, end_tag = (f'<mpadded style="{style}">', "</mpadded>")
        else:
            start_tag, end_tag = _MARKED[m.group(1)]
        body = body[: m.start()] + start_tag + inner + end_tag + body[end + len("</mrow>") :]


# \left( … \right) around content no taller than a line (tokens and scripts): Chromium gives a
# stretchy vertical operator the width of its widest size variant or assembly part, whatever its
# height (MathML Core's rule; 0.875em for Latin Modern's parentheses), so "( x )" gaps where TeX
# sets "(x)". At that height TeX uses the normal glyph, which stretchy="false" draws.
_LEFT_RIGHT = lazy(r"<mrow><mo(?P<attr> lspace=\"[^\"]*\")?>(?P<d>[(\[{|/\\\u2016\u27e8\u27e6\u27ee\u230a\u2308\u2063\u2191\u2193\u2195\u21d1\u21d3\u21d5\u23b0\u231c\u231e])</mo>")
_TALL = lazy(r"<(?:mfrac|msqrt|mroot|mtable|munder|mover|munderover|mpadded|menclose|mstyle)[ >]|minsize=|[\u220f-\u2211\u222b-\u2233\u22c0-\u22c3\u2a00-\u2a0c]|displaystyle")


# \left( \frac{a}{b} \right): Chromium stretches the paren to the smallest of Latin Modern's variants
# that covers the fraction, inside the box of the widest variant (0.23 em too wide a side inline,
# 0.14 in display). TeX (and KaTeX) take the smallest of its sizes (1.2, 1.8, 2.4, 3 em) that
# covers 90.1 % of the fraction's reach from the axis, or all of it less 0.5 em
# (\delimiterfactor, \delimitershortfall); Latin Modern has variants of those heights (1.195,
# 1.793, 2.393, 2.991 em for the paren), so the pair is held at TeX's size with minsize = maxsize
# and the margins take back the rest of the box, as for \big( (`_delimiter_with_margins`). The
# fraction's height and depth are estimated from Latin Modern Math's MATH constants and glyph
# heights (em): a fraction of one-line rows (tokens, operators but fences, scripts, kerns), in its
# own style (\tfrac and \dfrac are an <mfrac displaystyle=…>).
_FRACTION_ONLY = lazy(
    r'(?:</?mrow>|</?msub>|</?msup>|</?msubsup>|<mi>[^<]*</mi>|<mn>[^<]*</mn>|<mo(?: [a-z]+="[^"]*")*>[^<(\[{|\u2016]*</mo>'
    r'|<mspace width="[^"]*"(?: class="kern")?/>|<mfrac(?: displaystyle="(?:true|false)")?>|</mfrac>)*'
)
_AXIS = 0.25
_TEX_DELIMITER_SIZES = (1.2, 1.8, 2.4, 3.0)
# (numerator shift up, denominator shift down, gap) in display and text style
_FRACTION_SHIFTS = {True: (0.677, 0.686, 0.12), False: (0.394, 0.345, 0.04)}
_SCRIPT_SCALE = (1.0, 0.7, 0.5)
_ASCENDERS = frozenset("bdfhklt0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\u03b2\u03b4\u03b6\u03b8\u03bb\u03be\u0393\u0394\u0398\u039b\u039e\u03a0\u03a3\u03a6\u03a8\u03a9()[]{}|/")
_DESCENDERS = frozenset("gjpqy\u03b2\u03b3\u03b6\u03b7\u03bc\u03be\u03c1\u03c6\u03c7\u03c8,;()[]{}|/")
_SCRIPT_TAGS = ("msub", "msup", "msubsup")


def _text_extent(text: str) -> tuple[float, float]:
    up = max((0.694 if c in _ASCENDERS else 0.583 if c in "+\u2212\u00b1" else 0.442) for c in text) if text else 0.0
    down = max((0.205 if c in _DESCENDERS else 0.083 if c in "+\u2212\u00b1" else 0.011) for c in text) if text else 0.0
    return up, down


def _extent(element: Element, level: int, display: bool) -> tuple[float, float]:
    """(ascent, descent) in em of the formula's font: an estimate good enough to name the variant."""
    scale = _SCRIPT_SCALE[min(level, 2)]
    name = element.tag.rpartition("}")[2]
    if name in ("mi", "mn", "mo", "mtext"):
        up, down = _text_extent(element.text or "")
        return up * scale, down * scale
    children = list(element)
    if name in _SCRIPT_TAGS and children:
        up, down = _extent(children[0], level, display)
        script = children[1:]
        if name in ("msub", "msubsup"):
            sub_up, sub_down = _extent(script[0], level + 1, display)
            down = max(down, 0.247 * scale + sub_down)
        if name in ("msup", "msubsup"):
            sup_up, sup_down = _extent(script[-1], level + 1, display)
            up = max(up, 0.363 * scale + sup_up)
        return up, down
    if name == "mfrac" and len(children) == 2:
        own = element.get("displaystyle")
        frac_display = own == "true" if own else (display and level == 0)
        inner = level if frac_display else level + 1
        shift_up, shift_down, gap = (x * scale for x in _FRACTION_SHIFTS[frac_display])
        num_up, num_down = _extent(children[0], inner, display)
        den_up, den_down = _extent(children[1], inner, display)
        shift_up = max(shift_up, _AXIS * scale + 0.02 * scale + gap + num_down)
        shift_down = max(shift_down, den_up + gap + 0.02 * scale - _AXIS * scale)
        return shift_up + num_up, shift_down + den_down
    extents = [_extent(child, level, display) for child in children]
    return (max((e[0] for e in extents), default=0.0), max((e[1] for e in extents), default=0.0))


@functools.cache
def _element_tree():
    """xml.etree.ElementTree, imported on first use (~3 ms): only tall fences and
    `validate_mathml` parse MathML."""
    from xml.etree import ElementTree

    return ElementTree


def _fence_size(middle: str, display: bool) -> float:
    """The height (em) Chromium stretches a \\left … \\right pair to round `middle`."""
    up, down = _extent(_element_tree().fromstring(f'<mrow xmlns="{MATHML_NS}">{middle}</mrow>'), 0, display)
    return 2 * max(up - _AXIS, down + _AXIS)


def _tall_fences(m: "re.Match[str]", inner: str, display: bool) -> Optional[str]:
    close = inner.rfind("<mo")
    middle = inner[:close]
    last = re.fullmatch(r'<mo((?: rspace="[^"]*")?)>([^<])</mo>', inner[close:])
    if close < 0 or inner.count("<mfrac") != 1 or not last or not _FRACTION_ONLY.fullmatch(middle):
        return None
    try:
        reach = _fence_size(middle, display)
    except _element_tree().ParseError:
        return None
    needed = max(reach * 0.901, reach - 0.5)
    size = next((tex for tex in _TEX_DELIMITER_SIZES if tex >= needed), None)
    if size is None:
        return None
    held = f' minsize="{size - 0.01:g}em" maxsize="{size - 0.01:g}em"'
    styles = [re.search(r' style="[^"]*"', _delimiter_with_margins(f'<mo minsize="{size - 0.01:g}em">{d}</mo>'))
              for d in (m.group("d"), last.group(2))]
    if None in styles:
        return None
    return (f'<mrow><mo{m.group("attr") or ""}{held}{styles[0].group()}>{m.group("d")}</mo>{middle}'
            f'<mo{last.group(1)}{held}{styles[1].group()}>{last.group(2)}</mo></mrow>')


def _small_fences(body: str, display: bool = False) -> str:
    out: list[str] = []
    pos = 0
    for m in _LEFT_RIGHT.finditer(body):
        if m.start() < pos:
            continue
        end = _closing_tag(body, m.start(), "mrow")
        inner = body[m.end() : end]
        if end < 0 or not inner.endswith("</mo>"):
            continue
        if _TALL.search(inner):
            tall = _tall_fences(m, inner, display) if "<mfrac" in inner else None
            if tall is not None:
                out.append(body[pos : m.start()])
                out.append(tall)
                pos = end + len("</mrow>")
            continue
        close = inner.rfind("<mo")
        if close < 0 or _LEFT_RIGHT.search(inner) or "stretchy=" in inner[close : inner.find(">", close)]:
            continue  # a nested \left … \right: leave both
        out.append(body[pos : m.start()])
        out.append(f'<mrow><mo{m.group("attr") or ""} stretchy="false">{m.group("d")}</mo>{inner[:close]}<mo stretchy="false"{inner[close + 3:]}')
        pos = end
    if not out:
        return body
    out.append(body[pos:])
    return "".join(out)


# Sized delimiters (\big( … \Bigg]): Chromium makes a stretchy operator's box as wide as its
# widest size variant or assembly part (MathML Core's rule) and centres the glyph in it, so a
# \big( has up to 0.25em of nothing on each side. Its size is known (minsize), so the glyph
# Chromium picks is too: Latin Modern Math's variants (height, advance, in 1/1000 em) and the
# widest width, from the font's MATH table; the gap is taken back with negative margins.
_PAREN = ((997, 389), (1095, 422), (1195, 458), (1445, 523), (1793, 597), (2093, 663), (2393, 736), (2991, 875))
_BRACKET = ((1001, 278), (1101, 340), (1201, 417), (1451, 444), (1801, 472), (2101, 499), (2401, 528), (3001, 667))
_BRACE = ((1001, 500), (1101, 540), (1201, 583), (1451, 624), (1801, 667), (2101, 707), (2401, 750), (3001, 902))
_ANGLE = ((1001, 389), (1101, 428), (1201, 472), (1451, 537), (1801, 611), (2101, 677), (2401, 750), (3001, 908))
_FLOOR = ((1001, 444), (1101, 458), (1201, 472), (1451, 499), (1801, 528), (2101, 555), (2401, 583), (3001, 623))
_DELIMITER_VARIANTS: dict[str, tuple[tuple[tuple[int, int], ...], int]] = {
    "(": (_PAREN, 875), ")": (_PAREN, 875), "[": (_BRACKET, 667), "]": (_BRACKET, 667),
    "{": (_BRACE, 902), "}": (_BRACE, 902), "\u27e8": (_ANGLE, 908), "\u27e9": (_ANGLE, 908),
    "\u230a": (_FLOOR, 667), "\u230b": (_FLOOR, 667), "\u2308": (_FLOOR, 667), "\u2309": (_FLOOR, 667),
}
_SIZED_DELIMITER = lazy(r'<mo((?: [a-z]+="[^"]*")*?) minsize="([0-9.]+)em"((?: [a-z]+="[^"]*")*)>([^<])</mo>')


def _delimiter_gap(m: re.Match) -> str:
    return _delimiter_with_margins(m.group(0))


@functools.lru_cache(maxsize=512)
def _delimiter_with_margins(tag: str) -> str:
    """A sized delimiter's <mo …>d</mo> with the margins that take back Chromium's extra width."""
    m = _SIZED_DELIMITER.fullmatch(tag)
    known = _DELIMITER_VARIANTS.get(m.group(4))
    if known is None or "style=" in m.group(0):
        return m.group(0)
    variants, widest = known
    target = float(m.group(2)) * 1000
    advance = next((width for height, width in variants if height >= target), widest)
    gap = (widest - advance) / 1000
    if gap <= 0:
        return m.group(0)
    half = f"-{gap / 2:.3f}em"
    return f'<mo{m.group(1)} minsize="{m.group(2)}em"{m.group(3)} style="margin-left:{half};margin-right:{half};">{m.group(4)}</mo>'


# Primes: `t'` is <msup>t ′</msup>, but Latin Modern Math's U+2032 is already a raised prime,
# meant for the base line, so as a superscript it shrinks to a detached tick. It goes on the base
# line at full size (a base with a subscript too: the subscript follows it).
_PRIME_SUP = lazy(r"<msup>((?:<mi>[^<]*</mi>|<mn>[^<]*</mn>))<mo>([\u2032-\u2034\u2057]+)</mo></msup>")
_PRIME_SUBSUP = lazy(r"<msubsup>(<mi>[^<]*</mi>)")
_PRIME_END = lazy(r"<mo>([\u2032-\u2034\u2057]+)</mo>$")
_PRIME = '<mo lspace="0" rspace="0">'
# \log{p}: an operator name followed by anything but an opening fence takes a thin space (TeX's
# Op–Ord; math-core spaces only a following letter).
_APPLY_BARE = lazy(r"<mo>&#x2061;</mo>(?!(?:<mrow>)*<mo[^>]*>[(\[{\u27e8|\u2016\u230a\u2308])")
# TeX's italic correction after a math-italic letter (KaTeX's values, em, ≥ 0.03): Chromium adds it
# only before a superscript (MathML Core), so `f(` touched and `V)` overlapped.
_ITALIC_CORRECTION = {
    "f": 0.108, "g": 0.036, "j": 0.057, "q": 0.036, "v": 0.036, "y": 0.036, "z": 0.044,
    "B": 0.05, "C": 0.072, "E": 0.058, "F": 0.139, "H": 0.081, "I": 0.078, "J": 0.096, "K": 0.072,
    "M": 0.109, "N": 0.109, "P": 0.139, "S": 0.058, "T": 0.139, "U": 0.109, "V": 0.222, "W": 0.139,
    "X": 0.078, "Y": 0.222, "Z": 0.072, "\u03b2": 0.053, "\u03b3": 0.056, "\u03b4": 0.038,
    "\u03b6": 0.074, "\u03b7": 0.036, "\u03bd": 0.064, "\u03be": 0.046, "\u03c0": 0.036,
    "\u03c3": 0.036, "\u03c4": 0.113, "\u03c5": 0.036, "\u03c8": 0.036, "\u03c9": 0.036,
}
# (not the first child of a script, fraction or root, whose place is fixed: the lookbehinds come
# last, so only a one-letter <mi> that is followed by more math pays for them)
_ITALIC_LETTER = lazy(
    r"<mi>([" + "".join(_ITALIC_CORRECTION) + r"])</mi>(?=<m[inorfs])"
    r"(?<!<msub><mi>.</mi>)(?<!<msup><mi>.</mi>)(?<!<msubsup><mi>.</mi>)(?<!<mover><mi>.</mi>)"
    r"(?<!<munder><mi>.</mi>)(?<!<munderover><mi>.</mi>)(?<!<mfrac><mi>.</mi>)(?<!<mroot><mi>.</mi>)"
    r"(?<!\"><mi>.</mi>)"  # (nor of an element with attributes: <mover accent="true">, <mfrac linethickness=…>)
)
# (marked as a kern, so the text of a formula, for search and contents, takes it for no space)
_ITALIC_SPACE = {c: f'<mspace width="{w}em" class="kern"/>' for c, w in _ITALIC_CORRECTION.items()}


# An accent over one math-italic letter sits over the letter's slanted top, not its box's centre:
# TeX moves it right by the letter's skew (KaTeX's values, em, the kern with cmmi's skew char).
# Chromium centres it (it does not read the font's top-accent attachments), so `\widehat{A}` and
# `\hat{y}` leaned left of KaTeX's by the skew; margins move it without widening the <mover>. (A
# stretched one moves by half of it: Chromium stretches it over the base less the margins; larger
# margins leave a narrow base's hat undrawn.)
_SKEW = {
    "A": 0.139, "B": 0.083, "C": 0.083, "D": 0.056, "E": 0.083, "F": 0.083, "G": 0.083, "H": 0.056,
    "I": 0.111, "J": 0.167, "K": 0.056, "L": 0.028, "M": 0.083, "N": 0.083, "O": 0.083, "P": 0.083,
    "Q": 0.083, "R": 0.083, "S": 0.083, "T": 0.083, "U": 0.028, "X": 0.083, "Z": 0.083, "c": 0.056,
    "d": 0.167, "e": 0.056, "f": 0.167, "g": 0.028, "l": 0.083, "o": 0.056, "p": 0.083, "q": 0.083,
    "r": 0.056, "s": 0.056, "t": 0.083, "u": 0.028, "v": 0.028, "w": 0.083, "x": 0.028, "y": 0.056,
    "z": 0.056, "\u03b1": 0.028, "\u03b2": 0.083, "\u03b4": 0.056, "\u03b5": 0.083, "\u03b6": 0.083,
    "\u03b7": 0.056, "\u03b8": 0.083, "\u03b9": 0.056, "\u03bc": 0.028, "\u03bd": 0.028, "\u03be": 0.111,
    "\u03c1": 0.083, "\u03c4": 0.028, "\u03c5": 0.028, "\u03c6": 0.083, "\u03c7": 0.056, "\u03c8": 0.111,
}
# (rules and braces over the base are not accents: \overline, \overbrace stay centred, as in KaTeX)
_SKEWED_ACCENT = lazy(
    r'(<mover accent="true"><mi>([' + "".join(_SKEW) + r'])</mi><mo(?: stretchy="[a-z]+")?(?: mathsize="[^"]*")?)>'
    r'(?![\u0332\u203e\u23de\u23dc\u23b4])'
)
_SKEW_STYLE = {letter: f' style="margin-left:{skew}em;margin-right:-{skew}em;">' for letter, skew in _SKEW.items()}


def _skewed_accent(m: re.Match) -> str:
    return m.group(1) + _SKEW_STYLE[m.group(2)]


def _full_size_primes(body: str) -> str:
    body = _PRIME_SUP.sub(lambda m: f"<mrow>{m.group(1)}{_PRIME}{m.group(2)}</mo></mrow>", body)
    out: list[str] = []
    pos = 0
    for m in _PRIME_SUBSUP.finditer(body):
        end = _closing_tag(body, m.start(), "msubsup")
        if m.start() < pos or end < 0:
            continue
        prime = _PRIME_END.search(body, m.end(), end)
        if prime is None:
            continue
        out += [body[pos:m.start()], f"<msub><mrow>{m.group(1)}{_PRIME}{prime.group(1)}</mo></mrow>",
                body[m.end():prime.start()], "</msub>"]
        pos = end + len("</msubsup>")
    out.append(body[pos:])
    return "".join(out)


def _italic_correction(m: re.Match) -> str:
    return m.group() + _ITALIC_SPACE[m.group(1)]


# Author colours, readable in both themes: the page backgrounds (theme/static/style.css), the
# contrast WCAG asks of large text and graphics, and the colour written for each: same hue and
# saturation, the lightness moved until it has that contrast (`\textcolor{lightgreen}` was 1.4:1
# on white). The dark theme's colour rides in a custom property that math.css applies.
LIGHT_BACKGROUND = (0xFF, 0xFF, 0xFF)
DARK_BACKGROUND = (0x0D, 0x11, 0x17)
MIN_CONTRAST = 3.0
_AUTHOR_COLOUR = lazy(r'<mrow style="color:#([0-9A-F]{6});">')


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@functools.lru_cache(maxsize=1024)
def readable_colour(hex_: str, dark: bool) -> str:
    """`hex_` (RRGGBB) with its lightness moved, hue and saturation kept, until it has
    MIN_CONTRAST against the theme's background (unchanged when it has it already)."""
    rgb = tuple(int(hex_[i:i + 2], 16) for i in (0, 2, 4))
    background = DARK_BACKGROUND if dark else LIGHT_BACKGROUND
    if contrast(rgb, background) >= MIN_CONTRAST:
        return hex_.upper()
    h, lightness, sat = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    lo, hi = (lightness, 1.0) if dark else (0.0, lightness)  # towards white in dark, black in light
    for _ in range(20):
        mid = (lo + hi) / 2
        # (a margin, so the colour rounded to 8 bits a channel still has the contrast)
        ok = contrast(tuple(c * 255 for c in colorsys.hls_to_rgb(h, mid, sat)), background) >= MIN_CONTRAST + 0.05
        if ok == dark:
            hi = mid
        else:
            lo = mid
    best = hi if dark else lo
    return "".join(f"{round(c * 255):02X}" for c in colorsys.hls_to_rgb(h, best, sat))


def _themed_colour(m: re.Match) -> str:
    light, dark = readable_colour(m.group(1), False), readable_colour(m.group(1), True)
    return f'<mrow style="color:#{light};--math-dark:#{dark};">'


def _finish(raw: str, tex: str, display: bool) -> str:
    if raw.startswith("<math>"):
        body = raw[6:-7]
    elif raw.startswith('<math display="block">'):
        body = raw[22:-7]
    else:
        body = ""
    if not raw.endswith("</math>") or "<math" in body:
        raise MathError("the converter returned something other than one <math> element: simplify the formula")
    if "&" in body:
        body = _NAMED_ENTITY.sub(_entity, body)
    if "<mtext" in body and ("<mtext><" in body or '%"><' in body):
        body = _STYLED_TEXT.sub(_styled_text, body)
    # (macros may write them: asked of the MathML, the common ones first)
    if "\u2032" in body or "\u2033" in body or "'''" in tex or "prime" in tex:
        body = _full_size_primes(body)
    if "&#x2061;</mo>" in body:
        body = _APPLY_BARE.sub('<mo lspace="0.1667em">&#x2061;</mo>', body)
    body = _ITALIC_LETTER.sub(_italic_correction, body)
    if "pt" in tex and 'rem"' in body:  # \genfrac, \above, \raisebox: math-core writes pt as rem; TeX's are of the font size
        body = _REM_LENGTH.sub(r'\1="\2em"', body)
    if "minsize=" in body:
        body = _SIZED_DELIMITER.sub(_delimiter_gap, body)
        body = _SIZED_BASE.sub(_sized_base, body)
    if "<mrow><mi>" in body and "</mi></mrow></ms" in body:
        body = _merge_letters(body)
    if "<mrow><mo" in body and _LEFT_RIGHT.search(body):
        body = _small_fences(body, display)
    if "color:#" + _MARKER_PREFIX in body:
        body = _unmark(body)
    if '<mrow style="color:#' in body:
        body = _AUTHOR_COLOUR.sub(_themed_colour, body)
    if "\u20d7" in body:
        # \vec: the combining arrow drifts left of its base in Chromium; a small → sits on it.
        body = body.replace('<mo stretchy="false">\u20d7</mo></mover>', '<mo stretchy="false" mathsize="70%">\u2192</mo></mover>')
    if '<mover accent="true"><mi>' in body:
        body = _SKEWED_ACCENT.sub(_skewed_accent, body)
    if display and "<mpadded style=" in body:
        body = _mathop_limits(body)
    mode = "block" if display else "inline"
    # A numbered equation is one full-width <mtable>: left unwrapped, so that its width (100 %,
    # the number at the right margin) is the formula's (math.css makes <semantics> a block).
    if not (body.startswith('<mtable displaystyle="true" scriptlevel="0" style="width: 100%"')
            and _closing_tag(body, 0, "mtable") == len(body) - len("</mtable>")):
        body = f"<mrow>{body}</mrow>"
    markup = (
        f'<math xmlns="{MATHML_NS}" display="{mode}"><semantics>{body}'
        f'<annotation encoding="application/x-tex">{_escape_text(tex)}</annotation></semantics></math>'
    )
    if ' id="' in body:
        ids = _EQUATION_ID.findall(body)
        if len(set(ids)) < len(ids):
            twice = next(i for i in ids if ids.count(i) > 1)
            raise MathError(f"\\label{{{twice[len(EQUATION_ID_PREFIX):]}}} is defined twice: give each equation its own label")
    # Should the fast check flag what is fine, the parsing validator decides.
    problems = validate_mathml(markup, expected_tex=tex) if _fast_problem(body) else []
    if problems:
        raise MathError(
            "this TeX converts to MathML the site does not ship (" + "; ".join(problems[:3]) + "): "
            "simplify the formula or rewrite the part named"
        )
    return markup


# --------------------------------------------------------------------------------------------------
# Validation

# The elements and attributes tex_to_mathml may emit (also the allow-list an HTML sanitiser needs
# to let this MathML through unchanged). `a` appears only inside <mtext>, as an \eqref's link.
MATHML_ELEMENTS = frozenset(
    """math semantics annotation mrow mi mn mo mtext ms mspace msub msup msubsup munder mover
    munderover mmultiscripts mprescripts none mfrac msqrt mroot mstyle merror mpadded mphantom
    mtable mtr mtd menclose""".split()
)
MATHML_ATTRIBUTES = frozenset(
    """xmlns display encoding mathvariant mathcolor mathbackground mathsize displaystyle scriptlevel
    stretchy fence form separator symmetric largeop movablelimits accent accentunder lspace rspace
    minsize maxsize width height depth voffset linethickness columnalign rowspacing columnspacing
    rowlines columnlines columnspan notation class style id""".split()
)
_ARITY = {"msub": 2, "msup": 2, "mfrac": 2, "mroot": 2, "munder": 2, "mover": 2, "msubsup": 3, "munderover": 3}
_TEXT_ONLY_ELEMENTS = frozenset({"mi", "mn", "mo", "mtext", "ms", "annotation"})
_ONLY_CHILD = {"mtable": "mtr", "mtr": "mtd"}
_CLASSES = frozenset(
    {"tex-llap", "tex-clap", "text-serif", "text-small-caps", "text-strike", "text-underline",
     "menclose-updiagonalstrike", "menclose-downdiagonalstrike", "menclose-phasorangle", "math-core-unknown-cmd",
     "kern", "text-sans", "text-mono"}
)
# Inline CSS math-core writes (padding, widths, alignment, colours, font sizes): plain
# declarations of a known property with a value of words, numbers, units and #hex; no url(),
# no escapes, no quotes.
_STYLE_PROPERTIES = frozenset(
    """color background-color font-size font-weight font-style font-family padding padding-left
    padding-right padding-top padding-bottom margin-left margin-right width height text-align
    justify-items vertical-align border border-top border-bottom border-left border-right
    border-style border-width display position top bottom left right min-width --math-dark""".split()
)
_DECLARATION = lazy(r"\s*([a-z-]+)\s*:\s*([-#%.\w ]+?)\s*(?:;|$)")
_ID = lazy(r"^[A-Za-z0-9_:.\-]+$")


def _style_ok(value: str) -> bool:
    pos = 0
    value = value.strip()
    while pos < len(value):
        m = _DECLARATION.match(value, pos)
        if not m or m.group(1) not in _STYLE_PROPERTIES or "url" in m.group(2).lower():
            return False
        pos = m.end()
    return True


def _attribute_problem(name: str, attribute: str, value: str) -> Optional[str]:
    if attribute not in MATHML_ATTRIBUTES or attribute == "xmlns":
        return f"<{name}> has attribute {attribute!r}, which is not allowed"
    if attribute == "style" and not _style_ok(value):
        return f"<{name} style={value!r}> is not a style the site allows"
    if attribute == "class" and not set(value.split()) <= _CLASSES:
        return f"<{name} class={value!r}> is not a class math.css styles"
    if attribute == "id" and not (value.startswith(EQUATION_ID_PREFIX) and _ID.match(value)):
        return f"<{name} id={value!r}> is not an equation id"
    return None


def validate_mathml(markup: str, expected_tex: Optional[str] = None) -> list[str]:
    """Problems that make `markup` unfit to ship (empty list: fine).

    Checks: well-formed XML; one <math> in the MathML namespace with display block|inline; every
    element a MathML element (and `<a href="#eq-…">` only inside <mtext>); token elements hold
    text only; scripts and fractions have the right number of children; tables are
    mtable > mtr > mtd; only presentation attributes, inline styles of plain declarations, equation
    ids; a <semantics> whose annotation holds the TeX (equal to `expected_tex` when given).
    """
    try:
        root = _element_tree().fromstring(markup)
    except _element_tree().ParseError as error:
        return [f"not well-formed XML: {error}"]
    prefix = f"{{{MATHML_NS}}}"
    problems: list[str] = []

    def local(element: Element) -> str:
        return element.tag[len(prefix):] if element.tag.startswith(prefix) else element.tag

    if local(root) != "math" or not root.tag.startswith(prefix):
        problems.append(f"root is <{root.tag}>, not <math> in the MathML namespace")
    if root.get("display") not in ("block", "inline"):
        problems.append(f"math display is {root.get('display')!r}, not 'block' or 'inline'")
    links = set()
    for parent in root.iter():
        if local(parent) == "mtext":
            for child in parent:
                if child.tag == f"{prefix}a":
                    links.add(child)
    for element in root.iter():
        name = local(element)
        if element in links:
            if set(element.attrib) != {"href"} or not element.get("href", "").startswith("#" + EQUATION_ID_PREFIX) or len(element):
                problems.append("a link inside math may only be an equation reference")
            continue
        if name not in MATHML_ELEMENTS or not element.tag.startswith(prefix):
            problems.append(f"<{element.tag}> is not a MathML element")
            continue
        for attribute, value in element.attrib.items():
            if attribute == "xmlns" or (attribute in ("display",) and element is root):
                continue
            problem = _attribute_problem(name, attribute, value)
            if problem:
                problems.append(problem)
        count = len(element)
        if name in _TEXT_ONLY_ELEMENTS:
            if count and not (name == "mtext" and all(child in links for child in element)):
                children = ", ".join(local(child) for child in element)
                problems.append(f"<{name}> contains elements ({children}); it may hold text only")
        elif element.text and element.text.strip():
            problems.append(f"<{name}> holds bare text {element.text.strip()!r}; text belongs in mi/mn/mo/mtext")
        for child in element:
            if child.tail and child.tail.strip() and name != "mtext":
                problems.append(f"bare text {child.tail.strip()!r} after <{local(child)}>")
        if name in _ARITY and count != _ARITY[name]:
            problems.append(
                f"<{name}> has {count} children instead of {_ARITY[name]}: "
                "a fraction, root or script is missing an argument"
            )
        if name in _ONLY_CHILD and any(local(child) != _ONLY_CHILD[name] for child in element):
            problems.append(f"<{name}> may contain only <{_ONLY_CHILD[name]}>")
        if name == "math" and element is not root:
            problems.append("nested <math>")
    semantics = root[0] if len(root) else None
    if len(root) != 1 or semantics is None or local(semantics) != "semantics":
        problems.append("<math> must contain exactly one <semantics>")
    elif len(semantics) != 2 or local(semantics[1]) != "annotation":
        problems.append("<semantics> must hold the presentation and one <annotation>")
    else:
        annotation = semantics[1]
        if annotation.get("encoding") != "application/x-tex":
            problems.append("annotation encoding is not application/x-tex")
        if expected_tex is not None and (annotation.text or "") != expected_tex:
            problems.append("annotation does not hold the original TeX")
    return problems


# The fast check run on every formula: each distinct tag once (cached), and no stray "<" or "&".
_TAG = lazy(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[A-Za-z-]+=\"[^\"<>]*\")*)\s*(/?)>")
_ATTRIBUTE = lazy(r"\s+([A-Za-z-]+)=\"([^\"]*)\"")
_STRAY = lazy(r"&(?!(?:amp|lt|gt|quot|#x[0-9A-Fa-f]+|#[0-9]+);)")
_TAG_VERDICTS: dict[str, Optional[str]] = {}
_GOOD_TAGS: set[str] = set()


def _tag_problem(tag: str) -> Optional[str]:
    verdict = _TAG_VERDICTS.get(tag, "?")
    if verdict != "?":
        return verdict
    m = _TAG.fullmatch(tag)
    verdict = None
    if m is None:
        verdict = f"malformed tag {tag!r}"
    else:
        name = m.group(2)
        if name == "a":
            attrs = _ATTRIBUTE.findall(m.group(3))
            if not m.group(1) and (len(attrs) != 1 or attrs[0][0] != "href" or not attrs[0][1].startswith("#" + EQUATION_ID_PREFIX)):
                verdict = "a link inside math may only be an equation reference"
        elif name not in MATHML_ELEMENTS:
            verdict = f"<{name}> is not a MathML element"
        elif not m.group(1) and name != "math":
            for attribute, value in _ATTRIBUTE.findall(m.group(3)):
                verdict = _attribute_problem(name, attribute, html.unescape(value))
                if verdict:
                    break
    if len(_TAG_VERDICTS) < 8192:
        _TAG_VERDICTS[tag] = verdict
    return verdict




def _fast_problem(body: str) -> Optional[str]:
    """A reason the presentation `body` may not ship, or None.

    Exact for math-core's output as `_finish` leaves it: its elements without attributes come
    from a fixed vocabulary of MathML names, except the HTML text styles it writes inside
    <mtext> (which `_finish` turns into attributes, so any left over is flagged here). Every
    element with attributes is checked against the allow-lists (element, attribute, style, class,
    id, link) once per distinct tag and remembered; no "&" may start anything but a character
    reference. validate_mathml, which parses, is the full check: the tests run it on every
    formula they convert, and `_finish` on anything flagged here.
    """
    tags = _ATTRIBUTE_TAG.findall(body)
    if not _GOOD_TAGS.issuperset(tags):
        for tag in set(tags) - _GOOD_TAGS:
            problem = _tag_problem(tag)
            if problem:
                return problem
            if len(_GOOD_TAGS) < 8192:
                _GOOD_TAGS.add(tag)
    if "<mtext" in body and _HTML_IN_TEXT.search(body):
        return "HTML inside <mtext>"
    if "&" in body and _STRAY.search(body):
        return "stray markup characters"
    return None


_ATTRIBUTE_TAG = lazy(r"<[A-Za-z]+\s[^>]*>")
_HTML_IN_TEXT = lazy(r"</?(?:b|i|em|code|s|u|span)>")


def _escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
