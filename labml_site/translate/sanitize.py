"""The last gate for translated HTML: an allowlist sanitizer built on nh3 (ammonia/html5ever).

`checks.py` decides whether a translation is acceptable and tells the translator why not; this
module makes sure that whatever reaches a page holds nothing but the markup the prose format
produces, even if a check has a gap.  Its allowlists are the prose vocabulary's
(`read/markup.py`), which the checks compare against too, so the two never disagree about what
is allowed.

nh3 serialises `<span translate=no>` as `<span translate="no">`; we turn it back into the bare form
so that every placeholder is found again (`markup.canonical_placeholders`).
"""
from __future__ import annotations

import re
import threading
from collections.abc import Collection

import nh3

from ..read.markup import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    CELL_ALIGN_VALUES,
    DROP_WITH_CONTENT,
    SPAN_TRANSLATE_VALUES,
    URL_ATTRIBUTES,
    URL_SCHEMES,
    canonical_placeholders,
)
from ..read.urls import browser_reads, starts_other_host

# C0 controls other than tab, newline, carriage return: never meaningful in prose, and some
# parsers disagree about them.
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# The URL a browser would actually use for an attribute value (already entity-decoded), and
# whether it loads from another host: one definition, read/urls.py.
normalise_url = browser_reads
is_protocol_relative = starts_other_host


# The allowed hrefs and ids of the `sanitize` call running in this thread, for `_keep`: nh3 calls
# the attribute filter back in the calling thread, so one prebuilt cleaner serves every call
# (building nh3's configuration once, not per block, halves the time spent in nh3).
_CALL = threading.local()


def _keep(tag: str, attr: str, value: str) -> str | None:
    urls, ids = getattr(_CALL, "allowed", (None, None))
    if "<" in value or ">" in value:
        return None  # markup in an attribute is a mutation-XSS classic; prose never has it
    if attr in URL_ATTRIBUTES:
        if is_protocol_relative(value):
            return None
        if urls is not None and normalise_url(value) not in urls:
            return None
    if attr == "id" and ids is not None and value not in ids:
        return None
    return value


# Built from the allowlists above when the module loads; they are frozen, so it cannot go stale.
_OPTIONS = dict(
    tags=set(ALLOWED_TAGS),
    clean_content_tags=set(DROP_WITH_CONTENT),
    attributes={tag: set(attrs) for tag, attrs in ALLOWED_ATTRIBUTES.items()},
    tag_attribute_values={
        "span": {"translate": set(SPAN_TRANSLATE_VALUES)},
        "th": {"align": set(CELL_ALIGN_VALUES)},
        "td": {"align": set(CELL_ALIGN_VALUES)},
    },
    url_schemes=set(URL_SCHEMES),
    attribute_filter=_keep,
    strip_comments=True,
    link_rel="noopener noreferrer",
)
# nh3 releases before `Cleaner` existed build the same configuration on every call instead.
_CLEANER = nh3.Cleaner(**_OPTIONS) if hasattr(nh3, "Cleaner") else None


def _clean(html: str) -> str:
    return _CLEANER.clean(html) if _CLEANER is not None else nh3.clean(html, **_OPTIONS)


def sanitize(
    html: str,
    *,
    allowed_urls: Collection[str] | None = None,
    allowed_ids: Collection[str] | None = None,
) -> str:
    """Return `html` reduced to the prose allowlist.

    `allowed_urls` / `allowed_ids`: when given (the hrefs and ids of the English block), any other
    href or id is dropped, so a translation cannot add a link target or clobber a DOM id even if
    the checks were bypassed.  Protocol-relative URLs (`//evil`) are always dropped.
    """
    urls = None if allowed_urls is None else {normalise_url(u) for u in allowed_urls}
    ids = None if allowed_ids is None else set(allowed_ids)
    outer = getattr(_CALL, "allowed", (None, None))
    _CALL.allowed = (urls, ids)
    try:
        cleaned = _clean(_C0.sub("", html))
    finally:
        _CALL.allowed = outer
    return canonical_placeholders(cleaned)
