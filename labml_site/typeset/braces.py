"""Brace groups in TeX source, for the rewrites of math.py and math_katex.py."""
from __future__ import annotations


def matching_brace(tex: str, open_index: int) -> int:
    """Index of the "}" closing the "{" at `open_index` (-1: none); an escaped brace (after a
    backslash) is text, not a group's edge."""
    depth = 0
    i = open_index
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1
