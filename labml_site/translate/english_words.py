"""English words for the glossary check: tokens, the base words an inflected token may come
from, and whether a word is used as a noun or a verb where it stands.

The glossary names a term once ("mask", "sample", "weighted sum"); the English of a block says
"masks", "sampled", "weighted sums". Rather than generate every form of every term, each token
of the block is undone to the base words it may be an inflection of (`base_words("queries")` →
query, queri…), and a term matches where its words are among them: over-generation is harmless,
since only words that are glossary terms are ever looked up.

A glossary row may say which part of speech it means (`mean (noun)`, `sample (verb / noun)`);
then `part_of_speech` decides from the token's form and its neighbours, with a handful of rules
that hold in technical prose ("0 means …", "the mask broadcasts over …", "to sample the …" are
verbs; "the mean", "a sample of", "masks." are nouns). A tagger would be more general, but the
ones that exist need model downloads or a large dependency, and these rules only run for the
few rows that ask for them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

PLACEHOLDER = "\ue000"  # stands for a placeholder (math, code) in the text given to `tokens`

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|" + PLACEHOLDER + r"|[^\sA-Za-z0-9]")


@dataclass(frozen=True)
class Token:
    text: str  # as written
    lower: str
    start: int
    end: int
    joined: bool  # written against the previous token with a hyphen: `multi-head`
    kind: str  # "word", "number", "placeholder", "punct"


def tokens(text: str) -> list[Token]:
    """Words, numbers, placeholders and punctuation; a hyphen between two words is no token
    of its own but joins them (`pre-norm` is two words of one compound)."""
    out: list[Token] = []
    hyphen_at = -2
    for m in _TOKEN.finditer(text):
        s = m.group(0)
        if s == "-" and out and out[-1].end == m.start() and out[-1].kind == "word":
            hyphen_at = m.end()
            continue
        if s == PLACEHOLDER:
            kind = "placeholder"
        elif s[0].isdigit():
            kind = "number"
        elif s[0].isalpha():
            kind = "word"
        else:
            kind = "punct"
        joined = hyphen_at == m.start() and kind == "word"
        if hyphen_at != -2 and not joined:  # "- " was a dash after all
            out.append(Token("-", "-", hyphen_at - 1, hyphen_at, False, "punct"))
        hyphen_at = -2
        out.append(Token(s, s.lower(), m.start(), m.end(), joined, kind))
    return out


# Irregular plurals of the words technical prose uses; the rest are regular.
_IRREGULAR = {
    "matrices": "matrix", "indices": "index", "vertices": "vertex", "axes": "axis", "bases": "basis",
    "analyses": "analysis", "hypotheses": "hypothesis", "data": "datum", "children": "child",
    "criteria": "criterion", "phenomena": "phenomenon", "maxima": "maximum", "minima": "minimum",
    "lemmata": "lemma", "schemata": "schema", "men": "man", "women": "woman",
}
_VOWELS = frozenset("aeiou")


@lru_cache(maxsize=16384)
def base_words(word: str) -> tuple[tuple[str, str], ...]:
    """The (base word, form) pairs `word` (lower case) may be: form "" for the word itself,
    "s" (plural or third person), "ed", "ing". `masked` → (masked, ""), (mask, ed), (maske, ed)…"""
    found: dict[str, str] = {word: ""}

    def add(base: str, form: str) -> None:
        if len(base) >= 2:
            found.setdefault(base, form)

    if word in _IRREGULAR:
        add(_IRREGULAR[word], "s")
    if word.endswith("s") and not word.endswith("ss"):
        add(word[:-1], "s")
        if word.endswith("es"):
            add(word[:-2], "s")  # boxes, batches
            add(word[:-2] + "is", "s")  # axes → axis
        if word.endswith("ies"):
            add(word[:-3] + "y", "s")
        if word.endswith("ices"):
            add(word[:-4] + "ix", "s")
            add(word[:-4] + "ex", "s")
        if word.endswith("ves"):
            add(word[:-3] + "f", "s")
            add(word[:-3] + "fe", "s")
    for suffix, form in (("ed", "ed"), ("ing", "ing")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            stem = word[: -len(suffix)]
            add(stem, form)  # masked, masking
            add(stem + "e", form)  # scaled, scaling
            if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
                add(stem[:-1], form)  # summed, padding
            if suffix == "ed" and stem.endswith("i"):
                add(stem[:-1] + "y", form)  # applied
    return tuple(found.items())


# ------------------------------------------------------------------------------------------
# Noun or verb where it stands

_DETERMINERS = frozenset(
    "a an the this these those that each every its their our his her my your some any all no "
    "both either neither one two three four several many few whose which what".split())
_PREPOSITIONS = frozenset(
    "of in on at for with by per about between among across through under over into onto "
    "without within via like than as".split())
_BE = frozenset("is are was were be been being isn't aren't".split())  # a noun follows, never a verb's -s
_SUBJECTS_OR_MODALS = frozenset(
    "we you they i it he she can could will would shall should may might must do does did "
    "don't doesn't didn't cannot won't let's we'll".split())
# What follows a verb in technical prose, and seldom a plural noun: an object, a particle.
_OBJECT_STARTS = frozenset(
    "the a an this these those that it them its their every each all one no some any".split())
_VERB_PARTICLES = frozenset("to over into from against across along out up down away back onto".split())


def part_of_speech(toks: list[Token], start: int, end: int, form: str) -> str:
    """"noun" or "verb" for the words `toks[start:end]` (a term's occurrence), whose inflected
    word has `form` ("" base, "s", "ed", "ing")."""
    if form in ("ed", "ing"):
        return "verb"  # participles and gerunds: "masked", "sampling"
    prev = _word_before(toks, start)
    nxt = toks[end] if end < len(toks) else None
    after = nxt.lower if nxt is not None else ""
    # An object seems to follow: a determiner or pronoun, a placeholder, a number, a name ("CUDA";
    # not in a title, where every word is capitalised: "Samples Generating text").
    name_next = nxt is not None and nxt.kind == "word" and nxt.text[0].isupper() and not toks[end - 1].text[0].isupper()
    object_next = nxt is not None and (after in _OBJECT_STARTS or nxt.kind in ("placeholder", "number") or name_next)
    if prev in _DETERMINERS or prev in _PREPOSITIONS or prev in _BE:
        return "noun"  # "the mean", "of masks", "are samples from"
    if prev in _SUBJECTS_OR_MODALS:
        return "verb"  # "we sample", "can mask"
    if prev == "to":  # "to sample the …", "to sample with", "to sample efficiently"; "attend to keys"
        takes = object_next or after in _VERB_PARTICLES or (after in _PREPOSITIONS and after != "of") or _adverb(after)
        return "verb" if takes else "noun"
    if form == "" and _adverb(prev) and object_next:
        return "verb"  # "greedily sample the last token"
    if form == "s":
        # "0 means …", "the mask broadcasts over …", "every row sums to 1"; "keys and values" stays a noun
        if object_next or after in _VERB_PARTICLES or (nxt is not None and nxt.text in ("“", '"', "'", "‘")):
            return "verb"
        return "noun"
    # The base form: an imperative at the start of a sentence ("Sample the next character"), or
    # a verb after "and" ("take the logits and sample the next character").
    if prev in ("", ".", ":", ";", "!", "?", "and", "or", "then") and nxt is not None and (after in _OBJECT_STARTS or nxt.kind == "placeholder"):
        return "verb"
    return "noun"


def _adverb(word: str) -> bool:
    return len(word) > 4 and word.endswith("ly") and word not in ("only", "early", "family", "apply", "supply", "reply")


# Idioms in which a word is no technical term: "pay attention to", "step by step".
IDIOMS = ("pay attention", "pays attention", "paid attention", "paying attention", "step by step")


def _word_before(toks: list[Token], start: int) -> str:
    """The token before `start` in lower case; "" at the start of the text. A closing quote or
    bracket is looked past ("“Position-wise” means"), a placeholder or number reads as itself."""
    i = start - 1
    while i >= 0 and toks[i].text in ("”", '"', "’", ")", "]"):
        i -= 1
    if i < 0:
        return ""
    tok = toks[i]
    if tok.kind == "placeholder":
        return PLACEHOLDER
    return tok.lower
