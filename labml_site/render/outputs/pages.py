"""The outputs rendered with the theme's templates: pages, folder listings, "View source"
pages, the translation status page, 404, search; and redirects. Their template context is made
here, from the output's fields and what the site loads for it."""
from __future__ import annotations

import html
import json
import posixpath
import re
from dataclasses import dataclass
from typing import Iterator
from urllib.parse import urlparse

from ...read.structure import Folder, breadcrumb_trail, breadcrumbs, lang_prefix, relative_url, url_under
from ...translate.verdict import SHOWN
from ...typeset import highlight
from .. import notebooks
from ..math_text import mathml_text, plain_with_math
from ..redirect import REDIRECT_SCRIPT, redirect_html
from .base import Language, Output, Site
from .scripts import figures_path, markdown_path, originals_path, shows_figures


def crumbs(site: Site, lang: str, url: str, known: dict | None = None) -> tuple[str, ...]:
    """The titles of the folders above `url`, for its breadcrumbs (`known`: the answers so far,
    by trail, for a describe that asks for every page of a folder)."""
    trail = breadcrumb_trail(url)
    if known is not None and trail in known:
        return known[trail]
    found = []
    for crumb_url in trail:
        folder = site.files.folders.get(posixpath.dirname(crumb_url))
        found.append(site.folder_title(lang, folder)[0] if folder else posixpath.dirname(crumb_url))
    if known is not None:
        known[trail] = tuple(found)
    return tuple(found)


def children(site: Site, lang: str, folder: Folder) -> tuple[tuple[str, str, str], ...]:
    """(title, summary, URL) of what a folder lists (its pages and subfolders), in reading order."""
    found = []
    for item in site.order(folder):
        if isinstance(item, Folder):
            found.append((*site.folder_title(lang, item), item.url))
        else:
            text = site.text(item.rel, lang)
            found.append((plain_with_math(text.title), plain_with_math(text.summary), item.url))
    return tuple(found)


def _alternates(language: Language, url: str) -> tuple[list[dict], list[dict]]:
    """hreflang links (absolute when a site URL is known) and the switcher's relative links."""
    alternates, switcher = [], []
    here = language.prefix + url
    names = dict(language.names)
    for other in language.langs:
        target = lang_prefix(other, language.base_lang) + url
        href = url_under(language.site_url, target) if language.site_url else relative_url(here, target)
        alternates.append({"lang": other, "href": href})
        switcher.append({"lang": other, "name": names[other], "href": relative_url(here, target), "current": other == language.lang})
    if language.site_url:
        alternates.append({"lang": "x-default", "href": url_under(language.site_url, url)})
    return alternates, switcher


def base_context(language: Language, url: str, title: str, description: str, crumb_titles: tuple[str, ...]) -> dict:
    """What every template is given: the page's place in the site and the language's constants."""
    here = language.prefix + url
    root = relative_url(here, language.prefix + "index.html")[: -len("index.html")]
    alternates, languages = _alternates(language, url)
    return {
        "lang": language.lang,
        "dir": language.direction,
        "_": language.ui.gettext,
        "title": title,
        "description": description,
        "site_title": language.site_title,
        "root": root,
        "static": relative_url(here, "static/x")[:-1],
        "alternates": alternates,
        "languages": languages,
        "breadcrumbs": [
            {"title": t, "href": relative_url(url, crumb_url)} for crumb_url, t in zip(breadcrumbs(url), crumb_titles)
        ],
        "og_url": url_under(language.site_url, here) if language.site_url else "",
        "notice": None,
        "sections": [],
        "children": [],
        "source_href": "",
        "source_is_page": False,
        "notebook_href": "",
        "notebook_plan": "",
        "repo_href": "",
        "prev": None,
        "next": None,
        "toc": [],
        "prose_page": False,
        "originals": {},
    }


def _listing(context: dict, url: str, listed: tuple, nav: tuple | None) -> None:
    context["children"] = [{"title": t, "summary": s, "href": relative_url(url, u)} for t, s, u in listed]
    for name, neighbour in zip(("prev", "next"), nav or ()):
        if neighbour:
            context[name] = {"title": neighbour[0], "href": relative_url(url, neighbour[1])}


