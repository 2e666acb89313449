"""Per source file, the work that does not depend on other pages: its analysis (parse, Markdown,
math, highlighting) and its text in every language (with its search entries).

Each result is reused from the cache (cache.py) when none of its inputs changed, and the rest is
computed in worker processes when there is enough of it. Code linking, which depends on every
page, runs after this, per page, also cached.
"""
from __future__ import annotations

import os
import posixpath
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

from . import cache as build_cache
from . import linking, search_index
from .config import BuildConfig
from .findings import Finding
from .i18n import load_ui
from .localize import LocalPage, LocalSection, localize
from .pages import PageData, analyse
from .structure import SiteFiles, SourceFile, translation_path
from .translations import Catalog, fuzzy_path


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


def link_code_cached(
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
