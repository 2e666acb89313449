"""Formulas as readable plain text, for places that cannot show MathML: search snippets and
index cards, the table of contents, `title` attributes.

The text is made from the MathML that `typeset.math` writes (so `\\le` is already `≤` and
`\\top` `⊤`): sub- and superscripts become Unicode scripts where every character has one
(`d_k` → `dₖ`, `K^\\top` → `Kᵀ`, `x^2` → `x²`) and `_(…)`/`^(…)` otherwise, a fraction `a/b`
(with parentheses around a numerator or denominator of more than one symbol), a root `√x`,
relations and binary operators get spaces around them. Never TeX source.
"""
from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET

from ..typeset.math import MathError, tex_to_mathml

_SUP = dict(zip("0123456789+-−=()niT⊤abcdefghijklmoprstuvwxyzABDEGHIJKLMNOPRUVW",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵀᵀᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵁⱽᵂ"))
_SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ"))
_SPACED = frozenset("=≤≥≠<>≈≡∼∝∈∉⊂⊆→←↔⇒⇔+−×·±∓÷∘⊙⊕⊗") | {"-", ":=", "≔"}
_LARGE = frozenset("∑∏∫∬∮⋃⋂")
_ACCENTS = {"^": "\u0302", "ˆ": "\u0302", "~": "\u0303", "˜": "\u0303", "¯": "\u0304", "‾": "\u0305", "→": "\u20d7", "˙": "\u0307", "¨": "\u0308"}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _script(text: str, table: dict[str, str], mark: str) -> str:
    text = "".join(text.split())
    if not text:
        return ""
    if all(c in table for c in text):
        return "".join(table[c] for c in text)
    return mark + (text if len(text) == 1 else f"({text})")


def _group(text: str) -> str:
    """A fraction's part or a root's argument: in parentheses when it has more than one term."""
    text = " ".join(text.split())
    return f"({text})" if " " in text else text


def _text(el: ET.Element) -> str:
    tag = _local(el.tag)
    kids = list(el)
    if tag == "annotation":
        return ""
    if tag in ("mi", "mn", "mtext", "ms"):
        return el.text or ""
    if tag == "mo":
        op = (el.text or "").strip()
        if op in _SPACED:
            return f" {op} "
        if op in (",", ";"):
            return op + " "
        return op + " " if op in _LARGE else op
    if tag == "mspace":
        return " "
    if tag == "msup" and len(kids) == 2:
        return _text(kids[0]) + _script(_text(kids[1]), _SUP, "^")
    if tag == "msub" and len(kids) == 2:
        return _text(kids[0]) + _script(_text(kids[1]), _SUB, "_")
    if tag in ("msubsup", "munderover") and len(kids) == 3:
        base = _text(kids[0])
        scripts = _script(_text(kids[1]), _SUB, "_") + _script(_text(kids[2]), _SUP, "^")
        return base.strip() + scripts + " " if base.strip() in _LARGE else base + scripts
    if tag == "munder" and len(kids) == 2:
        base = _text(kids[0])
        script = _script(_text(kids[1]), _SUB, "_")
        return base.strip() + script + " " if base.strip() in _LARGE else base + script
    if tag == "mover" and len(kids) == 2:
        over = _text(kids[1]).strip()
        base = _text(kids[0])
        if over in _ACCENTS and len(base.strip()) == 1:
            return base.strip() + _ACCENTS[over]
        return base + _script(over, _SUP, "^")
    if tag == "mfrac" and len(kids) == 2:
        return _group(_text(kids[0])) + "/" + _group(_text(kids[1]))
    if tag == "msqrt":
        return "√" + _group("".join(_text(k) for k in kids))
    if tag == "mroot" and len(kids) == 2:
        return _script(_text(kids[1]), _SUP, "") + "√" + _group(_text(kids[0]))
    if tag == "mtable":
        return "; ".join(_text(row) for row in kids)
    if tag == "mtr":
        return " ".join(_text(cell) for cell in kids)
    return "".join(_text(k) for k in kids)


@functools.lru_cache(maxsize=4096)
def mathml_text(markup: str) -> str:
    """A `<math>` element (as `tex_to_mathml` writes it) as readable text; "" when it does not parse."""
    try:
        root = ET.fromstring(markup)
    except ET.ParseError:
        return ""
    return " ".join(_text(root).split())


@functools.lru_cache(maxsize=4096)
def tex_text(tex: str) -> str:
    """An inline formula's TeX as readable text (its MathML's, `mathml_text`). A formula that does
    not typeset keeps its letters, without TeX's commands and braces."""
    try:
        text = mathml_text(tex_to_mathml(tex, display=False))
    except (MathError, TypeError, RecursionError):
        text = ""
    if text:
        return text
    return " ".join(re.sub(r"\\[A-Za-z]+|[{}\\$^_]", " ", tex).split())


# `$…$` as Markdown math is written: no space just inside the dollars, no digit just after
# ("$5 and $6" is money).
_DOLLARS = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]*?\S)\$(?![\d$])")


def plain_with_math(text: str) -> str:
    """Plain text (a title, a summary) with any `$…$` TeX in it as readable text."""
    return _DOLLARS.sub(lambda m: tex_text(m.group(1)), text) if "$" in text else text
