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
from typing import Callable, Iterable
from urllib.parse import urlparse

from . import __version__, highlight
from . import cache as build_cache  # incremental builds
from . import linking, notebooks, search_index, sitemap  # reader extras
from .findings import Finding, Report
from .i18n import UI, language_name, load_ui
from .localize import LocalPage, LocalSection, localize
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
from .translations import Catalog, fuzzy_path

_relpath_url = relative_url


def relative_url(from_url: str, to_url: str) -> str:
    """`structure.relative_url`, faster: every page's context asks for a dozen links, and
    posixpath.relpath makes both paths absolute first. For the clean relative URLs the builder
    makes (no empty, "." or ".." segments) the answer is plain list work; anything else goes to
    the original."""
    start = from_url.rpartition("/")[0]
    start_parts = start.split("/") if start else []
    to_parts = to_url.split("/")
    if _UNCLEAN_SEGMENTS.intersection(start_parts) or _UNCLEAN_SEGMENTS.intersection(to_parts):
        return _relpath_url(from_url, to_url)
    i, n = 0, min(len(start_parts), len(to_parts))
    while i < n and start_parts[i] == to_parts[i]:
        i += 1
    parts = [".."] * (len(start_parts) - i) + to_parts[i:]
    return "/".join(parts) if parts else "."


_UNCLEAN_SEGMENTS = frozenset(("", ".", ".."))


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
    cache: bool = True  # reuse unchanged work from <out parent>/.<out name>-cache/ (cache.py)


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


# ---------------------------------------------------------------------------------------------
# Analysis: once per source file, language-free, in worker processes when there is enough work.


def _analyse_file(args: tuple[str, str, str]) -> PageData:
    rel, url, path = args
    return _analyse_source(rel, url, Path(path).read_bytes())


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
# Incremental, parallel preparation (cache.py): for each source file, its analysis and its text in
# every language (with its search entries), reused from the cache when none of their inputs
# changed, else computed in worker processes when there is enough work.

PARALLEL_MIN_FILES = 24  # below this, starting workers costs more than it saves


@dataclass(frozen=True)
class LocalText:
    """A page in one language without its code: what `localize` produced, in a form that is
    cheap to cache and to send between processes. Code is left out because linking (which
    depends on every page) changes it after this is computed."""

    title: str
    summary: str
    sections: tuple[tuple[str, bool], ...]  # (prose HTML, every block translated) per section
    counts: dict[str, int]
    findings: tuple[Finding, ...]  # lookups' findings
    catalog_findings: tuple[Finding, ...]  # the translation file's own (load-time) findings
    search_url: str | None = None  # the URL `search` was computed for; None: not published
    search: tuple = ()  # this page's search_index entries in this language


def local_text(page: LocalPage, catalog_findings: Iterable[Finding] = (), search_url: str | None = None, search: Iterable = ()) -> LocalText:
    return LocalText(
        page.title,
        page.summary,
        tuple((s.prose_html, s.translated) for s in page.sections),
        dict(page.counts),
        tuple(page.findings),
        tuple(catalog_findings),
        search_url,
        tuple(search),
    )


def local_page(data: PageData, lang: str, text: LocalText) -> LocalPage:
    """The `LocalPage` that `localize` returns, rebuilt around (possibly linked) page data."""
    sections = [
        LocalSection(s.id, prose, s.code_html, s.code_start, s.code_end, translated, s.has_prose)
        for s, (prose, translated) in zip(data.sections, text.sections)
    ]
    return LocalPage(data, lang, text.title, text.summary, sections, dict(text.counts), list(text.findings))


@dataclass(frozen=True)
class _LangJob:
    lang: str
    catalog: str | None  # the translation file; None for the base language
    catalog_digest: str  # of the file and its fuzzy sidecar, as read when the key was made
    marker: str  # "Not yet translated" in this language
    key: str


@dataclass(frozen=True)
class _FileJob:
    rel: str
    url: str
    is_index: bool
    source: bytes  # exactly the bytes `key` was computed from
    key: str
    data: PageData | None  # the cached analysis, when only some languages are missing
    langs: tuple[_LangJob, ...]


@dataclass
class Prepared:
    pages: dict[str, PageData]  # in discovery order
    texts: dict[str, dict[str, LocalText]]  # rel → lang → text
    keys: dict[str, str]  # rel → cache key of its analysis
    text_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # rel → lang → key of its text


def _analyse_source(rel: str, url: str, source: bytes) -> PageData:
    try:
        # Universal newlines, as Path.read_text does.
        text = source.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as e:
        return PageData(rel, url, posixpath.basename(rel), "", (), (), (), (
            Finding("error", "source-encoding", f"not UTF-8 ({e.reason} at byte {e.start}); save the file as UTF-8", path=rel),
        ))
    return analyse(rel, url, text)


