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
from html import unescape

from ..typeset.math import MathError, tex_to_mathml

_SUP = dict(zip("0123456789+-−=()niT⊤abcdefghijklmoprstuvwxyzABDEGHIJKLMNOPRUVW",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵀᵀᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵁⱽᵂ"))
_SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ"))
_SPACED = frozenset("=≤≥≠<>≈≡∼∝∈∉⊂⊆→←↔⇒⇔+−×·±∓÷∘⊙⊕⊗") | {"-", ":=", "≔"}
_LARGE = frozenset("∑∏∫∬∮⋃⋂")
_ACCENTS = {"^": "\u0302", "ˆ": "\u0302", "~": "\u0303", "˜": "\u0303", "¯": "\u0304", "‾": "\u0305", "→": "\u20d7", "˙": "\u0307", "¨": "\u0308"}


# MathML as `typeset.math` writes it is regular (no comments, CDATA or processing instructions), so
# a tokenizer over tags and text is enough, and several times cheaper than an XML parser: the
# search index reads every formula of every page.
_MARKUP = re.compile(r"<(/?)([A-Za-z][\w.:-]*)([^>]*?)(/?)>|([^<]+)")

# A parsed element: (tag, children), a child being an element or a text.
_Node = tuple


_WIDTH_EM = re.compile(r'width="(-?[0-9.]+)em"')


def _narrow(attributes: str) -> bool:
    if not attributes.strip() or 'class="kern"' in attributes:
        return True
    m = _WIDTH_EM.search(attributes)
    return m is not None and float(m.group(1)) < 0.15  # a thin space is 0.1667 em


def _parse(markup: str) -> _Node | None:
    """The element tree of one `<math>` element, its TeX annotation left out; None when the
    markup is not well nested."""
    cut = markup.find("<annotation")
    if cut >= 0:
        markup = markup[:cut]  # the annotation and the end tags after it
    stack: list[_Node] = [("", [])]
    for close, tag, attributes, empty, text in _MARKUP.findall(markup):
        if tag == "mspace" and _narrow(attributes):
            # no width (what the converter puts before an operator's name), or a kern narrower
            # than a thin space (an italic correction, a fraction's null delimiter): no space in text
            tag = "mspace0"
        if text:
            stack[-1][1].append(unescape(text) if "&" in text else text)
        elif close:
            if len(stack) < 2 or stack[-1][0] != tag:
                return None
            node = stack.pop()
            stack[-1][1].append(node)
        elif empty:
            stack[-1][1].append((tag, []))
        else:
            stack.append((tag, []))
    while len(stack) > 1:  # the elements the annotation's cut left open
        node = stack.pop()
        stack[-1][1].append(node)
    kids = [k for k in stack[0][1] if not isinstance(k, str)]
    return kids[0] if len(kids) == 1 else None


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


# Identifiers of several letters come as Mathematical Italic letters (`S_{ij}` → 𝑖𝑗): readers
# and search want the plain ones. The invisible operators (function application after `\\log`,
# invisible times) are no text at all.
_PLAIN = str.maketrans(
    {**{chr(0x1D434 + i): chr(ord("A") + i) for i in range(26)},
     **{chr(0x1D44E + i): chr(ord("a") + i) for i in range(26) if i != 7}, "\u210e": "h",
     "\u2061": None, "\u2062": None, "\u2063": None, "\u2064": None}
)


def _attach(base: str, scripts: str) -> str:
    """A base with its scripts: a large operator or an operator's name keeps a space after them
    (`∑ᵢ x`, `log₂ e`), anything else none (`Kᵀ`)."""
    core = base.strip()
    if core in _LARGE or (base.endswith(" ") and core):
        return base.rstrip() + scripts + " "
    return base + scripts


def _leaf(node: _Node) -> str:
    return "".join(k for k in node[1] if isinstance(k, str)).translate(_PLAIN)


def _text(node: _Node) -> str:
    tag, children = node
    kids = [k for k in children if not isinstance(k, str)]
    if tag in ("mi", "mn", "mtext", "ms"):
        return _leaf(node)
    if tag == "mo":
        op = _leaf(node).strip()
        if op in _SPACED:
            return f" {op} "
        if op in (",", ";"):
            return op + " "
        return op + " " if op in _LARGE else op
    if tag == "mspace":
        return " "
    if tag == "mspace0":
        return ""
    if tag == "mrow" and len(kids) == 2 and kids[0][0] == "mspace0" and kids[1][0] == "mi":
        name = _leaf(kids[1])  # an operator's name (`\\log`, `\\operatorname{softmax}`): a word
        return f" {name} " if len(name) > 1 else name
    if tag == "msup" and len(kids) == 2:
        return _attach(_text(kids[0]), _script(_text(kids[1]), _SUP, "^"))
    if tag == "msub" and len(kids) == 2:
        return _attach(_text(kids[0]), _script(_text(kids[1]), _SUB, "_"))
    if tag in ("msubsup", "munderover") and len(kids) == 3:
        return _attach(_text(kids[0]), _script(_text(kids[1]), _SUB, "_") + _script(_text(kids[2]), _SUP, "^"))
    if tag == "munder" and len(kids) == 2:
        return _attach(_text(kids[0]), _script(_text(kids[1]), _SUB, "_"))
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


# TeX's spacing, on the text: a sign that follows nothing, an opening bracket, a comma or another
# operator is unary (`−m`, not `− m`); brackets hug what they enclose, and a function's name its
# argument list (`exp(−m)`, `softmax(x)`, where MathML's operator names came spaced as words).
_UNARY = re.compile(r"(^|[(\[{|]|[,;] |[=≤≥≠<>≈≡∼∝∈→⇒+−×·±∓] )([−+±∓-]) ")
_AFTER_OPENING = re.compile(r"([(\[{]) +")
_BEFORE_CLOSING = re.compile(r" +([)\]}])")
_BEFORE_ARGUMENTS = re.compile(r"(?<=[^\W_]|[)\]′⁰¹²³⁴⁵⁶⁷⁸⁹ᵀⁿⁱ₀₁₂₃₄₅₆₇₈₉ᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ]) +\(")


def tex_spacing(text: str) -> str:
    """Plain-text math spaced as TeX spaces it: `exp ( − m)` → `exp(−m)`, `− x` → `−x`."""
    text = " ".join(text.split())
    if not text:
        return text
    text = _AFTER_OPENING.sub(r"\1", text)
    text = _UNARY.sub(r"\1\2", text)
    text = _BEFORE_CLOSING.sub(r"\1", text)
    return _BEFORE_ARGUMENTS.sub("(", text)


@functools.lru_cache(maxsize=8192)
def mathml_text(markup: str) -> str:
    """A `<math>` element (as `tex_to_mathml` writes it) as readable text; "" when it does not parse."""
    tree = _parse(markup)
    if tree is None:
        return ""
    try:
        return tex_spacing(_text(tree))
    except RecursionError:  # (math parsing is bounded to 150 levels, far below this)
        return ""


@functools.lru_cache(maxsize=8192)
def tex_text(tex: str) -> str:
    """An inline formula's TeX as readable text: what `mathml_text` makes of its MathML. A
    formula that does not typeset keeps its letters, without TeX's commands and braces."""
    text = _fast_tex_text(tex)
    if text is not None:
        return text
    try:
        text = mathml_text(tex_to_mathml(tex, display=False))
    except (MathError, TypeError, RecursionError):
        text = ""
    if text:
        return text
    return " ".join(re.sub(r"\\[A-Za-z]+|[{}\\$^_]", " ", tex).split())


# The fast path: most inline formulas are letters, symbols, scripts, fractions, roots and
# font commands. Those are read straight from the TeX, each symbol's text taken from its own
# MathML (`_symbol`, once per symbol), so the result is `mathml_text`'s without typesetting
# and parsing the whole formula (the search index reads every formula of every page). Anything
# else (environments, primes, page macros, optional arguments…) takes the full path.
_TEX_TOKEN = re.compile(r"\\([A-Za-z]+)\s*|\\([,;:! ])|([{}^_])|(\s+)|([A-Za-z0-9.+\-=<>()\[\]|/,;*])|(.)", re.S)
_FRACTIONS = frozenset({"frac", "dfrac", "tfrac"})
# Commands of one argument whose text is the text of the whole `\\cmd{…}` (a font, an accent,
# an operator name): typeset alone, once per distinct use.
_UNITS = frozenset({
    "mathbb", "mathcal", "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "mathfrak", "mathscr",
    "boldsymbol", "bm", "text", "textrm", "textbf", "textit", "texttt", "operatorname",
    "hat", "tilde", "bar", "vec", "dot", "ddot", "overline", "widehat", "widetilde", "pmb",
    "overrightarrow", "underline",
})
_SIZES = frozenset({"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr", "middle"})


class _Unsupported(Exception):
    pass


@functools.lru_cache(maxsize=2048)
def _symbol(tex: str) -> str:
    """The text of a one-symbol (or one-unit) formula, spaces included (`mathml_text` spaces
    relations and operators)."""
    try:
        markup = tex_to_mathml(tex, display=False)
    except (MathError, TypeError, RecursionError):
        raise _Unsupported from None
    tree = _parse(markup)
    if tree is None:
        raise _Unsupported
    return _text(tree)


def _fast_tex_text(tex: str) -> str | None:
    if len(tex) > 400 or "'" in tex or "&" in tex or "\\\\" in tex or "\\begin" in tex:
        return None
    tokens = _TEX_TOKEN.findall(tex)
    try:
        text, end = _atoms(tokens, 0)
    except (_Unsupported, IndexError, RecursionError):
        return None
    if end != len(tokens):
        return None
    return tex_spacing(text)


def _atoms(tokens: list, i: int, closing: bool = False) -> tuple[str, int]:
    """The text of the atoms from token i up to a `}` (when `closing`) or the end."""
    out: list[str] = []
    while i < len(tokens):
        command, space_command, special, blank, char, other = tokens[i]
        if blank:
            i += 1
            continue
        if special == "}":
            if not closing:
                raise _Unsupported
            return "".join(out), i + 1
        if special in ("^", "_"):
            if not out:
                raise _Unsupported
            out[-1], i = _scripts(out[-1], tokens, i)
            continue
        atom, i = _atom(tokens, i)
        out.append(atom)
    if closing:
        raise _Unsupported
    return "".join(out), i


def _atom(tokens: list, i: int) -> tuple[str, int]:
    """One atom's text (a symbol, a group, a fraction…) and the token after it."""
    command, space_command, special, blank, char, other = tokens[i]
    if special == "{":
        return _atoms(tokens, i + 1, closing=True)
    if char:
        return _symbol(char), i + 1
    if space_command:
        return " ", i + 1
    if command in _FRACTIONS:
        top, i = _argument(tokens, i + 1)
        bottom, i = _argument(tokens, i)
        return _group(top) + "/" + _group(bottom), i
    if command == "sqrt":
        if i + 1 < len(tokens) and tokens[i + 1][4] == "[":
            raise _Unsupported
        inner, i = _argument(tokens, i + 1)
        return "√" + _group(inner), i
    if command in _SIZES:
        i += 1
        while i < len(tokens) and tokens[i][3]:
            i += 1
        if i >= len(tokens) or not (tokens[i][4] or tokens[i][0]):
            raise _Unsupported
        delimiter = tokens[i][4] or "\\" + tokens[i][0]
        return (_symbol(delimiter) if delimiter != "." else ""), i + 1
    if command == "textcolor":  # the colour is no text
        _, i = _group_end(tokens, i + 1)
        return _argument(tokens, i)
    if command in _UNITS:
        start = i + 1
        while start < len(tokens) and tokens[start][3]:
            start += 1
        if start >= len(tokens):
            raise _Unsupported
        if tokens[start][2] != "{":  # `\\bar\\alpha`: one token is the argument
            one = tokens[start]
            if not (one[0] or one[4]):
                raise _Unsupported
            return _symbol("\\" + command + "{" + ("\\" + one[0] if one[0] else one[4]) + "}"), start + 1
        start, after = _group_end(tokens, start)
        source = "\\" + command + "".join(map(_token_source, tokens[start:after]))
        return _symbol(source), after
    if command:
        return _symbol("\\" + command), i + 1
    raise _Unsupported  # a character the fast path does not know


def _token_source(token: tuple) -> str:
    command, space_command, special, blank, char, other = token
    if command:
        return "\\" + command + " "
    if space_command:
        return "\\" + space_command
    return special or blank or char or other


def _group_end(tokens: list, i: int) -> tuple[int, int]:
    """(start, the token after) of the `{…}` group at token i (white space before it skipped)."""
    while i < len(tokens) and tokens[i][3]:
        i += 1
    if i >= len(tokens) or tokens[i][2] != "{":
        raise _Unsupported
    depth = 0
    for end in range(i, len(tokens)):
        if tokens[end][2] == "{":
            depth += 1
        elif tokens[end][2] == "}":
            depth -= 1
            if depth == 0:
                return i, end + 1
    raise _Unsupported


def _argument(tokens: list, i: int) -> tuple[str, int]:
    while i < len(tokens) and tokens[i][3]:
        i += 1
    if i >= len(tokens) or tokens[i][2] in ("}", "^", "_"):
        raise _Unsupported
    return _atom(tokens, i)


def _scripts(base: str, tokens: list, i: int) -> tuple[str, int]:
    """`base` with the `^…`/`_…` that follow it (one of each at most, in either order), written as
    `mathml_text` writes msub, msup and msubsup."""
    sub = sup = None
    while i < len(tokens) and tokens[i][2] in ("^", "_"):
        which = tokens[i][2]
        value, i = _argument(tokens, i + 1)
        if which == "_":
            if sub is not None:
                raise _Unsupported
            sub = value
        else:
            if sup is not None:
                raise _Unsupported
            sup = value
        while i < len(tokens) and tokens[i][3]:
            i += 1
    scripts = (_script(sub, _SUB, "_") if sub is not None else "") + (_script(sup, _SUP, "^") if sup is not None else "")
    return _attach(base, scripts), i


# `$…$` as Markdown math is written: no space just inside the dollars, no digit just after
# ("$5 and $6" is money).
_DOLLARS = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]*?\S)\$(?![\d$])")


def plain_with_math(text: str) -> str:
    """Plain text (a title, a summary) with any `$…$` TeX in it as readable text."""
    return _DOLLARS.sub(lambda m: tex_text(m.group(1)), text) if "$" in text else text
