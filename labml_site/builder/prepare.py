"""Scheduling the per-file stages (`pipeline.py`): each file's analysis and its text in every
language, then its linked code, each memoised by the engine under the digest of its inputs.

A file's keys come from the bytes of its source and translation files. What the engine has for
them is reused; the rest is computed in worker processes when there is enough of it, a group of
files at a time, whose entries are stored together in one pack. The main process gets back only
the small heads (`heads.py`); pages and texts are loaded, or computed again when an entry has
gone, only when an output that shows them has to be rendered (`load_page`, `load_text`).
Code linking depends on every page's definitions, so its keys are made after all heads are known.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..findings import Finding
from ..read.safe_files import read_regular
from ..read.structure import MAX_SOURCE_BYTES, SiteFiles, SourceFile
from ..render.i18n import load_ui
from ..render.text import LocalText
from ..translate.catalog import Catalog, fuzzy_path, resolve_translation_path
from ..typeset import linking
from ..typeset.page import PageData
from . import pipeline
from .cache import MISS, FileDigests, ObjectStore, digest
from .config import BuildConfig
from .engine import Engine
from .heads import PageHead, TextHead, page_head, text_head
from .workers import pool_context


PARALLEL_MIN_FILES = 24  # below this, starting workers costs more than it saves


def _analyse_file(args: tuple[str, str, str]) -> PageData:
    rel, url, path = args
    return pipeline.analyse_file(rel, url, read_regular(path, MAX_SOURCE_BYTES))


def analyse_pages(files: Iterable[SourceFile], jobs: int = 0) -> dict[str, PageData]:
    work = [(f.rel, f.url, str(f.path)) for f in files]
    cores = os.cpu_count() or 1
    workers = jobs or (cores if len(work) >= PARALLEL_MIN_FILES else 1)
    if workers <= 1:
        results = [_analyse_file(w) for w in work]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_analyse_file, work, chunksize=max(1, len(work) // (workers * 4))))
    return {page.rel: page for page in results}


@dataclass(frozen=True)
class _LangJob:
    lang: str
    catalog: str | None  # the translation file; None for the base language
    catalog_digest: str  # of the file and its fuzzy sidecar, as read when the key was made
    marker: str  # "Not yet translated" in this language
    key: str
    root: str = ""  # the translations folder (no link below it is followed)


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
    """Every page's head and its heads in every language, and the means to load the rest.

    Heads come from the cache's head record, so an unchanged page is known without loading it;
    `load_page` and `load_text` load (or, when an entry is gone, compute) a page only when an
    output that shows it has to be rendered."""

    heads: dict[str, PageHead]  # rel → head, in discovery order
    text_heads: dict[str, dict[str, TextHead]]  # rel → lang → head
    keys: dict[str, str]  # rel → cache key of its analysis
    text_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # rel → lang → key of its text
    source_digests: dict[str, str] = field(default_factory=dict)  # of the bytes each key was made from
    files: dict[str, SourceFile] = field(default_factory=dict)
    lang_jobs: dict[tuple[str, str], "_LangJob"] = field(default_factory=dict)
    pages: dict[str, PageData] = field(default_factory=dict)  # loaded or computed so far
    texts: dict[tuple[str, str], LocalText] = field(default_factory=dict)  # (rel, lang) → text
    linked: dict[str, PageData] = field(default_factory=dict)  # rel → the page with that code
    notebooks: dict[str, str] = field(default_factory=dict)  # rel → its .ipynb, made with its analysis
    unlinked: dict[str, str] = field(default_factory=dict)  # rel → key of links no build has stored yet
    kept: dict[str, str] = field(default_factory=dict)  # rel → key of the broken analysis its last good page stands in for
    findings: list[Finding] = field(default_factory=list)  # about the inputs (a translation found by case)


def _catalog_files(path: Path) -> list[Path]:
    """What `Catalog.load` reads: the translation file and its fuzzy sidecar."""
    return [path, fuzzy_path(path)]


@dataclass(frozen=True)
class _FileResult:
    head: PageHead | None  # None when the job came with its analysis
    text_heads: dict[str, TextHead]
    data: PageData | None  # the analysis itself, when sent (see `_prepare_file`)
    texts: dict[str, LocalText]  # the texts sent
    notebook: str | None = None  # the page's .ipynb, made with its analysis (where it is cheap: in a worker)


def _prepare_file(job: _FileJob, entries: dict[str, object] | None, send: bool = True) -> _FileResult:
    """Analyse (unless cached) and localize one file; runs in a worker process or inline. What
    should be cached goes into `entries` (None: caching is off). Unless `send`, what went into
    the cache comes back as heads only: the main process needs no more, and the workers that
    render load it from the cache (sending it costs pickling it twice, and the main process's
    time unpickling it while the workers are busy)."""
    analysed = job.data is None
    data = pipeline.analyse_file(job.rel, job.url, job.source) if analysed else job.data
    if analysed and entries is not None and not _failed(data):
        entries[job.key] = data
    published = job.is_index or bool(data.sections)
    if _failed(data):
        entries = None  # nothing of a failed analysis is remembered
    texts: dict[str, LocalText] = {}
    text_heads: dict[str, TextHead] = {}
    for lj in job.langs:
        catalog = Catalog.load(Path(lj.catalog), lj.lang, root=lj.root or None) if lj.catalog is not None else None
        text = pipeline.localize_file(data, lj.lang, catalog, lj.marker, published)
        text_heads[lj.lang] = text_head(text, data)
        # Cache it only if the translation file is still what the key was computed from.
        if entries is not None and (lj.catalog is None or FileDigests().digest_of(_catalog_files(Path(lj.catalog))) == lj.catalog_digest):
            entries[lj.key] = replace(text, search_rows="")  # the rows are kept once, in its head
            if send:
                texts[lj.lang] = text
        else:
            texts[lj.lang] = text
    notebook = pipeline.notebook_file(data) if analysed else None
    head = page_head(data) if analysed else None
    return _FileResult(head, text_heads, data if analysed and (send or entries is None) else None, texts, notebook)


@dataclass(frozen=True)
class _GroupResult:
    results: tuple[_FileResult, ...]
    pack: str = ""  # the cache pack the group's entries were stored in ("" when none)
    packed: tuple[str, ...] = ()  # their keys


def _prepare_group(jobs: tuple[_FileJob, ...], store: ObjectStore | None, send: bool = True) -> _GroupResult:
    """Several files, whose cache entries are written together in one pack file (creating a
    file costs more than filling it)."""
    entries: dict[str, object] | None = {} if store is not None else None
    results = tuple(_prepare_file(job, entries, send) for job in jobs)
    pack, packed = store.put_pack(entries) if store is not None else ("", ())
    return _GroupResult(results, pack, packed)


def _prepare_job(args: tuple[tuple[_FileJob, ...], ObjectStore | None, bool]) -> _GroupResult:
    return _prepare_group(*args)


def _groups(jobs: list[_FileJob], size: int) -> list[tuple[_FileJob, ...]]:
    return [tuple(jobs[i : i + size]) for i in range(0, len(jobs), size)]


class _Dispatch:
    """Hands jobs to worker processes as soon as there are enough of them to be worth starting
    workers for, in small groups, while the main process goes on computing the other files' keys
    (reading and hashing every source and translation file, ~0.1 s for 250 files); with fewer
    jobs, they are done here at the end."""

    def __init__(self, store: ObjectStore | None, jobs: int, files: int) -> None:
        self.store = store
        # Objects come back from the workers only where the cache cannot give them to the
        # renderers: caching off, or kept in this process's memory (`serve`).
        self.send = store is None or store.memory is not None
        self.workers = jobs or os.cpu_count() or 1
        self.start_at = 2 if jobs else PARALLEL_MIN_FILES
        self.size = max(1, min(4, files // (self.workers * 16)))  # jobs per group
        self.count = 0
        self.waiting: list[_FileJob] = []
        self.sent: list[tuple[tuple[_FileJob, ...], Future]] = []
        self.pool: ProcessPoolExecutor | None = None

    def add(self, job: _FileJob) -> None:
        self.waiting.append(job)
        self.count += 1
        if self.pool is None and self.workers > 1 and self.count >= self.start_at:
            self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=pool_context())
        if self.pool is not None and len(self.waiting) >= self.size:
            self._send()

    def _send(self) -> None:
        for group in _groups(self.waiting, self.size):
            self.sent.append((group, self.pool.submit(_prepare_job, (group, self.store, self.send))))
        self.waiting = []

    def results(self, meanwhile: Callable[[], object] | None = None) -> Iterator[tuple[tuple[_FileJob, ...], _GroupResult]]:
        """Every group's result, in the order sent (each taken while the workers go on).
        `meanwhile` runs once every job is sent, while the workers work (not without workers).
        When a worker dies (killed for memory, a crash in a library), the groups it took down are
        done again, file by file, so that the file it died on is found and reported."""
        if self.pool is None:
            for group in _groups(self.waiting, 8):
                yield group, _prepare_group(group, self.store)
            return
        self._send()
        if meanwhile is not None:
            meanwhile()
        lost: list[_FileJob] = []
        for group, future in self.sent:
            try:
                yield group, future.result()
            except BrokenProcessPool:
                lost.extend(group)
        if lost:
            yield from self._again(lost)

    def _again(self, jobs: list[_FileJob]) -> Iterator[tuple[tuple[_FileJob, ...], _GroupResult]]:
        """The jobs a dead worker took down: in a new pool, one file per task; what a second
        death takes down, one file at a time in a process of its own, where a death names its file."""
        self.close()
        lost: list[_FileJob] = []
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=pool_context()) as pool:
            futures = [((job,), pool.submit(_prepare_job, ((job,), self.store, self.send))) for job in jobs]
            for group, future in futures:
                try:
                    yield group, future.result()
                except BrokenProcessPool:
                    lost.extend(group)
        for job in lost:
            with ProcessPoolExecutor(max_workers=1, mp_context=pool_context()) as pool:
                try:
                    result = pool.submit(_prepare_job, ((job,), self.store, self.send)).result()
                except BrokenProcessPool:
                    result = _died(job)
            yield (job,), result

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _size(file: SourceFile) -> int:
    try:
        return file.path.lstat().st_size
    except OSError:
        return 0  # (its digest reports it missing)


def prepare_pages(
    files: SiteFiles,
    config: BuildConfig,
    engine: Engine,
    meanwhile: Callable[[], object] | None = None,
) -> Prepared:
    """Every page's head and its text heads in every language, computing only what changed.
    `meanwhile`: the main process's own work, done while worker processes (if any) analyse."""
    fingerprint = engine.fingerprint
    markers = {lang: load_ui(lang, config.locales).gettext("Not yet translated") for lang in config.langs}
    prepared = Prepared({}, {f.rel: {} for f in files.pages}, {})
    dispatch = _Dispatch(engine.object_store, config.jobs, len(files.pages))
    try:
        # Largest files first, so the workers finish together.
        for file in sorted(files.pages, key=_size, reverse=True):
            job = _file_job(prepared, engine, config, file, fingerprint, markers)
            if job is not None:
                dispatch.add(job)
        if dispatch.pool is not None:
            engine.stats.workers = min(dispatch.workers, dispatch.count)
        for group, result in dispatch.results(meanwhile):
            _take_group(prepared, engine, group, result)
    finally:
        dispatch.close()
    _keep_last_good(prepared, engine, config, markers)
    order = [f.rel for f in files.pages]  # discovery order, as the site lists them
    prepared.heads = {rel: prepared.heads[rel] for rel in order}
    prepared.keys = {rel: prepared.keys[rel] for rel in order}
    prepared.files = {rel: prepared.files[rel] for rel in order}
    return prepared


