"""One editing session of `translate --lang L`: the site's pages as blocks, and saving one block.

Everything the editor shows comes from the build and the translation modules: the pages' blocks
(keys, rendered placeholders) from the build's page data, the page's entries (its figures' labels
too) from `builder/entries.py`, each block's state and findings from `Catalog.verdict` (the
verdict the build, `check`, `review` and `stats` give: `translate/verdict.py`), writes through
`extract.write_translation` (atomic, every other entry kept, formatted as `extract` writes).
Nothing here re-implements a check.

The page's counts are the build's (`BuildResult.counts`, what the status page shows, as `stats`
counts them): one total per page everywhere. A save is refused when the value is the English
copy the editor started from, unless the translator confirms it (a title like "softmax" may stay
English; an untouched copy must not count as translated by accident); an emptied value is
written as `""`. The translation memory (`memory.py`) holds every translated entry of the
language in the site and in the `--memory` folders, and follows the saves.

A block's state is its verdict's: `translated`, `repaired`, `fuzzy`, `untranslated`, `invalid`;
the page's `stale` entries (keys the page no longer produces) are listed beside the blocks. Only
a value the page would show as written (translated), or an empty one, is saved: a value that needs
a repair is refused, with its repaired form offered, so that the file holds what the translators'
guide allows.
"""
from __future__ import annotations

import html
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from ..builder.config import BuildConfig
from ..builder.site import BuildResult, build, settle
from ..findings import Finding
from ..read.prose import fill
from ..read.structure import SourceFile, discover
from ..render.localize import plain_text, valid_lists
from ..translate import glossary, glossary_check, review_state
from ..builder.entries import asset_reader, figure_entries
from ..translate.catalog import Catalog, translation_path
from .memory import Memory
from ..translate.files import MAX_VALUE_CHARS
from ..translate.extract import ConcurrentEdit, UnwritableFile, write_translation
from ..translate.verdict import tally, untranslated_note
from ..typeset.page import PageData


