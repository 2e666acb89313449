"""The build, top to bottom (`build` at the end of this module):

1. discover the source tree (`read.structure`);
2. prepare every file: its analysis and its text in every language (`prepare.py`, running the
   stages of `pipeline.py` in worker processes, memoised by the engine);
3. per language, describe every output by its inputs: pages, folder listings, the translation
   status page, 404, search (the render key is the digest of those inputs, so an unchanged
   output is recognised without building its template context);
4. the language-free extras: notebooks, the sitemap, "View source" copies, the theme's files;
5. produce the outputs whose inputs changed (in forked workers when there are many) and write
   them (`outputs.py`).

Pages are known by their heads (`heads.py`) and loaded only when an output that shows them must
be produced. A new or mostly new site is written into a temporary folder next to the output and
swapped in; a mostly unchanged one is updated file by file, each replaced by a rename, once
everything is rendered. Either way a build that fails leaves the previous site as it was.
"""
from __future__ import annotations

import contextlib
import gc
import html
import json
import posixpath
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping
from urllib.parse import urlparse

from .. import __version__
from ..typeset import highlight
from ..typeset import linking
from ..render import figures
from ..render import markdown
from ..render.localize import plain_text, section_html, valid_lists
from ..translate.catalog import Catalog, fuzzy_path, translation_path
from ..translate.verdict import SHOWN, tally
from .entries import asset_reader, svg_entries
from ..render import notebooks
from ..render import search_index
from ..render import sitemap  # reader extras
from ..render import svg_safety
from .config import BuildConfig
from ..findings import Finding, Report
from ..render.i18n import UI, language_name, load_ui, text_direction
from ..render.localize import LocalPage
from ..read.redirects import REDIRECTS_FILE, case_sensitive, load_redirects
from ..render.redirect import REDIRECT_SCRIPT, Redirect, moved_by_case, plan_redirects, redirect_html
from ..render.math_text import mathml_text, plain_with_math
from ..render.text import local_page
from . import cache_size
from .cache import BuildStats
from .engine import Engine
from .outputs import MARKER, MARKER_TEXT, claim, new_site_folder, swap_in, update_in_place, write_outputs
from .validate import check_out
from .heads import PageHead, TextHead
from ..typeset.page import PageData
from .prepare import (
    Prepared,
    analyse_pages,
    failed_to_parse,
    link_keys,
    linked_page,
    load_page,
    load_text,
    source_of,
    prepare_pages,
    record_links,
)
from ..render.theme import Theme
from ..translate import glossary, verdict
from ..read.structure import ORIGINALS_FOLDER, Folder, SiteFiles, SourceFile, breadcrumbs, discover, lang_prefix, reading_order, relative_url, url_under


@dataclass
class BuildResult:
    out: Path
    report: Report
    pages: Mapping[str, PageData]  # rel → page, code linked (loaded when read)
    localized: dict[str, Mapping[str, LocalPage]]  # lang → rel → page (loaded when read)
    files_written: int = 0
    seconds: float = 0.0
    stats: BuildStats = field(default_factory=BuildStats)  # what was computed vs reused
    kept: tuple[str, ...] = ()  # sources that failed to parse, whose last good page the site keeps
    skipped: tuple[str, ...] = ()  # sources that failed to parse and have no page (none ever parsed)
    # lang → rel → verdict state → entries: each page's total as the status page counts it (the
    # editor shows the same); empty when the site was unchanged and nothing was rendered.
    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    @property
    def built(self) -> int:
        """The pages made from the sources as they are now."""
        return len(self.pages) - len(self.kept) - len(self.skipped)

    @property
    def ok(self) -> bool:
        return not self.report.has_errors


class _Loaded(Mapping):
    """rel → a page, loaded from the cache when it is read: a build that reuses most of the
    site never loads most of its pages, and callers that want one page get just that one."""

    def __init__(self, rels: Iterable[str], load: Callable[[str], object]) -> None:
        self._rels = list(rels)
        self._known = set(self._rels)
        self._load = load

    def __getitem__(self, rel: str):
        if rel not in self._known:
            raise KeyError(rel)
        return self._load(rel)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rels)

    def __len__(self) -> int:
        return len(self._rels)


# ---------------------------------------------------------------------------------------------
# The site as every output sees it


@dataclass
class _Site:
    """What every output of one build needs: the pages' heads, and their full data on demand."""

    config: BuildConfig
    files: SiteFiles
    theme: Theme
    prepared: Prepared
    engine: Engine
    theme_key: str  # the theme's fingerprint
    symbols: linking.Symbols  # what the site's code defines
    linked_keys: dict[str, str]  # rel → key of its linked code
    site_titles: dict[str, str] = field(default_factory=dict)  # lang → the site's name (_render_language)
    locals: dict[tuple[str, str], LocalPage] = field(default_factory=dict)  # (rel, lang) → page, loaded so far
    languages: dict[str, tuple[str, str]] = field(default_factory=dict)  # lang → (its name, text direction)
    orders: dict[str, list] = field(default_factory=dict)  # folder rel → its pages and subfolders, in reading order
    sequence: list = field(default_factory=list)  # every page and folder listing, in reading order
    redirects: tuple[Redirect, ...] = ()  # old paths answered in every language (_plan_redirects)
    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # lang → rel → state → n

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

    @property
    def heads(self) -> dict[str, PageHead]:
        return self.prepared.heads

    def text(self, rel: str, lang: str) -> TextHead:
        return self.prepared.text_heads[rel][lang]

    def published(self, file: SourceFile) -> bool:
        """A file that failed to parse is reported, and not published (an index still lists)."""
        return file.is_index or self.heads[file.rel].has_sections

    def page(self, rel: str) -> PageData:
        """The page with its code linked to the rest of the site."""
        return linked_page(self.prepared, self.engine, rel, self.linked_keys[rel], self.symbols)

    def local(self, rel: str, lang: str) -> LocalPage:
        page = self.locals.get((rel, lang))
        if page is None:
            memo = self.engine.memo("local-page")  # kept between `serve` rebuilds
            key = (self.prepared.text_keys[rel][lang], self.linked_keys[rel])
            page = memo.get(key)
            if page is None:
                text = load_text(self.prepared, self.engine, rel, lang)
                page = memo[key] = local_page(self.page(rel), lang, text)
            self.locals[(rel, lang)] = page
        return page

    def sections_token(self, rel: str, lang: str) -> str:
        """Stands for a page's sections in a render key: they are a function of its text and
        linked code, which the two keys name."""
        return Engine.key("sections", self.prepared.text_keys[rel][lang], self.linked_keys[rel])