def _file_job(
    prepared: Prepared,
    engine: Engine,
    config: BuildConfig,
    file: SourceFile,
    fingerprint: str,
    markers: dict[str, str],
) -> _FileJob | None:
    """The file's keys and what the cache has for them; the work left to do, if any."""
    source_digest = engine.file_digest(file.path)
    if source_digest == FileDigests.MISSING:
        raise FileNotFoundError(f"{file.path} disappeared during the build; rebuild")
    prepared.files[file.rel], prepared.source_digests[file.rel] = file, source_digest
    key = prepared.keys[file.rel] = engine.key("page", fingerprint, file.rel, file.url, source_digest)
    head = engine.summary(key)
    data = None
    if not isinstance(head, PageHead):
        data = engine.load(key)
        data = data if isinstance(data, PageData) else None
        if data is not None:
            prepared.pages[file.rel] = data
            head = page_head(data)
            engine.record_summary(key, head)
    missing = _text_jobs(prepared, engine, config, file, key, markers)
    if isinstance(head, PageHead):
        prepared.heads[file.rel] = head
        engine.stats.analysis_reused += 1
    if isinstance(head, PageHead) and not missing:
        return None
    if isinstance(head, PageHead) and data is None:
        data = load_page(prepared, engine, file.rel)
    return _FileJob(file.rel, file.url, file.is_index, source_of(prepared, file.rel), key, data, tuple(missing))


