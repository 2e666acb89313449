"""Brace groups in TeX source, for the rewrites of math.py and math_katex.py."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator


@lru_cache(maxsize=None)
def _edges(marks: str) -> re.Pattern[str]:
    # An escape first: the character after a backslash is never a group's edge nor a mark.
    return re.compile(r"\\[\s\S]?|[{}" + re.escape(marks) + "]")


def grouped(tex: str, start: int = 0, end: int | None = None, marks: str = "") -> Iterator[tuple[int, str, int]]:
    """(index, character, group depth after it) of each character of `tex[start:end]` that opens
    or closes a group or is one of `marks`: "{" deepens, "}" goes back up (below 0 when it closes
    a group opened before `start`); an escape (a backslash and the character after it) is text,
    not a group's edge, given once as "\\" at the backslash's index. The characters between are
    skipped by a regular expression, not looked at one by one: a formula can be long."""
    depth = 0
    for m in _edges(marks).finditer(tex, start, len(tex) if end is None else end):
        i = m.start()
        c = tex[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        yield i, c, depth


def matching_brace(tex: str, open_index: int) -> int:
    """Index of the "}" closing the "{" at `open_index` (-1: none)."""
    for i, c, depth in grouped(tex, open_index):
        if c == "}" and depth == 0:
            return i
    return -1
