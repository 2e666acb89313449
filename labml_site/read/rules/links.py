"""`[label](url "title")` links, with balanced brackets in the label and parentheses in the URL,
as Python-Markdown reads them; emphasis never applies inside a link target."""
from __future__ import annotations

import html
import re

from ..urls import script_scheme
from . import inline_rule, kept_text


_PARENS_RE = re.compile(r"[()]")
_BRACKETS_RE = re.compile(r"[\[\]]")
_TITLED_URL_RE = re.compile(r'^(\S*)\s+&quot;(.*)&quot;$', re.S)


def _closing(text: str, i: int, delimiters: re.Pattern[str]) -> int:
    """Index of the delimiter that closes the one opening at text[i], counting nested pairs;
    -1 when it is never closed. Jumps between delimiters: URLs and labels are mostly neither."""
    opener, depth = text[i], 0
    for m in delimiters.finditer(text, i):
        if text[m.start()] == opener:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _matching(text: str, delimiters: re.Pattern[str]) -> dict[int, int]:
    """opener index → the index of the delimiter that closes it (`_closing` for every opener at
    once, by one pass with a stack): a paragraph of unclosed "[" made `_closing` scan to the end
    from each of them."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for m in delimiters.finditer(text):
        if text[m.start()] in "[(":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def _link_end(text: str, i: int, parens: dict[int, int] | None = None) -> "tuple[str, str | None, int] | None":
    """Parse `(url "title")` at text[i] with balanced parentheses inside the URL, like
    Python-Markdown; returns (url, title, end) or None (then it is not a link). `parens`: the
    text's `_matching` parentheses, when known."""
    j = _closing(text, i, _PARENS_RE) if parens is None else parens.get(i, -1)
    if j < 0:
        return None
    inner = text[i + 1:j].strip()
    title = None
    m = _TITLED_URL_RE.match(inner)
    if m:
        inner, title = m.group(1), m.group(2)
    if inner.startswith("<") and inner.endswith(">"):
        inner = inner[1:-1]
    if "\n" in inner or inner.count("(") != inner.count(")"):  # spaces may be in a URL, as in Python-Markdown
        return None
    return inner, title, j + 1


_HIDE_URL_CHARS = str.maketrans({"_": "\ue006", "*": "\ue007"})
_SHOW_URL_CHARS = str.maketrans({"\ue006": "_", "\ue007": "*"})

# Links nested in link labels deeper than this are left as text (no page has more than one level;
# the limit keeps a crafted paragraph from exhausting the stack).
MAX_LINK_NESTING = 32


@inline_rule("links", 100)
def _links(text: str, depth: int = 0) -> str:
    if "[" not in text or depth > MAX_LINK_NESTING:
        return text
    brackets = _matching(text, _BRACKETS_RE)  # the matching ], allowing nested brackets
    parens: dict[int, int] | None = None
    out: list[str] = []
    i = 0
    while True:
        start = text.find("[", i)
        if start < 0:
            break
        j = brackets.get(start, -1)
        if j < 0 or not text.startswith("(", j + 1):
            out.append(text[i:start + 1])
            i = start + 1
            continue
        if parens is None:
            parens = _matching(text, _PARENS_RE)
        parsed = _link_end(text, j + 1, parens)
        if parsed is None:
            out.append(text[i:start + 1])
            i = start + 1
            continue
        url, title, end = parsed
        if script_scheme(html.unescape(kept_text().resolve(url))):
            # a target that runs script when followed is never written: the label alone
            # (typeset's check_author_html reports it at its line)
            out.append(text[i:start])
            out.append(_links(text[start + 1:j], depth + 1))
            i = end
            continue
        # emphasis never applies inside a link target (`samples/__init__.py`): its `_` and `*`
        # are hidden from the later rules and restored after them (`_URL_CHARS`)
        url = url.translate(_HIDE_URL_CHARS)
        label = _links(text[start + 1:j], depth + 1)
        title_attr = f' title="{title}"' if title is not None else ""
        out.append(text[i:start])
        out.append(f'<a href="{url}"{title_attr}>{label}</a>')
        i = end
    out.append(text[i:])
    return "".join(out)


@inline_rule("link_targets", 10)
def _link_targets(text: str) -> str:
    """The `_` and `*` of link targets back, once every rule that could take them for emphasis ran."""
    if "\ue006" in text or "\ue007" in text:
        return text.translate(_SHOW_URL_CHARS)
    return text
