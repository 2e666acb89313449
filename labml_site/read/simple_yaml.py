"""The commonest front matter, `key: text` lines, read without PyYAML.

Nearly every page's front matter is a title and a summary. For a body made only of lines
`name: plain text` this gives what the bounded PyYAML loader gives (`sections._load_yaml`: the
mapping and the 0-based line of each key), so a rebuild need not import PyYAML (~8 ms); for
anything else (quotes, lists, comments, continued lines, a value YAML reads as a number, a date,
a boolean or null, a repeated key) it answers None and PyYAML reads the body.
"""
from __future__ import annotations

import re

_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):[ ]+([^ ].*)")
# What PyYAML's scanner or resolver reads as something other than plain text when a value
# starts with it: indicators, and the first characters of numbers, dates, `<<`, `=` and `~`.
_SPECIAL_START = frozenset("-?:,[]{}#&*!|>'\"%@`" "+.0123456789<=~")
# Its booleans and nulls (YAML 1.1), the words starting with a letter it does not read as text.
# PyYAML refuses a simple key past 1,024 characters; longer ones (no real key) are left to it.
_KEY_MAX = 256
_BOOL_OR_NULL = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL")


def simple_mapping(body: str, max_values: int) -> tuple[dict[str, str], dict[str, int]] | None:
    """(mapping, 0-based line of each key) when `body` is only `key: text` lines (and blank
    ones) with at most `max_values` values in all, else None."""
    data: dict[str, str] = {}
    lines: dict[str, int] = {}
    for n, line in enumerate(body.split("\n")):
        if not line.strip(" "):
            continue  # (a line with a tab or another space fails the pattern below)
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        key, value = m.group(1), m.group(2).rstrip(" ")
        # (`isprintable` is False for what PyYAML refuses (reader.NON_PRINTABLE) or takes for a
        # line break, and for tabs, a byte order mark and spaces other than " ".)
        if (key in data or len(key) > _KEY_MAX or _BOOL_OR_NULL.fullmatch(key) or value[0] in _SPECIAL_START
                or _BOOL_OR_NULL.fullmatch(value) or ": " in value or value.endswith(":")
                or " #" in value or not value.isprintable()):
            return None
        data[key] = value
        lines[key] = n
    if not data or 2 * len(data) + 1 > max_values:
        return None  # (the loader counts the mapping and each key and value)
    return data, lines
