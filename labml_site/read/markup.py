"""The markup of prose: what a translation key is made of, defined once.

A key is the English HTML of a prose block in which math, code and images are numbered
placeholders `<span translate=no>_^_N_^_</span>` (`read/prose.py` writes keys). Everything that
reads or writes such HTML takes its vocabulary from here:

* the **placeholder**: its exact form, the pattern that finds it, the equivalent HTML spellings
  that are accepted and the damaged ones that are reported (`translate/checks.py`, `repair.py`);
* the **block tags**: the elements a key is cut into at its top level (`unit_kind`), which the
  checks compare, the repair moves stray content into, and search and Markdown break text at;
* what a translation may hold: the **allowed tags and attributes**, URL schemes, and the tags whose
  content goes with them (`translate/sanitize.py`, the checks' messages).

The JavaScript of the workbench reads the same definitions from `javascript()`, a file generated
from this module when it is served (never a copy kept by hand; tests/test_markup.py checks it).
`tests/test_architecture.py` fails when another module defines a block-tag set or the placeholder
pattern of its own.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..lazy_re import lazy

# ---------------------------------------------------------------------------------------------
# Placeholders

PLACEHOLDER_OPEN = "<span translate=no>"
PLACEHOLDER_CLOSE = "</span>"
PLACEHOLDER_MARK = "_^_"  # on both sides of the number
_REGEX_SPECIALS = re.compile(r"([\\^$.|?*+()\[\]{}/])")


def _literal(text: str) -> str:
    """`text` as a regular expression that both Python and JavaScript read as the literal text
    (`re.escape` also escapes spaces, which a JavaScript pattern with the `u` flag refuses)."""
    return _REGEX_SPECIALS.sub(r"\\\1", text)


# The placeholder the lead fills, byte for byte; group 1 is its number.
PLACEHOLDER_PATTERN = (
    _literal(PLACEHOLDER_OPEN + PLACEHOLDER_MARK) + r"(\d+)" + _literal(PLACEHOLDER_MARK + PLACEHOLDER_CLOSE)
)
PLACEHOLDER_RE = re.compile(PLACEHOLDER_PATTERN)
# The same placeholder in equivalent HTML (the attribute quoted, spaces in the tags): accepted,
# and the sanitiser writes it back in the exact form (`canonical_placeholders`).
PLACEHOLDER_LENIENT_RE = re.compile(
    r"""<span\s+translate\s*=\s*(?:no|"no"|'no')\s*>_\^_(\d+)_\^_</span\s*>"""
)
_QUOTED_OPEN = '<span translate="no">'  # how HTML serialisers (nh3, html5lib) write the opening


def placeholder(n: int) -> str:
    """Placeholder number `n`, as keys hold it."""
    return f"{PLACEHOLDER_OPEN}{PLACEHOLDER_MARK}{n}{PLACEHOLDER_MARK}{PLACEHOLDER_CLOSE}"


def placeholder_numbers(fragment: str) -> list[int]:
    """The numbers of the placeholders in `fragment`, in order."""
    return [int(n) for n in PLACEHOLDER_RE.findall(fragment)] if PLACEHOLDER_MARK in fragment else []


def canonical_placeholders(fragment: str) -> str:
    """`fragment` with each serialiser's `<span translate="no">` in the exact form of a key."""
    return fragment.replace(_QUOTED_OPEN, PLACEHOLDER_OPEN) if _QUOTED_OPEN in fragment else fragment


def is_placeholder_element(tag: str, attrs: Iterable[tuple[str, str | None]]) -> bool:
    """A placeholder's element: `<span translate=no>` (however its attribute is quoted)."""
    return tag == "span" and ("translate", "no") in attrs


