"""URLs as a browser reads them, and which ones the builder may write.

A URL an author or a translator writes reaches a browser's URL parser (WHATWG URL), which does not
read it as the text says: it drops C0 controls and spaces at both ends and tabs and newlines
anywhere (`\\x01java\\tscript:` is `javascript:`), reads `\\` as `/` in http(s) and file URLs
(`/\\host` is `//host`: another host), and takes any run of ASCII letters, digits, `+`, `-`, `.`
that starts with a letter and ends in `:` for a scheme (`a:b.html` is the scheme `a:`). A check
that looks at the text as written misses all of these, so every check of a URL goes through
`browser_reads` first, and what the builder itself writes from front matter or options must pass
`url_problem`, which refuses anything a browser could read otherwise than as written.
"""
from __future__ import annotations

import re

_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# The spellings of "another host" at the start of a relative URL (`\` is `/` to a browser).
_OTHER_HOST_STARTS = frozenset({"//", "\\\\", "/\\", "\\/"})
# A host name (or an IP literal) and an optional port: no user info (`good@evil`), nothing that
# ends the authority early or that a browser rewrites.
_AUTHORITY_RE = re.compile(r"(?:[^\x00-\x20\x7f/\\?#@:\[\]%<>\"'`^{|}]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")
# Characters that never belong in a URL the builder writes: controls and spaces (the browser
# drops or reads them), a backslash (read as "/"), markup.
_NEVER_IN_URL_RE = re.compile(r"[\x00-\x20\x7f\\<>\"'`]")
WEB_SCHEMES = ("http", "https")
# A character reference, which HTML decodes before the URL parser sees the value
# (`&#106;avascript:` is `javascript:` wherever it reaches an attribute unescaped).
_CHARACTER_REFERENCE_RE = re.compile(r"&(?:#|[A-Za-z][A-Za-z0-9]*;)")


def browser_reads(url: str) -> str:
    """The URL a browser uses for this attribute value (entities already decoded): tabs and
    newlines removed anywhere, C0 controls and spaces at the ends (the WHATWG URL parser)."""
    return url.replace("\t", "").replace("\n", "").replace("\r", "").strip(_C0_AND_SPACE)


def scheme_of(url: str) -> str | None:
    """The scheme a browser finds in `url` (lower case), or None for a relative URL."""
    m = SCHEME_RE.match(browser_reads(url))
    return m.group(0)[:-1].lower() if m else None


def starts_other_host(url: str) -> bool:
    """`//host/…` and the backslash spellings browsers read the same way: another host."""
    return browser_reads(url)[:2] in _OTHER_HOST_STARTS


# Schemes whose URL runs script or carries a document of its own when followed.
SCRIPT_SCHEMES = frozenset({"javascript", "vbscript", "data"})


def script_scheme(url: str) -> str | None:
    """The script-running scheme a browser finds in `url` (controls anywhere dropped, as some
    browsers' older parsers did), or None."""
    m = SCHEME_RE.match(re.sub(r"[\x00-\x20\x7f]", "", browser_reads(url)))
    scheme = m.group(0)[:-1].lower() if m else None
    return scheme if scheme in SCRIPT_SCHEMES else None


def url_problem(value: str, relative: bool = True, prefix: bool = False) -> str | None:
    """Why the builder must not write `value` as a link target (None when it may).

    Allowed: an `http(s)://host[:port]/…` URL with a plain host (no user info), and, when
    `relative`, a path (`page.html`, `../a/b.html`, `/a.html`, `#x`) whose first segment has no
    `:` (write `./a:b.html`). Nothing a browser reads otherwise than as written: no controls or
    spaces anywhere, no backslash, no quotes or angle brackets. With `prefix` (a URL that paths
    are appended to: `--site-url`), no query or fragment either."""
    if not value:
        return "it is empty"
    bad = _NEVER_IN_URL_RE.search(value)
    if bad:
        c = bad.group(0)
        if c == "\\":
            return "it holds a backslash, which a browser reads as '/'"
        if c <= " " or c == "\x7f":
            return f"it holds {'a space' if c == ' ' else f'the control character U+{ord(c):04X}'}, which a browser drops or reads otherwise"
        return f"it holds {c!r}, which belongs to markup, not to a URL"
    if _CHARACTER_REFERENCE_RE.search(value):
        return "it holds a character reference (&…;), which HTML decodes; write the character itself"
    m = SCHEME_RE.match(value)
    if m:
        scheme = m.group(0)[:-1].lower()
        if scheme not in WEB_SCHEMES:
            return f"{scheme}: URLs are not allowed, only http(s)"
        rest = value[m.end():]
        if not rest.startswith("//"):
            return f"write {scheme}://host/…: without '//' a browser reads the host as a path or as another host"
        authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
        if not _AUTHORITY_RE.fullmatch(authority):
            return "its host is not a plain host name with an optional port (empty, or with user@ in front)"
        if prefix and re.search(r"[?#]", rest):
            return "paths are appended to it, so it cannot have a query (?) or a fragment (#)"
        return None
    if not relative:
        return "it must be an absolute http(s):// URL"
    if value.startswith("//"):
        return "'//' starts another host; write https://host/… for another site"
    first = re.split(r"[/?#]", value, maxsplit=1)[0]
    if ":" in first:
        return "a browser reads the text before ':' as a scheme; write ./ in front for a path"
    return None
