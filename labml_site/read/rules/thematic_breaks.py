"""`---`, `***` and `___` lines (three or more, spaces between allowed) are rules `<hr>`, as in
Markdown. A `-` line right after a paragraph's text stays that text: Markdown reads it as the
underline of a heading (a setext heading), which this format does not have."""
from __future__ import annotations

import re

from . import BlockState, line_rule

_BREAK_RE = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})")


@line_rule("thematic_break", 86)  # before list items: `* * *` is a rule, not an item
def _break_line(p: BlockState, k: int, line: str) -> bool:
    if line[:1] not in (" ", "-", "*", "_") or not _BREAK_RE.fullmatch(line):
        return False
    if line.lstrip()[0] == "-" and any(p.lines[j] for j in p.para):
        return False
    p.claim(k, k, lambda convert: "<hr>\n")
    return True