# Damaged placeholders: what still looks like one once the good ones are removed, so that the
# checks can say which one broke and the repair can decode the encoded ones.
_CARET = r"(?:\^|＾|%5[eE]|&#0*94;|&#[xX]0*5[eE];|&Hat;)"
_UNDERSCORE = r"(?:_|＿|%5[fF])"
# Linear in the text: no two `\s*` meet (`\s*(?:U\s*)?` reads what `\s*U?\s*` did, in the same
# order of preference, without trying every split of a run of spaces), and a match does not start
# inside a run of whitespace (`(?!(?<=\s)\s)`: a match found there would have been found one
# character earlier), so a long run of spaces is not scanned once per space. Both were quadratic:
# a 40 KB value of "^" and spaces took seconds to check (tests/test_security_parsing.py).
LOOSE_PLACEHOLDER_RE = re.compile(
    rf"(?!(?<=\s)\s){_UNDERSCORE}?\s*{_CARET}\s*(?:{_UNDERSCORE}\s*)?(?P<index>\d+)\s*(?:{_UNDERSCORE}\s*)?{_CARET}\s*{_UNDERSCORE}?"
)
# The same language as written before it was made linear, kept to test the fast one against.
LOOSE_PLACEHOLDER_REFERENCE = (
    rf"{_UNDERSCORE}?\s*{_CARET}\s*{_UNDERSCORE}?\s*(?P<index>\d+)\s*{_UNDERSCORE}?\s*{_CARET}\s*{_UNDERSCORE}?"
)
# A damaged placeholder with the span around it. `[^<>]*`, not `[^>]*`, so that each "<span" reads
# at most to the next "<" (with `[^>]*`, many "<span" without a ">" made every one scan to the
# end). The two differ only for a "<" inside a span's tag, which no valid value has.
LOOSE_IN_SPAN_RE = lazy(
    rf"(?:<span\b[^<>]*>\s*)?(?P<token>{LOOSE_PLACEHOLDER_RE.pattern})(?:\s*</span\s*>)?"
)
ENCODED_PLACEHOLDER_RE = lazy(r"%5[eEfF]|&#|&Hat;")  # a damaged placeholder that is encoded
TRANSLATE_NO_RE = lazy(r"""translate\s*=\s*["']?no\b""", re.IGNORECASE)  # what is left of a span


def may_hold_caret(text: str) -> bool:
    """False when `text` holds none of the strings every caret form starts with: then no damaged
    placeholder can be in it. Substring searches are quicker than one pattern with alternatives."""
    return "^" in text or "＾" in text or "%5" in text or "&#" in text or "&Hat;" in text


# ---------------------------------------------------------------------------------------------
# Tags

HEADING_TAGS: frozenset[str] = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_TAGS: frozenset[str] = frozenset({"ul", "ol"})
# The elements a key is cut into at its top level (with the block placeholders between them).
BLOCK_TAGS: frozenset[str] = frozenset(
    {"p", "ul", "ol", "blockquote", "table", "hr", "pre", "div", "dl", "figure", "section", "details"}
) | HEADING_TAGS
# Elements without an end tag.
VOID_TAGS: frozenset[str] = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr", "keygen"}
)
# Inline elements of the prose format (a repair unwraps the empty ones an HTML parser reopens).
INLINE_TAGS: frozenset[str] = frozenset({"a", "em", "strong", "code", "sub", "sup", "del", "span", "small"})
# How each block is written in Markdown (`render/markdown.py`): a form of its own, or, for the
# blocks Markdown has no syntax for, a paragraph break around their content.
MARKDOWN_FORMS: dict[str, str] = {
    **{tag: "heading" for tag in HEADING_TAGS}, **{tag: "list" for tag in LIST_TAGS},
    "blockquote": "quote", "table": "table", "pre": "code",
    **{tag: "paragraph" for tag in BLOCK_TAGS - HEADING_TAGS - LIST_TAGS - {"blockquote", "table", "pre"}},
}
# Where words end in text made from prose HTML (search entries): the blocks, and the parts of
# lists, tables and definition lists inside them.
TEXT_BREAK_TAGS: frozenset[str] = BLOCK_TAGS | {"li", "tr", "th", "td", "dt", "dd", "br"}


