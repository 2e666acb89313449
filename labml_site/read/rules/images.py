"""`![alt](src "title")`: an image placeholder (kind "image", its URL and alt text), read by
hand in linear time."""
from __future__ import annotations

import re

from . import Placeholder, per_thread, placeholder_rule


# What `_image_match` reads (it reads it by hand, in linear time; the pattern is the reference).
_IMAGE_RE = re.compile(r'!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')


class _NextIndex:
    """`text.find(char, i)` for rising `i` in one text, each character of it looked at once: the
    rules below are tried at every trigger of a paragraph, and a search from each to the end of
    the text (for a "]" or a run of backticks that never comes) made them quadratic."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.found: dict[str, tuple[int, int]] = {}  # char → (searched from, found at)
        self.images: dict[int, tuple[str, int] | None] = {}  # "]" → `_image_rest` after it

    def use(self, text: str) -> None:
        if text is not self.text:
            self.text, self.found, self.images = text, {}, {}

    def find(self, text: str, char: str, i: int) -> int:
        self.use(text)
        known = self.found.get(char)
        if known is not None and known[0] <= i and (known[1] < 0 or known[1] >= i):
            return known[1]
        at = text.find(char, i)
        self.found[char] = (i, at)
        return at

    def find_stop(self, text: str, i: int) -> int:
        """The first ")", whitespace or ">" at or after `i` (-1: none), like `find`."""
        self.use(text)
        known = self.found.get("stop")
        if known is not None and known[0] <= i and (known[1] < 0 or known[1] >= i):
            return known[1]
        m = _URL_STOP_RE.search(text, i)
        at = m.start() if m else -1
        self.found["stop"] = (i, at)
        return at


_next_index = per_thread(_NextIndex)


@placeholder_rule("image", 70, "!")
def _image(text: str, i: int):
    found = _image_match(text, i)
    if found is None:
        return None
    alt, url, end = found
    return Placeholder("image", url, alt=alt), end


_SPACE_RUN_RE = re.compile(r"\s*")
_URL_STOP_RE = re.compile(r"[)\s>]")


def _space_end(text: str, i: int) -> int:
    return _SPACE_RUN_RE.match(text, i).end()


def _image_match(text: str, i: int) -> tuple[str, str, int] | None:
    """`_IMAGE_RE.match(text, i)` as (alt, url, end), read by hand in time linear in what it looks
    at: the pattern backtracks through every split of a run of spaces, and is tried at every "!"
    of a paragraph, where each try scanned to the end of a crafted one. Each step below is the
    path the pattern's backtracking takes first (tests/test_security_parsing.py checks the two
    against each other on random text)."""
    if not text.startswith("![", i):
        return None
    index = _next_index()
    k = index.find(text, "]", i + 2)  # `[^\]]*\]`: the first "]"
    if k < 0 or not text.startswith("(", k + 1):
        return None
    alt = text[i + 2:k]
    known = index.images.get(k, False)  # what follows "](" depends on the "]" only, not on "!["
    if known is not False:
        return None if known is None else (alt, *known)
    found = _image_rest(text, k + 2)
    index.images[k] = found
    return None if found is None else (alt, *found)


def _image_rest(text: str, p: int) -> tuple[str, int] | None:
    """(url, end) of what `_IMAGE_RE` reads after its "](", at `p`, or None."""
    index = _next_index()
    w = _space_end(text, p)  # `\s*`, greedy
    g0 = w + 1 if text.startswith("<", w) else w  # `<?`
    q = index.find_stop(text, g0)  # `[^)\s>]*`: to the first ")", space or ">"
    q = len(text) if q < 0 else q
    end = _image_tail(text, q + 1 if text.startswith(">", q) else q)  # `>?`, then the rest
    if end is not None:
        return text[g0:q], end
    # `\s*` gives back its last space: then the URL is empty and the title starts at `w`.
    if w > p and text.startswith('"', w):
        end = _title_tail(text, w)
        if end is not None:
            return "", end
    return None


def _title_tail(text: str, at: int) -> int | None:
    """`"[^"]*"\\s*\\)` at `at` (a '"'): the end, or None."""
    close = _next_index().find(text, '"', at + 1)
    if close < 0:
        return None
    r = _space_end(text, close + 1)
    return r + 1 if text.startswith(")", r) else None


def _image_tail(text: str, r: int) -> int | None:
    """`(?:\\s+"[^"]*")?\\s*\\)` at `r`: the end, or None."""
    r2 = _space_end(text, r)
    if r2 > r and text.startswith('"', r2):
        end = _title_tail(text, r2)
        if end is not None:
            return end
    return r2 + 1 if text.startswith(")", r2) else None


def images_in(text: str) -> list[tuple[int, int, str, str]]:
    """Every `![alt](src …)` of a Markdown text as (start, end, alt, src), as the image rule reads
    them (for the notebooks, which embed the figures they name)."""
    found, i = [], text.find("![")
    while i >= 0:
        match = _image_match(text, i)
        if match is None:
            i = text.find("![", i + 1)
            continue
        alt, url, end = match
        found.append((i, end, alt, url))
        i = text.find("![", end)
    return found
