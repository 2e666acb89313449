"""Brace groups in TeX source, for the rewrites of math.py and math_katex.py."""
from __future__ import annotations

from typing import Iterator


def grouped(tex: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, str, int]]:
    """(index, character, group depth after it) of each character of `tex[start:end]` that can
    open or close a group or stand at a depth: "{" deepens, "}" goes back up (below 0 when it
    closes a group opened before `start`); an escape (a backslash and the character after it) is
    text, not a group's edge, given once as "\\\\" at the backslash's index."""
    depth = 0
    i = start
    stop = len(tex) if end is None else end
    while i < stop:
        c = tex[i]
        if c == "\\":
            yield i, c, depth
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        yield i, c, depth
        i += 1


def matching_brace(tex: str, open_index: int) -> int:
    """Index of the "}" closing the "{" at `open_index` (-1: none)."""
    for i, c, depth in grouped(tex, open_index):
        if c == "}" and depth == 0:
            return i
    return -1
