"""Scheduling the per-file stages (`pipeline.py`): each file's analysis and its text in every
language, then its linked code, each a call of the memo layer (`memo.py`), known by the digest
of the stage and its inputs.

A file's digests come from the bytes of its source and translation files. What the memo layer
has for them is reused; the rest is computed in worker processes when there is enough of it, a
group of files at a time, whose entries are stored together in one pack. The main process gets
back only the small heads (`heads.py`); pages and texts are loaded, or computed again when an
entry has gone, only when an output that shows them has to be rendered (`load_page`,
`load_text`, `linked_page`: each one `Memo.call`). Code linking depends on every page's
definitions, so its digests are made after all heads are known.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..findings import Finding
from ..read.listing import TreeListing
from ..read.safe_files import read_regular
from ..read.structure import MAX_SOURCE_BYTES, SiteFiles, SourceFile

from ..render import notebooks
from ..render.text import LocalText
from ..translate import glossary, repair
from ..translate.catalog import resolve_translation_file, sidecar_name
from ..typeset import linking
from ..typeset.page import PageData
from . import memo as memo_layer
from . import pipeline
from .cache import MISS, FileDigests, ObjectStore
from .config import BuildConfig
from .early_cutoff import EarlyCutoff
from .ui_catalogs import load_ui
from .heads import PageHead, TextHead, page_head, text_head
from .memo import Input, Memo
from .workers import broken_pool, process_pool

if TYPE_CHECKING:  # (a one-file rebuild starts no pool: concurrent.futures and logging cost it 5 ms to import)
    from concurrent.futures import Future, ProcessPoolExecutor

    from .uptodate import Snapshot


PARALLEL_MIN_FILES = 24  # below this, starting workers costs more than it saves


def _analyse_file(args: tuple[str, str, str]) -> PageData:
    rel, url, path = args
    return memo_layer.run(pipeline.analyse_file, rel, url, read_regular(path, MAX_SOURCE_BYTES))


def analyse_pages(files: Iterable[SourceFile], jobs: int = 0) -> dict[str, PageData]:
    work = [(f.rel, f.url, str(f.path)) for f in files]
    cores = os.cpu_count() or 1
    workers = jobs or (cores if len(work) >= PARALLEL_MIN_FILES else 1)
    if workers <= 1:
        results = [_analyse_file(w) for w in work]
    else:
        with process_pool(workers) as pool:
            results = list(pool.map(_analyse_file, work, chunksize=max(1, len(work) // (workers * 4))))
    return {page.rel: page for page in results}


@dataclass(frozen=True)
class _LangJob:
    lang: str
    catalog: str | None  # the translation file; None for the base language
    files: tuple[str, ...]  # what `localize_at` reads: the file and its fuzzy sidecar
    files_digest: str  # of their names and bytes, as read when the digest was made
    marker: str  # "Not yet translated" in this language
    digest: str  # the digest of the text
    root: str = ""  # the translations folder (no link below it is followed)


@dataclass(frozen=True)
class _FileJob:
    rel: str
    url: str
    is_index: bool
    source: bytes  # exactly the bytes its digest was made from
    digest: str  # the digest of its analysis
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
    digests: dict[str, str]  # rel → digest of its analysis
    text_digests: dict[str, dict[str, str]] = field(default_factory=dict)  # rel → lang → digest of its text
    source_digests: dict[str, str] = field(default_factory=dict)  # of the bytes each digest was made from
    files: dict[str, SourceFile] = field(default_factory=dict)
    lang_jobs: dict[tuple[str, str], "_LangJob"] = field(default_factory=dict)
    notebooks: dict[str, str] = field(default_factory=dict)  # rel → its .ipynb, made with its analysis
    unlinked: dict[str, str] = field(default_factory=dict)  # rel → digest of links no build has stored yet
    kept: dict[str, str] = field(default_factory=dict)  # rel → digest of the broken analysis its last good page stands in for
    is_index: dict[str, bool] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)  # about the inputs (a translation found by case)
    translations: TreeListing | None = None  # the translations folder as the build's snapshot saw it
    by_case: dict[tuple[str, str], str] = field(default_factory=dict)  # (rel, lang) → its translation file, found by case

    def catalog_input(self, rel: str, lang: str) -> Input | None:
        """The files `Catalog.load` reads for a page's text in `lang`, as a stage's input (their
        digest as this build found it; None: the base language, which reads none)."""
        job = self.lang_jobs[(rel, lang)]
        return Input(job.files_digest, lambda: job.catalog, job.files) if job.catalog is not None else None


def _catalog_files(path: str, lang: str) -> list[str]:
    """What `Catalog.load` reads: the translation file, its fuzzy sidecar, and the glossary its
    checks compare terms with (if there is one)."""
    found = glossary.glossary_path(os.path.dirname(path), lang)
    return [path, sidecar_name(path, "fuzzy")] + ([os.fspath(found)] if found is not None else [])


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
    data = memo_layer.run(pipeline.analyse_file, job.rel, job.url, job.source) if analysed else job.data
    if analysed and entries is not None and not _failed(data):
        entries[job.digest] = data
    if _failed(data):
        entries = None  # nothing of a failed analysis is remembered
    texts: dict[str, LocalText] = {}
    text_heads: dict[str, TextHead] = {}
    for lj in job.langs:
        text = memo_layer.run(pipeline.localize_at, data, lj.lang, lj.catalog, lj.root, lj.marker, job.is_index, files=lj.files)
        text_heads[lj.lang] = text_head(text, data)
        # Cache it only if the translation file is still what the digest was computed from.
        if entries is not None and (not lj.files or memo_layer.unchanged(lj.files, lj.files_digest)):
            entries[lj.digest] = _stored_text(text)
            if send:
                texts[lj.lang] = text
        else:
            texts[lj.lang] = text
    # (a page with figures gets its notebook from the main process, which reads their bytes)
    notebook = pipeline.notebook_file(data) if analysed and not notebooks.figure_assets(data) else None
    head = page_head(data) if analysed else None
    return _FileResult(head, text_heads, data if analysed and (send or entries is None) else None, texts, notebook)


@dataclass(frozen=True)
class _GroupResult:
    results: tuple[_FileResult, ...]
    pack: str = ""  # the cache pack the group's entries were stored in ("" when none)
    packed: tuple[str, ...] = ()  # their keys
    repairs: dict[str, str] = field(default_factory=dict)  # the translation values it repaired (`repair.remembering_repairs`)


def _stored_text(text: LocalText) -> LocalText:
    return replace(text, search_rows="")  # the rows are kept once, in its head


def _prepare_group(jobs: tuple[_FileJob, ...], store: ObjectStore | None, send: bool = True) -> _GroupResult:
    """Several files, whose cache entries are written together in one pack file (creating a
    file costs more than filling it)."""
    entries: dict[str, object] | None = {} if store is not None else None
    with repair.remembering_repairs() as repairs:  # (in a worker: sent back, for the next build)
        results = tuple(_prepare_file(job, entries, send) for job in jobs)
    pack, packed = store.put_pack(entries) if store is not None else ("", ())
    return _GroupResult(results, pack, packed, repairs)


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
            self.pool = process_pool(self.workers)
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
            except broken_pool():
                lost.extend(group)
        if lost:
            yield from self._again(lost)

    def _again(self, jobs: list[_FileJob]) -> Iterator[tuple[tuple[_FileJob, ...], _GroupResult]]:
        """The jobs a dead worker took down: in a new pool, one file per task; what a second
        death takes down, one file at a time in a process of its own, where a death names its file."""
        self.close()
        lost: list[_FileJob] = []
        with process_pool(self.workers) as pool:
            futures = [((job,), pool.submit(_prepare_job, ((job,), self.store, self.send))) for job in jobs]
            for group, future in futures:
                try:
                    yield group, future.result()
                except broken_pool():
                    lost.extend(group)
        for job in lost:
            with process_pool(1) as pool:
                try:
                    result = pool.submit(_prepare_job, ((job,), self.store, self.send)).result()
                except broken_pool():
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
    memo: Memo,
    meanwhile: Callable[[], object] | None = None,
    snapshot: "Snapshot | None" = None,
) -> Prepared:
    """Every page's head and its text heads in every language, computing only what changed.
    `meanwhile`: the main process's own work, done while worker processes (if any) analyse;
    `snapshot`: the metadata of the inputs as the build started (what it saw of the translations
    folder; which files' preparations the last build's records still describe)."""
    markers = {lang: load_ui(lang, config.locales).gettext("Not yet translated") for lang in config.langs}
    listing = snapshot.listing("translations") if snapshot is not None else None
    prepared = Prepared({}, {f.rel: {} for f in files.pages}, {}, translations=listing)
    cutoff = EarlyCutoff(snapshot if listing is not None else None, memo)  # (resolving by case reads the listing)
    dispatch = _Dispatch(memo.object_store, config.jobs, len(files.pages))
    taken: set[str] = set()  # the files whose records are as they were
    try:
        # Largest files first, so the workers finish together.
        for file in sorted(files.pages, key=_size, reverse=True):
            if _as_recorded(prepared, memo, file, cutoff.found(file)):
                taken.add(file.rel)
                continue
            job = _file_job(prepared, memo, config, file, markers)
            if job is not None:
                dispatch.add(job)
        if dispatch.pool is not None:
            memo.stats.workers = min(dispatch.workers, dispatch.count)
        for group, result in dispatch.results(meanwhile):
            _take_group(prepared, memo, group, result)
    finally:
        dispatch.close()
    for file in files.pages:
        if file.rel not in taken:
            _record(prepared, config, file, cutoff)
    _keep_last_good(prepared, memo, config, markers)
    order = [f.rel for f in files.pages]  # discovery order, as the site lists them
    prepared.heads = {rel: prepared.heads[rel] for rel in order}
    prepared.digests = {rel: prepared.digests[rel] for rel in order}
    prepared.files = {rel: prepared.files[rel] for rel in order}
    return prepared


def _file_job(
    prepared: Prepared,
    memo: Memo,
    config: BuildConfig,
    file: SourceFile,
    markers: dict[str, str],
) -> _FileJob | None:
    """The file's digests and what the memo layer has for them; the work left to do, if any."""
    source_digest = memo.file_digest(file.path)
    if source_digest == FileDigests.MISSING:
        raise FileNotFoundError(f"{file.path} disappeared during the build; rebuild")
    prepared.files[file.rel], prepared.source_digests[file.rel] = file, source_digest
    digest = prepared.digests[file.rel] = memo.digest(pipeline.analyse_file, *_page_inputs(prepared, memo, file.rel))
    head = memo.head(digest)
    data = None
    if not isinstance(head, PageHead):
        data = memo.find(digest)
        data = data if isinstance(data, PageData) else None
        if data is not None:
            head = page_head(data)
            memo.set_head(digest, head)
    missing = _text_jobs(prepared, memo, config, file, markers)
    if isinstance(head, PageHead):
        prepared.heads[file.rel] = head
        memo.stats.analysis_reused += 1
    if isinstance(head, PageHead) and not missing:
        return None
    if isinstance(head, PageHead) and data is None:
        data = load_page(prepared, memo, file.rel)
    return _FileJob(file.rel, file.url, file.is_index, source_of(prepared, file.rel), digest, data, tuple(missing))