_HEADING_RE = re.compile(r"<h([23])(?:\s[^>]*)?>(.*?)</h\1>", re.S)
_MATH_RE = re.compile(r"<math\b.*?</math>", re.S)
_ANY_TAG_RE = re.compile(r"<[^>]*>")


def toc(sections) -> list[dict]:
    """The page's table of contents: each h2/h3 of its prose, as plain text (math as the text of
    its MathML, never TeX), linking to the section that holds it."""
    found = []
    for section in sections:
        for level, inner in _HEADING_RE.findall(section.prose_html):
            inner = _MATH_RE.sub(lambda m: html.escape(mathml_text(m.group(0)), quote=False), inner)
            text = " ".join(html.unescape(_ANY_TAG_RE.sub("", inner)).split())
            if text:
                found.append({"level": int(level), "title": text, "href": "#" + section.id})
    return found


def translated_ids(sections) -> frozenset[str]:
    """The sections with a translated block: where the bilingual toggle shows the English
    (untranslated blocks already are English)."""
    return frozenset(s.id for s in sections if s.has_prose and any(status in SHOWN for status, _ in s.texts))


def mostly_prose(sections) -> bool:
    """A page with (almost) no code reads as one column: an index whose code is one line must
    not keep a code column the height of the page."""
    lines = sum(s.code_end - s.code_start + 1 for s in sections if s.code_html)
    return lines <= 3 and any(s.has_prose for s in sections)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page(Output):
    """A source file's page in one language."""

    lang: str
    language: str  # Language.digest
    url: str
    title: str
    description: str
    crumbs: tuple[str, ...]
    rel: str
    sections: str  # the digest of its sections (its text and linked code)
    nav: tuple | None
    children: tuple = ()  # a folder's page: what it lists
    notice: tuple = ()  # (translated, total, file, edit link) of a page not fully translated
    original: str = ""  # the script with its English prose (a translation's bilingual toggle)
    source: bool = False
    source_page: bool = False
    notebook: bool = False
    notebook_plan: str = ""
    markdown: str = ""  # the script with its prose as Markdown (a translation's notebook)
    figures: str = ""  # the script with the figures that notebook embeds ("" when none)
    repo_href: str = ""

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        config, language = site.config, site.language(lang)
        neighbours, trails = site.neighbours(lang), {}
        for file in site.files.pages:
            head, text = site.heads[file.rel], site.text(file.rel, lang)
            if not site.published(file):
                continue
            notice: tuple = ()
            if lang != config.base_lang and not text.fully_translated:
                notice = (
                    text.translated_sections, text.prose_sections,
                    f"{posixpath.basename(str(config.translations))}/{file.base}.{lang}.json",
                    url_under(config.edit_url, f"{file.base}.{lang}.json") if config.edit_url else "",
                )
            translated = lang != config.base_lang and head.has_sections
            page = cls(
                lang, language.digest, file.url, text.title, text.summary, crumbs(site, lang, file.url, trails), file.rel,
                site.sections_digest(file.rel, lang), neighbours.get(file.url),
                children=children(site, lang, site.files.folders[file.folder]) if file.is_index else (),
                notice=notice,
                original=originals_path(file.folder) if translated else "",
                source=head.is_python,
                source_page=head.is_python and site.has_source_page(file),
                notebook=head.is_python and head.notebook,
                notebook_plan=head.notebook_plan if head.is_python and head.notebook and lang != config.base_lang else "",
                markdown=language.prefix + markdown_path(file.folder) if head.is_python and head.notebook and translated else "",
                figures=language.prefix + figures_path(file.rel) if translated and shows_figures(head) else "",
                repo_href=url_under(config.source_url, file.rel) if config.source_url else "",
            )
            yield language.prefix + file.url, page, file.rel

    def render(self, site: Site) -> str:
        language = site.language(self.lang)
        url, here = self.url, language.prefix + self.url
        context = base_context(language, url, self.title, self.description, self.crumbs)
        _listing(context, url, self.children, self.nav)
        if self.notice:
            translated, total, file, edit_href = self.notice
            context["notice"] = {"translated": translated, "total": total, "file": file, "edit_href": edit_href}
        context["repo_href"] = self.repo_href
        sections = context["sections"] = site.local(self.rel, self.lang).sections
        context["toc"] = toc(sections)
        context["prose_page"] = mostly_prose(sections)
        if self.original:
            context["originals"] = {"ids": translated_ids(sections), "src": relative_url(here, self.original), "page": url}
        if self.source:  # "View source": the base language's source page, or the file
            context["source_href"] = relative_url(here, self.rel + ".html") if self.source_page else relative_url(here, self.rel)
            context["source_is_page"] = self.source_page
        if self.notebook:  # the English file; other languages' made from the page
            context["notebook_href"] = relative_url(here, notebooks.notebook_path(self.rel))
            if self.notebook_plan:  # the title is the language's, and its prose (a script)
                intro = notebooks.translated_intro(self.rel, json.loads(self.notebook_plan).get("intro", ""), language.ui.gettext)
                own = {"title": self.title, "prose": {"src": relative_url(here, self.markdown), "page": url}, "intro": intro}
                if self.figures:
                    own["figures"] = relative_url(here, self.figures)
                context["notebook_plan"] = self.notebook_plan[:-1] + "," + json.dumps(own, ensure_ascii=False, separators=(",", ":"))[1:]
        return site.template("page.html", context)


