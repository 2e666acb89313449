"""UI strings of the theme ("View source", "Not yet translated", …) as a template speaks
them, and each language's name and direction (Babel's locale data). The catalogs are read by
`builder/ui_catalogs.py`."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..findings import Finding


@dataclass(frozen=True)
class UI:
    """Everything a template needs to speak the reader's language."""

    lang: str
    messages: dict[str, str] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()

    def gettext(self, message: str, **values: object) -> str:
        text = self.messages.get(message) or message
        return text.format(**values) if values else text

    @property
    def name(self) -> str:
        return language_name(self.lang)

    @property
    def direction(self) -> str:
        return text_direction(self.lang)


def _locale(lang: str):
    """Babel's locale of `lang` (None when Babel does not know it), Babel imported only now: a
    build finds a language's name and direction with its heads (`site._languages`), and importing
    Babel costs a one-file rebuild 5 ms."""
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return None


@lru_cache(maxsize=None)
def language_name(lang: str) -> str:
    """The language's name in that language ("中文", "Русский"), as readers look for it."""
    locale = _locale(lang)
    name = locale.get_display_name(locale) if locale is not None else None
    return (name[:1].upper() + name[1:]) if name else lang


@lru_cache(maxsize=None)
def text_direction(lang: str) -> str:
    locale = _locale(lang)
    return locale.text_direction if locale is not None else "ltr"