def _text_jobs(prepared: Prepared, memo: Memo, config: BuildConfig, file: SourceFile, markers: dict[str, str]) -> list[_LangJob]:
    """The digests of the file's text in every language (from its analysis's digest and the bytes
    of its translation files); the languages whose text the memo layer does not have."""
    missing: list[_LangJob] = []
    prepared.is_index[file.rel] = file.is_index
    page = page_input(prepared, memo, file.rel)  # (one for every language)
    translations = os.fspath(config.translations)
    for lang in config.langs:
        if lang == config.base_lang:
            catalog, catalog_in = None, None
        else:
            catalog, found_by_case = resolve_translation_file(translations, file.base, lang, prepared.translations)
            _note_by_case(prepared, file.rel, lang, catalog, found_by_case)
            catalog_in = memo.files(_catalog_files(catalog, lang), catalog)
        inputs = _text_inputs(prepared, memo, file.rel, lang, catalog_in, translations, markers[lang], page)
        text_digest = memo.digest(pipeline.localize_at, *inputs)
        prepared.text_digests.setdefault(file.rel, {})[lang] = text_digest
        lang_job = prepared.lang_jobs[(file.rel, lang)] = _LangJob(
            lang, catalog, catalog_in.files if catalog_in else (), catalog_in.digest if catalog_in else "",
            markers[lang], text_digest, str(config.translations),
        )
        found = memo.head(text_digest)  # (without it, the text is made again: its search rows live only there)
        if isinstance(found, TextHead):
            prepared.text_heads[file.rel][lang] = found
            memo.stats.localization_reused += 1
        else:
            missing.append(lang_job)
    return missing


