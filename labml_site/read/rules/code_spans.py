"""`` `code` `` spans: a placeholder of kind "code", its content stripped (a longer run of
backticks does not close a shorter one)."""
from __future__ import annotations

import bisect
import re

from . import Placeholder, per_thread, placeholder_rule


class _BacktickRuns:
    """The runs of backticks of one text (start, length), to find a code span's closing run
    without searching the rest of the text from each backtick (quadratic in a long run)."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.by_length: dict[int, list[int]] = {}

    def load(self, text: str) -> None:
        if text is self.text:
            return
        self.text = text
        self.starts, self.ends, self.by_length = [], [], {}
        for m in _BACKTICK_RUN_RE.finditer(text):
            self.starts.append(m.start())
            self.ends.append(m.end())
            self.by_length.setdefault(m.end() - m.start(), []).append(m.start())

    def span(self, text: str, i: int) -> tuple[int, int] | None:
        """(n, j): the backticks from `i` on, and where the first later run of exactly that
        many starts (j < 0: none); what `_code_span`'s search finds."""
        self.load(text)
        k = bisect.bisect_right(self.starts, i) - 1
        if k < 0 or self.ends[k] <= i:
            return None
        n = self.ends[k] - i
        same = self.by_length.get(n, [])
        at = bisect.bisect_left(same, i + n)
        return n, same[at] if at < len(same) else -1


_BACKTICK_RUN_RE = re.compile("`+")


_backtick_runs = per_thread(_BacktickRuns)


@placeholder_rule("code_span", 100, "`")
def _code_span(text: str, i: int):
    if len(text) > 256:  # short texts: the plain search below is quicker than indexing the runs
        found = _backtick_runs().span(text, i)
        if found is None:
            return None
        n, j = found
        if j < 0 or j == i + n:
            return None
        return Placeholder("code", text[i + n:j].strip()), j + n
    n = len(text) - i - len(text[i:].lstrip("`"))
    j = i + n
    while True:
        j = text.find("`" * n, j)
        if j < 0:
            return None
        k = j + n
        if k < len(text) and text[k] == "`":  # a longer run does not close this span
            while k < len(text) and text[k] == "`":
                k += 1
            j = k
            continue
        if j == i + n:
            return None
        return Placeholder("code", text[i + n:j].strip()), j + n