def _text_jobs(prepared: Prepared, engine: Engine, config: BuildConfig, file: SourceFile, key: str, markers: dict[str, str]) -> list[_LangJob]:
    """The keys of the file's text in every language (from its analysis's `key` and the bytes of
    its translation files); the languages whose text the engine does not have."""
    missing: list[_LangJob] = []
    for lang in config.langs:
        if lang == config.base_lang:
            catalog, catalog_digest = None, ""
        else:
            path, found_by_case = resolve_translation_path(config.translations, file, lang)
            if found_by_case is not None:
                prepared.findings.append(found_by_case)
            catalog, catalog_digest = str(path), engine.files_digest(_catalog_files(path))
        text_key = engine.key("text", key, lang, str(catalog), catalog_digest, markers[lang], str(file.is_index))
        prepared.text_keys.setdefault(file.rel, {})[lang] = text_key
        lang_job = prepared.lang_jobs[(file.rel, lang)] = _LangJob(lang, catalog, catalog_digest, markers[lang], text_key, str(config.translations))
        found = engine.summary(text_key)  # (without it, the text is made again: its search rows live only there)
        if isinstance(found, TextHead):
            prepared.text_heads[file.rel][lang] = found
            engine.stats.localization_reused += 1
        else:
            missing.append(lang_job)
    return missing


