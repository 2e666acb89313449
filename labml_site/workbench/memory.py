"""Translation memory and concordance for the editor: what was written before, found fast.

The memory is every non-empty entry of one language in the site's translation files, and in the
folders given with `translate --memory DIR` (other projects' caches, in the same
`<page>.<lang>.json` shape). Two questions are asked of it:

- **suggest**: the entries whose English is most like a block's, with a match percentage
  (difflib's ratio over the words of the English as plain text: tags dropped, each placeholder
  one mark; words, not characters, so that a long block costs a few hundred steps, not a
  quadratic number of characters);
- **concordance**: the entries whose English or translation contains a phrase, with the text
  around it ("how was this term translated before").

Both go through inverted indexes, so that a question reads the few hundred entries that share
words with it, never all of them: a suggestion through a word index (the question's rarest
words, weighted by how rare they are, shortlist the entries that difflib then scores), a search
through character trigrams (any script, any part of a word). benchmarks/workbench_bench.py
times both over 10,000 entries. Files are read as the build reads
them (`parse_translation_file`: never a link, never more than 2 MB, never raising), only values
that are strings are kept, nothing is ever executed or fetched: the memory is offline.
"""
from __future__ import annotations

import difflib
import heapq
import html
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..read import markup
from ..translate.catalog import is_sidecar
from ..translate.files import MAX_VALUE_CHARS, oversized, parse_translation_file

PLACEHOLDER_MARK = "\u2058"  # one character for a placeholder in the plain text that is compared
_TAG = re.compile(r"<[^<>]*>")
_SPACE = re.compile(r"\s+")
MAX_FILES = 20_000  # a memory folder is read up to this many files (a guard, far above a real cache)
RAREST = 40  # words of a question that shortlist the entries
CANDIDATES = 16  # entries of the shortlist scored exactly
MAX_WORDS = 200  # words of a block compared (a longer one is judged by its start)
_WORD = re.compile(r"\w+|[^\w\s]")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())[:MAX_WORDS]


def plain(fragment: str) -> str:
    """The words of a key or value: placeholders as one mark, tags dropped, entities decoded,
    whitespace collapsed."""
    text = markup.PLACEHOLDER_RE.sub(PLACEHOLDER_MARK, fragment) if markup.PLACEHOLDER_MARK in fragment else fragment
    return _SPACE.sub(" ", html.unescape(_TAG.sub(" ", text))).strip()


def trigrams(text: str) -> set[str]:
    text = f"  {text.casefold()} "
    return {text[i:i + 3] for i in range(len(text) - 2)}


@dataclass(frozen=True)
class Unit:
    """One translated entry: its English key and translation, and where it was read."""

    key: str
    value: str
    source: str  # the file, relative to the folder it was read from (with the folder's name)
    english: str  # plain(key)
    translation: str  # plain(value)


@dataclass(frozen=True)
class Suggestion:
    unit: Unit
    percent: int


@dataclass(frozen=True)
class Hit:
    unit: Unit
    english: str  # the English around the phrase (or its start)
    translation: str  # the translation around the phrase (or its start)
    where: str  # "english" or "translation": which side held the phrase