def unit_kind(tag: str, attrs: Iterable[tuple[str, str | None]]) -> str | None:
    """How a key is cut into blocks: what an element at the top level of a key (or value) is —
    "block" (one of `BLOCK_TAGS`), "placeholder" (a display formula or code block between the
    blocks), or None: content outside any block, which a translation must not have where its
    English has none."""
    if tag in BLOCK_TAGS:
        return "block"
    if is_placeholder_element(tag, attrs):
        return "placeholder"
    return None


# ---------------------------------------------------------------------------------------------
# What a translation may hold

# Exactly what the prose format renders (`details` with its `summary`: a folded answer, see
# `read/rules/details.py`); math, code and images arrive as placeholders, so `img`,
# `pre`, `svg`, `math` are deliberately absent.
ALLOWED_TAGS: frozenset[str] = frozenset(
    {"li", "a", "em", "strong", "code", "span", "br", "sub", "sup", "thead", "tbody", "tr", "th",
     "td", "del", "small", "summary"}
    | (BLOCK_TAGS - {"pre", "div", "dl", "figure", "section"})
)
# Attributes allowed per tag. `span[translate]` and `th/td[align]` only with the values below.
ALLOWED_ATTRIBUTES: dict[str, frozenset[str]] = {"a": frozenset({"href", "id", "title"})}
SPAN_TRANSLATE_VALUES: frozenset[str] = frozenset({"no"})
# Table cell alignment, as Markdown table extensions write it (`align=`, not `style=`).
CELL_ALIGN_VALUES: frozenset[str] = frozenset({"left", "center", "right"})
URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
URL_ATTRIBUTES: frozenset[str] = frozenset({"href", "src"})
# Tags whose content goes too (not just the tags): their text is script, CSS or foreign markup.
DROP_WITH_CONTENT: frozenset[str] = frozenset(
    {"script", "style", "svg", "math", "iframe", "object", "embed", "noscript", "template",
     "textarea", "title", "xmp", "noembed", "noframes", "select", "applet"}
)


def allowed_summary() -> str:
    """The allowed attributes in words, for messages."""
    attrs = ", ".join(f"{tag}[{', '.join(sorted(names))}]" for tag, names in sorted(ALLOWED_ATTRIBUTES.items()))
    return f"only {attrs}, span[translate=no] and th/td[align] are allowed"


# ---------------------------------------------------------------------------------------------
# For JavaScript


def vocabulary() -> dict:
    """The definitions the browser side needs, as plain data."""
    return {
        "placeholder": {
            "open": PLACEHOLDER_OPEN,
            "close": PLACEHOLDER_CLOSE,
            "mark": PLACEHOLDER_MARK,
            "pattern": PLACEHOLDER_PATTERN,  # group 1: the number
        },
        "blockTags": sorted(BLOCK_TAGS),
        "headingTags": sorted(HEADING_TAGS),
        "allowedTags": sorted(ALLOWED_TAGS),
    }


JS_GLOBAL = "labmlMarkup"


def javascript() -> str:
    """`markup.js`: the vocabulary as a script that sets `window.labmlMarkup` (frozen), with
    `placeholder(n)` and `placeholderRegExp()` made from the same definitions."""
    data = json.dumps(vocabulary(), ensure_ascii=False, sort_keys=True, indent=1)
    return (
        "// Generated from labml_site/read/markup.py by markup.javascript(): do not edit.\n"
        "(function () {\n"
        '  "use strict";\n'
        f"  var markup = {data};\n"
        "  var p = markup.placeholder;\n"
        "  markup.placeholder.make = function (n) { return p.open + p.mark + n + p.mark + p.close; };\n"
        '  markup.placeholder.regExp = function () { return new RegExp(p.pattern, "g"); };\n'
        f"  window.{JS_GLOBAL} = Object.freeze(markup);\n"
        "})();\n"
    )
