"""`***`, `**`, `*`, `__`, `_`: strong and emphasis, as Python-Markdown's rules (with smart
underscores) read them, in linear time."""
from __future__ import annotations

import bisect
import re

from . import inline_rule
from ...lazy_re import lazy


# as in Python-Markdown, `*` surrounded by spaces (`a * b * c`) is not emphasis
_STRONG_EM_RE = lazy(r"\*\*\*(?!\s)(.+?)(?<!\s)\*\*\*", re.S)
_STRONG_RE = lazy(r"\*\*(?!\s)(.+?)(?<!\s)\*\*", re.S)
# A closing `*` may follow a space, as in Python-Markdown; an opening one may be followed by one
# only at the start of a line: `* ` items right after a paragraph line are no list (a list starts
# a block), and the original reads the first such item up to the next `*` as emphasis
_EM_RE = re.compile(r"(?:(?<=\n)\*|\*(?!\s))([^*]+?)\*")
_SMART_STRONG_RE = lazy(r"(?<!\w)__(?!_)(.+?)(?<!_)__(?!\w)", re.S)
_SMART_EM_RE = lazy(r"(?<!\w)_(?!_)(.+?)(?<!_)_(?!\w)", re.S)


# The same patterns cut in two: where one may open, where one may close (each a zero-width
# match, so overlapping ones are all found). `_pair_sub` pairs them as the lazy `(.+?)` does, in
# linear time: the patterns above scan to the end of the text from every opener that never closes
# (a paragraph of "**a " took seconds).
_STRONG_EM_OPEN = lazy(r"\*\*\*(?!\s)")
_STRONG_EM_CLOSE = re.compile(r"(?<!\s)(?=\*\*\*)")
_STRONG_OPEN = re.compile(r"\*\*(?!\s)")
_STRONG_CLOSE = re.compile(r"(?<!\s)(?=\*\*)")
_SMART_STRONG_OPEN = lazy(r"(?<!\w)__(?!_)")
_SMART_STRONG_CLOSE = lazy(r"(?<!_)(?=__(?!\w))")
_SMART_EM_OPEN = lazy(r"(?<!\w)_(?!_)")
_SMART_EM_CLOSE = lazy(r"(?<!_)(?=_(?!\w))")


def _pair_sub(text: str, opener: re.Pattern[str], closer: re.Pattern[str], width: int, before: str, after: str) -> str:
    """`re.sub(OPEN (.+?) CLOSE, before + \\1 + after, text, flags=re.S)` for the pairs above:
    the leftmost opener with a closer at least one character after it, and the first such closer.
    When the leftmost opener has none, no later one has (its closers are a subset): done."""
    closes = [m.start() for m in closer.finditer(text)]
    if not closes:
        return text
    out: list[str] = []
    pos = 0
    while True:
        m = opener.search(text, pos)
        if m is None:
            break
        start = m.start()
        k = bisect.bisect_left(closes, start + width + 1)
        if k == len(closes):
            break
        end = closes[k]
        out.append(text[pos:start])
        out.append(before + text[start + width:end] + after)
        pos = end + width
    out.append(text[pos:])
    return "".join(out)


@inline_rule("emphasis", 80)
def _emphasis(text: str) -> str:
    # Each pattern needs its delimiter, and most text has none: skip the substitution then.
    if "*" in text:
        text = _pair_sub(text, _STRONG_EM_OPEN, _STRONG_EM_CLOSE, 3, "<strong><em>", "</em></strong>")
        text = _pair_sub(text, _STRONG_OPEN, _STRONG_CLOSE, 2, "<strong>", "</strong>")
        text = _EM_RE.sub(r"<em>\1</em>", text)
    if "_" in text:
        text = _pair_sub(text, _SMART_STRONG_OPEN, _SMART_STRONG_CLOSE, 2, "<strong>", "</strong>")
        text = _pair_sub(text, _SMART_EM_OPEN, _SMART_EM_CLOSE, 1, "<em>", "</em>")
    return text