class Refused(Exception):
    """A request the session will not carry out; `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str, **extra):
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def _finding(f: Finding) -> dict:
    return {"severity": f.severity, "code": f.code, "message": f.message, "line": f.line}


@dataclass
class _Page:
    file: SourceFile
    data: PageData
    catalog_path: Path
    figures: tuple[str, ...] = ()  # its figures' entries: alt texts, SVG labels


class Session:
    """The pages of the last build in one language, and the writes the editor may make."""

    def __init__(self, config: BuildConfig, lang: str, reviewer: str = "", memory: tuple[Path, ...] = ()) -> None:
        self.config = config
        self.lang = lang
        self.reviewer = reviewer
        self.root = Path(config.translations)
        self.lock = threading.RLock()  # one write (and rebuild) at a time
        self.result: BuildResult | None = None
        self.pages: dict[str, _Page] = {}  # page URL (under the language's folder) → page
        self.build_id = 0
        self.memory_dirs = tuple(Path(d) for d in memory)
        self.memory = Memory()
        self.memory_ready = threading.Event()
        self._memory_stamps: dict[Path, tuple[int, int]] = {}  # site file → (mtime_ns, size) when read
        self._memory_refresh = threading.Lock()  # (asked from the server's threads)
        self._memory_stale = False  # a rebuild since the memory last read the site's files

    # -----------------------------------------------------------------------------------------
    # Translation memory

    def load_memory(self) -> None:
        """Read the site's translations of the language, then the `--memory` folders (the
        editor calls this in a thread: suggestions come once it is done)."""
        self._refresh_site_memory()
        for folder in self.memory_dirs:
            self.memory.load_folder(folder, self.lang, folder.name or str(folder))
        self.memory_ready.set()

    def _site_source(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def _refresh_site_memory(self) -> None:
        """Read again the site's files that changed since they were read (saves, outside edits)."""
        with self._memory_refresh:
            self._memory_stale = False
            self._refresh_site_memory_now()

    def _current_memory(self) -> Memory:
        """The memory, with what the builds since it was last asked changed."""
        if self._memory_stale and self.memory_ready.is_set():
            self._refresh_site_memory()
        return self.memory

    def _refresh_site_memory_now(self) -> None:
        from .memory import language_files

        seen = set()
        for path in language_files(self.root, self.lang):
            seen.add(path)
            try:
                st = path.stat()
            except OSError:
                continue
            stamp = (st.st_mtime_ns, st.st_size)
            if self._memory_stamps.get(path) != stamp:
                self._memory_stamps[path] = stamp
                self.memory.load_file(path, self._site_source(path), self.root)
        for gone in set(self._memory_stamps) - seen:
            del self._memory_stamps[gone]
            self.memory.drop_file(self._site_source(gone))

    def suggestions(self, url: str, key: str) -> dict:
        """The memory's entries most like this block's English, with their match in percent."""
        page = self.page(url)
        self._find_block(page, key)
        if not self.memory_ready.is_set():
            return {"ready": False, "suggestions": []}
        memory = self._current_memory()
        found = memory.suggest(key, exclude=(self._site_source(page.catalog_path), key))
        return {"ready": True, "size": len(memory), "suggestions": [
            {"percent": s.percent, "key": s.unit.key, "value": s.unit.value, "english": s.unit.english,
             "translation": s.unit.translation, "source": s.unit.source} for s in found]}

    def concordance(self, phrase: str) -> dict:
        """Entries whose English or translation holds `phrase`, with the text around it."""
        if len(phrase) > 200:
            raise Refused(400, "search for a phrase of at most 200 characters")
        if not self.memory_ready.is_set():
            return {"ready": False, "hits": []}
        memory = self._current_memory()
        return {"ready": True, "size": len(memory), "hits": [
            {"english": h.english, "translation": h.translation, "where": h.where, "source": h.unit.source}
            for h in memory.concordance(phrase)]}

    # -----------------------------------------------------------------------------------------
    # Building

    def rebuild(self) -> BuildResult:
        with self.lock:
            result = build(self.config)
            settle()  # (recorded now: a save's answer waits for the build anyway)
            files = discover(self.config.source)
            read = asset_reader(files)
            pages = {}
            for file in files.pages:
                if file.rel not in result.pages:
                    continue
                data = result.pages[file.rel]
                if data.sections or file.is_index:
                    pages[file.url] = _Page(file, data, translation_path(self.root, file, self.lang),
                                            tuple(figure_entries(data, read, result.figure_labels)))
            self.result, self.pages = result, pages
            self.build_id += 1
            # The memory reads what changed when it is next asked, not in the save's answer.
            self._memory_stale = True
            return result

    def page(self, url: str) -> _Page:
        page = self.pages.get(url)
        if page is None:
            raise Refused(404, f"{url!r} is not a page of this site")
        return page

    # -----------------------------------------------------------------------------------------
    # Reading

    def _catalog(self, page: _Page) -> Catalog:
        return Catalog.load(page.catalog_path, self.lang, self.root)

    def _glossary(self, page: _Page):
        return glossary.for_catalog(page.catalog_path, self.lang)

    def _glossary_terms(self, page: _Page, key: str, value: str) -> list[dict]:
        found = self._glossary(page)
        return [
            {"english": match.found, "expected": list(match.term.expected), "note": match.term.note,
             "used": used, "checked": not match.term.ambiguous}
            for match, used in glossary_check.term_report(found, self.lang, key, value)
        ]

    def _block(self, page: _Page, catalog: Catalog, key: str, placeholders: tuple[str, ...], index: int,
               section: str | None, reviews: dict, label: str = "") -> dict:
        found = catalog.verdict(key)
        entry = catalog.entries.get(key)
        value = entry.value if entry is not None else ""
        plain = section is None
        english = html.escape(key) if plain else valid_lists(fill(key, placeholders))
        if found.shown and found.html is not None:
            shown = html.escape(plain_text(found.html)) if plain else valid_lists(fill(found.html, placeholders))
        else:
            shown = english
        suggestion = catalog.fuzzy.get(key)
        review = reviews.get(key)
        return {
            "index": index,
            "section": section,
            "key": key,
            "plain": plain,
            "label": label,  # what a plain entry is: Title, Summary, Figure
            "status": found.state,
            "html": shown,
            "english": english,
            "placeholders": list(placeholders),
            "value": value,
            "line": entry.line if entry is not None else 0,
            "suggestion": {"value": suggestion.value, "from": suggestion.previous or ""} if suggestion else None,
            "findings": [_finding(f) for f in found.findings],
            "glossary": self._glossary_terms(page, key, value),
            "reviewed": (
                {"by": review.by, "date": review.date, "current": review.current(value), "status": review.status,
                 "note": review.note} if review else None
            ),
        }

    def page_state(self, url: str) -> dict:
        """Everything the editor shows for one page: its blocks in page order, with their states."""
        page = self.page(url)
        catalog = self._catalog(page)
        reviews = review_state.load_quietly(page.catalog_path)
        blocks = []
        data = page.data
        meta = [(data.title, "Title")] + ([(data.summary, "Summary")] if data.summary else [])
        for key, label in meta:
            blocks.append(self._block(page, catalog, key, (), len(blocks), None, reviews, label))
        sections = []
        for s in data.sections:
            ids = []
            for b in s.blocks:
                ids.append(len(blocks))
                blocks.append(self._block(page, catalog, b.key, b.placeholders, len(blocks), s.id, reviews))
            sections.append({"id": s.id, "blocks": ids})
        for key in page.figures:
            blocks.append(self._block(page, catalog, key, (), len(blocks), None, reviews, "Figure"))
        keys = set(data.keys) | set(page.figures)
        stale = [{"key": k, "value": e.value} for k, e in catalog.entries.items() if k not in keys and e.value.strip()]
        counts = self._counts(page, catalog)
        return {
            "url": url,
            "lang": self.lang,
            "file": self._display_path(page.catalog_path),
            "blocks": blocks,
            "sections": sections,
            "stale": stale,
            "counts": counts,
            "file_findings": [_finding(f) for f in catalog.findings if not f.key],
            "reviewer": self.reviewer,
            "build": self.build_id,
        }

    def _counts(self, page: _Page, catalog: Catalog) -> dict[str, int]:
        """The page's entries by state, and their total: the build's counts (the status page's),
        or, when the build rendered nothing (the site was unchanged), the same verdicts counted
        here; `stale` as `stats` counts it."""
        keys = list(dict.fromkeys([*page.data.keys, *page.figures]))
        built = (self.result.counts.get(self.lang, {}).get(page.file.rel) if self.result is not None else None)
        counts = dict(tally(catalog.verdict(k) for k in keys)) if built is None else {
            state: built.get(state, 0) for state in tally(())}
        known = set(keys)
        counts["stale"] = sum(1 for k in dict.fromkeys([*catalog.entries, *catalog.blocked]) if k not in known)
        counts["total"] = sum(n for state, n in counts.items() if state != "stale")
        return counts

    def block_state(self, url: str, key: str) -> dict:
        """One block as the page shows it now, and the page's counts (what a save answers)."""
        page = self.page(url)
        placeholders, section = self._find_block(page, key)
        catalog = self._catalog(page)
        reviews = review_state.load_quietly(page.catalog_path)
        label = ""
        if section is None:
            label = "Title" if key == page.data.title else "Summary" if key == page.data.summary else "Figure"
        block = self._block(page, catalog, key, placeholders, -1, section, reviews, label)
        return {"block": block, "counts": self._counts(page, catalog), "build": self.build_id}

    def _display_path(self, path: Path) -> str:
        try:
            return os.path.relpath(path)
        except ValueError:
            return str(path)

    def _find_block(self, page: _Page, key: str) -> tuple[tuple[str, ...], str | None]:
        data = page.data
        if key == data.title or (data.summary and key == data.summary) or key in page.figures:
            return (), None
        for s in data.sections:
            for b in s.blocks:
                if b.key == key:
                    return b.placeholders, s.id
        raise Refused(400, "this key is not a block of the page; keys are never edited, only their translations")

    # -----------------------------------------------------------------------------------------
    # Checking and writing

    def check(self, url: str, key: str, value: str) -> dict:
        """What saving `value` would give: the findings of `check`, and the block as it would show."""
        page = self.page(url)
        placeholders, section = self._find_block(page, key)
        self._check_size(value)
        catalog = self._catalog(page)  # the draft is judged in its file, as the build will judge it
        line = catalog.entries[key].line if key in catalog.entries else 0
        found = catalog.with_value(key, value, line).verdict(key)
        findings = list(found.findings)
        if found.state in ("untranslated", "fuzzy"):  # as `check` says it
            findings = [untranslated_note(str(page.catalog_path), line, key)]
        preview = None
        if found.shown and found.html is not None:
            preview = html.escape(plain_text(found.html)) if section is None else valid_lists(fill(found.html, placeholders))
        return {
            "status": found.state,
            "findings": [_finding(f) for f in findings],
            "preview": preview,
            "glossary": self._glossary_terms(page, key, value),
            # Saved: what the page shows as written, or "" (not translated yet). A value the page
            # would show repaired, or in part, is not: the file should hold what the translators'
            # guide allows (no unclosed tags, no text after </p>); its repaired form is offered.
            "saveable": found.state in ("translated", "untranslated", "fuzzy"),
            "repaired": found.repaired if found.state == "repaired" else None,
        }

    @staticmethod
    def _check_size(value: str) -> None:
        if not isinstance(value, str):
            raise Refused(400, "the translation must be a string")
        if len(value) > MAX_VALUE_CHARS:
            raise Refused(413, f"the translation is longer than {MAX_VALUE_CHARS} characters")

    def save(self, url: str, key: str, value: str, expected: str | None, same_as_english: bool = False) -> dict:
        """Write `value` for `key` to the page's translation file, if it passes every error-level
        check and the sanitiser (what the build would render), and the file still holds `expected`
        for this key. Then rebuild, and answer with the block as the page now shows it.

        A value that is the English itself is written only with `same_as_english` (the
        translator confirmed that the words stay English), or when the file already holds it."""
        page = self.page(url)
        self._find_block(page, key)
        if not same_as_english and value.strip() and same_text(value, key) and not (
                expected is not None and same_text(expected, value)):
            raise Refused(422, "not saved: this is the English, unchanged; translate it, or confirm that it "
                               "stays in English", same_as_english=True)
        verdict = self.check(url, key, value)
        if verdict["status"] == "repaired":
            raise Refused(422, "not saved: the page could show this translation only repaired (see the findings); "
                               "fix it, or take the repaired form", findings=verdict["findings"], repaired=verdict["repaired"])
        if not verdict["saveable"]:
            raise Refused(422, "not saved: the translation fails a check (see the findings); the page would show the English",
                          findings=verdict["findings"])
        if verdict["status"] in ("untranslated", "fuzzy"):
            value = ""  # emptied: not translated yet
        with self.lock:
            try:
                written = write_translation(page.catalog_path, key, value, self.root, expected)
            except ConcurrentEdit as e:
                raise Refused(409, "not saved: this translation was changed on disk since you opened it "
                                   "(by another editor or by hand); compare and save again", current=e.current) from None
            except UnwritableFile as e:
                raise Refused(409, "not saved: the translation file has errors a rewrite could lose; fix them first",
                              findings=[_finding(f) for f in e.findings]) from None
            except OSError as e:
                raise Refused(500, f"not saved: {getattr(e, 'reason', None) or e.strerror or e}") from None
            self.rebuild()
            state = self.block_state(url, key)
        return {**state, "written": [self._display_path(Path(p)) for p in written]}

    def mark_reviewed(self, url: str, key: str) -> dict:
        page = self.page(url)
        self._find_block(page, key)
        if not self.reviewer:
            raise Refused(400, "no reviewer name: start the editor with --reviewer NAME (or set git's user.name)")
        with self.lock:
            entry = self._catalog(page).entries.get(key)
            if entry is None or not entry.value.strip():
                raise Refused(400, "nothing to review: this block is not translated")
            try:
                review = review_state.mark(page.catalog_path, key, entry.value, self.reviewer, self.root)
            except review_state.BadReviewFile as e:
                raise Refused(409, f"not marked: the review file is malformed ({e}); fix or delete it") from None
        return {"reviewed": {"by": review.by, "date": review.date, "current": True}}


_ENTITY = re.compile(r"&(?:quot|apos|#x0*27|#0*39|#x0*22|#0*34);", re.IGNORECASE)


def same_text(value: str, english: str) -> bool:
    """True when `value` is `english` written again: the same text once edge whitespace is
    dropped and quotes are read as characters (the editor shows `&quot;` as `"`)."""
    def norm(text: str) -> str:
        return _ENTITY.sub(lambda m: html.unescape(m.group(0)), text).strip()
    return norm(value) == norm(english)


__all__ = ["Session", "Refused", "same_text"]