# A source file that stops parsing keeps its last good page: the engine remembers, per file, the
# key of its last analysis that parsed (and the digest of those bytes), and while that analysis is
# still stored, it stands in for the broken one, with the error in the build's report.
_LAST_GOOD = "last-good:"
PARSE_ERRORS = ("source", "source-encoding", pipeline.ANALYSIS_FAILED, pipeline.WORKER_DIED)


_UNFINISHED = (pipeline.ANALYSIS_FAILED, pipeline.WORKER_DIED)


def _failed(data: PageData) -> bool:
    """An analysis that did not finish (an exception, a dead worker): never remembered, so the
    next build tries again (it may have been short of memory)."""
    return not data.sections and any(f.code in _UNFINISHED for f in data.findings)


def _failed_head(head: PageHead) -> bool:
    return not head.has_sections and any(f.code in _UNFINISHED for f in head.findings)


def _died(job: _FileJob) -> _GroupResult:
    """The result for a file whose worker died while analysing it: that finding, its texts made
    here from the empty page (no analysis runs in this process)."""
    data = pipeline.failed_analysis(
        job.rel, job.url, "the worker process analysing this file died (killed, perhaps for using too much memory)",
        pipeline.WORKER_DIED,
    )
    result = _prepare_file(replace(job, data=data), None)
    return _GroupResult((replace(result, head=page_head(data), data=data),))


