"""What a build is asked to do: folders, languages, theme, site metadata."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..read.urls import url_problem

DEFAULT_TEMPLATES = Path(__file__).resolve().parent.parent / "theme"  # shipped inside the package

# BCP 47-shaped tags: `en`, `zh`, `pt-BR`, `zh-Hant`. Tags become parts of file and URL paths
# (`zh/…`, `<page>.zh.json`), so nothing else (`..`, `/`, spaces) may get through.
LANG_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


@dataclass
class BuildConfig:
    source: Path
    translations: Path
    out: Path
    langs: tuple[str, ...] = ("en", "zh", "ru")
    base_lang: str = "en"
    templates: Path = DEFAULT_TEMPLATES
    locales: Path | None = None  # extra UI catalogs, <lang>/LC_MESSAGES/messages.po, over the bundled ones
    site_title: str = ""  # default: the home page's title, else "Annotated tutorials" in each language
    site_url: str = ""  # e.g. https://example.org/ — makes hreflang and the sitemap absolute
    edit_url: str = ""  # e.g. https://github.com/o/r/edit/main/translations/ — "help translate" links
    source_url: str = ""  # e.g. https://github.com/o/r/blob/main/src/ — "view on GitHub" links per page and section
    jobs: int = 0  # worker processes for analysis; 0 = one per core when there is enough work
    live_reload: bool = False  # set by `serve`
    cache: bool = True  # reuse unchanged work from the build cache (cache.py says where it lives)
    # Each page also as Markdown (page.html.md) and llms.txt per language, for programs. Off by
    # default: it doubles the files a build writes, a quarter more of a cold build's time.
    markdown: bool = False

    def __post_init__(self) -> None:
        # Pages link to these (hreflang, "View on GitHub", "Help translate"): checked as a browser
        # reads them, so nothing but the http(s) URL written is ever linked (read/urls.py).
        for option, value, example in (
            ("--site-url", self.site_url, "https://example.org/docs/"),
            ("--source-url", self.source_url, "https://github.com/o/r/blob/main/src/"),
            ("--edit-url", self.edit_url, "https://github.com/o/r/edit/main/translations/"),
        ):
            problem = url_problem(value, relative=False, prefix=True) if value else None
            if problem:
                raise UserError(f"{option} {value!r} is refused: {problem}; pass an http(s) URL such as {example}")
        # Also for callers of the library: a language is a path component, so only tags pass.
        for lang in (self.base_lang, *self.langs):
            if not isinstance(lang, str) or not LANG_TAG.fullmatch(lang):
                raise UserError(f"{lang!r} is not a language tag; use codes like en, zh, ru, pt-BR or zh-Hant")
