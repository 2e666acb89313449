"""Outputs made of one source file each, or of the site's list of pages: SVG figures as a
language shows them, notebooks, the sitemap."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

from .. import figures, notebooks, sitemap
from ..localize import label_translator
from .base import Output, Site


@dataclass(frozen=True)
class Figure(Output):
    """An SVG figure as `lang` shows it: without what could run script or load from elsewhere
    (svg_safety.py), dark-mode colours added, its labels looked up in the translation file of
    the first page that shows it (figures.py)."""

    lang: str
    asset: str
    file: str  # the digest of the figure's bytes
    rel: str  # the page whose translations label it
    text: str  # the digest of that page's text ("" in the base language)

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        prefix, base = site.language(lang).prefix, site.config.base_lang
        seen: set[str] = set()
        for file in site.files.pages:
            if not site.published(file):
                continue
            for asset in site.heads[file.rel].assets:
                if asset.lower().endswith(".svg") and asset not in seen and site.publishable_figure(asset):
                    seen.add(asset)
                    text = site.text_digest(file.rel, lang) if lang != base else ""
                    yield prefix + asset, cls(lang, asset, site.file_digest_of_asset(asset), file.rel, text), file.rel

    def render(self, site: Site) -> bytes:
        catalog = site.figure_catalog(self.rel, self.lang) if self.text else None
        svg = figures.published_svg(site.asset_text(self.asset), self.asset, label_translator(catalog))
        return b"" if svg is None else svg.encode("utf-8")  # (refused figures are not published: `publishable_figure`)


@dataclass(frozen=True)
class Notebook(Output):
    """A Python page's .ipynb (it reads the page's code and prose, not the linked HTML, and the
    bytes of the figures it embeds)."""

    rel: str
    analysis: str  # the digest of its analysis
    figures: str  # the digest of what it embeds (the figures' bytes: `site.notebook_figures`)

    per_language = False

    @classmethod
    def describe(cls, site: Site, lang: None = None) -> Iterator[tuple[str, Output, str]]:
        base = site.config.base_lang
        for file in site.files.pages:
            if site.heads[file.rel].notebook:
                figures = site.notebook_figures(file.rel, base)
                yield notebooks.notebook_path(file.rel), cls(file.rel, site.analysis_digest(file.rel), figures), ""

    def render(self, site: Site) -> str:
        return site.notebook(self.rel)


@dataclass(frozen=True)
class Sitemap(Output):
    """`sitemap.xml`, when the site's URL is known (a sitemap needs absolute URLs)."""

    site_url: str
    urls: tuple[str, ...]
    langs: tuple[str, ...]
    base_lang: str

    per_language = False
    cached: ClassVar[bool] = False  # (small: made every build)

    @classmethod
    def describe(cls, site: Site, lang: None = None) -> Iterator[tuple[str, Output, str]]:
        config = site.config
        if config.site_url:
            urls = [f.url for f in site.files.pages if site.published(f)]
            urls += [folder.url for folder in site.files.folders.values() if folder.index is None]
            urls = sorted(set(urls), key=lambda u: (u.count("/"), u))
            yield "sitemap.xml", cls(config.site_url, tuple(urls), tuple(config.langs), config.base_lang), ""

    def render(self, site: Site) -> str:
        return sitemap.sitemap_xml(self.site_url, list(self.urls), self.langs, self.base_lang)
