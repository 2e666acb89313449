"""A translation written for the original labml key of a table or a rule, used for ours.

The original rule had no tables and no rules: a table's lines are one paragraph of its key
(`<p>| Task | Metric | |---|:---:| | anli | acc |</p>`) and a `---` line the paragraph `<p>---</p>`;
ours are `<table>` and `<hr>` (`read/rules/tables.py`, `thematic_breaks.py`). Unlike a numbered
list's (`repair.legacy_key`), the original's key of a table cannot be made from ours: it keeps the
delimiter row's dashes and the optional outer pipes as written. So both are reduced to one
signature (each such block to its cells' text in order, without the delimiter row and empty
cells), the catalog finds an entry by it (`Catalog.verdict`), and `from_untabled` makes the
translated paragraph the table again, cell by cell, where its cells can be told apart.
"""
from __future__ import annotations

import re

from .sanitize import sanitize
from ..lazy_re import lazy

# (sanitised HTML has no "<" or ">" in an attribute: `sanitize` drops such attributes)
_TAG_RE = lazy(r"<[^>]*>")
_PIECE_RE = lazy(r"<table>\n.*?</table>\n|<hr>\n|<p>(?:(?!</p>).)*</p>\n", re.S)
_CELL_RE = lazy(r'(<t([hd])(?: align="\w+")?>)(.*?)(</t\2>)', re.S)
_DELIMITER_RE = lazy(r":?-+:?")
_BREAK_RE = lazy(r"(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}")
_RULE_SIGN = "<p>\x00rule</p>\n"


def _tokens(paragraph_inner: str) -> list[str] | None:
    """The cells of a table written as one paragraph, without the delimiter row's and empty
    ones; None unless it has a delimiter row (one `---` cell or more) and text cells."""
    if "|" not in paragraph_inner:
        return None
    parts = [part.strip() for part in paragraph_inner.split("|")]
    if not any(_DELIMITER_RE.fullmatch(part) for part in parts):
        return None
    cells = [part for part in parts if part and not _DELIMITER_RE.fullmatch(part)]
    return cells or None


def _signed(piece: str) -> str:
    if piece == "<hr>\n":
        return _RULE_SIGN
    if piece.startswith("<table>"):
        cells = [m.group(3).strip() for m in _CELL_RE.finditer(piece)]
        return "<p>\x00table\x00" + "\x00".join(c for c in cells if c) + "</p>\n"
    inner = piece[len("<p>"):-len("</p>\n")]
    if _BREAK_RE.fullmatch(inner.strip()):
        return _RULE_SIGN
    tokens = _tokens(inner)
    return "<p>\x00table\x00" + "\x00".join(tokens) + "</p>\n" if tokens else piece


def untabled_signature(key: str) -> str | None:
    """The key with each table and rule (ours) or each paragraph that reads as one (the
    original's) in one form; None for a key with neither (most keys: the catalog indexes only
    the entries that may be one)."""
    if "|" not in key and "<table>" not in key and "<hr>" not in key and not any(c * 3 in key for c in "-*_"):
        return None
    signed, changed = [], False
    pos = 0
    for m in _PIECE_RE.finditer(key):
        signed.append(key[pos:m.start()])
        piece = _signed(m.group(0))
        changed |= piece != m.group(0)
        signed.append(piece)
        pos = m.end()
    signed.append(key[pos:])
    return "".join(signed) if changed else None


def _pieces(html: str) -> list[str]:
    """The HTML cut at its paragraphs, tables and rules (the text between kept as pieces)."""
    out, pos = [], 0
    for m in _PIECE_RE.finditer(html):
        out += [html[pos:m.start()], m.group(0)]
        pos = m.end()
    return out + [html[pos:]]


def from_untabled(key: str, legacy: str, html: str) -> str:
    """`html` (a translation of `legacy`, the original's key of `key`, reviewed and sanitised)
    with each paragraph that stands for one of our tables or rules made that table or rule:
    the table's English cells with the translation's in order, where it has exactly as many;
    else the translated paragraph as the original showed it."""
    ours, theirs, value = _pieces(key), _pieces(legacy), _pieces(html if html.endswith("\n") else html + "\n")
    if not (len(ours) == len(theirs) == len(value)):
        return html
    out = []
    for mine, original, translated in zip(ours, theirs, value):
        if mine == "<hr>\n" and _signed(original) == _RULE_SIGN:
            out.append(mine)
        elif mine.startswith("<table>") and original != mine and translated.startswith("<p>"):
            out.append(_retabled(mine, translated[len("<p>"):-len("</p>\n")]) or translated)
        else:
            out.append(translated)
    return "".join(out)


def _retabled(table: str, paragraph_inner: str) -> str | None:
    """The table with the paragraph's cells, sanitised again (a cell boundary falls between
    the translation's elements: its `<em>` may close in the next cell, which the sanitiser's
    parser balances); None where a `|` is inside a tag (an attribute's value), not between."""
    if any("|" in tag for tag in _TAG_RE.findall(paragraph_inner)):
        return None
    tokens = _tokens(paragraph_inner)
    english = [m.group(3).strip() for m in _CELL_RE.finditer(table)]
    if tokens is None or len(tokens) != sum(1 for c in english if c):
        return None
    it = iter(tokens)
    made = _CELL_RE.sub(lambda m: m.group(1) + (next(it) if m.group(3).strip() else "") + m.group(4), table)
    return sanitize(made)