@dataclass(frozen=True)
class FolderPage(Output):
    """The listing of a folder that has no source of its own (the home page among them)."""

    lang: str
    language: str
    url: str
    title: str
    description: str
    crumbs: tuple[str, ...]
    children: tuple
    nav: tuple | None

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        language = site.language(lang)
        neighbours = site.neighbours(lang)
        for folder in site.files.folders.values():
            if folder.index is None:
                title, summary = site.folder_title(lang, folder)
                yield language.prefix + folder.url, cls(
                    lang, language.digest, folder.url, title, summary, crumbs(site, lang, folder.url),
                    children(site, lang, folder), neighbours.get(folder.url),
                ), ""

    def render(self, site: Site) -> str:
        context = base_context(site.language(self.lang), self.url, self.title, self.description, self.crumbs)
        _listing(context, self.url, self.children, self.nav)
        return site.template("page.html", context)


_LINE_PREFIX = re.compile(r'<span class="line" data-line="(\d+)">')


@dataclass(frozen=True)
class SourcePage(Output):
    """ "View source": the whole file with line numbers, one page for every language."""

    lang: str
    language: str
    url: str
    title: str
    crumbs: tuple[str, ...]
    rel: str
    analysis: str  # the digest of its analysis (which covers the file's bytes)
    page_url: str
    page_title: str

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        if lang != site.config.base_lang:
            return
        language = site.language(lang)
        for file in site.files.pages:
            head = site.heads[file.rel]
            if site.published(file) and head.is_python and not site.kept(file.rel):
                url = file.rel + ".html"
                yield language.prefix + url, cls(
                    lang, language.digest, url, posixpath.basename(file.rel), crumbs(site, lang, url), file.rel,
                    site.analysis_digest(file.rel), file.url, site.text(file.rel, lang).title,
                ), file.rel

    def render(self, site: Site) -> str:
        language = site.language(self.lang)
        here = language.prefix + self.url
        context = base_context(language, self.url, self.title, "", self.crumbs)
        context.update(alternates=[], languages=[])  # one page for every language: no language switcher
        context.update(
            code_html=source_html(site.analysis(self.rel), site.source(self.rel)),
            download_href=relative_url(here, self.rel),
            page_href=relative_url(self.url, self.page_url),
            page_title=self.page_title,
            file_name=posixpath.basename(self.rel),
        )
        return site.template("source.html", context)


def source_html(data, source: bytes) -> str:
    """The whole file with line numbers: code lines as the page highlights them (without links:
    their targets are the page's), comment and docstring lines (the page's prose) as comments."""
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
    text = source.decode("utf-8", errors="replace").removeprefix("\ufeff")
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


