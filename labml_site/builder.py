"""The build, top to bottom: discover → analyse (once per file) → per language: localize, render → write.

The site is written into a temporary folder next to the output and swapped in at the end, so a
build that fails part-way leaves the previous site as it was.
"""
from __future__ import annotations

import posixpath
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable
from urllib.parse import urlparse

from . import __version__, highlight
from . import cache as build_cache  # incremental builds
from . import notebooks, search_index, sitemap  # reader extras
from .config import BuildConfig
from .findings import Finding, Report
from .i18n import UI, language_name, load_ui
from .localize import LocalPage
from .outputs import (
    cached_output,
    copies_not_links,
    inputs_digest,
    record_build,
    render_page,
    swap_in,
    unchanged_since_last_build,
    write_outputs,
)
from .pages import PageData
from .prepare import LocalText, analyse_pages, link_code_cached, local_page, prepare_pages
from .render import Theme
from .structure import Folder, SiteFiles, SourceFile, breadcrumbs, discover, lang_prefix, relative_url


@dataclass
class BuildResult:
    out: Path
    report: Report
    pages: dict[str, PageData]
    localized: dict[str, dict[str, LocalPage]]  # lang → rel → page
    files_written: int = 0
    seconds: float = 0.0
    stats: build_cache.BuildStats = field(default_factory=build_cache.BuildStats)  # what was computed vs reused

    @property
    def ok(self) -> bool:
        return not self.report.has_errors


def _localized_pages(site: "_Site", lang: str, report: Report) -> dict[str, LocalPage]:
    """Every page in `lang`, from the prepared texts, with its findings reported as warnings."""
    local: dict[str, LocalPage] = {}
    memo = site.cache.memo("local-page") if site.cache else {}  # kept between `serve` rebuilds
    for rel, data in site.pages.items():
        text = site.texts[rel][lang]
        report.extend(_not_fatal(text.catalog_findings))
        report.extend(_not_fatal(text.findings))
        text_key, page_key = site.text_keys.get(rel, {}).get(lang), site.page_keys.get(rel)
        page = memo.get((text_key, page_key)) if text_key and page_key else None
        if page is None:  # (the keys say what the page is made of, so a remembered one is equal)
            page = local_page(data, lang, text)
            if text_key and page_key:
                memo[(text_key, page_key)] = page
        local[rel] = page
        if text_key and page_key:
            # The sections are a function of the page's text and (linked) code, whose keys say
            # what they were made from: renders hash this token instead of the sections' HTML.
            token = build_cache.digest("sections", text_key, page_key)
            site.section_tokens[id(page.sections)] = (page.sections, tuple(page.sections), token)
    return local


def _search_entries(site: "_Site", lang: str, local: dict[str, LocalPage], published: dict[str, str]) -> list:
    """`search_index.entries(local, published)`, from the entries prepared with each page's text."""
    items: list = []
    provenance: list = []  # what determines each page's entries: its text's key, else the entries
    for rel, page in local.items():
        url = published.get(rel)
        if url is None:
            continue
        text = site.texts.get(rel, {}).get(lang)
        text_key = site.text_keys.get(rel, {}).get(lang)
        if text is not None and text.search_url == url:
            items.extend(text.search)
            provenance.append([rel, url, text_key] if text_key else [rel, url, list(text.search)])
        else:
            found = search_index.entries({rel: page}, {rel: url})
            items.extend(found)
            provenance.append([rel, url, found])
    site.search_parts[lang] = (tuple(items), build_cache.value_digest(provenance))
    return items


def _search_index_js(site: "_Site", out_rel: str, lang: str, items: list) -> str | Path:
    """`search_index.index_js(lang, items)`, or last build's file when the items are the same:
    the pages' entries are known by their provenance (`_search_entries`), the rest by value."""
    key = None
    page_items, pages_digest = site.search_parts.get(lang, (None, ""))
    if page_items is not None and len(page_items) <= len(items) and all(a is b for a, b in zip(page_items, items)):
        key = build_cache.digest("search-index", lang, pages_digest, build_cache.value_digest(items[len(page_items):]))
    return cached_output(site, out_rel, key, lambda: search_index.index_js(lang, items))


# ---------------------------------------------------------------------------------------------
# Per language


