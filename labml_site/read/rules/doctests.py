"""A block whose first line is a `>>> ` prompt is a doctest session (as reST has them: from the
prompt to the blank line), a code block placeholder shown as written, `pycon`: no block quote of
`>` markers, as the original too shows the `>>>`; its lines are kept, where the original joins
them into a paragraph (beyond the existing corpus's subset)."""
from __future__ import annotations

import re

from . import BlocksState, Placeholder, block_rule

_DOCTEST_RE = re.compile(r"\n*>>>(?: |$)", re.M)


def _is_doctest(block: str) -> bool:
    """The block's first non-blank line is a `>>>` prompt (leading newlines are those of extra
    blank lines before it)."""
    return bool(_DOCTEST_RE.match(block))


@block_rule("doctest", 100)  # before block quotes: `>>> ` lines would read as three levels of them
def _doctest(b: BlocksState, k: int, block: str) -> int:
    # (the first test skips most blocks without a call.) A sentinel of a fenced block inside
    # would be shown as its marker: such a block is left to the other rules
    if not block.startswith((">>>", "\n")) or not _is_doctest(block) or b.has_special(block):
        return 0
    lead = len(block) - len(block.lstrip("\n"))
    at = b.source_offset(b.offset(k) + lead)
    ph = Placeholder("code_block", block.strip("\n"), lang="pycon", line=b.line(at))
    b.add("code_block", offset=at, placeholder=ph)
    return 1
