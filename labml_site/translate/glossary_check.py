"""The `glossary-term` check's question: which of a block's glossary terms does its translation
miss? (The glossary itself, its format and where it is found: `glossary.py`.)

`missing_terms` is the check (and `term_report` what the editor shows): the terms of the English
(`terms_in`: longest first, whole compounds, part of speech and exclusions applied, each word in
any inflection, `english_words.base_words`) whose translation the translation lacks
(`inflection.Text`: substrings in Chinese, Japanese, Korean, stems elsewhere).

A module of its own because only a project with a glossary needs it: its word tables, stemmer
and patterns cost a build without one 5 ms to import.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache

from ..read.markup import PLACEHOLDER_RE
from . import english_words, inflection
from .glossary import Glossary, Term


@dataclass(frozen=True)
class Match:
    term: Term
    found: str  # the English words as they appear in the block


# ------------------------------------------------------------------------------------------
# Finding the terms in the English

_Index = dict[str, list[tuple[tuple[str, ...], Term]]]  # a form's first word → (its words, term)
_INDEXES: dict[int, tuple[Glossary, _Index]] = {}


@lru_cache(maxsize=8192)
def _words(form: str) -> tuple[str, ...]:
    return tuple(t.lower for t in english_words.tokens(form) if t.kind in ("word", "number"))


def _index(glossary: Glossary) -> _Index:
    cached = _INDEXES.get(id(glossary))
    if cached is not None and cached[0] is glossary:
        return cached[1]
    index: _Index = {}
    for term in glossary.terms:
        for form in term.english:
            words = _words(form)
            if words:
                for base in _glossary_bases(words[0]):
                    index.setdefault(base, []).append((words, term))
    if len(_INDEXES) > 64:
        _INDEXES.clear()
    _INDEXES[id(glossary)] = (glossary, index)
    return index


@lru_cache(maxsize=8192)
def _glossary_bases(word: str) -> frozenset[str]:
    """A glossary word and, when it is written as a plural (`scores`, `logits`), its singular:
    a token matches the word when one of the tokens' bases is among these (`seed` is no "see")."""
    return frozenset({word} | {base for base, form in english_words.base_words(word) if form == "s"})


def _word_form(token: english_words.Token, word: str) -> str | None:
    """The form ("" base, "s", "ed", "ing") in which `token` is the glossary's `word`, or None."""
    if token.kind not in ("word", "number"):
        return None
    wanted = _glossary_bases(word)
    common = [(base, form) for base, form in english_words.base_words(token.lower) if base in wanted]
    if not common:
        return None
    return min(common, key=lambda pair: len(pair[0]))[1]  # `scores` for `scores`: the plural of score


def _match_at(toks: list[english_words.Token], i: int, words: tuple[str, ...]) -> str | None:
    """The form of the inflected word when `words` are written at `toks[i:]`, else None."""
    end = i + len(words)
    if end > len(toks) or toks[i].joined or (end < len(toks) and toks[end].joined):
        return None  # not inside a compound: no "head" in "multi-head"
    form = ""
    for k, word in enumerate(words):
        found = _word_form(toks[i + k], word)
        if found is None:
            return None
        form = found or form
    return form


def _excluded(toks: list[english_words.Token], i: int, end: int, phrases: tuple[str, ...]) -> bool:
    """Whether `toks[i:end]` lies inside one of `phrases` (a row's `not:` list, or an idiom)."""
    for phrase in phrases:
        words = _words(phrase)
        for start in range(max(0, end - len(words)), i + 1):
            if start + len(words) >= end and _match_at(toks, start, words) is not None:
                return True
    return False


def terms_in(glossary: Glossary | None, english_text: str) -> list[Match]:
    """The glossary terms in `english_text` (plain text; `english_text()` makes it from a key),
    in their order; where terms overlap the longest wins (`multi-head attention`, not
    `attention` in it), and each term is listed once."""
    if glossary is None or not english_text or not glossary.terms:
        return []
    index = _index(glossary)
    toks = english_words.tokens(english_text)
    spans: list[tuple[int, int, Term]] = []
    for i, tok in enumerate(toks):
        if tok.kind not in ("word", "number"):
            continue
        candidates = {id(t): (w, t) for base, _ in english_words.base_words(tok.lower) for w, t in index.get(base, ())}
        for words, term in candidates.values():
            form = _match_at(toks, i, words)
            if form is None:
                continue
            end = i + len(words)
            if term.pos and english_words.part_of_speech(toks, i, end, form) != term.pos:
                continue
            if _excluded(toks, i, end, term.excluded + english_words.IDIOMS):
                continue
            spans.append((i, end, term))
    spans.sort(key=lambda s: (-(s[1] - s[0]), -(toks[s[1] - 1].end - toks[s[0]].start), s[0]))
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, Term]] = []
    for start, end, term in spans:
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        chosen.append((start, end, term))
    matches, seen = [], set()
    for start, end, term in sorted(chosen, key=lambda s: s[0]):
        if id(term) not in seen:
            seen.add(id(term))
            matches.append(Match(term, english_text[toks[start].start:toks[end - 1].end]))
    return matches


def english_text(fragment: str) -> str:
    """A key's text as `terms_in` reads it: tags dropped, a placeholder one token of its own
    (so that "`x` means …" reads as a verb), entities decoded."""
    text = PLACEHOLDER_RE.sub(f" {english_words.PLACEHOLDER} ", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", text)).split())


def translation_text(fragment: str) -> str:
    """A value's text as a reader sees it, without tags or placeholders."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", PLACEHOLDER_RE.sub(" ", fragment))).split())


# ------------------------------------------------------------------------------------------
# The check


def has_term(lang: str, text: str, expected: tuple[str, ...]) -> bool:
    """True when `text` (a translation's plain text) uses one of the `expected` translations."""
    return inflection.prepared(lang, text).uses_any(expected)


def uses(lang: str, text: str, match: Match) -> bool:
    """Whether the translation's plain `text` renders `match`: with the glossary's word, or by
    keeping the English as it is."""
    prepared = inflection.prepared(lang, text)
    if prepared.uses_any(match.term.expected):
        return True
    return any(prepared.keeps_english(form) for form in (match.found, *match.term.english))


def term_report(glossary: Glossary | None, lang: str, key: str, value: str) -> list[tuple[Match, bool]]:
    """Each glossary term of the English `key` (HTML) and whether the translation `value` (HTML)
    uses it; an empty value uses none."""
    matches = terms_in(glossary, english_text(key))
    if not matches:
        return []
    text = translation_text(value) if value.strip() else ""
    return [(m, bool(text) and uses(lang, text, m)) for m in matches]


def missing_terms(glossary: Glossary | None, lang: str, key: str, value: str) -> list[Match]:
    """The checked terms of `key` that the translation `value` does not use."""
    return [m for m, used in term_report(glossary, lang, key, value) if not used and not m.term.ambiguous]


__all__ = ["Match", "terms_in", "english_text", "translation_text", "has_term", "uses", "term_report", "missing_terms"]