def _note_by_case(prepared: Prepared, rel: str, lang: str, catalog: str | None, found_by_case: Finding | None) -> None:
    """A translation file found under a path that differs from the page's only in case: its
    finding, and where it is (for the redirects from the old site's URL)."""
    if found_by_case is not None:
        prepared.findings.append(found_by_case)
        prepared.by_case[(rel, lang)] = catalog


def _as_recorded(prepared: Prepared, memo: Memo, file: SourceFile, state: tuple | None) -> bool:
    """Take what the last build's preparation of `file` found (`_record`), when the cache still
    holds its heads; False: prepare it."""
    if state is None:
        return False
    source_digest, digest, langs, by_case = state
    head = memo.head(digest)
    if not isinstance(head, PageHead) or _failed_head(head):
        return False
    texts = [memo.head(lj.digest) for lj in langs]
    if not all(isinstance(text, TextHead) for text in texts):
        return False
    rel = file.rel
    prepared.files[rel], prepared.source_digests[rel], prepared.digests[rel] = file, source_digest, digest
    prepared.heads[rel] = head
    prepared.is_index[rel] = file.is_index
    digests = prepared.text_digests.setdefault(rel, {})
    for lj, text in zip(langs, texts):
        if lj.lang in by_case:  # (its finding, as resolving it gives it: the listing is as it was)
            _, found_by_case = resolve_translation_file(lj.root, file.base, lj.lang, prepared.translations)
            _note_by_case(prepared, rel, lj.lang, lj.catalog, found_by_case)
        digests[lj.lang] = lj.digest
        prepared.lang_jobs[(rel, lj.lang)] = lj
        prepared.text_heads[rel][lj.lang] = text
    memo.cache.files.keep(_files_read(file, langs))
    memo.stats.analysis_reused += 1
    memo.stats.localization_reused += len(langs)
    return True


