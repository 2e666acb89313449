"""Does a translation use a word, in whatever form its grammar gives it?

- Chinese, Japanese, Korean: no spaces between words, no inflection that changes a term's
  characters: a substring, after NFKC and case folding, ignoring spaces and middle dots, the
  Chinese attributive particle (“缩放后的分数” uses “缩放后分数”, “新词元的 id” uses “词元 id”), a
  long-vowel mark a Japanese loan word may drop at a word's end (“レイヤ” for “レイヤー”), and the
  last kana of a Japanese verbal noun (“埋め込み” in “埋め込まれた”).
- Other languages: each word of the expected phrase must appear in some form. Words are
  compared by their Snowball stems (the `snowballstemmer` package: pure Python, ~30 languages,
  no data to download), then, because a stemmer cuts a stem where it changes (Russian
  “транслироваться” / “транслируется”, “маска” / “масок”, “сэмплировать” / “сэмплируем”), a stem
  that starts the other, or differs from it by a fleeting vowel or one letter at the end of a
  long shared start, counts as the same word. A language Snowball lacks gets a crude
  cut-the-ending stem. A full morphological dictionary (pymorphy3 for Russian) lemmatises better,
  but costs 16 MB, ~140 ms to load and ~0.1 ms a word, covers one language, and still keeps
  aspect pairs (“возобновить” / “возобновляться”) apart, which these rules join.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

CJK_LANGS = ("zh", "ja", "ko")

# ISO 639-1 codes → Snowball algorithm names (those the package ships).
_SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish", "nl": "dutch",
    "en": "english", "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "no": "norwegian", "nb": "norwegian", "nn": "norwegian", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "sr": "serbian", "es": "spanish", "sv": "swedish",
    "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
_WORD = re.compile(r"\w+")
_IGNORED_CJK = re.compile(r"[\s・·･‧]+")
_PARTICLES = {"zh": re.compile("的")}
_KATAKANA_RUN = re.compile(r"([\u30a1-\u30fa]{3,})ー")
# A Japanese word that ends in a kanji and one kana (okurigana) is a verb's form: its last kana
# changes as the verb inflects.
_OKURIGANA = re.compile(r"[\u4e00-\u9fff][\u3041-\u3096]$")


def primary(lang: str) -> str:
    return lang.split("-")[0].lower()


def is_cjk(lang: str) -> bool:
    return primary(lang) in CJK_LANGS


# ------------------------------------------------------------------------------------------
# Chinese, Japanese, Korean


def _cjk_normal(lang: str, text: str) -> str:
    text = _IGNORED_CJK.sub("", unicodedata.normalize("NFKC", text).casefold())
    particle = _PARTICLES.get(primary(lang))
    return particle.sub("", text) if particle else text


@lru_cache(maxsize=4096)
def _cjk_pattern(lang: str, wanted: str) -> re.Pattern:
    body = re.escape(_cjk_normal(lang, wanted))
    # "レイヤー" also matches "レイヤ": a long vowel after three or more katakana is optional.
    body = _KATAKANA_RUN.sub(lambda m: m.group(1) + "ー?", body)
    if primary(lang) == "ja" and len(wanted) >= 3 and _OKURIGANA.search(wanted):
        body = body[:-1] + "[\u3041-\u3096]"  # 埋め込み is also 埋め込ま(れる), 埋め込む
    return re.compile(body)


# ------------------------------------------------------------------------------------------
# Inflected languages


@lru_cache(maxsize=64)
def _stemmer(lang: str):
    name = _SNOWBALL.get(primary(lang))
    if name is None:
        return None
    import snowballstemmer  # ~20 ms, only once a glossary of such a language is checked

    return snowballstemmer.stemmer(name)


def _crude_stem(word: str) -> str:
    if len(word) >= 6:
        return word[:-2]
    if len(word) >= 4:
        return word[:-1]
    return word


_ENDING_STARTS = frozenset("aeiouyäöüéèàåøаеёиоуыэюяьйіїєґ")  # where an inflectional ending starts


def _fold(word: str) -> str:
    return word.casefold().replace("ё", "е")


@lru_cache(maxsize=65536)
def stem(lang: str, word: str) -> str:
    word = _fold(word)
    stemmer = _stemmer(lang)
    return stemmer.stemWord(word) if stemmer is not None else _crude_stem(word)


def _shared_start(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _fleeting_vowel(a: str, b: str) -> bool:
    """маск / масок, оценк / оценок: a vowel that comes and goes before the last consonant."""
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return len(long_) == len(short) + 1 and len(short) >= 3 and long_[-2] in "оеь" and long_[:-2] + long_[-1] == short


def same_word(a: str, b: str, stem_a: str, stem_b: str) -> bool:
    """Whether the words `a` and `b` (case-folded) are forms of one word, given their stems.

    Snowball cuts short or ambiguous words where their forms part (“голова” → голов, “голов” →
    гол; “токен” → ток, “токенов” → токен), so the words themselves are compared too: one that
    starts the other with at most an ending (four letters) more, or, for words of four letters
    or less, the same but for the last letter, followed by a vowel (“ось” / “оси”, “путь” /
    “пути”; not “слой” / “слова”).
    """
    if stem_a == stem_b or a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 4:
        return True
    if (3 <= len(short) <= 4 and short[:-1] == long_[: len(short) - 1] and len(long_) <= len(short) + 3
            and long_[len(short) - 1] in _ENDING_STARTS):
        return True  # ось / оси, путь / пути; not слой / слова
    s_short, s_long = (stem_a, stem_b) if len(stem_a) <= len(stem_b) else (stem_b, stem_a)
    if len(s_short) >= 4 and s_long.startswith(s_short):
        return True  # транслир / транслирова, возобнов / возобновля
    if _fleeting_vowel(stem_a, stem_b) or _fleeting_vowel(a, b):
        return True
    shared = _shared_start(short, long_)
    if shared >= max(5, len(short) - 2) and len(long_) - shared <= 3:
        return True  # токена / токенов: one stem, endings of up to three letters (not токен / токенизатор)
    common = _shared_start(s_short, s_long)
    return common >= 5 and common >= len(s_short) - 1  # сэмплир(о)… / сэмплир(у)…


class Text:
    """A translation's plain text, prepared once for all the terms looked up in it."""

    def __init__(self, lang: str, text: str) -> None:
        self.lang = lang
        self.text = text
        self.cjk = is_cjk(lang)
        self.by_initial: dict[str, list[str]] = {}  # first letter → the words (stems are made when asked)
        if self.cjk:
            self.normal = _cjk_normal(lang, text)
        else:
            self.normal = ""
            for word in dict.fromkeys(_fold(w) for w in _WORD.findall(text)):
                self.by_initial.setdefault(word[0], []).append(word)

    def uses(self, wanted: str) -> bool:
        """Whether the text uses `wanted` (a word or phrase of the target language)."""
        if self.cjk:
            return bool(_cjk_pattern(self.lang, wanted).search(self.normal))
        words = _WORD.findall(wanted)
        return bool(words) and all(self._has_word(_fold(w)) for w in words)

    def _has_word(self, word: str) -> bool:
        # Forms of one word share its first letter (Snowball only cuts endings), so only those
        # words of the text are stemmed.
        word_stem = stem(self.lang, word)
        return any(same_word(word, w, word_stem, stem(self.lang, w)) for w in self.by_initial.get(word[0], ()))

    def uses_any(self, expected: tuple[str, ...]) -> bool:
        return any(self.uses(w) for w in expected)

    def keeps_english(self, english: str) -> bool:
        """Whether the text keeps the English words as they are (a name, a term left in
        English on purpose: “rank 0”, “memory-efficient attention”), plural or not."""
        return bool(_english_pattern(english.lower()).search(self.text))


@lru_cache(maxsize=4096)
def _english_pattern(english: str) -> re.Pattern:
    words = [re.escape(w) for w in re.split(r"[\s\-]+", english) if w]
    body = r"[\s\-]+".join(words)
    return re.compile(rf"(?<![A-Za-z])({body})(?:e?s)?(?![A-Za-z])", re.IGNORECASE)


@lru_cache(maxsize=512)
def prepared(lang: str, text: str) -> Text:
    return Text(lang, text)
