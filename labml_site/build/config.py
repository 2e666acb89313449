"""What a build is asked to do: folders, languages, theme, site metadata."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..render.theme import DEFAULT_TEMPLATES


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
    jobs: int = 0  # worker processes for analysis; 0 = one per core when there is enough work
    live_reload: bool = False  # set by `serve`
    cache: bool = True  # reuse unchanged work from <out parent>/.<out name>-cache/ (cache.py)
