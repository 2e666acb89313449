"""Checks of a `BuildConfig` before a build: each mistake a person can make in its folders and
languages becomes one `UserError` line saying what to do, instead of a traceback halfway through
the build (or, worse, a build that silently ignores what was asked)."""
from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..read.structure import PAGE_SUFFIXES
from .config import DEFAULT_TEMPLATES, LANG_TAG, BuildConfig


def check_lang(tag: str, option: str = "--langs") -> str:
    if not LANG_TAG.fullmatch(tag):
        raise UserError(
            f"{option}: {tag!r} is not a language tag; use codes like en, zh, ru, pt-BR or zh-Hant"
        )
    return tag


def parse_langs(text: str, option: str = "--langs") -> tuple[str, ...]:
    """`"en, zh,ru"` → `("en", "zh", "ru")`: each checked, duplicates dropped, order kept."""
    langs: list[str] = []
    for part in text.split(","):
        tag = part.strip()
        if tag and check_lang(tag, option) not in langs:
            langs.append(tag)
    if not langs:
        raise UserError(f"{option} needs at least one language, e.g. {option} en,zh,ru")
    return tuple(langs)


def check_folder(path: Path, option: str, what: str) -> None:
    """`path` must be an existing folder."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{option} {path}: no such folder; pass {option} DIR, the folder of {what}")
    if not path.is_dir():
        raise UserError(f"{option} {path} is a file, not a folder; pass {option} DIR, the folder of {what}")


def check_templates(path: Path) -> None:
    """The theme must have every template the build renders or they use, and every static file
    they link: else one line naming what is missing, before anything is built."""
    from .theme import theme_problems  # (jinja2: only for a build that reads its inputs)

    check_folder(path, "--templates", "the theme's templates (page.html, base.html, static/)")
    problems = theme_problems(Path(path))
    if not problems:
        return
    missing = [p for p in problems if ":" not in p.split(" ")[0]]
    broken = [p for p in problems if p not in missing]
    if missing:
        raise UserError(
            f"--templates {path} lacks {', '.join(missing)}; add {'it' if len(missing) == 1 else 'them'} (the bundled "
            f"theme, {DEFAULT_TEMPLATES}, has every file a theme needs: copy it to start) or fix the reference, "
            "or leave --templates out"
        )
    raise UserError(f"--templates {path}: {'; '.join(Path(path, b).as_posix() for b in broken)}; fix the template")


def check_out(config: BuildConfig) -> None:
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; pass --out DIR, a folder the site may replace")
    parent = out.resolve().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UserError(f"--out {out}: {parent} is a file, so no folder can be made there; pass another --out DIR")
    # A new site replaces the whole --out folder: it must not hold the inputs.
    resolved = out.resolve()
    for option, path in (("--source", config.source), ("--translations", config.translations),
                         ("--templates", config.templates), ("--locales", config.locales)):
        if path is None:
            continue
        path = Path(path).resolve()
        if path == resolved or resolved in path.parents:
            raise UserError(
                f"--out {out} contains {option} {config_path(config, option)}; the build replaces --out, "
                "so pass an output folder of its own (e.g. --out site)"
            )
        if path in resolved.parents:  # the site would be read back as input by the next build
            raise UserError(
                f"--out {out} is inside {option} {config_path(config, option)}; pass an output folder "
                "outside the inputs (e.g. --out site)"
            )


def config_path(config: BuildConfig, option: str) -> Path:
    return {"--source": config.source, "--translations": config.translations,
            "--templates": config.templates, "--locales": config.locales}[option]


def translation_langs(config: BuildConfig) -> list[str]:
    return [lang for lang in config.langs if lang != config.base_lang]


def check_translations(source: Path, translations: Path, required: bool, alternative: str = "") -> None:
    """The translations folder must exist when languages other than the base are asked for,
    and when it holds translation files, at least one must belong to a page of `source`: a
    misspelled or wrong folder would otherwise build an all-English site without a word."""
    translations = Path(translations)
    if not translations.exists():
        if required:
            raise UserError(
                f"--translations {translations}: no such folder; pass --translations DIR, the folder of "
                f"<page>.<lang>.json files{alternative}"
            )
        return
    if not translations.is_dir():
        raise UserError(
            f"--translations {translations} is a file, not a folder; pass --translations DIR, "
            "the folder of <page>.<lang>.json files"
        )
    example = None
    for path in translations.rglob("*.json"):  # lazily: the first match ends the walk
        rel = path.relative_to(translations).as_posix()
        named = catalog_name(rel)
        if named is None:
            continue
        base, _lang = named
        if any((Path(source) / (base + suffix)).is_file() for suffix in PAGE_SUFFIXES):
            return  # a page matches
        example = example or rel
    if example is not None:
        first = _first_page(Path(source))
        expected = f"{translations}/{first}.zh.json" if first else f"{translations}/<page>.<lang>.json"
        raise UserError(
            f"--translations {translations} matches no page of --source {source} (e.g. {example} has no "
            f"source page); translation files are named after the page's path under --source, such as "
            f"{expected}: check both folders"
        )


def catalog_name(rel: str) -> tuple[str, str] | None:
    """(the page's path without suffix, the language) of a translation file's path under the
    translations folder (`<page>.<lang>.json` and its `.fuzzy`/`.stale`/`.review` sidecars);
    None for anything else (the glossary, other JSON)."""
    parts = rel[: -len(".json")].split(".") if rel.endswith(".json") else []
    if parts and parts[-1] in ("fuzzy", "stale", "review"):
        parts = parts[:-1]
    if len(parts) < 2 or not LANG_TAG.fullmatch(parts[-1]) or rel.rsplit("/", 1)[-1].startswith("glossary."):
        return None
    return ".".join(parts[:-1]), parts[-1]


def languages_in(translations: Path) -> list[str]:
    """The languages that have translation files (`<page>.<lang>.json`) in `translations`."""
    langs: set[str] = set()
    if Path(translations).is_dir():
        for path in Path(translations).rglob("*.json"):
            named = catalog_name(path.relative_to(translations).as_posix())
            if named is not None:
                langs.add(named[1])
    return sorted(langs)


def check_has_pages(source: Path) -> None:
    """A source folder without a single .py or .md file is the wrong folder, not an empty site."""
    for path in Path(source).rglob("*"):  # lazily: the first page ends the walk
        if path.suffix in PAGE_SUFFIXES and path.is_file():
            return
    raise UserError(
        f"--source {source} has no .py or .md file to build; pass --source DIR, the folder of your commented sources"
    )


def _first_page(source: Path) -> str:
    for path in sorted(source.rglob("*")):
        if path.suffix in PAGE_SUFFIXES and path.is_file():
            rel = path.relative_to(source).as_posix()
            if not any(part.startswith(".") for part in rel.split("/")):
                return rel.rsplit(".", 1)[0]
    return ""


def validate(config: BuildConfig) -> None:
    """Raise `UserError` for the first mistake in what a build is asked to do."""
    check_lang(config.base_lang, "--base-lang")
    for lang in config.langs:
        check_lang(lang)
    if config.base_lang not in config.langs:
        raise UserError(f"--langs {','.join(config.langs)} lacks the base language {config.base_lang}; add it or pass --base-lang")
    check_folder(config.source, "--source", "commented Python / Markdown to build")
    check_has_pages(config.source)
    check_templates(config.templates)
    if config.locales is not None:
        check_folder(config.locales, "--locales", "UI catalogs, <lang>/LC_MESSAGES/messages.po")
    check_translations(config.source, config.translations, required=bool(translation_langs(config)),
                       alternative=f" (or --langs {config.base_lang} for a site in the base language alone)")
    check_out(config)
