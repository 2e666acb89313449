"""Regular expressions compiled the first time they are used.

A module that keeps dozens of patterns (typeset/math.py) spends milliseconds compiling them when
it is imported, which every build pays even when it typesets nothing. `lazy(pattern)` stands in
for `re.compile(pattern)`: the pattern is compiled on the first method call, after which the
compiled pattern's methods are the object's own attributes, looked up as cheaply as before.
"""
from __future__ import annotations

import re
from typing import Any

# What callers use of a compiled pattern; each becomes an attribute on first use.
_ATTRIBUTES = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer",
               "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """`re.compile(pattern, flags)`, compiled when first used."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Called only for attributes the object does not have: all of them before it compiles.
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(*self._source)
            for attribute in _ATTRIBUTES:
                self.__dict__[attribute] = getattr(compiled, attribute)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