def _record(prepared: Prepared, config: BuildConfig, file: SourceFile, cutoff: EarlyCutoff) -> None:
    """What preparing `file` found, for the next build (`_as_recorded`): never a page that
    failed, which the next build tries again."""
    rel = file.rel
    head = prepared.heads.get(rel)
    if not isinstance(head, PageHead) or _failed_head(head) or len(prepared.text_heads[rel]) != len(config.langs):
        return
    langs = tuple(prepared.lang_jobs[(rel, lang)] for lang in config.langs)
    by_case = tuple(lang for lang in config.langs if (rel, lang) in prepared.by_case)
    cutoff.keep(file, _files_read(file, langs), (prepared.source_digests[rel], prepared.digests[rel], langs, by_case))


def _files_read(file: SourceFile, langs: Iterable[_LangJob]) -> list[str]:
    """What preparing `file` reads: its source and, per language, what `Catalog.load` reads."""
    return [os.fspath(file.path), *(path for lj in langs for path in lj.files)]


# The inputs of each stage call, in one place: `memo.digest` of them is the call's digest, and
# `memo.call` of them loads or computes its result.

def _page_inputs(prepared: Prepared, memo: Memo, rel: str) -> tuple:
    file = prepared.files[rel]
    source = memo.source(file.path, lambda: source_of(prepared, rel), prepared.source_digests[rel])
    return rel, file.url, source


