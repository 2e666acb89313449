"""One editing session of `translate --lang L`: the site's pages as blocks, and saving one block.

Everything the editor shows comes from the build and the translation modules: the pages' blocks
(keys, rendered placeholders) from the build's page data, each block's state from
`Catalog.lookup` (the build's own checks and sanitiser), findings from `run_entry_checks` (the
checks `check` runs, the glossary's included), writes through `extract.write_translation`
(atomic, every other entry kept, formatted as `extract` writes). Nothing here re-implements a
check.

A block's state: `translated`, `missing`, `fuzzy` (a suggestion waits in the fuzzy sidecar),
`invalid` (a translation that fails an error-level check: the page shows the English); the
page's `stale` entries (keys the page no longer produces) are listed beside the blocks.
"""
from __future__ import annotations

import html
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..builder.config import BuildConfig
from ..builder.site import BuildResult, build
from ..findings import Finding
from ..read.prose import fill
from ..read.structure import SourceFile, discover
from ..render.localize import plain_text, valid_lists
from ..translate import glossary, review_state
from ..translate.catalog import Catalog, Entry, translation_path
from ..translate.checks import MAX_VALUE_CHARS, EntryContext, run_entry_checks
from ..translate.extract import ConcurrentEdit, UnwritableFile, write_translation
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


class Session:
    """The pages of the last build in one language, and the writes the editor may make."""

    def __init__(self, config: BuildConfig, lang: str, reviewer: str = "") -> None:
        self.config = config
        self.lang = lang
        self.reviewer = reviewer
        self.root = Path(config.translations)
        self.lock = threading.RLock()  # one write (and rebuild) at a time
        self.result: BuildResult | None = None
        self.pages: dict[str, _Page] = {}  # page URL (under the language's folder) → page
        self.build_id = 0

    # -----------------------------------------------------------------------------------------
    # Building

    def rebuild(self) -> BuildResult:
        with self.lock:
            result = build(self.config)
            files = discover(self.config.source)
            pages = {}
            for file in files.pages:
                if file.rel not in result.pages:
                    continue
                data = result.pages[file.rel]
                if data.sections or file.is_index:
                    pages[file.url] = _Page(file, data, translation_path(self.root, file, self.lang))
            self.result, self.pages = result, pages
            self.build_id += 1
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
            for match, used in glossary.term_report(found, self.lang, key, value)
        ]

    def _block(self, page: _Page, catalog: Catalog, key: str, placeholders: tuple[str, ...], index: int,
               section: str | None, reviews: dict) -> dict:
        found = catalog.lookup(key)
        entry = catalog.entries.get(key)
        value = entry.value if entry is not None else ""
        plain = section is None
        english = html.escape(key) if plain else valid_lists(fill(key, placeholders))
        if found.status == "translated" and found.html is not None:
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
            "status": found.status,
            "html": shown,
            "english": english,
            "placeholders": list(placeholders),
            "value": value,
            "line": entry.line if entry is not None else 0,
            "suggestion": {"value": suggestion.value, "from": suggestion.previous or ""} if suggestion else None,
            "findings": [_finding(f) for f in found.findings],
            "glossary": self._glossary_terms(page, key, value),
            "reviewed": (
                {"by": review.by, "date": review.date, "current": review.current(value)} if review else None
            ),
        }

    def page_state(self, url: str) -> dict:
        """Everything the editor shows for one page: its blocks in page order, with their states."""
        page = self.page(url)
        catalog = self._catalog(page)
        reviews = review_state.load_quietly(page.catalog_path)
        blocks = []
        data = page.data
        meta = [(data.title, "title")] + ([(data.summary, "summary")] if data.summary else [])
        for key, _name in meta:
            blocks.append(self._block(page, catalog, key, (), len(blocks), None, reviews))
        sections = []
        for s in data.sections:
            ids = []
            for b in s.blocks:
                ids.append(len(blocks))
                blocks.append(self._block(page, catalog, b.key, b.placeholders, len(blocks), s.id, reviews))
            sections.append({"id": s.id, "blocks": ids})
        keys = set(data.keys)
        stale = [{"key": k, "value": e.value} for k, e in catalog.entries.items() if k not in keys and e.value.strip()]
        counts: dict[str, int] = {}
        for b in blocks:
            counts[b["status"]] = counts.get(b["status"], 0) + 1
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

    def _display_path(self, path: Path) -> str:
        try:
            return os.path.relpath(path)
        except ValueError:
            return str(path)

    def _find_block(self, page: _Page, key: str) -> tuple[tuple[str, ...], str | None]:
        data = page.data
        if key == data.title or (data.summary and key == data.summary):
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
        draft = Catalog(str(page.catalog_path), self.lang, {key: Entry(value, self._line(page, key))})
        found = draft.lookup(key)
        findings = list(found.findings)
        if found.status == "missing":  # the lookup checks nothing more; `check` says "not translated yet"
            findings = run_entry_checks(EntryContext(key, value, str(page.catalog_path), self._line(page, key), self.lang))
        preview = None
        if found.status == "translated" and found.html is not None:
            preview = html.escape(plain_text(found.html)) if section is None else valid_lists(fill(found.html, placeholders))
        return {
            "status": found.status,
            "findings": [_finding(f) for f in findings],
            "preview": preview,
            "glossary": self._glossary_terms(page, key, value),
            # a value that still has an error is not saved, even where the page would show the
            # blocks that pass (translate/repair.py): the file should hold a correct translation
            "saveable": found.status != "invalid" and not any(f.severity == "error" for f in findings),
        }

    def _line(self, page: _Page, key: str) -> int:
        entry = self._catalog(page).entries.get(key)
        return entry.line if entry is not None else 0

    @staticmethod
    def _check_size(value: str) -> None:
        if not isinstance(value, str):
            raise Refused(400, "the translation must be a string")
        if len(value) > MAX_VALUE_CHARS:
            raise Refused(413, f"the translation is longer than {MAX_VALUE_CHARS} characters")

    def save(self, url: str, key: str, value: str, expected: str | None) -> dict:
        """Write `value` for `key` to the page's translation file, if it passes every error-level
        check and the sanitiser (what the build would render), and the file still holds `expected`
        for this key. Then rebuild, and answer with the block as the page now shows it."""
        page = self.page(url)
        self._find_block(page, key)
        verdict = self.check(url, key, value)
        if not verdict["saveable"]:
            raise Refused(422, "not saved: the translation fails a check (see the findings); the page would show the English",
                          findings=verdict["findings"])
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
            state = self.page_state(url)
        block = next(b for b in state["blocks"] if b["key"] == key)
        return {"block": block, "counts": state["counts"], "build": state["build"],
                "written": [self._display_path(Path(p)) for p in written]}

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


__all__ = ["Session", "Refused"]
