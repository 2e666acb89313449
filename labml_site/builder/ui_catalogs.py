"""Reading the theme's UI strings from Babel message catalogs.

Catalogs live in `labml_site/locales/<lang>/LC_MESSAGES/messages.po` and are read directly (as
Babel reads them: `po_messages.py`), so adding a language's UI is adding one .po file: no compile
step, nothing to forget. A
build's `--locales DIR` (a folder of `<lang>/LC_MESSAGES/messages.po`) adds catalogs from outside
the package and overrides bundled strings one by one, so interface translators never write into an
installed package.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..findings import Finding
from ..render.i18n import UI
from .po_messages import messages as po_messages

LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"  # shipped inside the package
DOMAIN = "messages"


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
        messages.update(po_messages(data))
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