def page_input(prepared: Prepared, memo: Memo, rel: str) -> Input:
    """A page's analysis as an input of other calls (known by its digest, loaded when needed)."""
    return Input(prepared.digests[rel], lambda: load_page(prepared, memo, rel))


def _text_inputs(
    prepared: Prepared, memo: Memo, rel: str, lang: str, catalog: Input | None, root: str, marker: str, page: Input | None = None
) -> tuple:
    return page or page_input(prepared, memo, rel), lang, catalog, root, marker, prepared.is_index[rel]


def _lang_job_inputs(prepared: Prepared, memo: Memo, rel: str, lang: str) -> tuple:
    lj = prepared.lang_jobs[(rel, lang)]
    return _text_inputs(prepared, memo, rel, lang, prepared.catalog_input(rel, lang), lj.root, lj.marker)


# A source file that stops parsing keeps its last good page: the engine remembers, per file, the
# digest of its last analysis that parsed (and the digest of those bytes), and while that analysis is
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


def _keep_last_good(prepared: Prepared, memo: Memo, config: BuildConfig, markers: dict[str, str]) -> None:
    for rel, head in list(prepared.heads.items()):
        record = _LAST_GOOD + rel
        if not failed_to_parse(head):
            memo.set_record(record, (prepared.digests[rel], prepared.source_digests[rel]))
            continue
        found = memo.record(record)
        if not (isinstance(found, tuple) and len(found) == 2):
            continue
        digest, source_digest = found
        good = memo.head(digest)
        data = memo.find(digest)
        if not (isinstance(good, PageHead) and isinstance(data, PageData)):
            continue  # gone from the store: the page is not published, as for a new broken file
        file = prepared.files[rel]
        note = Finding(
            "warning", "kept-last-good",
            "the site keeps this page as it was when the file last parsed, until the error above is fixed",
            path=rel,
        )
        prepared.kept[rel] = prepared.digests[rel]
        prepared.digests[rel], prepared.source_digests[rel] = digest, source_digest
        prepared.heads[rel] = replace(good, findings=head.findings + (note,))
        missing = _text_jobs(prepared, memo, config, file, markers)
        if missing:
            job = _FileJob(rel, file.url, file.is_index, b"", digest, data, tuple(missing))
            _take_group(prepared, memo, (job,), _prepare_group((job,), memo.object_store))


def source_of(prepared: Prepared, rel: str) -> bytes:
    """The source file's bytes, which must still be those its digest was made from."""
    path = prepared.files[rel].path
    try:
        source = read_regular(path, MAX_SOURCE_BYTES)
    except OSError:  # gone, or swapped for a link, a FIFO or a larger file since it was listed
        source = None
    if source is None or FileDigests.of_bytes(source) != prepared.source_digests[rel]:
        raise FileNotFoundError(f"{path} changed or disappeared during the build; rebuild")
    return source


def _take_group(prepared: Prepared, memo: Memo, jobs: tuple[_FileJob, ...], group: _GroupResult) -> None:
    memo.packed(group.pack, group.packed)
    repair.keep_repairs(group.repairs)
    for job, result in zip(jobs, group.results):
        _take_result(prepared, memo, job, result)


def _take_result(prepared: Prepared, memo: Memo, job: _FileJob, result: _FileResult) -> None:
    failed = result.head is not None and _failed_head(result.head)
    if result.head is not None:
        _take_page(prepared, memo, job.rel, job.digest, result.head, result.data)
    if result.notebook is not None:
        prepared.notebooks[job.rel] = result.notebook
    for lj in job.langs:
        prepared.text_heads[job.rel][lj.lang] = result.text_heads[lj.lang]
        memo.took(lj.digest, result.texts.get(lj.lang), in_store=not failed)
        if not failed:
            memo.set_head(lj.digest, result.text_heads[lj.lang])
    memo.stats.localized += len(job.langs)


