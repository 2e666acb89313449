"""The build, top to bottom (`build_with` at the end of this module; `build`, the entry point in
builder/__init__.py, first asks `uptodate.py` whether the site is already what it would write,
from the inputs' metadata alone, before this module is even imported):

1. discover the source tree (`read.structure`);
2. prepare every file: its analysis and its text in every language (`prepare.py`, running the
   stages of `pipeline.py` in worker processes, each a call of the memo layer, `memo.py`);
3. per language, describe every output by its inputs: one loop over the registered kinds of
   output (`render/outputs/`: pages, folder listings, the translation status page, 404, search,
   …), each a frozen dataclass whose digest is its render digest, so an unchanged output is
   recognised without building its template context;
4. the language-free outputs: notebooks, the sitemap, "View source" copies, the theme's files;
5. produce the outputs whose inputs changed (in forked workers when there are many) and write
   them (`produce.py`, `outputs.py`).

Pages are known by their heads (`heads.py`) and loaded only when an output that shows them must
be produced. A new or mostly new site is written into a temporary folder next to the output and
swapped in; a mostly unchanged one is updated file by file, each replaced by a rename, once
everything is rendered. Either way a build that fails leaves the previous site as it was.
"""
from __future__ import annotations

import contextlib
import gc
import posixpath
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from .. import __version__
from ..findings import Finding, Report
from ..read.structure import Folder, SiteFiles, SourceFile, discover, lang_prefix, reading_order
from ..render import notebooks
from ..render.figures import svg_labels
from ..render.i18n import language_name, text_direction
from ..render.localize import LocalPage
from ..read.redirects import REDIRECTS_FILE, case_sensitive, load_redirects
from ..render.outputs import Language, Output, kinds
from ..render.outputs.programs import prose_markdown
from ..render.redirect import Redirect, plan_redirects
from ..render.text import local_page
from . import cache_size, pipeline
from .theme import Theme
from ..translate import glossary, repair, verdict
from ..translate.catalog import Catalog
from ..translate.verdict import tally
from ..typeset import highlight
from ..typeset.page import PageData
from .cache import BuildStats, RepairsRecord
from .config import BuildConfig
from .ui_catalogs import load_ui
from .entries import asset_bytes, svg_entries
from .heads import PageHead, TextHead
from .memo import Input, Memo
from .outputs import MARKER, MARKER_TEXT, claim, new_site_folder, swap_in, update_in_place, write_outputs
from . import build  # (the entry point: up to date by metadata first, else build_with)
from .result import BuildResult, Loaded
from .uptodate import Snapshot, take_snapshot
from .prepare import (
    Prepared,
    analyse_pages,
    failed_to_parse,
    link_digests,
    linked_input,
    load_page,
    load_text,
    page_input,
    prepare_pages,
    record_links,
    source_of,
)
from .produce import Production
from .validate import check_out

# ---------------------------------------------------------------------------------------------
# The site as every output sees it (render/outputs/base.py `Site`)


