"""UI strings of the theme ("View source", "Not yet translated", …) from Babel message catalogs.

Catalogs live in `labml_site/locales/<lang>/LC_MESSAGES/messages.po` and are read directly with
Babel, so adding a language's UI is adding one .po file: no compile step, nothing to forget. A
build's `--locales DIR` (a folder of `<lang>/LC_MESSAGES/messages.po`) adds catalogs from outside
the package and overrides bundled strings one by one, so interface translators never write into an
installed package.
"""
from __future__ import annotations

import io
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


def load_ui(lang: str, locales_dir: Path | None = None) -> UI:
    """The UI catalog of `lang`: the bundled one, with the strings of `locales_dir`'s catalog (if
    it has one) over it; English (the msgids) when there is neither.

    Cached by the catalogs' contents (a few kB each, read on every call), so an edited .po is
    parsed again, also by `serve`, which builds in one process."""
    paths = [catalog_path(lang)]
    if locales_dir is not None and Path(locales_dir).resolve() != LOCALES_DIR:
        paths.append(catalog_path(lang, Path(locales_dir)))
    contents = []
    for path in paths:
        try:
            contents.append(path.read_bytes())
        except FileNotFoundError:
            pass
    return _load_ui(lang, tuple(contents), None if locales_dir is None else str(locales_dir))


@lru_cache(maxsize=64)
def _load_ui(lang: str, contents: tuple[bytes, ...], locales_dir: str | None) -> UI:
    messages: dict[str, str] = {}
    for data in contents:  # the bundled catalog first, the --locales one over it
        catalog = read_po(io.BytesIO(data), locale=None, abort_invalid=False)
        messages.update(
            (str(m.id), str(m.string))
            for m in catalog
            if m.id and m.string and not m.fuzzy and isinstance(m.id, str)
        )
    found = bool(contents)
    if found or lang == "en":
        return UI(lang, messages)
    target = catalog_path(lang, Path(locales_dir) if locales_dir else Path("locales"))
    how = "" if locales_dir else f" and pass --locales {target.parents[2]}"
    return UI(lang, {}, (
        Finding(
            "warning",
            "ui-catalog-missing",
            f"no UI catalog for '{lang}': interface strings stay in English; to translate them, copy "
            f"{catalog_path('zh')} to {target}, translate its msgstr lines{how}",
            path=str(target),
        ),
    ))


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