class Memory:
    """An index of translated entries, updated file by file (a save re-reads one file)."""

    def __init__(self) -> None:
        self.units: list[Unit | None] = []
        self._by_file: dict[str, list[int]] = {}
        self._english: dict[str, set[int]] = {}  # trigram of the English → unit ids
        self._translated: dict[str, set[int]] = {}  # trigram of the translation → unit ids
        self._words: dict[str, set[int]] = {}  # word of the English → unit ids
        self._size: dict[int, int] = {}  # unit id → its English's number of distinct words
        self.lock = threading.Lock()

    def __len__(self) -> int:
        return sum(1 for u in self.units if u is not None)

    # -- filling ------------------------------------------------------------------------------

    def add(self, key: str, value: str, source: str) -> None:
        english, translation = plain(key), plain(value)
        if not english or not translation:
            return
        with self.lock:
            uid = len(self.units)
            self.units.append(Unit(key, value, source, english, translation))
            self._by_file.setdefault(source, []).append(uid)
            distinct = set(words(english))
            self._size[uid] = len(distinct)
            for w in distinct:
                self._words.setdefault(w, set()).add(uid)
            for g in trigrams(english):
                self._english.setdefault(g, set()).add(uid)
            for g in trigrams(translation):
                self._translated.setdefault(g, set()).add(uid)

    def drop_file(self, source: str) -> None:
        with self.lock:
            for uid in self._by_file.pop(source, []):
                unit = self.units[uid]
                if unit is None:
                    continue
                for g in trigrams(unit.english):
                    self._english.get(g, set()).discard(uid)
                for w in set(words(unit.english)):
                    self._words.get(w, set()).discard(uid)
                for g in trigrams(unit.translation):
                    self._translated.get(g, set()).discard(uid)
                self.units[uid] = None
                self._size.pop(uid, None)

    def load_file(self, path: Path, source: str, root: Path | None = None) -> int:
        """(Re)read one translation file: its non-empty string values, under the name `source`."""
        self.drop_file(source)
        parsed = parse_translation_file(path, root)
        if not parsed.usable:
            return 0
        count = 0
        for pair in parsed.pairs:
            if isinstance(pair.value, str) and pair.value.strip() and not oversized(pair) \
                    and len(pair.key) <= MAX_VALUE_CHARS:
                self.add(pair.key, pair.value, source)
                count += 1
        return count

    def load_folder(self, folder: Path, lang: str, label: str | None = None) -> int:
        """Every `*.<lang>.json` below `folder` (not the sidecars, not through links)."""
        folder = Path(folder)
        label = label if label is not None else folder.name
        count = 0
        for path in itertools_limit(language_files(folder, lang), MAX_FILES):
            rel = path.relative_to(folder).as_posix()
            count += self.load_file(path, f"{label}/{rel}" if label else rel, folder)
        return count

    # -- questions ----------------------------------------------------------------------------

    def suggest(self, key: str, limit: int = 5, minimum: int = 50, exclude: tuple[str, str] | None = None) -> list[Suggestion]:
        """The entries whose English is most like `key`'s, best first, each with its match in
        percent (at least `minimum`). `exclude`: (source, key) of the entry being edited."""
        english = plain(key)
        asked = set(words(english))
        if not asked:
            return []
        with self.lock:
            n = max(len(self.units), 1)
            known = [(len(ids), w) for w in asked if (ids := self._words.get(w))]
            rarest = sorted(known)[:RAREST]  # the words that tell most, and cost least
            score: dict[int, float] = {}
            for df, w in rarest:
                weight = math.log(1 + n / df)
                for uid in self._words[w]:
                    score[uid] = score.get(uid, 0.0) + weight
            ranked = heapq.nlargest(CANDIDATES, score.items(), key=lambda item: item[1] / math.sqrt(self._size[item[0]] + len(asked)))
            units = [self.units[uid] for uid, _ in ranked]
        found: dict[tuple[str, str], Suggestion] = {}
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(words(english))  # (difflib caches what it learns of the second sequence)
        for unit in units:
            if unit is None or (exclude is not None and (unit.source, unit.key) == exclude):
                continue
            matcher.set_seq1(words(unit.english))
            if matcher.real_quick_ratio() * 100 < minimum or matcher.quick_ratio() * 100 < minimum:
                continue
            percent = int(round(100 * matcher.ratio()))
            if unit.key == key:
                percent = 100
            elif percent == 100:  # the same words in other markup: not an exact match
                percent = 99
            if percent < minimum:
                continue
            seen = (unit.english, unit.translation)  # one row per distinct translation of a text
            best = found.get(seen)
            if best is None or best.percent < percent:
                found[seen] = Suggestion(unit, percent)
        return sorted(found.values(), key=lambda s: (-s.percent, s.unit.source))[:limit]

    def concordance(self, phrase: str, limit: int = 20) -> list[Hit]:
        """Entries whose English or translation holds `phrase` (case-insensitive), with the text
        around it on both sides."""
        needle = _SPACE.sub(" ", phrase).strip().casefold()
        if len(needle) < 2:
            return []
        hits: list[Hit] = []
        seen: set[tuple[str, str]] = set()
        for where, index in (("english", self._english), ("translation", self._translated)):
            with self.lock:
                if len(needle) >= 3:
                    inner = {needle[i:i + 3] for i in range(len(needle) - 2)}  # no padding: a phrase may start mid-word
                    grams = sorted(inner, key=lambda g: len(index.get(g, ())))
                    ids = set(index.get(grams[0], ())) if grams else set(range(len(self.units)))
                    for g in grams[1:]:
                        ids &= index.get(g, set())
                        if not ids:
                            break
                else:
                    ids = set(range(len(self.units)))
                units = [self.units[i] for i in sorted(ids)]
            for unit in units:
                if unit is None:
                    continue
                text = unit.english if where == "english" else unit.translation
                at = text.casefold().find(needle)
                if at < 0 or (unit.english, unit.translation) in seen:
                    continue
                seen.add((unit.english, unit.translation))
                if where == "english":
                    hits.append(Hit(unit, _around(unit.english, at, len(needle)), _start(unit.translation), where))
                else:
                    hits.append(Hit(unit, _start(unit.english), _around(unit.translation, at, len(needle)), where))
                if len(hits) >= limit:
                    return hits
        return hits


def itertools_limit(items: Iterable[Path], n: int) -> Iterator[Path]:
    for i, item in enumerate(items):
        if i >= n:
            return
        yield item


def language_files(folder: Path, lang: str) -> Iterator[Path]:
    """The main translation files of `lang` below `folder`, in a stable order, never following
    a linked folder (os.walk does not)."""
    suffix = f".{lang}.json"
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.endswith(suffix) and not is_sidecar(path) and not path.is_symlink():
                yield path


CONTEXT = 60  # characters of context on each side of a phrase found


def _around(text: str, at: int, length: int) -> str:
    start, end = max(0, at - CONTEXT), min(len(text), at + length + CONTEXT)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _start(text: str) -> str:
    return text if len(text) <= 2 * CONTEXT + 20 else text[:2 * CONTEXT + 20] + "…"


__all__ = ["Memory", "Suggestion", "Hit", "Unit", "plain", "PLACEHOLDER_MARK"]
