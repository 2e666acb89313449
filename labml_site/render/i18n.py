"""UI strings of the theme ("View source", "Not yet translated", …) from Babel message catalogs.

Catalogs live in `labml_site/locales/<lang>/LC_MESSAGES/messages.po` and are read directly with
Babel, so adding a language's UI is adding one .po file: no compile step, nothing to forget.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.pofile import read_po

from ..findings import Finding

LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"  # shipped inside the package
DOMAIN = "messages"


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


def catalog_path(lang: str, locales_dir: Path = LOCALES_DIR) -> Path:
    return locales_dir / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=None)
def load_ui(lang: str, locales_dir: Path = LOCALES_DIR) -> UI:
    """The UI catalog of `lang`; English (the msgids) when there is none yet."""
    path = catalog_path(lang, locales_dir)
    if not path.exists():
        findings: tuple[Finding, ...] = ()
        if lang != "en":
            findings = (
                Finding(
                    "warning",
                    "ui-catalog-missing",
                    f"no UI catalog for '{lang}': interface strings stay in English; "
                    f"copy labml_site/locales/zh/LC_MESSAGES/messages.po to {path} and translate the msgstr lines",
                    path=str(path),
                ),
            )
        return UI(lang, {}, findings)
    with path.open("rb") as f:
        catalog = read_po(f, locale=None, abort_invalid=False)
    messages = {
        str(m.id): str(m.string)
        for m in catalog
        if m.id and m.string and not m.fuzzy and isinstance(m.id, str)
    }
    return UI(lang, messages)


@lru_cache(maxsize=None)
def language_name(lang: str) -> str:
    """The language's name in that language ("中文", "Русский"), as readers look for it."""
    try:
        name = Locale.parse(lang.replace("-", "_")).get_display_name(lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return lang
    return (name[:1].upper() + name[1:]) if name else lang


@lru_cache(maxsize=None)
def text_direction(lang: str) -> str:
    try:
        return Locale.parse(lang.replace("-", "_")).text_direction
    except (UnknownLocaleError, ValueError):
        return "ltr"
