"""List items: `* `, `- `, `+ ` and `1. ` lines at the start of a block, after a heading or after
another item; a docstring's `:param name:` (an item, the name as code) and `:return:` (a
"Returns" paragraph inside the list)."""
from __future__ import annotations

import re

from . import BlockState, line_rule


_ITEM_RE = re.compile(r"^( *)[*+-][ \t]+")
_ORDERED_RE = re.compile(r"^( *)\d{1,9}[.)][ \t]+")
_PARAM_RE = re.compile(r"^:param[ \t]+([^:\s]+)[ \t]*:")
_RETURN_RE = re.compile(r"^:returns?:")


@line_rule("param", 80)
def _param_line(p: BlockState, k: int, line: str) -> bool:
    """`:param name: text` is a list item `<li>name-as-code  text</li>`, wherever it appears."""
    m = _PARAM_RE.match(line)
    if not m:
        return False
    p.close_para()
    p.open_item(k, m.end(), code=m.group(1), code_at=m.start(1))
    return True


@line_rule("returns", 70)
def _return_line(p: BlockState, k: int, line: str) -> bool:
    """`:return: text` is a list entry `<p><em>Returns</em>  text</p>` (inside the `<ul>`)."""
    m = _RETURN_RE.match(line)
    if not m:
        return False
    p.close_para()
    p.open_item(k, m.end(), kind="returns")
    return True


@line_rule("list_item", 60)
def _item_line(p: BlockState, k: int, line: str) -> bool:
    """`* `, `- `, `+ ` items, and `1. ` items of an ordered list: at the start of a block,
    after a heading, or after another item."""
    if not (p.items or (p.list_allowed and not any(p.lines[j] for j in p.para))):
        return False  # checked first: inside a paragraph, most lines are text
    m = _ITEM_RE.match(line)
    ordered = False
    if not m:
        m, ordered = _ORDERED_RE.match(line), True
    if not m:
        return False
    p.para = []  # only blank lines precede the list
    if p.items and len(m.group(1)) > 3:
        # a nested item becomes a sibling; its indentation (collapsed to one space, as runs of
        # spaces are) stays behind in the previous item, after its newline
        p.suffix[p.items[-1]["lines"][-1]] = " "
    p.open_item(k, m.end(), ordered=ordered)
    return True