def _take_page(prepared: Prepared, memo: Memo, rel: str, digest: str, head: PageHead, data: PageData | None) -> None:
    """A page analysed in this build (by a worker, which stored it, or inline)."""
    prepared.heads[rel] = head
    memo.stats.analysed += 1
    failed = _failed_head(head)  # (not remembered: the next build tries again)
    memo.took(digest, data, in_store=not failed)
    if not failed:
        memo.set_head(digest, head)


def load_page(prepared: Prepared, memo: Memo, rel: str) -> PageData:
    """A page's analysis: in memory, else from the store, else computed again (an entry deleted
    or damaged since its head was recorded)."""
    return memo.call(
        pipeline.analyse_file, *_page_inputs(prepared, memo, rel),
        valid=PageData, counter="analysed", head=page_head, remember=lambda data: not _failed(data),
    )


def load_text(prepared: Prepared, memo: Memo, rel: str, lang: str) -> LocalText:
    """A page's text in `lang`, the same way as `load_page`."""
    return memo.call(
        pipeline.localize_at, *_lang_job_inputs(prepared, memo, rel, lang),
        valid=LocalText, counter="localized", stored=_stored_text,
        head=lambda text: text_head(text, load_page(prepared, memo, rel)),
        remember=lambda _text: not _failed(load_page(prepared, memo, rel)),
    )


def _link_inputs(prepared: Prepared, memo: Memo, rel: str, symbols: Input) -> tuple:
    return page_input(prepared, memo, rel), symbols


def link_digests(prepared: Prepared, memo: Memo) -> tuple[Input, dict[str, str]]:
    """What the site defines (`site_symbols`, from the heads, as an input) and, per page, the
    digest of its code after `linking.link_code`: a page's links depend on its own code and on
    the site's symbols. Nothing is linked here: `linked_page` links a page whose digest is new
    when an output needs it (possibly in a worker process), and `record_links` notes afterwards
    which digests now have an entry."""
    symbols = memo.value(linking.site_symbols(prepared.heads), last="symbols")
    digests: dict[str, str] = {}
    for rel in prepared.heads:
        digest = digests[rel] = memo.digest(pipeline.link_file, *_link_inputs(prepared, memo, rel, symbols))
        if memo.head(digest) is not MISS:
            memo.stats.link_reused += 1
        else:
            prepared.unlinked[rel] = digest
    return symbols, digests


def record_links(prepared: Prepared, memo: Memo) -> None:
    """Heads for the links this build stored (in this process or in a worker)."""
    for rel, digest in prepared.unlinked.items():
        if memo.has(digest):
            memo.took(digest, None)  # (`prune` keeps what a worker stored)
            memo.set_head(digest, True)


def linked_input(prepared: Prepared, memo: Memo, rel: str, symbols: Input) -> Input:
    """The page with its code linked, as an input of other calls."""
    inputs = _linked_inputs(prepared, memo, rel, symbols)
    return Input(memo.digest(pipeline.with_links, *inputs), lambda: memo.call(pipeline.with_links, *inputs, keep="memory"))


def _linked_inputs(prepared: Prepared, memo: Memo, rel: str, symbols: Input) -> tuple:
    def valid(code: object) -> bool:
        return isinstance(code, tuple) and len(code) == len(load_page(prepared, memo, rel).sections)

    code = memo.result(pipeline.link_file, *_link_inputs(prepared, memo, rel, symbols), valid=valid, counter="linked")
    return page_input(prepared, memo, rel), code


def linked_page(prepared: Prepared, memo: Memo, rel: str, symbols: Input) -> PageData:
    """The page with its code linked (from the links stored for it, computed again if gone)."""
    return linked_input(prepared, memo, rel, symbols).value()
