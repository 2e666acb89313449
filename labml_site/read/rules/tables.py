"""Tables, as GitHub-flavoured Markdown and Python-Markdown's `tables` write them: a header row,
a delimiter row (`|---|:---:|--:|`, as many cells as the header) and the rows after it, up to
the first line without a `|` or the end of the block:

    | Task | Metric | Value |
    |------|:------:|------:|
    | anli | `acc`  | 0.33  |

Cells are cut at each `|` that is not escaped (`\\|` is a `|` in the cell) and not inside a code
span or `$…$` math (`$|x|$` stays one cell); a row with fewer cells is filled with empty ones,
one with more loses the extra. The key is `<table>` with a `<thead>` and a `<tbody>`, one `<tr>`
per line, alignment as `align=` (which translations may keep: `read/markup.py`). The original labml
rule had no tables (its key joins the lines into one paragraph): a translation of that key is
still found (`translate/untabled.py`)."""
from __future__ import annotations

import re
from collections.abc import Callable

from . import BlockState, line_rule

_DELIMITER_CELL_RE = re.compile(r"[ \t]*(:?)-+(:?)[ \t]*")
_ALIGN = {(":", ""): "left", (":", ":"): "center", ("", ":"): "right"}


def _pipes(line: str) -> list[int]:
    """The positions of the `|` that cut `line` into cells: not escaped, not inside a code span
    or `$…$`. Linear: a span whose closing delimiter is missing is text, and once one of a
    length is missing, every later one of that length is too."""
    found: list[int] = []
    missing: set[str] = set()
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c == "|":
            found.append(i)
        elif c in "`$":
            run = len(line) - len(line[i:].lstrip(c))  # the end of the run of `c`
            marker = line[i:run]
            if c == "$":
                marker = marker[:2]  # `$` or `$$`
                run = i + len(marker)
            close = -1 if marker in missing else _closing(line, marker, run)
            if close < 0:
                missing.add(marker)
                i = run
                continue
            i = close + len(marker)
            continue
        i += 1
    return found


def _closing(line: str, marker: str, at: int) -> int:
    """Where `marker` (a backtick run: exactly as long; `$`/`$$`: unescaped) next occurs."""
    c = marker[0]
    pattern = (rf"(?<!`){re.escape(marker)}(?!`)" if c == "`" else rf"(?<!\\){re.escape(marker)}")
    m = re.compile(pattern).search(line, at)
    return m.start() if m else -1


def _cells(line: str, start: int) -> list[tuple[str, int]]:
    """The cells of a row as (text, offset of the text from the line's start)."""
    cuts = _pipes(line)
    bounds = [-1, *cuts, len(line)]
    cells = [(line[a + 1:b], a + 1) for a, b in zip(bounds, bounds[1:])]
    if line.strip().startswith("|") and cells and not cells[0][0].strip():
        cells = cells[1:]
    if cuts and not line[cuts[-1] + 1:].strip() and cells:
        cells = cells[:-1]  # the trailing `|` (and spaces after it)
    out = []
    for text, at in cells:
        lead = len(text) - len(text.lstrip())
        out.append((text.strip().replace("\\|", "|"), start + at + lead))
    return out


def _alignments(line: str) -> list[str] | None:
    """The delimiter row's alignment per column ("" for none), or None when `line` is not one."""
    if "|" not in line or "-" not in line:
        return None
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    aligns = []
    for cell in body.split("|"):
        m = _DELIMITER_CELL_RE.fullmatch(cell)
        if not m:
            return None
        aligns.append(_ALIGN.get((m.group(1), m.group(2)), ""))
    return aligns


@line_rule("table", 85)
def _table_line(p: BlockState, k: int, line: str) -> bool:
    if "|" not in line or k + 1 >= len(p.lines) or p.items or any(p.lines[j] for j in p.para):
        return False
    aligns = _alignments(p.lines[k + 1])
    header = _cells(line, 0) if aligns is not None else None
    if header is None or len(header) != len(aligns):
        return False
    last = k + 1
    while last + 1 < len(p.lines) and "|" in p.lines[last + 1] and p.special(p.lines[last + 1]) is None:
        last += 1
    width = len(aligns)
    rows = []
    for j in [k, *range(k + 2, last + 1)]:
        cells = [(text, p.starts[j] + at) for text, at in _cells(p.lines[j], 0)][:width]
        rows.append(cells + [("", p.starts[j])] * (width - len(cells)))

    def render(convert: Callable[[str, int], str]) -> str:
        def row(cells: list[tuple[str, int]], tag: str) -> str:
            return "<tr>" + "".join(
                f"<{tag}{f' align={chr(34)}{a}{chr(34)}' if a else ''}>{convert(text, at) if text else ''}</{tag}>"
                for (text, at), a in zip(cells, aligns)) + "</tr>\n"
        head = "<thead>\n" + row(rows[0], "th") + "</thead>\n"
        body = "<tbody>\n" + "".join(row(r, "td") for r in rows[1:]) + "</tbody>\n" if len(rows) > 1 else ""
        return "<table>\n" + head + body + "</table>\n"

    p.claim(k, last, render)
    return True