@dataclass
class _Site:
    """What every page of one language needs to know about the others."""

    config: BuildConfig
    files: SiteFiles
    pages: dict[str, PageData]
    theme: Theme
    site_title: str  # set per language by _render_language
    outputs: dict[str, str | bytes | Path] = field(default_factory=dict)  # out path → content or file to copy
    # Incremental builds (cache.py): prepared texts, the cache, counters, where the site goes.
    texts: dict[str, dict[str, "LocalText"]] = field(default_factory=dict)
    cache: build_cache.BuildCache | None = None
    stats: build_cache.BuildStats = field(default_factory=build_cache.BuildStats)
    out: Path = Path()
    theme_key: str = ""  # the theme's fingerprint
    page_keys: dict[str, str] = field(default_factory=dict)  # rel → key of its (linked) page data
    text_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # rel → lang → key of its text
    section_tokens: dict[int, tuple] = field(default_factory=dict)  # id(sections) → (sections, items, token)
    search_parts: dict[str, tuple[tuple, str]] = field(default_factory=dict)  # lang → (page entries, their digest)
    reused: set[str] = field(default_factory=set)  # outputs that are the previous site's files


def _folder_title(site: _Site, local: dict[str, LocalPage], folder: Folder) -> tuple[str, str]:
    if folder.index and folder.index.rel in local:
        page = local[folder.index.rel]
        return page.title, page.summary
    if not folder.rel:
        return site.site_title, ""
    return posixpath.basename(folder.rel).replace("_", " "), ""


def _children(site: _Site, local: dict[str, LocalPage], folder: Folder, from_url: str) -> list[dict]:
    children = []
    for sub in folder.subfolders:
        sub_folder = site.files.folders[sub]
        title, summary = _folder_title(site, local, sub_folder)
        children.append({"title": title, "summary": summary, "href": relative_url(from_url, sub_folder.url)})
    for page in folder.pages:
        if page.rel in local and page.rel in site.pages and site.pages[page.rel].sections:
            lp = local[page.rel]
            children.append({"title": lp.title, "summary": lp.summary, "href": relative_url(from_url, page.url)})
    return children


def _alternates(site: _Site, url: str, lang: str) -> tuple[list[dict], list[dict]]:
    """hreflang links (absolute when a site URL is known) and the switcher's relative links."""
    alternates, switcher = [], []
    here = lang_prefix(lang, site.config.base_lang) + url
    for other in site.config.langs:
        target = lang_prefix(other, site.config.base_lang) + url
        href = site.config.site_url.rstrip("/") + "/" + target if site.config.site_url else relative_url(here, target)
        alternates.append({"lang": other, "href": href})
        switcher.append(
            {"lang": other, "name": language_name(other), "href": relative_url(here, target), "current": other == lang}
        )
    if site.config.site_url:
        alternates.append({"lang": "x-default", "href": site.config.site_url.rstrip("/") + "/" + url})
    return alternates, switcher


def _base_context(site: _Site, lang: str, ui: UI, url: str, title: str, description: str, local: dict[str, LocalPage]) -> dict:
    here = lang_prefix(lang, site.config.base_lang) + url
    root = relative_url(here, lang_prefix(lang, site.config.base_lang) + "index.html")[: -len("index.html")]
    static = relative_url(here, "static/x")[:-1]
    alternates, languages = _alternates(site, url, lang)
    crumbs = []
    for crumb_url in breadcrumbs(url):
        folder_rel = posixpath.dirname(crumb_url)
        folder = site.files.folders.get(folder_rel)
        crumb_title = _folder_title(site, local, folder)[0] if folder else folder_rel
        crumbs.append({"title": crumb_title, "href": relative_url(url, crumb_url)})
    return {
        "lang": lang,
        "dir": ui.direction,
        "_": ui.gettext,
        "title": title,
        "description": description,
        "site_title": site.site_title,
        "root": root,
        "static": static,
        "alternates": alternates,
        "languages": languages,
        "breadcrumbs": crumbs,
        "og_url": (site.config.site_url.rstrip("/") + "/" + here) if site.config.site_url else "",
        "notice": None,
        "sections": [],
        "children": [],
        "source_href": "",
        "notebook_href": "",
    }


def _not_fatal(findings: Iterable[Finding]) -> list[Finding]:
    """A bad translation never fails the build: its block falls back to English, and the log says
    why. (`build.py check` is where translation errors fail a pull request.)"""
    return [replace(f, severity="warning") if f.severity == "error" else f for f in findings]


