"""The build, top to bottom: discover → analyse (once per file) → per language: localize, render → write.

The site is written into a temporary folder next to the output and swapped in at the end, so a
build that fails part-way leaves the previous site as it was.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable
from urllib.parse import urlparse

from . import __version__, highlight
from . import linking, notebooks, search_index, sitemap  # reader extras
from .findings import Finding, Report
from .i18n import UI, language_name, load_ui
from .localize import LocalPage, localize
from .pages import PageData, analyse
from .render import DEFAULT_TEMPLATES, Theme
from .structure import (
    Folder,
    SiteFiles,
    SourceFile,
    breadcrumbs,
    discover,
    lang_prefix,
    relative_url,
    translation_path,
)
from .translations import Catalog


@dataclass
class BuildConfig:
    source: Path
    translations: Path
    out: Path
    langs: tuple[str, ...] = ("en", "zh", "ru")
    base_lang: str = "en"
    templates: Path = DEFAULT_TEMPLATES
    site_title: str = ""  # default: the home page's title
    site_url: str = ""  # e.g. https://example.org/ — makes hreflang and the sitemap absolute
    edit_url: str = ""  # e.g. https://github.com/o/r/edit/main/translations/ — "help translate" links
    jobs: int = 0  # worker processes for analysis; 0 = one per core when there is enough work
    live_reload: bool = False  # set by `serve`


@dataclass
class BuildResult:
    out: Path
    report: Report
    pages: dict[str, PageData]
    localized: dict[str, dict[str, LocalPage]]  # lang → rel → page
    files_written: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.report.has_errors


# ---------------------------------------------------------------------------------------------
# Analysis: once per source file, language-free, in worker processes when there is enough work.


def _analyse_file(args: tuple[str, str, str]) -> PageData:
    rel, url, path = args
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        return PageData(rel, url, posixpath.basename(rel), "", (), (), (), (
            Finding("error", "source-encoding", f"not UTF-8 ({e.reason} at byte {e.start}); save the file as UTF-8", path=rel),
        ))
    return analyse(rel, url, text)


def analyse_pages(files: Iterable[SourceFile], jobs: int = 0) -> dict[str, PageData]:
    work = [(f.rel, f.url, str(f.path)) for f in files]
    cores = os.cpu_count() or 1
    workers = jobs or (cores if len(work) >= 24 else 1)
    if workers <= 1:
        results = [_analyse_file(w) for w in work]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_analyse_file, work, chunksize=max(1, len(work) // (workers * 4))))
    return {page.rel: page for page in results}


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
    marker = ui.gettext("Not yet translated")
    local: dict[str, LocalPage] = {}
    by_rel = {f.rel: f for f in site.files.pages}
    for rel, data in site.pages.items():
        file = by_rel[rel]
        catalog = None
        if lang != config.base_lang:
            catalog = Catalog.load(translation_path(config.translations, file, lang), lang)
            report.extend(_not_fatal(catalog.findings))
        page = localize(data, lang, catalog, marker)
        report.extend(_not_fatal(page.findings))
        local[rel] = page

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
        site.outputs[prefix + file.url] = site.theme.render("page.html", **context)
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
        site.outputs[prefix + folder.url] = site.theme.render("page.html", **context)

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
    site.outputs[prefix + "translation-status.html"] = site.theme.render("status.html", **context)
    context = _base_context(site, lang, ui, "404.html", ui.gettext("Page not found"), "", local)
    _not_found_links(site, lang, context)
    site.outputs[prefix + "404.html"] = site.theme.render("404.html", **context)
    return local


# ---------------------------------------------------------------------------------------------
# Reader extras: linked code, notebooks, search indexes, sitemap (linking.py, notebooks.py, …)


def _link_code(pages: dict[str, PageData]) -> dict[str, PageData]:
    """Names in the code link to the sections defining them: once per build, language-free,
    after analysis (and after any cache), because a page's links depend on the other pages."""
    return linking.link_code(pages)


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
    urls = [f.url for f in site.files.pages if f.is_index or (f.rel in site.pages and site.pages[f.rel].sections)]
    urls += [folder.url for folder in site.files.folders.values() if folder.index is None]
    return sorted(set(urls), key=lambda u: (u.count("/"), u))


def _write_reader_extras(site: _Site, localized: dict[str, dict[str, LocalPage]]) -> None:
    config = site.config
    published = {f.rel: f.url for f in site.files.pages if f.is_index or (f.rel in site.pages and site.pages[f.rel].sections)}
    for lang, local in localized.items():
        prefix = lang_prefix(lang, config.base_lang)
        ui = load_ui(lang)
        items = search_index.entries(local, published)
        folders = [folder for folder in site.files.folders.values() if folder.index is None]
        items += search_index.folder_entries([(*_folder_title(site, local, f), f.url) for f in folders])
        site.outputs[prefix + "search-index.js"] = search_index.index_js(lang, items)
        context = _base_context(site, lang, ui, "search.html", ui.gettext("Search"), "", local)
        site.outputs[prefix + "search.html"] = site.theme.render("search.html", **context)
    for file in site.files.pages:
        data = site.pages.get(file.rel)
        if data is not None and notebooks.wants_notebook(data):
            site.outputs[notebooks.notebook_path(file.rel)] = notebooks.notebook_json(data)
    if config.site_url:  # sitemaps need absolute URLs; without --site-url there is none
        site.outputs["sitemap.xml"] = sitemap.sitemap_xml(config.site_url, _published_urls(site), config.langs, config.base_lang)


# ---------------------------------------------------------------------------------------------
# Writing


def _write_outputs(outputs: dict[str, str | bytes | Path], root: Path) -> int:
    made: set[Path] = set()
    for rel, content in outputs.items():
        target = root / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        if isinstance(content, Path):
            try:
                os.link(content, target)  # cheap, and the source is never written through
            except OSError:
                shutil.copy2(content, target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return len(outputs)


def swap_in(new: Path, out: Path) -> None:
    """Replace `out` by `new` with two renames, so readers never see a half-written site."""
    old = out.with_name(f".{out.name}-old-{os.getpid()}")
    if out.exists():
        out.rename(old)
    new.rename(out)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def build(config: BuildConfig) -> BuildResult:
    started = time.perf_counter()
    report = Report()
    theme = Theme(config.templates)
    files = discover(config.source)
    pages = analyse_pages(files.pages, config.jobs)
    for page in pages.values():
        report.extend(page.findings)
        for asset in page.assets:
            if asset not in files.assets:
                report.add(Finding("warning", "asset-missing", f"references {asset}, which does not exist under the source folder; add the file or fix the path", path=page.rel))

    pages = _link_code(pages)

    site = _Site(config, files, pages, theme, config.site_title)

    localized = {}
    for lang in config.langs:
        localized[lang] = _render_language(site, lang, report)
    _write_reader_extras(site, localized)

    for file in files.pages:
        if file.suffix == ".py":
            site.outputs[file.rel] = file.path  # "View source" downloads exactly the code the page shows
    for path in sorted(p for p in theme.static_dir.rglob("*") if p.is_file()):
        site.outputs["static/" + path.relative_to(theme.static_dir).as_posix()] = path
    site.outputs["static/pygments.css"] = highlight.stylesheet()

    out = Path(config.out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    try:
        written = _write_outputs(site.outputs, tmp)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return BuildResult(out, report, pages, localized, written, time.perf_counter() - started)


__all__ = ["BuildConfig", "BuildResult", "build", "analyse_pages", "swap_in", "__version__"]
