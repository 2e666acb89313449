"""`sitemap.xml` with `hreflang` alternates, so search engines find every language of a page.

Sitemaps require absolute URLs, so the sitemap is written only when the build knows where the
site will live (`--site-url`); without it there is no sitemap rather than a wrong one.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..read.structure import url_path

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"


def absolute(site_url: str, path: str) -> str:
    return site_url.rstrip("/") + "/" + path.lstrip("/")


def sitemap_xml(site_url: str, urls: Iterable[str], langs: Sequence[str], base_lang: str) -> str:
    """One `<url>` per page per language; each lists every language (and x-default) as alternates.

    `urls` are page URLs under a language root ("annotated_attention/mha.html"); the base
    language lives at the root and the others under "<lang>/".
    """
    if not site_url:
        raise ValueError("a sitemap needs absolute URLs: pass --site-url https://…/")

    def located(lang: str, url: str) -> str:
        # Sitemaps want URLs percent-encoded; a file name may have spaces or non-ASCII letters.
        return absolute(site_url, url_path(("" if lang == base_lang else f"{lang}/") + url))

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{XHTML_NS}">',
    ]
    for url in urls:
        alternates = [
            f"    <xhtml:link rel=\"alternate\" hreflang={quoteattr(lang)} href={quoteattr(located(lang, url))}/>"
            for lang in langs
        ]
        alternates.append(
            f"    <xhtml:link rel=\"alternate\" hreflang=\"x-default\" href={quoteattr(located(base_lang, url))}/>"
        )
        for lang in langs:
            out.append("  <url>")
            out.append(f"    <loc>{_escape(located(lang, url))}</loc>")
            out.extend(alternates)
            out.append("  </url>")
    out.append("</urlset>")
    return "\n".join(out) + "\n"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """`xml.sax.saxutils.quoteattr`, whose module imports urllib.request, http.client, email
    and ssl (~8 ms of every build's start) for functions a sitemap never calls."""
    text = _escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' in text:
        if "'" in text:
            return '"' + text.replace('"', "&quot;") + '"'
        return "'" + text + "'"
    return '"' + text + '"'

