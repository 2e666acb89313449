"""`$$…$$` and `$…$`: display and inline math placeholders (`\\$` inside math is a dollar sign)."""
from __future__ import annotations

from . import Placeholder, placeholder_rule


@placeholder_rule("display_math", 90, "$")
def _display_math(text: str, i: int):
    if not text.startswith("$$", i):
        return None
    j = text.find("$$", i + 2)
    if j < 0 or not text[i + 2:j].strip():
        return None
    return Placeholder("display_math", text[i + 2:j]), j + 2


@placeholder_rule("inline_math", 80, "$")
def _inline_math(text: str, i: int):
    if text.startswith("$$", i):
        return None
    j = i + 1
    while True:
        j = text.find("$", j)
        if j < 0:
            return None
        if text[j - 1] == "\\":  # \$ inside math is a dollar sign, not the closing delimiter
            j += 1
            continue
        break
    if not text[i + 1:j].strip():
        return None
    return Placeholder("math", text[i + 1:j]), j + 1