def failed_to_parse(head: PageHead) -> bool:
    return not head.has_sections and any(f.code in PARSE_ERRORS for f in head.findings)


def _keep_last_good(prepared: Prepared, engine: Engine, config: BuildConfig, markers: dict[str, str]) -> None:
    for rel, head in list(prepared.heads.items()):
        record = _LAST_GOOD + rel
        if not failed_to_parse(head):
            engine.record_summary(record, (prepared.keys[rel], prepared.source_digests[rel]))
            continue
        found = engine.summary(record)
        if not (isinstance(found, tuple) and len(found) == 2):
            continue
        key, source_digest = found
        good = engine.summary(key)
        data = engine.load(key)
        if not (isinstance(good, PageHead) and isinstance(data, PageData)):
            continue  # gone from the store: the page is not published, as for a new broken file
        file = prepared.files[rel]
        note = Finding(
            "warning", "kept-last-good",
            "the site keeps this page as it was when the file last parsed, until the error above is fixed",
            path=rel,
        )
        prepared.kept[rel] = prepared.keys[rel]
        prepared.keys[rel], prepared.source_digests[rel] = key, source_digest
        prepared.pages[rel] = data
        for lang in config.langs:  # (the broken file's texts, if the workers sent them)
            prepared.texts.pop((rel, lang), None)
        prepared.heads[rel] = replace(good, findings=head.findings + (note,))
        missing = _text_jobs(prepared, engine, config, file, key, markers)
        if missing:
            job = _FileJob(rel, file.url, file.is_index, b"", key, data, tuple(missing))
            _take_group(prepared, engine, (job,), _prepare_group((job,), engine.object_store))


def source_of(prepared: Prepared, rel: str) -> bytes:
    """The source file's bytes, which must still be those its key was made from."""
    path = prepared.files[rel].path
    try:
        source = read_regular(path, MAX_SOURCE_BYTES)
    except OSError:  # gone, or swapped for a link, a FIFO or a larger file since it was listed
        source = None
    if source is None or digest(source) != prepared.source_digests[rel]:
        raise FileNotFoundError(f"{path} changed or disappeared during the build; rebuild")
    return source


def _take_group(prepared: Prepared, engine: Engine, jobs: tuple[_FileJob, ...], group: _GroupResult) -> None:
    engine.packed(group.pack, group.packed)
    for job, result in zip(jobs, group.results):
        _take_result(prepared, engine, job, result)


def _take_result(prepared: Prepared, engine: Engine, job: _FileJob, result: _FileResult) -> None:
    failed = result.head is not None and _failed_head(result.head)
    if result.head is not None:
        _take_page(prepared, engine, job.rel, job.key, result.head, result.data)
    if result.notebook is not None:
        prepared.notebooks[job.rel] = result.notebook
    for lj in job.langs:
        text = result.texts.get(lj.lang)
        if text is not None:
            prepared.texts[(job.rel, lj.lang)] = text
        prepared.text_heads[job.rel][lj.lang] = result.text_heads[lj.lang]
        if not failed:
            engine.took(lj.key, text)
            engine.record_summary(lj.key, result.text_heads[lj.lang])
    engine.stats.localized += len(job.langs)


def _take_page(prepared: Prepared, engine: Engine, rel: str, key: str, head: PageHead, data: PageData | None) -> None:
    """A page analysed in this build (by a worker, which stored it, or inline)."""
    if data is not None:
        prepared.pages[rel] = data
    prepared.heads[rel] = head
    engine.stats.analysed += 1
    if _failed_head(head):
        return  # not remembered: the next build tries again
    engine.took(key, data)
    engine.record_summary(key, head)