def _catalog_files(path: Path) -> list[Path]:
    """What `Catalog.load` reads: the translation file and its fuzzy sidecar."""
    return [path, fuzzy_path(path)]


def _prepare_file(job: _FileJob, store: build_cache.ObjectStore | None) -> tuple[PageData | None, dict[str, LocalText]]:
    """Analyse (unless cached) and localize one file; runs in a worker process or inline."""
    analysed = job.data is None
    data = _analyse_source(job.rel, job.url, job.source) if analysed else job.data
    if analysed and store is not None:
        store.put(job.key, data)
    published = job.is_index or bool(data.sections)
    texts: dict[str, LocalText] = {}
    for lj in job.langs:
        catalog = Catalog.load(Path(lj.catalog), lj.lang) if lj.catalog is not None else None
        page = localize(data, lj.lang, catalog, lj.marker)
        search = search_index.entries({job.rel: page}, {job.rel: job.url}) if published else []
        text = local_text(page, catalog.findings if catalog else (), job.url if published else None, search)
        texts[lj.lang] = text
        # Cache it only if the translation file is still what the key was computed from.
        if store is not None and (lj.catalog is None or build_cache.files_digest(_catalog_files(Path(lj.catalog))) == lj.catalog_digest):
            store.put(lj.key, text)
    return (data if analysed else None), texts


def _prepare_job(args: tuple[_FileJob, build_cache.ObjectStore | None]) -> tuple[PageData | None, dict[str, LocalText]]:
    return _prepare_file(*args)


def _pool_context():
    """fork is cheapest (workers inherit the imported modules), but forking a process that runs
    other threads (`serve`) can deadlock a child on a lock held by one of them."""
    import multiprocessing
    import threading

    return multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")