def _render_language(site: _Site, lang: str, report: Report) -> dict[str, LocalPage]:
    config = site.config
    ui = load_ui(lang)
    report.extend(ui.findings)
    prefix = lang_prefix(lang, config.base_lang)
    local = _localized_pages(site, lang, report)  # localized by prepare_pages, cached

    # The site's name in this language: as configured, else the home page's title, else the theme's.
    home = site.files.folders.get("")
    home_title = local[home.index.rel].title if home and home.index and home.index.rel in local else ""
    site.site_title = config.site_title or home_title or ui.gettext("Annotated tutorials")

    # Pages
    for file in site.files.pages:
        page = local[file.rel]
        if not page.data.sections and not file.is_index:
            continue  # a file that failed to parse: reported, and not published
        context = _base_context(site, lang, ui, file.url, page.title, page.summary, local)
        context["sections"] = page.sections
        if file.is_index:
            context["children"] = _children(site, local, site.files.folders[file.folder], file.url)
        if lang != config.base_lang and not page.fully_translated:
            tfile = f"{posixpath.basename(str(config.translations))}/{file.base}.{lang}.json"
            context["notice"] = {
                "translated": page.translated_sections,
                "total": page.prose_sections,
                "file": tfile,
                "edit_href": (config.edit_url.rstrip("/") + f"/{file.base}.{lang}.json") if config.edit_url else "",
            }
        if page.data.is_python:
            context["source_href"] = relative_url(prefix + file.url, file.rel)
            context["notebook_href"] = _notebook_href(prefix, file, page.data)
        site.outputs[prefix + file.url] = render_page(site, prefix + file.url, "page.html", context)
        for asset in page.data.assets:
            if asset in site.files.assets:  # missing ones were reported once, after analysis
                site.outputs.setdefault(prefix + asset, site.files.assets[asset].path)

    # Folder indexes that have no source of their own, and the home page
    for folder in site.files.folders.values():
        if folder.index is not None:
            continue
        title, summary = _folder_title(site, local, folder)
        context = _base_context(site, lang, ui, folder.url, title, summary, local)
        context["children"] = _children(site, local, folder, folder.url)
        site.outputs[prefix + folder.url] = render_page(site, prefix + folder.url, "page.html", context)

    # Translation status, 404
    rows, totals = [], {"translated": 0, "total": 0}
    for file in site.files.pages:
        page = local[file.rel]
        blocks = sum(len(s.blocks) for s in page.data.sections)
        counts = page.counts if lang != config.base_lang else {"translated": blocks}
        rows.append({
            "title": page.title,
            "href": file.url,
            "blocks": blocks,
            "translated": counts.get("translated", 0),
            "fuzzy": counts.get("fuzzy", 0),
            "missing": counts.get("missing", 0),
            "invalid": counts.get("invalid", 0),
            "file": f"{file.base}.{lang}.json",
        })
        totals["translated"] += page.translated_sections
        totals["total"] += page.prose_sections
    title = ui.gettext("Translation status") + f" · {language_name(lang)}"
    context = _base_context(site, lang, ui, "translation-status.html", title, "", local)
    context.update(rows=rows, totals=totals)
    site.outputs[prefix + "translation-status.html"] = render_page(site, prefix + "translation-status.html", "status.html", context)
    context = _base_context(site, lang, ui, "404.html", ui.gettext("Page not found"), "", local)
    _not_found_links(site, lang, context)
    site.outputs[prefix + "404.html"] = render_page(site, prefix + "404.html", "404.html", context)
    return local


# ---------------------------------------------------------------------------------------------
# Reader extras: linked code, notebooks, search indexes, sitemap (linking.py, notebooks.py, …)


def _notebook_href(prefix: str, file: SourceFile, data: PageData) -> str:
    if not notebooks.wants_notebook(data):
        return ""
    return relative_url(prefix + file.url, notebooks.notebook_path(file.rel))


def _site_path(site: _Site) -> str:
    """The URL path the site is served under: from --site-url, else the server's root."""
    path = urlparse(site.config.site_url).path if site.config.site_url else "/"
    return path if path.endswith("/") else path + "/"


def _not_found_links(site: _Site, lang: str, context: dict) -> None:
    """A server shows the 404 page at whatever URL was missing, at any depth, so its links and
    styles cannot be relative: they start from the site's path instead."""
    base = _site_path(site)
    root = base + lang_prefix(lang, site.config.base_lang)
    context.update(
        root=root,
        static=base + "static/",
        alternates=[],
        breadcrumbs=[{"title": site.site_title, "href": root + "index.html"}],
        languages=[
            {**alt, "href": base + lang_prefix(alt["lang"], site.config.base_lang) + "index.html"}
            for alt in context["languages"]
        ],
    )