def _report_texts(site: _Site, lang: str, report: Report) -> None:
    """Each page's findings in `lang`, as warnings."""
    for rel in site.heads:
        text = site.text(rel, lang)
        report.extend(_not_fatal(text.catalog_findings))
        report.extend(_not_fatal(text.findings))


def _search_index_js(site: _Site, lang: str, folders: list[Folder]) -> None:
    """The language's `search-index.js`: every published page's rows, prepared with its text
    (and known by that text's key, which covers the page's URL), then the folder listings' entries."""
    parts: list[tuple[str, bytes]] = []
    provenance: list = []  # what the index is made of, for its render key
    for rel in _published(site):
        text = site.text(rel, lang)
        parts.append((text.title, text.search_rows))
        provenance.append(site.prepared.text_keys[rel][lang])
    for entry in search_index.folder_entries([(*_folder_title(site, lang, f), f.url) for f in folders]):
        parts.append((entry.title, search_index.rows([entry]).encode("utf-8")))
        provenance.append(parts[-1])
    out_rel = lang_prefix(lang, site.config.base_lang) + "search-index.js"
    site.engine.output(out_rel, Engine.key("search-index", lang, provenance), lambda: search_index.index_js_from_rows(lang, parts))


# ---------------------------------------------------------------------------------------------
# Per language: every output is described by its *inputs* (small, cheap to hash: the render key),
# and its template context is made from them only when it has to be rendered.


def _folder_title(site: _Site, lang: str, folder: Folder) -> tuple[str, str]:
    if folder.index and folder.index.rel in site.heads:
        text = site.text(folder.index.rel, lang)
        return text.title, text.summary
    if not folder.rel:
        return site.site_titles[lang], ""
    return posixpath.basename(folder.rel).replace("_", " "), ""


def _children(site: _Site, lang: str, folder: Folder) -> list[list[str]]:
    """(title, summary, URL) of what a folder lists (its pages and subfolders), in reading order."""
    children = []
    for item in site.order(folder):
        if isinstance(item, Folder):
            children.append([*_folder_title(site, lang, item), item.url])
        else:
            text = site.text(item.rel, lang)
            children.append([plain_with_math(text.title), plain_with_math(text.summary), item.url])
    return children


def _title_of(site: _Site, lang: str, item: SourceFile | Folder) -> str:
    return _folder_title(site, lang, item)[0] if isinstance(item, Folder) else site.text(item.rel, lang).title


def _neighbours(site: _Site, lang: str) -> dict[str, list]:
    """URL → [previous, next] in the reading sequence, each [title, URL] or None (for the
    render inputs: a renamed page changes its neighbours' links)."""
    sequence = site.reading_sequence()
    entries = [[_title_of(site, lang, item), item.url] for item in sequence]
    return {
        entry[1]: [entries[i - 1] if i else None, entries[i + 1] if i + 1 < len(entries) else None]
        for i, entry in enumerate(entries)
    }


def _inputs(site: _Site, lang: str, template: str, url: str, title: str, description: str = "", **extra) -> dict:
    """What an output is made of, besides the language's constants (`_language_key`)."""
    crumbs = []
    for crumb_url in breadcrumbs(url):
        folder = site.files.folders.get(posixpath.dirname(crumb_url))
        crumbs.append(_folder_title(site, lang, folder)[0] if folder else posixpath.dirname(crumb_url))
    return {"template": template, "url": url, "title": title, "description": description, "crumbs": crumbs, **extra}


def _language_key(site: _Site, lang: str, ui: UI) -> str:
    """Everything every output of `lang` depends on besides its inputs: the configuration, the
    UI catalog, the site's title in this language (language names come from Babel, whose version
    is in the builder's fingerprint)."""
    return Engine.key("language", site.theme_key, lang, site.config, ui, site.site_titles[lang])