def prepare_pages(
    files: SiteFiles,
    config: BuildConfig,
    cache: build_cache.BuildCache,
    stats: build_cache.BuildStats,
) -> Prepared:
    """Every page's analysis and its text in every language, computing only what changed."""
    fingerprint = cache.fingerprint
    markers = {lang: load_ui(lang).gettext("Not yet translated") for lang in config.langs}
    pages: dict[str, PageData] = {}
    texts: dict[str, dict[str, LocalText]] = {f.rel: {} for f in files.pages}
    keys: dict[str, str] = {}
    text_keys: dict[str, dict[str, str]] = {}
    jobs: list[_FileJob] = []
    for file in files.pages:
        source = build_cache.read_bytes(file.path)
        if source is None:
            raise FileNotFoundError(f"{file.path} disappeared during the build; rebuild")
        key = keys[file.rel] = build_cache.digest("page", fingerprint, file.rel, file.url, source)
        data = cache.get(key)
        missing: list[_LangJob] = []
        for lang in config.langs:
            if lang == config.base_lang:
                catalog, catalog_digest = None, ""
            else:
                path = translation_path(config.translations, file, lang)
                catalog, catalog_digest = str(path), build_cache.files_digest(_catalog_files(path))
            text_key = build_cache.digest("text", key, lang, str(catalog), catalog_digest, markers[lang], str(file.is_index))
            text_keys.setdefault(file.rel, {})[lang] = text_key
            text = cache.get(text_key)
            if isinstance(text, LocalText):
                texts[file.rel][lang] = text
                stats.localization_reused += 1
            else:
                missing.append(_LangJob(lang, catalog, catalog_digest, markers[lang], text_key))
        if isinstance(data, PageData):
            pages[file.rel] = data
            stats.analysis_reused += 1
        else:
            data = None
        if data is None or missing:
            jobs.append(_FileJob(file.rel, file.url, file.is_index, source, key, data, tuple(missing)))

    store = cache.store if cache.enabled else None
    cores = os.cpu_count() or 1
    workers = min(config.jobs or cores, len(jobs)) if config.jobs or len(jobs) >= PARALLEL_MIN_FILES else 1
    if workers <= 1:
        results = [_prepare_file(job, store) for job in jobs]
    else:
        stats.workers = workers
        with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
            chunk = max(1, len(jobs) // (workers * 8))
            results = list(pool.map(_prepare_job, [(job, store) for job in jobs], chunksize=chunk))
    for job, (data, job_texts) in zip(jobs, results):
        if data is not None:
            pages[job.rel] = data
            stats.analysed += 1
            cache.remember(job.key, data)
        for lj in job.langs:
            texts[job.rel][lj.lang] = job_texts[lj.lang]
            cache.remember(lj.key, job_texts[lj.lang])
        stats.localized += len(job.langs)
    ordered = {f.rel: pages[f.rel] for f in files.pages}
    return Prepared(ordered, texts, keys, text_keys)


def _link_code_cached(
    pages: dict[str, PageData], keys: dict[str, str], cache: build_cache.BuildCache, stats: build_cache.BuildStats
) -> tuple[dict[str, PageData], dict[str, str]]:
    """`linking.link_code`, page by page: a page's links depend on its own code and on what the
    whole site defines (`site_symbols`), so they are cached under both. Returns the linked pages
    and, for each, a key that identifies it (its analysis key and the site's symbols)."""
    symbols = linking.site_symbols(pages)
    symbols_digest = build_cache.value_digest(symbols)
    linked: dict[str, PageData] = {}
    linked_keys: dict[str, str] = {}
    memo = cache.memo("linked")  # kept between `serve` rebuilds
    for rel, page in pages.items():
        key = linked_keys[rel] = build_cache.digest("linked", keys.get(rel, ""), symbols_digest)
        if rel in keys and memo.get(key) is not None:
            stats.link_reused += 1
            linked[rel] = memo[key]
            cache.remember(key, None)  # still in use: `prune` keeps the stored entry
            continue
        code = cache.get(key) if rel in keys else build_cache.MISS
        if isinstance(code, tuple) and len(code) == len(page.sections):
            stats.link_reused += 1
            result = page if all(c is None for c in code) else replace(
                page, sections=tuple(s if c is None else replace(s, code_html=c) for s, c in zip(page.sections, code))
            )
        else:
            result = linking.link_page(page, linking.references(page, symbols))
            stats.linked += 1
            if rel in keys:
                cache.put(key, tuple(None if new.code_html == old.code_html else new.code_html for old, new in zip(page.sections, result.sections)))
        if rel in keys:
            memo[key] = result
        linked[rel] = result
    return linked, {rel: key for rel, key in linked_keys.items() if rel in keys}


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


def _digestible(site: "_Site", context: dict) -> dict:
    """The context with its sections replaced by their token when they are exactly (the same
    objects) the sections `_localized_pages` made; otherwise unchanged, and hashed in full."""
    sections = context.get("sections")
    entry = site.section_tokens.get(id(sections)) if sections else None
    if entry is None or entry[0] is not sections or len(sections) != len(entry[1]):
        return context
    if not all(a is b for a, b in zip(sections, entry[1])):
        return context
    return {**context, "sections": ["<sections>", entry[2]]}


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
    return _cached_output(site, out_rel, key, lambda: search_index.index_js(lang, items))


def _render_page(site: "_Site", out_rel: str, template: str, context: dict) -> str | Path:
    """A rendered page, or the previous site's file for it when everything it is made from (its
    context, the template, the theme, the builder) is unchanged: that file is hard-linked into
    the new site instead of being rendered and written again."""
    try:
        key = build_cache.digest("render", site.theme_key, template, build_cache.value_digest(_digestible(site, context)))
    except (TypeError, ValueError, RecursionError):  # a context value we cannot describe: render
        key = None
    return _cached_output(site, out_rel, key, lambda: site.theme.render(template, **context))


def _cached_output(site: "_Site", out_rel: str, key: str | None, produce: Callable[[], str | bytes], copy: bool = False) -> str | bytes | Path:
    """`produce()`, or the previous site's file for `out_rel` when it was produced from the same
    `key` (a digest of every input of the output) by the same builder, and is untouched since."""
    cache = site.cache
    made, reused = ("copied", "copy_reused") if copy else ("rendered", "render_reused")
    if cache is None or not cache.enabled or key is None:
        setattr(site.stats, made, getattr(site.stats, made) + 1)
        return _utf8(produce())
    key = build_cache.digest(key, cache.fingerprint)
    cache.manifest.record(out_rel, key)
    previous = cache.manifest.reusable(site.out, out_rel, key)
    if previous is not None:
        setattr(site.stats, reused, getattr(site.stats, reused) + 1)
        site.reused.add(out_rel)
        return previous
    setattr(site.stats, made, getattr(site.stats, made) + 1)
    return _utf8(produce())


def _utf8(content: str | bytes) -> bytes:
    """Held as UTF-8 until written: a page with one non-Latin-1 character is otherwise held as 2
    or 4 bytes per character, and a four-language site holds a thousand pages at once."""
    return content.encode("utf-8") if isinstance(content, str) else content


def _copies_not_links(site: "_Site") -> None:
    """Files published as they are (sources for "View source", figures, the theme's static
    files) become copies in the site, not hard links to the originals: an editor that saves in
    place would otherwise change the published site before, or without, a rebuild (and a failed
    build must leave the previous site as it was). An unchanged one is the previous site's copy."""
    for rel, content in list(site.outputs.items()):
        if isinstance(content, Path) and rel not in site.reused:
            data = content.read_bytes()
            site.outputs[rel] = _cached_output(site, rel, build_cache.digest("copy", data), lambda data=data: data, copy=True)


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
        site.outputs[prefix + file.url] = _render_page(site, prefix + file.url, "page.html", context)
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
        site.outputs[prefix + folder.url] = _render_page(site, prefix + folder.url, "page.html", context)

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
    site.outputs[prefix + "translation-status.html"] = _render_page(site, prefix + "translation-status.html", "status.html", context)
    context = _base_context(site, lang, ui, "404.html", ui.gettext("Page not found"), "", local)
    _not_found_links(site, lang, context)
    site.outputs[prefix + "404.html"] = _render_page(site, prefix + "404.html", "404.html", context)
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
    site.outputs[prefix + "search.html"] = _render_page(site, prefix + "search.html", "search.html", context)


def _write_site_extras(site: _Site) -> None:
    """Language-free extras: a notebook per Python page, and the sitemap when URLs are known."""
    config = site.config
    for file in site.files.pages:
        data = site.pages.get(file.rel)
        if data is not None and notebooks.wants_notebook(data):
            key = build_cache.digest("notebook", site.page_keys[file.rel]) if file.rel in site.page_keys else None
            site.outputs[notebooks.notebook_path(file.rel)] = _cached_output(site, notebooks.notebook_path(file.rel), key, lambda data=data: notebooks.notebook_json(data))
    if config.site_url:  # sitemaps need absolute URLs; without --site-url there is none
        site.outputs["sitemap.xml"] = sitemap.sitemap_xml(config.site_url, _published_urls(site), config.langs, config.base_lang)


# ---------------------------------------------------------------------------------------------
# Nothing changed: when every input of the build is what the last successful build used and the
# site that build wrote is untouched, there is nothing to render, write or swap.


@dataclass
class _LastBuild:
    inputs: str  # _inputs_digest of that build
    findings: list[Finding]  # its report
    files: dict[str, tuple[int, int, int]]  # every file it wrote: out rel → (size, mtime_ns, inode)


def _inputs_digest(site: _Site, prepared: Prepared) -> str:
    """Every input of the build: the builder, the theme, the configuration, the UI catalogs, and
    each source, translation (through the keys prepare_pages made from their bytes) and asset."""
    config = site.config
    parts: list[str | bytes] = [site.cache.fingerprint if site.cache else "", site.theme_key, build_cache.value_digest(config)]
    parts += [build_cache.value_digest(load_ui(lang)) for lang in config.langs]
    for file in site.files.pages:
        parts.append(prepared.keys[file.rel])
        parts.extend(prepared.text_keys.get(file.rel, {}).get(lang, "-") for lang in config.langs)
    for rel, asset in sorted(site.files.assets.items()):
        parts += [rel, build_cache.files_digest([asset.path])]
    return build_cache.digest(*parts)


def _last_build_path(site: _Site) -> Path:
    return site.cache.root / "last-build.pkl"


def _unchanged_since_last_build(site: _Site, inputs: str) -> _LastBuild | None:
    """The last build's record when its inputs were `inputs` and its files are all still there,
    untouched, and alone in the site."""
    if site.cache is None or not site.cache.enabled:
        return None
    last = site.cache.load_record(_last_build_path(site))
    if not isinstance(last, _LastBuild) or last.inputs != inputs:
        return None
    count = 0
    for folder, _dirs, names in os.walk(site.out):
        for name in names:
            path = os.path.join(folder, name)
            known = last.files.get(os.path.relpath(path, site.out).replace(os.sep, "/"))
            try:
                st = os.stat(path)
            except OSError:
                return None
            if known is None or known != (st.st_size, st.st_mtime_ns, st.st_ino):
                return None
            count += 1
    return last if count == len(last.files) else None


def _record_build(site: _Site, inputs: str, report: Report) -> None:
    """After a successful swap: what this build read and wrote, for `_unchanged_since_last_build`."""
    if site.cache is None or not site.cache.enabled:
        return
    files: dict[str, tuple[int, int, int]] = {}
    for rel in site.outputs:
        try:
            st = os.stat(os.path.join(site.out, rel))
        except OSError:
            return  # something else changed the site already: record nothing
        files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    site.cache.save_record(_last_build_path(site), _LastBuild(inputs, list(report.findings), files))


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

    pages, page_keys = _link_code_cached(pages, prepared.keys, cache, stats)

    site = _Site(config, files, pages, theme, config.site_title)
    site.texts, site.cache, site.stats, site.out, site.theme_key = prepared.texts, cache, stats, out, theme.fingerprint()
    site.page_keys, site.text_keys = page_keys, prepared.text_keys
    inputs = _inputs_digest(site, prepared)
    last = _unchanged_since_last_build(site, inputs)
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
        _copies_not_links(site)
        written = _write_outputs(site.outputs, tmp)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    cache.finish(out)
    _record_build(site, inputs, report)
    return BuildResult(out, report, pages, localized, written, time.perf_counter() - started, stats)


__all__ = ["BuildConfig", "BuildResult", "build", "analyse_pages", "swap_in", "__version__"]