@dataclass
class _Site:
    """What every output of one build needs: the pages' heads, and their full data on demand."""

    config: BuildConfig
    files: SiteFiles
    theme: Theme
    prepared: Prepared
    production: Production
    theme_key: str  # the theme's fingerprint
    symbols: Input  # what the site's code defines
    linked_digests: dict[str, str]  # rel → digest of its linked code
    report: Report
    languages: dict[str, tuple[str, str]] = field(default_factory=dict)  # lang → (its name, text direction)
    constants: dict[str, Language] = field(default_factory=dict)  # lang → its constants (_render_language)
    orders: dict[str, list] = field(default_factory=dict)  # folder rel → its pages and subfolders, in reading order
    sequence: list = field(default_factory=list)  # every page and folder listing, in reading order
    near: dict[str, dict[str, tuple]] = field(default_factory=dict)  # lang → URL → (previous, next)
    linked: dict[str, Input] = field(default_factory=dict)  # rel → its linked page, as an input
    redirects: tuple[Redirect, ...] = ()  # old paths answered in every language (_plan_redirects)
    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # lang → rel → state → n
    figure_inputs: dict[tuple[str, str], tuple | None] = field(default_factory=dict)  # (rel, lang) → `_figure_inputs`
    reported: set[Finding] = field(default_factory=set)  # the notebooks' figure findings already reported

    @property
    def memo(self) -> Memo:
        return self.production.memo

    def order(self, folder: Folder) -> list:
        """The folder's published pages and its subfolders in reading order (`reading_order`):
        the folder page's list of links, then `order:` front matter, then file names. From the
        heads only, so it costs nothing when the site is reused."""
        found = self.orders.get(folder.rel)
        if found is None:
            index = self.heads.get(folder.index.rel) if folder.index else None
            shown = [p.rel for p in folder.pages if p.rel in self.heads and self.heads[p.rel].has_sections]
            orders = {rel: head.order for rel, head in self.heads.items() if head.order}
            found = self.orders[folder.rel] = reading_order(
                folder, self.files.folders, index.links if index else (), orders, shown + list(folder.subfolders)
            )
        return found

    def reading_sequence(self) -> list:
        """Every page and folder listing one after the other, as "next" walks them: a folder's
        page, then what it holds in reading order (a subfolder with all of its own)."""
        if not self.sequence and "" in self.files.folders:
            def visit(folder: Folder) -> None:
                self.sequence.append(folder)
                for item in self.order(folder):
                    if isinstance(item, Folder):
                        visit(item)
                    else:
                        self.sequence.append(item)
            visit(self.files.folders[""])
        return self.sequence

    def neighbours(self, lang: str) -> dict[str, tuple]:
        """URL → (previous, next) in the reading sequence, each (title, URL) or None (for the
        render inputs: a renamed page changes its neighbours' links)."""
        found = self.near.get(lang)
        if found is None:
            entries = [
                (self.folder_title(lang, item)[0] if isinstance(item, Folder) else self.text(item.rel, lang).title, item.url)
                for item in self.reading_sequence()
            ]
            found = self.near[lang] = {
                entry[1]: (entries[i - 1] if i else None, entries[i + 1] if i + 1 < len(entries) else None)
                for i, entry in enumerate(entries)
            }
        return found

    def folder_title(self, lang: str, folder: Folder) -> tuple[str, str]:
        if folder.index and folder.index.rel in self.heads:
            text = self.text(folder.index.rel, lang)
            return text.title, text.summary
        if not folder.rel:
            return self.constants[lang].site_title, ""
        return posixpath.basename(folder.rel).replace("_", " "), ""

    @property
    def heads(self) -> dict[str, PageHead]:
        return self.prepared.heads

    def text(self, rel: str, lang: str) -> TextHead:
        return self.prepared.text_heads[rel][lang]

    def language(self, lang: str) -> Language:
        return self.constants[lang]

    def published(self, file: SourceFile) -> bool:
        """A file that failed to parse is reported, and not published (an index still lists)."""
        return file.is_index or self.heads[file.rel].has_sections

    def kept(self, rel: str) -> bool:
        return rel in self.prepared.kept

    def has_source_page(self, file: SourceFile) -> bool:
        """A page kept from the last good build keeps that build's source page, if it has one."""
        if not self.kept(file.rel):
            return True
        previous = self.production.out / (file.rel + ".html")
        return previous.is_file() and not previous.is_symlink()

    # -- digests (render/outputs name what they are made of by these) ----------------------------

    def analysis_digest(self, rel: str) -> str:
        return self.prepared.digests[rel]

    def text_digest(self, rel: str, lang: str) -> str:
        return self.prepared.text_digests[rel][lang]

    def _text_input(self, rel: str, lang: str) -> Input:
        return Input(self.text_digest(rel, lang), lambda: load_text(self.prepared, self.memo, rel, lang))

    def _linked_input(self, rel: str) -> Input:
        found = self.linked.get(rel)
        if found is None:
            found = self.linked[rel] = linked_input(self.prepared, self.memo, rel, self.symbols)
        return found

    def sections_digest(self, rel: str, lang: str) -> str:
        """The digest of the page in `lang` (its text and linked code), which its render names."""
        return self.memo.digest(local_page, self._linked_input(rel), lang, self._text_input(rel, lang))

    def file_digest_of_asset(self, asset: str) -> str:
        return self.memo.file_digest(self.files.assets[asset].path)

    # -- loaded for a render -----------------------------------------------------------------------

    def page(self, rel: str) -> PageData:
        """The page with its code linked to the rest of the site."""
        return self._linked_input(rel).value()

    def local(self, rel: str, lang: str) -> LocalPage:
        return self.memo.call(local_page, self._linked_input(rel), lang, self._text_input(rel, lang), keep="memory")

    def unlinked_local(self, rel: str, lang: str) -> LocalPage:
        """The page in `lang` around its analysis as the cache has it (for outputs that show no
        linked code: they need not wait for the links, which other pages change)."""
        return self.memo.call(local_page, *self._unlinked_inputs(rel, lang), keep="memory")

    def _unlinked_inputs(self, rel: str, lang: str) -> tuple:
        return page_input(self.prepared, self.memo, rel), lang, self._text_input(rel, lang)

    def markdown_prose(self, rel: str, lang: str) -> list[str]:
        """A page's prose in `lang` as Markdown, section by section (for a translation's
        notebooks), kept in the store: one page's edit makes its folder's script again, which
        then loads none of the folder's other pages (small: the prose's text, once per language)."""
        local = Input(self.memo.digest(local_page, *self._unlinked_inputs(rel, lang)), lambda: self.unlinked_local(rel, lang))
        return self.memo.call(prose_markdown, local, lang == self.config.base_lang, valid=list)

    def analysis(self, rel: str) -> PageData:
        return load_page(self.prepared, self.memo, rel)

    def source(self, rel: str) -> bytes:
        return source_of(self.prepared, rel)

    def notebook(self, rel: str) -> str:
        """A page's .ipynb: made with its analysis in this build (a page without figures), else
        now, from its analysis and its figures' bytes (`_figure_inputs`)."""
        made = self.prepared.notebooks.get(rel)
        if made is not None:
            return made
        inputs = self._figure_inputs(rel, self.config.base_lang)
        if inputs is None:
            return notebooks.notebook_json(self.analysis(rel))
        figures = self.memo.result(pipeline.notebook_figures, *inputs, valid=notebooks.Figures)
        return self.memo.call(pipeline.notebook_file, page_input(self.prepared, self.memo, rel), figures, keep="memory", valid=str)

    def notebook_figures(self, rel: str, lang: str) -> str:
        """The digest of what the page's notebook in `lang` embeds ("" when it shows no figure),
        which names the outputs that embed them; why a figure stays a link is reported (once)."""
        inputs = self._figure_inputs(rel, lang)
        if inputs is None:
            return ""
        figures = self.notebook_attachments(rel, lang)
        for finding in figures.findings:
            if finding not in self.reported:
                self.reported.add(finding)
                self.report.add(finding)
        return self.memo.digest(pipeline.notebook_figures, *inputs)

    def notebook_attachments(self, rel: str, lang: str) -> notebooks.Figures:
        inputs = self._figure_inputs(rel, lang)
        if inputs is None:
            return notebooks.Figures()
        return self.memo.call(pipeline.notebook_figures, *inputs, valid=notebooks.Figures)

    def _figure_inputs(self, rel: str, lang: str) -> tuple | None:
        """The inputs of `pipeline.notebook_figures` for a page (None: it shows no figure): its
        analysis, each figure's bytes (None: missing or refused) and, in a translation, the page's
        translation file with what its verdicts read (the SVGs' labels)."""
        key = (rel, lang)
        if key in self.figure_inputs:
            return self.figure_inputs[key]
        assets = tuple(a for a in self.heads[rel].assets if notebooks.is_figure(a))
        found = None
        if assets:
            contents: list[Input | None] = []
            for asset in assets:
                if not self.publishable_figure(asset):
                    contents.append(None)
                    continue
                path = self.files.assets[asset].path
                contents.append(self.memo.source(path, path.read_bytes))
            catalog = self.prepared.catalog_input(rel, lang) if lang != self.config.base_lang else None
            found = (page_input(self.prepared, self.memo, rel), lang, catalog, assets, *contents)
        self.figure_inputs[key] = found
        return found

    def template(self, name: str, context: dict) -> str:
        return self.theme.render(name, **context)

    def asset_text(self, asset: str) -> str:
        return self.files.assets[asset].path.read_bytes().decode("utf-8", "replace")

    def figure_catalog(self, rel: str, lang: str) -> Catalog | None:
        """The translation file of the page that shows a figure, for its labels."""
        path = Path(self.config.translations) / f"{posixpath.splitext(rel)[0]}.{lang}.json"
        return Catalog.load(path, lang) if path.is_file() else None

    # -- facts that need a file ----------------------------------------------------------------

    def translation_exists(self, name: str) -> bool:
        listing = self.prepared.translations
        found = listing.is_file(name) if listing is not None else None
        return (Path(self.config.translations) / name).is_file() if found is None else found

    def publishable_figure(self, asset: str) -> bool:
        return asset in self.files.assets and not _refused_asset(self, asset)

    def figure_labels(self, asset: str) -> list[str]:
        """An SVG figure's translatable labels, known by the file's bytes (kept with the heads)."""
        found = self.files.assets.get(asset)
        if found is None:
            return []
        return self.memo.call(_svg_labels, self.memo.source(found.path, lambda: asset_bytes(found.path)), keep="heads", valid=list)

    def figure_counts(self, file: SourceFile, lang: str) -> dict[str, int]:
        """The page's SVG figures' labels by the state of their verdict (their findings go to the
        report; the other entries are judged by `localize`, which reads no files): only a page
        with an SVG figure loads anything."""
        if not any(asset.lower().endswith(".svg") for asset in self.heads[file.rel].assets):
            return {}
        labels = svg_entries(self.analysis(file.rel), self.figure_labels)
        if lang == self.config.base_lang:
            return {"translated": len(labels)}
        # Judged again only when what a verdict reads changed: the file, its fuzzy sidecar, the
        # glossary (a save in the editor rebuilds the site, and judging the labels was most of it).
        catalog = self.prepared.catalog_input(file.rel, lang)
        counts, findings = self.memo.call(_judge_labels, lang, catalog, tuple(labels), keep="memory")
        self.report.extend(_not_fatal(findings))
        return dict(counts)

    def counted(self, lang: str, rel: str, counts: dict[str, int]) -> None:
        """A page's entries by verdict state, as the status page counts them (`BuildResult.counts`)."""
        self.counts.setdefault(lang, {})[rel] = counts


