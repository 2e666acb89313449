"""`> ` lines (up to three spaces before the `>`, one space after it dropped) are a block quote
`<blockquote>`: the text without the markers is read as blocks of its own, so a quote holds
paragraphs, lists, code and quotes (beyond the existing corpus's subset). Consecutive quoted
blocks are one quote (a `>` line alone joins them too). Offsets inside are approximate (marker
widths are not tracked), which only affects error line numbers."""
from __future__ import annotations

import re

from . import BlocksState, block_rule

_QUOTE_RE = re.compile(r"^ {0,3}> ?")


def _is_quote(block: str) -> bool:
    if ">" not in block:  # a quoted line needs one; most blocks have none
        return False
    lines = [line for line in block.split("\n") if line.strip()]
    return bool(lines) and all(_QUOTE_RE.match(line) for line in lines)


@block_rule("blockquote", 90)
def _blockquote(b: BlocksState, k: int, block: str) -> int:
    # nested deeper than the engine allows, a quote is read as text (`BlocksState.can_nest`)
    if ">" not in block or not b.can_nest or not _is_quote(block):  # most blocks have no `>`
        return 0
    last = k
    while last + 1 < len(b.blocks) and _is_quote(b.blocks[last + 1]):
        last += 1
    quoted = "\n\n".join(b.blocks[k:last + 1])
    inner = "\n".join(_QUOTE_RE.sub("", line) for line in quoted.split("\n"))
    b.nest("blockquote", inner, b.offset(k))
    return last - k + 1
