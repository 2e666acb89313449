"""A fenced code block or `\\begin{env}…\\end{env}` (already cut out of the prose, a one-line
sentinel in its place) is a block placeholder of its own."""
from __future__ import annotations

from . import BlockState, line_rule


@line_rule("block_placeholder", 100)
def _block_placeholder_line(p: BlockState, k: int, line: str) -> bool:
    """A fenced code block or environment (already replaced by a sentinel)."""
    found = p.special(line)
    if found is None:
        return False
    ph, end = found
    p.close()
    p.add(ph.kind, placeholder=ph)
    p.list_allowed = True
    if line[end:].strip():  # text after `\\end{..}` on the same line starts a paragraph
        p.column[k] = end
        p.para.append(k)
    elif ph.kind == "env" and k == len(p.lines) - 2 and p.lines[k + 1] == "":
        # The newline after an environment that ends a comment (comment lines each end with one;
        # a docstring's prose has no trailing newline) is a paragraph of its own in the original
        # key rule: `…</span><p> </p>`, whether code follows the comment or a blank line does.
        p.add("p", " ", p.starts[k + 1])
    return True