def _judge_labels(lang: str, path: str, labels: tuple[str, ...]) -> tuple[dict[str, int], list[Finding]]:
    catalog = Catalog.load(Path(path), lang)
    verdicts = [catalog.verdict(label) for label in labels]
    return tally(verdicts), [f for v in verdicts for f in v.findings]


def _report_texts(site: _Site, lang: str, report: Report) -> None:
    """Each page's findings in `lang`, as warnings."""
    for rel in site.heads:
        text = site.text(rel, lang)
        report.extend(_not_fatal(text.catalog_findings))
        report.extend(_not_fatal(text.findings))


def _language_facts(langs: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    return {lang: (language_name(lang), text_direction(lang)) for lang in langs}


def _languages(memo: Memo, langs: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Each language's name in itself and its writing direction. Babel's locale data takes
    longer to load than a one-page rebuild takes, so the answers are kept with the heads (under
    the builder's fingerprint, which includes Babel's version)."""
    return memo.call(_language_facts, tuple(langs), keep="heads", valid=dict)


def _not_fatal(findings: Iterable[Finding]) -> list[Finding]:
    """A bad translation never fails the build: its block falls back to English, and the log says
    why. (`build.py check` is where translation errors fail a pull request.)"""
    return [replace(f, severity="warning") if f.severity == "error" else f for f in findings]


def _put(site: _Site, out_rel: str, output: Output, group: str) -> None:
    """Put an output in the site: rendered, or the previous site's file when that build rendered
    the same inputs."""
    if not output.cached:
        site.production.outputs[out_rel] = output.render(site)
        return
    site.production.output(out_rel, site.memo.output_digest(output), lambda: output.render(site), group=group)


def _render_language(site: _Site, lang: str, report: Report) -> None:
    """Every output of one language: each registered kind describes its outputs, which are
    produced later unless the previous site has them."""
    config = site.config
    ui = load_ui(lang, config.locales)
    report.extend(ui.findings)
    _report_texts(site, lang, report)
    # The site's name in this language: as configured, else the home page's title, else the theme's.
    home = site.files.folders.get("")
    home_title = site.text(home.index.rel, lang).title if home and home.index and home.index.rel in site.heads else ""
    title = config.site_title or home_title or ui.gettext("Annotated tutorials")
    digest = site.memo.value(("language", site.theme_key, lang, config, ui, title)).digest
    site.constants[lang] = Language(
        lang, config.base_lang, tuple(config.langs), tuple((other, site.languages[other][0]) for other in config.langs),
        site.languages[lang][1], title, config.site_url, ui, digest,
    )
    for kind in kinds(per_language=True):
        for out_rel, output, group in kind.describe(site, lang):
            _put(site, out_rel, output, group)
    # Figures other than SVGs are published as they are (SVGs are outputs: `Figure`).
    prefix = lang_prefix(lang, config.base_lang)
    for file in site.files.pages:
        if site.published(file):
            for asset in site.heads[file.rel].assets:
                if asset in site.files.assets and not asset.lower().endswith(".svg") and not _refused_asset(site, asset):
                    site.production.outputs.setdefault(prefix + asset, site.files.assets[asset].path)


# ---------------------------------------------------------------------------------------------
# Old URLs (read/redirects.py, render/redirect.py)


def _published(site: _Site) -> dict[str, str]:
    """Source rel → URL of every page a language tree has."""
    return {f.rel: f.url for f in site.files.pages if site.published(f)}


def _moved_by_case(translations_dir: Path, prepared: Prepared, langs: Iterable[str]) -> dict[str, str]:
    """Old output path → page URL for each page whose translations live under a path that
    differs from its source's only in case (`translate_cache/RWKV/` for `rwkv/`): the path the
    old site published it at, which its readers' links still name."""
    found: dict[str, str] = {}
    for page in prepared.files.values():
        for lang in langs:
            if (page.rel, lang) not in prepared.by_case:
                continue
            rel = Path(prepared.by_case[(page.rel, lang)]).relative_to(translations_dir).as_posix()
            old_base = rel[: -len(f".{lang}.json")]
            old = posixpath.join(posixpath.dirname(old_base), "index.html") if page.is_index else old_base + ".html"
            if old != page.url:
                found.setdefault(old, page.url)
    return found



def _plan_redirects(site: _Site) -> list[Finding]:
    """`redirects.yaml`'s entries and the pages whose translations keep an old path's case."""
    config = site.config
    rules, findings = load_redirects(config.source)
    others = [lang for lang in config.langs if lang != config.base_lang]
    by_case = _moved_by_case(config.translations, site.prepared, others) if Path(config.translations).is_dir() else {}
    site.redirects, planned = plan_redirects(
        rules, by_case, site.files, _published(site), config.langs,
        case_sensitive(site.production.out) if rules or by_case else True, str(Path(config.source) / REDIRECTS_FILE),
    )
    return findings + planned


def _write_site_extras(site: _Site) -> None:
    """Language-free outputs: a notebook per Python page, the folders' English prose, the sitemap."""
    for kind in kinds(per_language=False):
        for out_rel, output, group in kind.describe(site, None):
            _put(site, out_rel, output, group)


# Files a browser runs as documents when opened from the site: never published as figures.
ACTIVE_SUFFIXES = (".html", ".htm", ".xhtml", ".xht", ".xml", ".xsl", ".xslt", ".svgz", ".mht", ".mhtml", ".shtml", ".hta")


def _check_svg(asset: str, data: bytes) -> list[Finding]:
    from ..render import svg_safety  # (here: a site without SVG figures never needs its XML parser, 3 ms to import)

    found = svg_safety.check_svg(data, asset)
    if found.svg is None:
        return [Finding("error", "svg-refused", f"the figure is not published: {found.refused}", path=asset)]
    if found.removed:
        return [Finding("warning", "svg-sanitised", "removed from the published figure (it could run script or load "
                        f"from elsewhere when opened): {'; '.join(found.removed[:12])}", path=asset)]
    return []


def _asset_findings(site: _Site, asset: str) -> list[Finding]:
    """What publishing an asset a page shows would remove or refuse (render/svg_safety.py),
    known by the file's bytes (kept with the heads, so an unchanged figure is not checked again)."""
    if asset.lower().endswith(ACTIVE_SUFFIXES):
        return [Finding("error", "asset-refused", "a browser runs this kind of file as a page of the site when it is "
                        "opened, so it is not published; show a PNG or an SVG instead", path=asset)]
    if not asset.lower().endswith(".svg"):
        return []
    path = site.files.assets[asset].path
    return site.memo.call(_check_svg, asset, site.memo.source(path, path.read_bytes), keep="heads", valid=list)


def _svg_labels(svg: bytes | None) -> list[str]:
    """The stage: a figure's labels (none when it is not UTF-8 or not there)."""
    try:
        return svg_labels(svg.decode("utf-8")) if svg else []
    except UnicodeDecodeError:
        return []


def _refused_asset(site: _Site, asset: str) -> bool:
    return any(f.severity == "error" for f in _asset_findings(site, asset))


def _result(site: _Site, report: Report, written: int, started: float) -> BuildResult:
    localized = {lang: Loaded(site.heads, lambda rel, lang=lang: site.local(rel, lang)) for lang in site.config.langs}
    production = site.production
    kept = tuple(sorted(site.prepared.kept))
    skipped = tuple(sorted(rel for rel, head in site.heads.items() if failed_to_parse(head)))
    return BuildResult(production.out, report, Loaded(site.heads, site.page), localized, written,
                       time.perf_counter() - started, production.stats, kept, skipped, site.counts, site.figure_labels)


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """A build allocates millions of small objects and creates no garbage cycles worth chasing:
    Python's cycle collector runs far less often meanwhile (a few per cent of the build's time).
    Objects alive before the build are frozen out of its collections, which also keeps forked
    workers from copying the pages the collector would otherwise touch."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def build_with(config: BuildConfig, snapshot: Snapshot | None) -> BuildResult:
    """Build the site, reading every input; `snapshot` is the metadata of the inputs taken as the
    build started (`build`, builder/__init__.py, takes it to see whether the site is already up to
    date), recorded with the build for the next one. A long-lived process (`serve`) gets the result
    as soon as the site is in place, and what the next build learns from this one is recorded
    when it calls `settle` (after telling the pages to reload)."""
    started = time.perf_counter()
    settle()  # (a build left unrecorded goes first: the next one reads its records)
    snapshot = snapshot or take_snapshot(config)
    glossary.forget_paths()  # (a glossary added since the last build of this process is found)
    check_out(config)  # never an output folder that holds the inputs or lies among them,
    out = claim(Path(config.out))  # nor one this builder did not write
    with contextlib.ExitStack() as held:
        held.enter_context(cache_size.in_use(out, enabled=config.cache))  # (held against eviction until recorded)
        held.enter_context(verdict.remembering(long_lived=config.live_reload))  # (each value judged once)
        production = Production.open(out, enabled=config.cache, keep_in_memory=config.live_reload)
        held.enter_context(_fewer_collections())
        cache = production.memo.cache
        repairs = RepairsRecord(cache.root, cache.fingerprint, enabled=cache.enabled)
        repaired = held.enter_context(repair.remembering_repairs(repairs))  # (what earlier builds repaired)
        try:
            result, record = _build(config, production, snapshot, started)
        except BaseException:
            production.memo.save_heads(prune=False)  # what was computed before the failure stays findable
            raise
        held.callback(_recording, production, record, result, started)
        held.callback(repairs.save, repaired)
        if config.live_reload:
            _UNSETTLED.append(held.pop_all())
        return result


# What builds of this process left to record (`settle`): the site was in place, then they returned.
_UNSETTLED: list[contextlib.ExitStack] = []


def settle() -> None:
    """Record what the builds that returned early (`config.live_reload`) learnt: their links, the
    heads, the outputs' manifest and the nothing-changed record, then the cache's size and the
    young objects' collection. Until then the next build could not tell what they left."""
    while _UNSETTLED:
        _UNSETTLED.pop(0).close()


def _recording(production: Production, record: Callable[[], None], result: BuildResult, started: float) -> None:
    try:
        record()
    except BaseException:
        production.memo.save_heads(prune=False)
        raise
    result.seconds = time.perf_counter() - started


def _build(config: BuildConfig, production: Production, snapshot: Snapshot, started: float) -> tuple[BuildResult, Callable[[], None]]:
    memo = production.memo
    memo.cache.files.trust(snapshot.file_stats())  # (the inputs are those the snapshot, recorded with the build, saw)
    report = Report()
    if memo.cache.refused:
        report.add(Finding("warning", "cache-refused", f"the build cache is not used: {memo.cache.refused}; "
                           "make the folder yours and private (chmod 700), or set LABML_SITE_CACHE_DIR to one that is"))
    # 1. The source tree: what becomes which page (links, FIFOs and colliding outputs left out).
    files = discover(config.source, config.langs, config.base_lang, snapshot.listing("source"))
    report.extend(files.findings)
    theme = Theme(config.templates, production.compiled_templates)
    languages: dict[str, tuple[str, str]] = {}

    def meanwhile() -> None:  # while workers analyse: what needs no page (~50 ms otherwise alone)
        languages.update(_languages(memo, config.langs))
        theme.compile_all()  # before the render workers fork, so that they share it

    # 2. Every file analysed and localized (or known from the last build).
    prepared = prepare_pages(files, config, memo, meanwhile, snapshot)
    report.extend(prepared.findings)
    for head in prepared.heads.values():
        report.extend(head.findings)
        for asset in head.assets:
            if asset not in files.assets:
                report.add(Finding("warning", "asset-missing", f"references {asset}, which does not exist under the source folder; add the file or fix the path", path=head.rel))

    symbols, linked_digests = link_digests(prepared, memo)
    site = _Site(config, files, theme, prepared, production, memo.files(theme.files(), None).digest, symbols, linked_digests, report)
    shown = {asset for head in prepared.heads.values() for asset in head.assets if asset in files.assets}
    for asset in sorted(shown):  # what publishing the figures removes or refuses
        report.extend(_asset_findings(site, asset))
    site.languages = languages or _languages(memo, config.langs)
    report.extend(_plan_redirects(site))
    inputs = _inputs_digest(site)
    last = production.unchanged_since_last_build(inputs, snapshot)
    if last is not None:  # the site on disk is exactly what this build would write
        memo.stats.site_unchanged = True
        memo.save_heads()
        return _result(site, Report(list(last.findings)), 0, started), lambda: None

    # 3, 4. Every output described; those whose inputs changed wait to be produced.
    production.defer = True
    for lang in config.langs:
        _render_language(site, lang, report)
    _write_site_extras(site)
    for file in files.pages:
        if file.suffix == ".py":
            _publish_source(site, file)
    for path in sorted(p for p in theme.static_dir.rglob("*") if p.is_file() and not p.is_symlink()):
        production.outputs["static/" + path.relative_to(theme.static_dir).as_posix()] = path
    production.outputs["static/pygments.css"] = highlight.stylesheet()
    production.outputs[MARKER] = MARKER_TEXT
    production.copies_not_links()

    # 5. Produced and written; then what the next build learns from this one (`settle`).
    written = _write(site)
    result = _result(site, report, written, started)

    def record() -> None:
        record_links(prepared, memo)
        production.finish()
        production.record_build(inputs, report.findings, snapshot, result)
    return result, record


def _write(site: _Site) -> int:
    """Produce the deferred outputs and write the site: in place when most of it is as it was,
    else assembled beside the old one and swapped in. Returns the number of files written."""
    engine, out = site.production, site.production.out
    if out.is_dir() and len(engine.reused) * 2 >= len(engine.outputs):
        engine.produce()
        return update_in_place(engine.outputs, engine.reused, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    engine.previous()  # (linked or copied into the new site)
    tmp = new_site_folder(out)
    try:
        # Pages whose analyses and texts share a cache pack go to the same task, one after the
        # other, so that a worker reads each pack once (a page's group is its source's rel).
        keys = site.prepared.digests
        in_tree = engine.produce(
            tmp,
            site.config.jobs,
            order=lambda group: engine.memo.pack_of(keys[group]) if group in keys else "",
            prepare_worker=site.theme.compile_all,  # once, shared by the workers
            # Meanwhile the heads computed so far are saved (~0.1 s for a large site); `finish`
            # appends what the renders add.
            meanwhile=lambda: engine.memo.save_heads(prune=False),
        )
        written = write_outputs(engine.outputs, tmp, skip=in_tree)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return written


def _publish_source(site: _Site, file: SourceFile) -> None:
    """ "View source" downloads exactly the code the page shows: the file, or for a page kept
    from the last good build, the copy that build published (and its source page)."""
    path = file.path
    if site.kept(file.rel):
        previous = site.production.out / (file.rel + ".html")
        if site.published(file) and site.has_source_page(file):
            site.production.outputs.setdefault(file.rel + ".html", previous)
        path = site.production.out / file.rel
        if path.is_symlink() or not path.is_file():
            return
    site.production.outputs[file.rel] = path


def _inputs_digest(site: _Site) -> str:
    """Every input of the build: the builder, the theme, the configuration, the UI catalogs, and
    each source, translation (through the keys prepare_pages made from their bytes) and asset."""
    config, memo, prepared = site.config, site.memo, site.prepared
    parts: list = [site.theme_key, config]
    parts += [load_ui(lang, config.locales) for lang in config.langs]
    for file in site.files.pages:
        parts.append(prepared.digests[file.rel])
        parts.extend(prepared.text_digests.get(file.rel, {}).get(lang, "-") for lang in config.langs)
    for rel, asset in sorted(site.files.assets.items()):
        parts += [rel, memo.file_digest(asset.path)]
    parts.append(sorted(prepared.kept.items()))  # (the report differs even where the pages do not)
    parts.append(site.redirects)  # (a translation folder renamed to the source's case drops one)
    return memo.build_digest(*parts)


__all__ = ["BuildConfig", "BuildResult", "build", "build_with", "analyse_pages", "settle", "swap_in", "__version__"]

