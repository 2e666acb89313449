"""A `<details>` line (optionally with its `<summary>…</summary>` on the same line) opens a
folded block and a `</details>` line closes it, each alone in its block (blank lines around), as
in GitHub's Markdown. Without this rule they are raw HTML inside a paragraph: `<p><details>…</p>`,
which a browser repairs by moving the `<p>` and leaves the summary outside the fold's header.
Only the bare tags are read: a `<details open>` line stays text (the prose format has no
attributes for it, and a translation may not carry any)."""
from __future__ import annotations

import re

from . import BlockState, line_rule

_OPEN_RE = re.compile(r" {0,3}<details>[ \t]*(?:<summary>(.*?)</summary>)?[ \t]*")
_CLOSE_RE = re.compile(r" {0,3}</details>[ \t]*")


@line_rule("details", 95)  # before headings and lists: the tag line is neither
def _details_line(p: BlockState, k: int, line: str) -> bool:
    if "details>" not in line:
        return False
    if _CLOSE_RE.fullmatch(line):
        p.claim(k, k, lambda convert: "</details>\n")
        return True
    m = _OPEN_RE.fullmatch(line)
    if not m:
        return False
    summary, at = m.group(1), p.starts[k] + m.start(1)
    if summary is None:
        p.claim(k, k, lambda convert: "<details>\n")
    else:
        p.claim(k, k, lambda convert: f"<details><summary>{convert(summary, at)}</summary>\n")
    return True