@dataclass(frozen=True)
class StatusPage(Output):
    """The translation status: each page's entries by the state of their verdict, as `stats`
    counts them."""

    lang: str
    language: str
    title: str
    crumbs: tuple[str, ...]
    rows: tuple[tuple[tuple[str, object], ...], ...]
    totals: tuple[tuple[str, int], ...]
    files: bool

    url = "translation-status.html"

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        config, language = site.config, site.language(lang)
        rows, totals = [], {"translated": 0, "total": 0}
        for file in site.files.pages:
            text = site.text(file.rel, lang)
            counts = dict(text.counts)
            for state, n in site.figure_counts(file, lang).items():
                counts[state] = counts.get(state, 0) + n
            site.counted(lang, file.rel, counts)
            name = f"{file.base}.{lang}.json"
            rows.append((
                ("title", text.title),
                ("href", relative_url(cls.url, file.url)),
                ("blocks", sum(counts.values())),
                ("translated", counts.get("translated", 0) + counts.get("repaired", 0)),  # shown
                ("fuzzy", counts.get("fuzzy", 0)),
                ("untranslated", counts.get("untranslated", 0)),
                ("invalid", counts.get("invalid", 0)),
                # Only a file that exists: the base language has none, and a page nobody has
                # started translating has none yet.
                ("file", name if lang != config.base_lang and site.translation_exists(name) else ""),
            ))
            totals["translated"] += text.translated_sections
            totals["total"] += text.prose_sections
        names = dict(language.names)
        title = language.ui.gettext("Translation status") + f" · {names[lang]}"
        yield language.prefix + cls.url, cls(
            lang, language.digest, title, crumbs(site, lang, cls.url), tuple(rows), tuple(totals.items()), lang != config.base_lang,
        ), ""

    def render(self, site: Site) -> str:
        context = base_context(site.language(self.lang), self.url, self.title, "", self.crumbs)
        context.update(rows=[dict(row) for row in self.rows], totals=dict(self.totals), show_files=self.files)
        return site.template("status.html", context)


@dataclass(frozen=True)
class NotFound(Output):
    """404: a server shows it at whatever URL was missing, at any depth, so its links and styles
    cannot be relative: they start from the site's path instead."""

    lang: str
    language: str
    title: str
    crumbs: tuple[str, ...]

    url = "404.html"

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        language = site.language(lang)
        yield language.prefix + cls.url, cls(lang, language.digest, language.ui.gettext("Page not found"), crumbs(site, lang, cls.url)), ""

    def render(self, site: Site) -> str:
        language = site.language(self.lang)
        context = base_context(language, self.url, self.title, "", self.crumbs)
        path = urlparse(language.site_url).path if language.site_url else "/"
        base = path if path.endswith("/") else path + "/"
        root = base + language.prefix
        context.update(
            root=root,
            static=base + "static/",
            alternates=[],
            breadcrumbs=[{"title": language.site_title, "href": root + "index.html"}],
            languages=[
                {**alt, "href": base + lang_prefix(alt["lang"], language.base_lang) + "index.html"}
                for alt in context["languages"]
            ],
        )
        return site.template("404.html", context)


@dataclass(frozen=True)
class SearchPage(Output):
    """The language's search page (its index is `SearchIndex`)."""

    lang: str
    language: str
    title: str
    crumbs: tuple[str, ...]

    url = "search.html"

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        language = site.language(lang)
        yield language.prefix + cls.url, cls(lang, language.digest, language.ui.gettext("Search"), crumbs(site, lang, cls.url)), ""

    def render(self, site: Site) -> str:
        return site.template("search.html", base_context(site.language(self.lang), self.url, self.title, "", self.crumbs))


@dataclass(frozen=True)
class RedirectPage(Output):
    """A page without prose whose front matter says `redirect:`: it points there."""

    target: str
    title: str
    lang: str
    script: str  # the theme's redirect.js, relative to the page

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        prefix = site.language(lang).prefix
        for file in site.files.pages:
            head = site.heads[file.rel]
            if not site.published(file) and head.redirect:
                script = relative_url(prefix + file.url, REDIRECT_SCRIPT)
                yield prefix + file.url, cls(head.redirect, site.text(file.rel, lang).title, lang, script), ""

    def render(self, site: Site) -> str:
        return redirect_html(self.target, self.title, self.lang, self.script)


@dataclass(frozen=True)
class MovedPage(RedirectPage):
    """An old path (`redirects.yaml`, or a page's old case) that points to where it went."""

    @classmethod
    def describe(cls, site: Site, lang: str) -> Iterator[tuple[str, Output, str]]:
        prefix = site.language(lang).prefix
        for r in site.redirects:
            title = site.text(r.rel, lang).title if r.rel in site.heads else r.old
            yield prefix + r.old, cls(r.href(), title, lang, relative_url(prefix + r.old, REDIRECT_SCRIPT)), ""