def _languages(engine: Engine, langs: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Each language's name in itself and its writing direction. Babel's locale data takes
    longer to load than a one-page rebuild takes, so the answers are kept with the heads (under
    the builder's fingerprint, which includes Babel's version)."""
    return engine.summarised(
        Engine.key("languages", engine.fingerprint, *langs),
        lambda: {lang: (language_name(lang), text_direction(lang)) for lang in langs},
        valid=lambda found: isinstance(found, dict),
    )


def _alternates(site: _Site, url: str, lang: str) -> tuple[list[dict], list[dict]]:
    """hreflang links (absolute when a site URL is known) and the switcher's relative links."""
    alternates, switcher = [], []
    here = lang_prefix(lang, site.config.base_lang) + url
    for other in site.config.langs:
        target = lang_prefix(other, site.config.base_lang) + url
        href = url_under(site.config.site_url, target) if site.config.site_url else relative_url(here, target)
        alternates.append({"lang": other, "href": href})
        switcher.append(
            {"lang": other, "name": site.languages[other][0], "href": relative_url(here, target), "current": other == lang}
        )
    if site.config.site_url:
        alternates.append({"lang": "x-default", "href": url_under(site.config.site_url, url)})
    return alternates, switcher


def _context(site: _Site, lang: str, ui: UI, inputs: dict) -> dict:
    """The template context of an output: a function of its inputs and the language's constants."""
    config = site.config
    url = inputs["url"]
    prefix = lang_prefix(lang, config.base_lang)
    here = prefix + url
    root = relative_url(here, prefix + "index.html")[: -len("index.html")]
    alternates, languages = _alternates(site, url, lang)
    context = {
        "lang": lang,
        "dir": site.languages[lang][1],
        "_": ui.gettext,
        "title": inputs["title"],
        "description": inputs["description"],
        "site_title": site.site_titles[lang],
        "root": root,
        "static": relative_url(here, "static/x")[:-1],
        "alternates": alternates,
        "languages": languages,
        "breadcrumbs": [
            {"title": title, "href": relative_url(url, crumb_url)} for crumb_url, title in zip(breadcrumbs(url), inputs["crumbs"])
        ],
        "og_url": url_under(config.site_url, here) if config.site_url else "",
        "notice": inputs.get("notice"),
        "sections": [],
        "children": [{"title": t, "summary": s, "href": relative_url(url, u)} for t, s, u in inputs.get("children", ())],
        "source_href": "",
        "source_is_page": False,
        "notebook_href": "",
        "notebook_plan": "",
        "repo_href": inputs.get("repo_href", ""),
        "prev": None,
        "next": None,
        "toc": [],
        "prose_page": False,
        "originals": {},
    }
    nav = inputs.get("nav")
    if nav:
        for name, neighbour in zip(("prev", "next"), nav):
            if neighbour:
                context[name] = {"title": neighbour[0], "href": relative_url(url, neighbour[1])}
    rel = inputs.get("rel")
    if rel is not None:
        context["sections"] = site.local(rel, lang).sections
        context["toc"] = _toc(context["sections"])
        context["prose_page"] = _mostly_prose(context["sections"])
        if inputs.get("original"):  # sections whose English the bilingual toggle can show
            context["originals"] = {
                "ids": _translated_ids(context["sections"]),
                "src": relative_url(here, inputs["original"]),
                "page": url,
            }
        if inputs.get("source"):  # "View source": the base language's source page, or the file
            context["source_href"] = relative_url(here, rel + ".html") if inputs.get("source_page") else relative_url(here, rel)
            context["source_is_page"] = bool(inputs.get("source_page"))
        if inputs.get("notebook"):  # the English file; other languages' made from the page
            context["notebook_href"] = relative_url(here, notebooks.notebook_path(rel))
            plan = site.heads[rel].notebook_plan
            if lang != config.base_lang and plan:  # the title is the language's, and its prose (a script)
                own = {"title": inputs["title"], "prose": {"src": relative_url(here, inputs["markdown"]), "page": url},
                       "intro": notebooks.translated_intro(rel, json.loads(plan).get("intro", ""), ui.gettext)}
                context["notebook_plan"] = plan[:-1] + "," + json.dumps(own, ensure_ascii=False, separators=(",", ":"))[1:]
    source = inputs.get("source_of")
    if source is not None:  # one page for every language: no language switcher
        context.update(alternates=[], languages=[])
        context.update(
            code_html=_source_html(site, source),
            download_href=relative_url(here, source),
            page_href=relative_url(url, inputs["page_url"]),
            page_title=inputs["page_title"],
            file_name=posixpath.basename(source),
        )
    if "rows" in inputs:
        context.update(rows=inputs["rows"], totals=inputs["totals"], show_files=inputs.get("files", True))
    if inputs.get("not_found"):
        _not_found_links(site, lang, context)
    return context


_HEADING_RE = re.compile(r"<h([23])(?:\s[^>]*)?>(.*?)</h\1>", re.S)
_MATH_RE = re.compile(r"<math\b.*?</math>", re.S)
_ANY_TAG_RE = re.compile(r"<[^>]*>")


def _toc(sections) -> list[dict]:
    """The page's table of contents: each h2/h3 of its prose, as plain text (math as the text of
    its MathML, never TeX), linking to the section that holds it."""
    toc = []
    for section in sections:
        for level, inner in _HEADING_RE.findall(section.prose_html):
            inner = _MATH_RE.sub(lambda m: html.escape(mathml_text(m.group(0)), quote=False), inner)
            text = " ".join(html.unescape(_ANY_TAG_RE.sub("", inner)).split())
            if text:
                toc.append({"level": int(level), "title": text, "href": "#" + section.id})
    return toc


_LINE_PREFIX = re.compile(r'<span class="line" data-line="(\d+)">')


def _source_html(site: _Site, rel: str) -> str:
    """The whole file with line numbers: code lines as the page highlights them (without links:
    their targets are the page's), comment and docstring lines (the page's prose) as comments."""
    data = load_page(site.prepared, site.engine, rel)
    highlighted: dict[int, str] = {}
    for section in data.sections:
        if not section.code_html:
            continue
        body = section.code_html.split("<code>", 1)[1].rsplit("</code>", 1)[0]
        for row in body.split("\n"):
            m = _LINE_PREFIX.match(row)
            if m:
                highlighted[int(m.group(1))] = row[m.end(): -len("</span>")]
    lines = []
    text = source_of(site.prepared, rel).decode("utf-8", errors="replace").removeprefix("\ufeff")
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if number in highlighted:
            lines.append(highlighted[number])
        elif line.strip():
            kind = "c1" if line.lstrip().startswith("#") else "sd"
            lines.append(f'<span class="{kind}">{html.escape(line, quote=False)}</span>')
        else:
            lines.append("")
    if lines and lines[-1] == "":
        lines.pop()
    return highlight.render_code(lines, 1)


def _translated_ids(sections) -> frozenset[str]:
    """The sections with a translated block: where the bilingual toggle shows the English
    (untranslated blocks already are English)."""
    return frozenset(s.id for s in sections if s.has_prose and any(status in SHOWN for status, _ in s.texts))


def originals_path(folder: str) -> str:
    """The script holding the English prose of a folder's pages by page and section, for the
    bilingual toggle of every translated page (one file per folder, not per page and language:
    each file a site writes costs as much as rendering a page; loaded when the reader asks)."""
    return f"{ORIGINALS_FOLDER}/{folder + '/' if folder else ''}originals.js"


def markdown_path(folder: str) -> str:
    """The script holding, in one language (under its folder), the prose of a folder's Python
    pages as Markdown by page and section, for the notebooks site.js makes of translated pages
    (loaded on click: in the page, it made them a fifth larger)."""
    return f"{ORIGINALS_FOLDER}/{folder + '/' if folder else ''}markdown.js"


def _markdown_js(site: _Site, folder: Folder, lang: str) -> str:
    """Each of the folder's notebook pages' sections' prose in `lang` as Markdown (page.md's)."""
    found = {p.url: _prose_markdown(site, p.rel, lang, unlinked=True) for p in _with_notebooks(site, folder)}
    return "window.labmlMarkdown = " + json.dumps(found, ensure_ascii=False, separators=(",", ":")) + ";\n"


def _with_notebooks(site: _Site, folder: Folder) -> list[SourceFile]:
    return [p for p in _with_originals(site, folder) if site.heads[p.rel].notebook]


def _with_originals(site: _Site, folder: Folder) -> list[SourceFile]:
    """The folder's pages (its index page too) that have sections to show the English of."""
    pages = ([folder.index] if folder.index else []) + [p for p in folder.pages if p is not folder.index]
    return [p for p in pages if p.rel in site.heads and site.heads[p.rel].has_sections and not site.heads[p.rel].redirect]


def _originals_js(site: _Site, folder: Folder) -> str:
    """The folder's English prose by page, section and block: from the analysed pages (their prose
    needs no linking, and the pages' own renders may happen in other processes)."""
    found = {}
    for page in _with_originals(site, folder):
        data = load_page(site.prepared, site.engine, page.rel)
        # each block's English apart: the toggle shows it under that block's translation
        found[page.url] = {
            s.id: [section_html((b,), (("english", ""),), "") for b in s.blocks] for s in data.sections if s.has_prose
        }
    return "window.labmlOriginals = " + json.dumps(found, separators=(",", ":")) + ";\n"


def _mostly_prose(sections) -> bool:
    """A page with (almost) no code reads as one column: an index whose code is one line must
    not keep a code column the height of the page."""
    lines = sum(s.code_end - s.code_start + 1 for s in sections if s.code_html)
    return lines <= 3 and any(s.has_prose for s in sections)


def _render(site: _Site, lang: str, ui: UI, language_key: str, inputs: dict) -> None:
    """Put the output described by `inputs` in the site: rendered, or reused when the previous
    build rendered the same inputs."""
    out_rel = lang_prefix(lang, site.config.base_lang) + inputs["url"]
    site.engine.output(
        out_rel,
        Engine.key("render", language_key, inputs),
        lambda: site.theme.render(inputs["template"], **_context(site, lang, ui, inputs)),
        group=inputs.get("rel", inputs.get("source_of", "")),  # a page's outputs share its data
    )


def _not_fatal(findings: Iterable[Finding]) -> list[Finding]:
    """A bad translation never fails the build: its block falls back to English, and the log says
    why. (`build.py check` is where translation errors fail a pull request.)"""
    return [replace(f, severity="warning") if f.severity == "error" else f for f in findings]


def _render_language(site: _Site, lang: str, report: Report) -> None:
    config = site.config
    ui = load_ui(lang, config.locales)
    report.extend(ui.findings)
    prefix = lang_prefix(lang, config.base_lang)
    _report_texts(site, lang, report)

    # The site's name in this language: as configured, else the home page's title, else the theme's.
    home = site.files.folders.get("")
    home_title = site.text(home.index.rel, lang).title if home and home.index and home.index.rel in site.heads else ""
    site.site_titles[lang] = config.site_title or home_title or ui.gettext("Annotated tutorials")
    language_key = _language_key(site, lang, ui)

    neighbours = _neighbours(site, lang)

    # Pages
    for file in site.files.pages:
        head, text = site.heads[file.rel], site.text(file.rel, lang)
        if not site.published(file):
            if head.redirect:  # front matter `redirect:` and no prose: a page that points there
                script = relative_url(prefix + file.url, REDIRECT_SCRIPT)
                site.engine.output(prefix + file.url, Engine.key("redirect", head.redirect, text.title, lang, script),
                                   lambda h=head, t=text.title, js=script: redirect_html(h.redirect, t, lang, js))
            continue
        extra: dict = {"rel": file.rel, "sections": site.sections_token(file.rel, lang), "nav": neighbours.get(file.url)}
        if file.is_index:
            extra["children"] = _children(site, lang, site.files.folders[file.folder])
        if lang != config.base_lang and not text.fully_translated:
            extra["notice"] = {
                "translated": text.translated_sections,
                "total": text.prose_sections,
                "file": f"{posixpath.basename(str(config.translations))}/{file.base}.{lang}.json",
                "edit_href": url_under(config.edit_url, f"{file.base}.{lang}.json") if config.edit_url else "",
            }
        if lang != config.base_lang and head.has_sections:  # the English original, on request
            extra["original"] = originals_path(file.folder)
        elif len(config.langs) > 1 and head.has_sections and originals_path(file.folder) not in site.engine.outputs:
            folder = site.files.folders[file.folder]  # written once, for every translation
            site.engine.output(
                originals_path(file.folder),
                Engine.key("originals-by-block", [(p.url, site.sections_token(p.rel, lang)) for p in _with_originals(site, folder)]),
                lambda folder=folder: _originals_js(site, folder), group=file.folder,
            )
        if head.is_python:
            extra.update(source=True, notebook=head.notebook)
            if head.notebook and lang != config.base_lang and head.has_sections:  # its prose, as Markdown
                extra["markdown"] = prefix + markdown_path(file.folder)
                if extra["markdown"] not in site.engine.outputs:
                    folder = site.files.folders[file.folder]
                    site.engine.output(
                        extra["markdown"],
                        Engine.key("markdown", lang, [(p.url, site.sections_token(p.rel, lang)) for p in _with_notebooks(site, folder)]),
                        lambda folder=folder: _markdown_js(site, folder, lang), group=file.folder,
                    )
            source_page = file.rel + ".html"  # one for every language: the code is the same
            if file.rel in site.prepared.kept:  # the last good page keeps its last source page
                previous = site.engine.out / source_page
                if previous.is_file() and not previous.is_symlink():
                    extra["source_page"] = True
                    site.engine.outputs.setdefault(source_page, previous)
            else:  # "View source": the file, readable, highlighted
                extra["source_page"] = True
                if lang == config.base_lang:
                    _render(site, lang, ui, language_key, _inputs(
                        site, lang, "source.html", file.rel + ".html", posixpath.basename(file.rel),
                        source_of=file.rel, analysis=site.prepared.keys[file.rel], page_url=file.url, page_title=text.title,
                    ))
        if config.source_url:  # "view on GitHub": the page's source, each section's lines
            extra["repo_href"] = url_under(config.source_url, file.rel)
        _render(site, lang, ui, language_key, _inputs(site, lang, "page.html", file.url, text.title, text.summary, **extra))
        if config.markdown:  # the page as Markdown, for programs (llms.txt lists them)
            site.engine.output(
                prefix + file.url + ".md", Engine.key("page-md", lang, site.sections_token(file.rel, lang), text.title, head.is_python),
                lambda rel=file.rel: _page_markdown(site, rel, lang), group=file.rel,
            )
        for asset in head.assets:
            if asset in site.files.assets and prefix + asset not in site.engine.outputs:  # (missing ones were reported once)
                path = site.files.assets[asset].path
                if _refused_asset(site, asset):
                    continue
                if asset.lower().endswith(".svg"):  # sanitised, themed, labels translated (render/figures.py)
                    site.engine.output(
                        prefix + asset,
                        Engine.key("svg", lang, site.engine.file_digest(path), site.prepared.text_keys[file.rel][lang] if lang != config.base_lang else ""),
                        lambda path=path, rel=file.rel, asset=asset: _figure(site, path, rel, lang, asset), group=file.rel,
                    )
                else:
                    site.engine.outputs[prefix + asset] = path

    _write_redirects(site, lang)

    # Folder indexes that have no source of their own, and the home page
    for folder in site.files.folders.values():
        if folder.index is None:
            title, summary = _folder_title(site, lang, folder)
            _render(site, lang, ui, language_key, _inputs(
                site, lang, "page.html", folder.url, title, summary, children=_children(site, lang, folder), nav=neighbours.get(folder.url)
            ))

    # Translation status, 404: each page's entries by the state of their verdict, as `stats` counts
    rows, totals = [], {"translated": 0, "total": 0}
    for file in site.files.pages:
        head, text = site.heads[file.rel], site.text(file.rel, lang)
        counts = dict(text.counts)
        figure_counts, figure_findings = _figure_counts(site, file, lang)
        report.extend(_not_fatal(figure_findings))
        for state, n in figure_counts.items():
            counts[state] = counts.get(state, 0) + n
        site.counts.setdefault(lang, {})[file.rel] = counts
        name = f"{file.base}.{lang}.json"
        rows.append({
            "title": text.title,
            "href": relative_url("translation-status.html", file.url),
            "blocks": sum(counts.values()),
            "translated": counts.get("translated", 0) + counts.get("repaired", 0),  # shown
            "fuzzy": counts.get("fuzzy", 0),
            "untranslated": counts.get("untranslated", 0),
            "invalid": counts.get("invalid", 0),
            # Only a file that exists: the base language has none, and a page nobody has
            # started translating has none yet.
            "file": name if lang != config.base_lang and (Path(config.translations) / name).is_file() else "",
        })
        totals["translated"] += text.translated_sections
        totals["total"] += text.prose_sections
    title = ui.gettext("Translation status") + f" · {site.languages[lang][0]}"
    _render(site, lang, ui, language_key, _inputs(
        site, lang, "status.html", "translation-status.html", title, rows=rows, totals=totals, files=lang != config.base_lang
    ))
    _render(site, lang, ui, language_key, _inputs(site, lang, "404.html", "404.html", ui.gettext("Page not found"), not_found=True))
    _write_language_extras(site, lang, ui, language_key)


# ---------------------------------------------------------------------------------------------
# Old URLs (read/redirects.py, render/redirect.py)


def _plan_redirects(site: _Site) -> list[Finding]:
    """`redirects.yaml`'s entries and the pages whose translations keep an old path's case."""
    config = site.config
    rules, findings = load_redirects(config.source)
    others = [lang for lang in config.langs if lang != config.base_lang]
    by_case = moved_by_case(config.translations, site.files.pages, others) if Path(config.translations).is_dir() else {}
    site.redirects, planned = plan_redirects(
        rules, by_case, site.files, _published(site), config.langs,
        case_sensitive(site.engine.out) if rules or by_case else True, str(Path(config.source) / REDIRECTS_FILE),
    )
    return findings + planned


def _write_redirects(site: _Site, lang: str) -> None:
    prefix = lang_prefix(lang, site.config.base_lang)
    for r in site.redirects:
        title = site.text(r.rel, lang).title if r.rel in site.heads else r.old
        script = relative_url(prefix + r.old, REDIRECT_SCRIPT)
        site.engine.output(prefix + r.old, Engine.key("redirect", r.href(), title, lang, script),
                           lambda href=r.href(), t=title, js=script: redirect_html(href, t, lang, js))


# Reader extras: linked code, notebooks, search indexes, sitemap (linking.py, notebooks.py, …)


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
        breadcrumbs=[{"title": site.site_titles[lang], "href": root + "index.html"}],
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
    """Source rel → URL of every page a language tree has."""
    return {f.rel: f.url for f in site.files.pages if site.published(f)}


def _write_language_extras(site: _Site, lang: str, ui: UI, language_key: str) -> None:
    """The language's search index (a script, so it loads from file:// too) and search page."""
    folders = [folder for folder in site.files.folders.values() if folder.index is None]
    _search_index_js(site, lang, folders)
    if site.config.markdown:
        _llms_txt(site, lang, ui)
    _render(site, lang, ui, language_key, _inputs(site, lang, "search.html", "search.html", ui.gettext("Search")))


def _figure_counts(site: _Site, file: SourceFile, lang: str) -> tuple[dict[str, int], list[Finding]]:
    """The page's SVG figures' labels by the state of their verdict, and their findings (the other
    entries are judged by `localize`, which reads no files): only a page with an SVG figure
    loads anything."""
    if not any(asset.lower().endswith(".svg") for asset in site.heads[file.rel].assets):
        return {}, []
    labels = svg_entries(load_page(site.prepared, site.engine, file.rel), asset_reader(site.files))
    if lang == site.config.base_lang:
        return {"translated": len(labels)}, []
    path = translation_path(site.config.translations, file, lang)
    # Judged again only when what a verdict reads changed: the file, its fuzzy sidecar, the
    # glossary (a save in the editor rebuilds the site, and judging the labels was most of it).
    gloss = glossary.glossary_path(path.parent, lang)
    inputs = [path, fuzzy_path(path)] + ([gloss] if gloss is not None else [])
    memo = site.engine.memo("figure-counts")
    key = site.engine.key("figure-counts", site.engine.fingerprint, lang, str(path), tuple(labels),
                          site.engine.files_digest(inputs), str(gloss))
    if key not in memo:
        catalog = Catalog.load(path, lang)
        verdicts = [catalog.verdict(label) for label in labels]
        memo[key] = (tally(verdicts), [f for v in verdicts for f in v.findings])
    counts, findings = memo[key]
    return dict(counts), list(findings)


# Files a browser runs as documents when opened from the site: never published as figures.
ACTIVE_SUFFIXES = (".html", ".htm", ".xhtml", ".xht", ".xml", ".xsl", ".xslt", ".svgz", ".mht", ".mhtml", ".shtml", ".hta")


def _asset_findings(site: _Site, asset: str) -> list[Finding]:
    """What publishing an asset a page shows would remove or refuse (render/svg_safety.py),
    known by the file's bytes (kept with the heads, so an unchanged figure is not checked again)."""
    if asset.lower().endswith(ACTIVE_SUFFIXES):
        return [Finding("error", "asset-refused", "a browser runs this kind of file as a page of the site when it is "
                        "opened, so it is not published; show a PNG or an SVG instead", path=asset)]
    if not asset.lower().endswith(".svg"):
        return []
    path = site.files.assets[asset].path

    def check() -> list[Finding]:
        found = svg_safety.check_svg(path.read_bytes(), asset)
        if found.svg is None:
            return [Finding("error", "svg-refused", f"the figure is not published: {found.refused}", path=asset)]
        if found.removed:
            return [Finding("warning", "svg-sanitised", "removed from the published figure (it could run script or load "
                            f"from elsewhere when opened): {'; '.join(found.removed[:12])}", path=asset)]
        return []

    key = Engine.key("svg-check", site.engine.fingerprint, site.engine.file_digest(path))
    return site.engine.summarised(key, check, valid=lambda found: isinstance(found, list))


def _refused_asset(site: _Site, asset: str) -> bool:
    return any(f.severity == "error" for f in _asset_findings(site, asset))


def _figure(site: _Site, path: Path, rel: str, lang: str, asset: str = "") -> bytes:
    """An SVG figure as `lang` shows it: without what could run script or load from elsewhere
    (render/svg_safety.py), dark-mode colours added, its labels looked up in the translation file
    of the page that shows it (render/figures.py)."""
    svg = svg_safety.safe_svg(path.read_bytes().decode("utf-8", "replace"), asset)
    if svg is None:  # (refused figures are not published: `_refused_asset`)
        return b""
    translate = None
    if lang != site.config.base_lang:
        catalog_path = Path(site.config.translations) / f"{posixpath.splitext(rel)[0]}.{lang}.json"
        if catalog_path.is_file():
            catalog = Catalog.load(catalog_path, lang)

            def translate(label: str) -> str | None:
                if label not in catalog:
                    return None
                found = catalog.verdict(label)
                return plain_text(found.html) if found.shown and found.html else None

    return figures.themed_svg(svg, translate).encode("utf-8")


def _prose_markdown(site: _Site, rel: str, lang: str, unlinked: bool = False) -> list[str]:
    """Each section's prose as Markdown in `lang`: as written for the base language, else made
    from the translated HTML (math as TeX). `unlinked`: from the page's analysis and text as the
    cache has them (prose needs no linking, which the page's own render may do elsewhere)."""
    if unlinked:
        data, sections = load_page(site.prepared, site.engine, rel), load_text(site.prepared, site.engine, rel, lang).sections
    else:
        local = site.local(rel, lang)
        data, sections = local.data, [(s.texts, s.translated) for s in local.sections]
    if lang == site.config.base_lang:
        return [s.prose_md for s in data.sections]
    return [  # unit by unit: a translated block's value, an untranslated one's English key
        markdown.section_markdown(
            (valid_lists(value if status in SHOWN and value else block.key), block.placeholders)
            for block, (status, value) in zip(section.blocks, texts)
        ) if section.has_prose else ""
        for section, (texts, _translated) in zip(data.sections, sections)
    ]


def _page_markdown(site: _Site, rel: str, lang: str) -> str:
    local = site.local(rel, lang)
    prose = _prose_markdown(site, rel, lang)
    lang_name = "python" if local.data.is_python else ""
    return markdown.page_markdown(local.title, local.data.url, list(zip(prose, (s.code for s in local.data.sections))), lang_name)


def _llms_txt(site: _Site, lang: str, ui: UI) -> None:
    """`llms.txt` at the language's root: each page's Markdown, in reading order."""
    rows, summary = [], ""
    for item in site.reading_sequence():
        if isinstance(item, Folder):  # a folder's page, when it has a source of its own
            item = item.index if item.index and item.index.rel in site.heads and site.heads[item.index.rel].has_sections else None
            if item is None:
                continue
        text = site.text(item.rel, lang)
        summary = summary or text.summary
        rows.append((text.title, item.url + ".md", text.summary))
    title = site.site_titles[lang]
    heading = ui.gettext("Pages in this section")
    out_rel = lang_prefix(lang, site.config.base_lang) + "llms.txt"
    site.engine.output(out_rel, Engine.key("llms-txt", lang, title, summary, rows, heading), lambda: markdown.llms_txt(title, summary, rows, heading))


def _notebook(site: _Site, rel: str) -> str:
    """A page's .ipynb: made with its analysis in this build, else now (it reads the page's code
    and prose, not the linked HTML)."""
    made = site.prepared.notebooks.get(rel)
    if made is None:
        made = notebooks.notebook_json(load_page(site.prepared, site.engine, rel))
    return made


def _write_site_extras(site: _Site) -> None:
    """Language-free extras: a notebook per Python page, and the sitemap when URLs are known."""
    config = site.config
    for file in site.files.pages:
        if site.heads[file.rel].notebook:
            path = notebooks.notebook_path(file.rel)
            site.engine.output(path, Engine.key("notebook", site.prepared.keys[file.rel]), lambda rel=file.rel: _notebook(site, rel))
    if config.site_url:  # sitemaps need absolute URLs; without --site-url there is none
        site.engine.outputs["sitemap.xml"] = sitemap.sitemap_xml(config.site_url, _published_urls(site), config.langs, config.base_lang)


def _result(site: _Site, report: Report, written: int, started: float) -> BuildResult:
    localized = {lang: _Loaded(site.heads, lambda rel, lang=lang: site.local(rel, lang)) for lang in site.config.langs}
    engine = site.engine
    kept = tuple(sorted(site.prepared.kept))
    skipped = tuple(sorted(rel for rel, head in site.heads.items() if failed_to_parse(head)))
    return BuildResult(engine.out, report, _Loaded(site.heads, site.page), localized, written,
                       time.perf_counter() - started, engine.stats, kept, skipped, site.counts)


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


def build(config: BuildConfig) -> BuildResult:
    started = time.perf_counter()
    glossary.forget_paths()  # (a glossary added since the last build of this process is found)
    check_out(config)  # never an output folder that holds the inputs or lies among them,
    out = claim(Path(config.out))  # nor one this builder did not write
    with cache_size.in_use(out, enabled=config.cache), verdict.remembering():  # (held against eviction; each value judged once)
        engine = Engine.open(out, enabled=config.cache, keep_in_memory=config.live_reload)
        with _fewer_collections():
            try:
                return _build(config, engine, started)
            except BaseException:
                engine.save_summaries(prune=False)  # what was computed before the failure stays findable
                raise


def _build(config: BuildConfig, engine: Engine, started: float) -> BuildResult:
    report = Report()
    if engine.cache.refused:
        report.add(Finding("warning", "cache-refused", f"the build cache is not used: {engine.cache.refused}; "
                           "make the folder yours and private (chmod 700), or set LABML_SITE_CACHE_DIR to one that is"))
    # 1. The source tree: what becomes which page (links, FIFOs and colliding outputs left out).
    files = discover(config.source, config.langs, config.base_lang)
    report.extend(files.findings)
    theme = Theme(config.templates, engine.compiled_templates)
    languages: dict[str, tuple[str, str]] = {}

    def meanwhile() -> None:  # while workers analyse: what needs no page (~50 ms otherwise alone)
        languages.update(_languages(engine, config.langs))
        theme.compile_all()  # before the render workers fork, so that they share it

    # 2. Every file analysed and localized (or known from the last build).
    prepared = prepare_pages(files, config, engine, meanwhile)
    report.extend(prepared.findings)
    for head in prepared.heads.values():
        report.extend(head.findings)
        for asset in head.assets:
            if asset not in files.assets:
                report.add(Finding("warning", "asset-missing", f"references {asset}, which does not exist under the source folder; add the file or fix the path", path=head.rel))

    symbols, linked_keys = link_keys(prepared, engine)
    site = _Site(config, files, theme, prepared, engine, theme.fingerprint(), symbols, linked_keys)
    shown = {asset for head in prepared.heads.values() for asset in head.assets if asset in files.assets}
    for asset in sorted(shown):  # what publishing the figures removes or refuses
        report.extend(_asset_findings(site, asset))
    site.languages = languages or _languages(engine, config.langs)
    report.extend(_plan_redirects(site))
    inputs = _inputs_digest(site)
    last = engine.unchanged_since_last_build(inputs)
    if last is not None:  # the site on disk is exactly what this build would write
        engine.stats.site_unchanged = True
        engine.save_summaries()
        return _result(site, Report(list(last.findings)), 0, started)

    # 3, 4. Every output described; those whose inputs changed wait to be produced.
    engine.defer = True
    for lang in config.langs:
        _render_language(site, lang, report)
    _write_site_extras(site)
    for file in files.pages:
        if file.suffix == ".py":
            _publish_source(site, file)
    for path in sorted(p for p in theme.static_dir.rglob("*") if p.is_file() and not p.is_symlink()):
        engine.outputs["static/" + path.relative_to(theme.static_dir).as_posix()] = path
    engine.outputs["static/pygments.css"] = highlight.stylesheet()
    engine.outputs[MARKER] = MARKER_TEXT
    engine.copies_not_links()

    # 5. Produced and written.
    written = _write(site)
    record_links(prepared, engine)
    engine.finish()
    engine.record_build(inputs, report.findings)
    return _result(site, report, written, started)


def _write(site: _Site) -> int:
    """Produce the deferred outputs and write the site: in place when most of it is as it was,
    else assembled beside the old one and swapped in. Returns the number of files written."""
    engine, out = site.engine, site.engine.out
    if out.is_dir() and len(engine.reused) * 2 >= len(engine.outputs):
        engine.produce()
        return update_in_place(engine.outputs, engine.reused, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = new_site_folder(out)
    try:
        # Pages whose analyses and texts share a cache pack go to the same task, one after the
        # other, so that a worker reads each pack once (a page's group is its source's rel).
        keys = site.prepared.keys
        in_tree = engine.produce(
            tmp,
            site.config.jobs,
            order=lambda group: engine.pack_of(keys[group]) if group in keys else "",
            prepare_worker=site.theme.compile_all,  # once, shared by the workers
            # Meanwhile the heads computed so far are saved (~0.1 s for a large site); `finish`
            # appends what the renders add.
            meanwhile=lambda: engine.save_summaries(prune=False),
        )
        written = write_outputs(engine.outputs, tmp, skip=in_tree)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return written


def _publish_source(site: _Site, file: SourceFile) -> None:
    """ "View source" downloads exactly the code the page shows: the file, or for a page kept
    from the last good build, the copy that build published."""
    path = file.path
    if file.rel in site.prepared.kept:
        path = site.engine.out / file.rel
        if path.is_symlink() or not path.is_file():
            return
    site.engine.outputs[file.rel] = path


def _inputs_digest(site: _Site) -> str:
    """Every input of the build: the builder, the theme, the configuration, the UI catalogs, and
    each source, translation (through the keys prepare_pages made from their bytes) and asset."""
    config, engine, prepared = site.config, site.engine, site.prepared
    parts: list = [engine.fingerprint, site.theme_key, config]
    parts += [load_ui(lang, config.locales) for lang in config.langs]
    for file in site.files.pages:
        parts.append(prepared.keys[file.rel])
        parts.extend(prepared.text_keys.get(file.rel, {}).get(lang, "-") for lang in config.langs)
    for rel, asset in sorted(site.files.assets.items()):
        parts += [rel, engine.file_digest(asset.path)]
    parts.append(sorted(prepared.kept.items()))  # (the report differs even where the pages do not)
    parts.append(site.redirects)  # (a translation folder renamed to the source's case drops one)
    return Engine.key("build", *parts)


__all__ = ["BuildConfig", "BuildResult", "build", "analyse_pages", "swap_in", "__version__"]