def _published_urls(site: _Site) -> list[str]:
    """Every page and folder listing a language tree has (not 404, search or status pages)."""
    urls = list(_published(site).values())
    urls += [folder.url for folder in site.files.folders.values() if folder.index is None]
    return sorted(set(urls), key=lambda u: (u.count("/"), u))


def _published(site: _Site) -> dict[str, str]:
    """Source rel → URL of every page a language tree has (a file that failed to parse has none)."""
    return {f.rel: f.url for f in site.files.pages if f.is_index or (f.rel in site.pages and site.pages[f.rel].sections)}


def _write_language_extras(site: _Site, lang: str, local: dict[str, LocalPage]) -> None:
    """The language's search index (a script, so it loads from file:// too) and search page."""
    config = site.config
    prefix = lang_prefix(lang, config.base_lang)
    ui = load_ui(lang)
    items = _search_entries(site, lang, local, _published(site))  # prepared per page, cached
    folders = [folder for folder in site.files.folders.values() if folder.index is None]
    items += search_index.folder_entries([(*_folder_title(site, local, f), f.url) for f in folders])
    site.outputs[prefix + "search-index.js"] = _search_index_js(site, prefix + "search-index.js", lang, items)
    context = _base_context(site, lang, ui, "search.html", ui.gettext("Search"), "", local)
    site.outputs[prefix + "search.html"] = render_page(site, prefix + "search.html", "search.html", context)


def _write_site_extras(site: _Site) -> None:
    """Language-free extras: a notebook per Python page, and the sitemap when URLs are known."""
    config = site.config
    for file in site.files.pages:
        data = site.pages.get(file.rel)
        if data is not None and notebooks.wants_notebook(data):
            key = build_cache.digest("notebook", site.page_keys[file.rel]) if file.rel in site.page_keys else None
            site.outputs[notebooks.notebook_path(file.rel)] = cached_output(site, notebooks.notebook_path(file.rel), key, lambda data=data: notebooks.notebook_json(data))
    if config.site_url:  # sitemaps need absolute URLs; without --site-url there is none
        site.outputs["sitemap.xml"] = sitemap.sitemap_xml(config.site_url, _published_urls(site), config.langs, config.base_lang)


def build(config: BuildConfig) -> BuildResult:
    started = time.perf_counter()
    report = Report()
    theme = Theme(config.templates)
    files = discover(config.source)
    out = Path(config.out).resolve()
    cache = build_cache.BuildCache.open(out, enabled=config.cache, keep_in_memory=config.live_reload)
    stats = build_cache.BuildStats()
    prepared = prepare_pages(files, config, cache, stats)
    pages = prepared.pages
    for page in pages.values():
        report.extend(page.findings)
        for asset in page.assets:
            if asset not in files.assets:
                report.add(Finding("warning", "asset-missing", f"references {asset}, which does not exist under the source folder; add the file or fix the path", path=page.rel))

    pages, page_keys = link_code_cached(pages, prepared.keys, cache, stats)

    site = _Site(config, files, pages, theme, config.site_title)
    site.texts, site.cache, site.stats, site.out, site.theme_key = prepared.texts, cache, stats, out, theme.fingerprint()
    site.page_keys, site.text_keys = page_keys, prepared.text_keys
    inputs = inputs_digest(site, prepared)
    last = unchanged_since_last_build(site, inputs)
    if last is not None:  # the site on disk is exactly what this build would write
        stats.site_unchanged = True
        localized = {lang: _localized_pages(site, lang, Report()) for lang in config.langs}
        return BuildResult(out, Report(list(last.findings)), pages, localized, 0, time.perf_counter() - started, stats)

    localized = {}
    for lang in config.langs:
        localized[lang] = _render_language(site, lang, report)
        _write_language_extras(site, lang, localized[lang])  # while site.site_title is this language's
    _write_site_extras(site)

    for file in files.pages:
        if file.suffix == ".py":
            site.outputs[file.rel] = file.path  # "View source" downloads exactly the code the page shows
    for path in sorted(p for p in theme.static_dir.rglob("*") if p.is_file()):
        site.outputs["static/" + path.relative_to(theme.static_dir).as_posix()] = path
    site.outputs["static/pygments.css"] = highlight.stylesheet()

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    try:
        copies_not_links(site)
        written = write_outputs(site.outputs, tmp)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    cache.finish(out)
    record_build(site, inputs, report)
    return BuildResult(out, report, pages, localized, written, time.perf_counter() - started, stats)


__all__ = ["BuildConfig", "BuildResult", "build", "analyse_pages", "swap_in", "__version__"]
