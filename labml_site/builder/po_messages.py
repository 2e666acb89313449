"""The translated messages of a .po catalog (msgid → msgstr, fuzzy and empty ones left out).

The theme's catalogs are the simplest kind of .po file: comments, then `msgid "…"` and `msgstr "…"`
pairs whose strings may continue on `"…"` lines. Those are read here, exactly as Babel's `read_po`
reads them; any other construct (plurals, contexts, obsolete entries, another charset, a repeated
msgid, anything Babel would warn about) is left to Babel, whose message-catalog modules cost a
build ~8 ms to import.
"""
from __future__ import annotations

import io
import re
from functools import cache

# Babel's unescaping (babel.messages.pofile.unescape): C escapes, \\ and \".
_ESCAPE = re.compile(r'\\([\\abfnrtv"])')
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_CHARSET = re.compile(r"charset=([^\s\\\"]*)", re.I)
_ASCII_SPACE = " \t\n\r\x0b\x0c"  # what bytes.strip() strips: Babel strips lines before decoding


class _NotSimple(Exception):
    """A construct this reader leaves to Babel."""


def messages(data: bytes) -> dict[str, str]:
    """The catalog's messages with a translation that is not fuzzy, in the file's order."""
    try:
        return _simple(data)
    except _NotSimple:
        return _with_babel(data)


def _with_babel(data: bytes) -> dict[str, str]:
    catalog = _read_po()(io.BytesIO(data), locale=None, abort_invalid=False)
    return {str(m.id): str(m.string) for m in catalog
            if m.id and m.string and not m.fuzzy and isinstance(m.id, str)}


@cache
def _read_po():
    """Babel's .po reader, imported on first use."""
    from babel.messages.pofile import read_po

    return read_po


def _string(part: str) -> str:
    part = part.strip()
    if len(part) < 2 or part[0] != '"' or part[-1] != '"':
        raise _NotSimple(part)
    if "\\" not in part:
        return part[1:-1]
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), part[1:-1])


def _simple(data: bytes) -> dict[str, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotSimple("not UTF-8") from None
    if any(c.lower() not in ("utf-8", "utf8") for c in _CHARSET.findall(text)):
        raise _NotSimple("charset")  # Babel decodes what follows the header by its charset
    found: dict[str, str] = {}
    seen: set[str] = set()
    msgid: list[str] | None = None  # the open entry's msgid parts, and its msgstr's
    msgstr: list[str] | None = None
    fuzzy = False

    def finish() -> None:
        nonlocal msgid, msgstr, fuzzy
        if msgid is None:
            return
        if msgstr is None:
            raise _NotSimple("msgid without msgstr")
        key, value = "".join(msgid), "".join(msgstr)
        if key in seen:
            raise _NotSimple("repeated msgid")  # Babel merges the entries' flags
        seen.add(key)
        if key and value and not fuzzy:
            found[key] = value
        msgid = msgstr = None
        fuzzy = False

    for line in text.split("\n"):
        line = line.strip(_ASCII_SPACE)
        if not line:
            continue
        if line[0] == "#":
            if line[1:2] in ("~", "-"):
                raise _NotSimple("obsolete entry or conflict")
            finish()
            if line[1:2] == ",":
                fuzzy = fuzzy or "fuzzy" in (flag.strip() for flag in line[2:].lstrip().split(","))
        elif line[0] == '"':
            if msgstr is not None:
                msgstr.append(_string(line))
            elif msgid is not None:
                msgid.append(_string(line))
            else:
                raise _NotSimple("string outside an entry")
        else:
            keyword, _, arg = line.partition(" ")
            if keyword == "msgid":
                finish()
                msgid = [_string(arg)]
            elif keyword == "msgstr" and msgid is not None and msgstr is None:
                msgstr = [_string(arg)]
            else:
                raise _NotSimple(keyword)
    finish()
    return found