def load_page(prepared: Prepared, engine: Engine, rel: str) -> PageData:
    """A page's analysis: already in memory, else from the cache, else computed again (an entry
    deleted or damaged since its head was recorded)."""
    data = prepared.pages.get(rel)
    if data is None:
        key = prepared.keys[rel]
        data = engine.load(key)
        if isinstance(data, PageData):
            prepared.pages[rel] = data
        else:
            data = pipeline.analyse_file(rel, prepared.files[rel].url, source_of(prepared, rel))
            engine.save(key, data)
            _take_page(prepared, engine, rel, key, page_head(data), data)
    return data


def load_text(prepared: Prepared, engine: Engine, rel: str, lang: str) -> LocalText:
    """A page's text in `lang`, the same way as `load_page`."""
    text = prepared.texts.get((rel, lang))
    if text is None:
        lj = prepared.lang_jobs[(rel, lang)]
        text = engine.load(lj.key)
        data = load_page(prepared, engine, rel)
        if isinstance(text, LocalText):
            prepared.texts[(rel, lang)] = text
        else:
            file = prepared.files[rel]
            job = _FileJob(rel, file.url, file.is_index, source_of(prepared, rel), prepared.keys[rel], data, (lj,))
            _take_group(prepared, engine, (job,), _prepare_group((job,), engine.object_store))
            text = prepared.texts[(rel, lang)]
    return text


def link_keys(
    prepared: Prepared, engine: Engine
) -> tuple[linking.Symbols, dict[str, str]]:
    """What the site defines (`site_symbols`, from the heads) and, per page, the key of its code
    after `linking.link_code`: a page's links depend on its own code and on the site's symbols,
    so they are cached under both. Nothing is linked here: `linked_page` links a page whose key
    is new when an output needs it (possibly in a worker process), and `record_links` notes
    afterwards which keys now have an entry."""
    symbols = linking.site_symbols(prepared.heads)
    symbols_digest = engine.key("symbols", symbols)
    keys: dict[str, str] = {}
    for rel, head in prepared.heads.items():
        key = keys[rel] = engine.key("linked", prepared.keys[rel], symbols_digest)
        if engine.summary(key) is not MISS:
            engine.stats.link_reused += 1
        else:
            prepared.unlinked[rel] = key
    return symbols, keys


def record_links(prepared: Prepared, engine: Engine) -> None:
    """Heads for the links this build stored (in this process or in a worker)."""
    for rel, key in prepared.unlinked.items():
        if rel in prepared.linked or engine.has(key):
            engine.took(key, None)  # (`prune` keeps what a worker stored)
            engine.record_summary(key, True)


def _link(prepared: Prepared, engine: Engine, rel: str, symbols: linking.Symbols) -> tuple:
    """The page's code HTML per section after linking (None where linking changed nothing)."""
    engine.stats.linked += 1
    return pipeline.link_file(load_page(prepared, engine, rel), symbols)


def linked_page(
    prepared: Prepared, engine: Engine, rel: str, key: str, symbols: linking.Symbols
) -> PageData:
    """The page with its code linked, from the links cached under `key` (computed again if gone)."""
    if rel in prepared.linked:
        return prepared.linked[rel]
    memo = engine.memo("linked")  # kept between `serve` rebuilds
    result = memo.get(key)
    if result is None:
        page = load_page(prepared, engine, rel)
        code = MISS if rel in prepared.unlinked else engine.load(key)
        if not (isinstance(code, tuple) and len(code) == len(page.sections)):
            code = _link(prepared, engine, rel, symbols)
            engine.save(key, code)
        result = page if all(c is None for c in code) else replace(
            page, sections=tuple(s if c is None else replace(s, code_html=c) for s, c in zip(page.sections, code))
        )
        memo[key] = result
    prepared.linked[rel] = result
    return result
