"""`#` lines are headings `<h1>`…`<h6>` (closing `#`s and spaces dropped)."""
from __future__ import annotations

import re

from . import BlockState, line_rule


_HEADING_RE = re.compile(r"^(#{1,6})(?!#)[ \t]*(.*?)[ \t]*#*[ \t]*$")  # what `_heading` reads


def _heading(line: str) -> tuple[int, str, int] | None:
    """`_HEADING_RE.match(line)` as (level, text, where the text starts), in linear time: the
    pattern's `(.*?)[ \t]*#*[ \t]*$` tried every split of a run of spaces ("# a", 2,000 spaces
    and "b" took 19 s). The lazy text ends where the longest suffix of spaces, then "#"s, then
    spaces begins; the leading spaces are skipped first."""
    if not line.startswith("#"):
        return None
    level = len(line) - len(line.lstrip("#"))
    if level > 6:
        return None  # `#{1,6}(?!#)`
    start = level + (len(line) - level - len(line[level:].lstrip(" \t")))
    end = len(line.rstrip(" \t").rstrip("#").rstrip(" \t"))
    return level, line[start:max(start, end)], start


@line_rule("heading", 90)
def _heading_line(p: BlockState, k: int, line: str) -> bool:
    h = _heading(line)
    if not h:
        return False
    level, text, start = h
    p.close()
    p.add(f"h{level}", text, p.starts[k] + start)
    p.list_allowed = True
    return True
