"""`check | stats | extract`: the translators' and reviewers' commands.

Each command computes the English keys exactly as the build does (the same analysis, so the same
keys), then hands them to the translation modules. Only argument handling and printing live here.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..builder.entries import asset_reader, entry_keys
from ..builder.site import BuildConfig, analyse_pages
from ..translate.catalog import check_file
from ..translate.extract import confirm, extract
from ..translate.extract import fix_file
from ..errors import UserError
from ..findings import Finding
from .output import print_findings
from ..translate.stats import coverage, render_json, render_text
from ..read.structure import SourceFile, discover
from ..translate.catalog import Catalog, is_sidecar, resolve_translation_path, translation_path


def _keys_by_page(config: BuildConfig) -> tuple[list[SourceFile], dict[str, list[str]], list[Finding]]:
    """page base path (e.g. `annotated_attention/mha`) → the page's entries (`builder/entries.py`:
    its keys, its figures' too). A page with prose, and a redirect page (front matter `redirect:`
    and no prose: the build writes it, with its title): both are pages, with keys to translate."""
    files = discover(config.source)
    pages = analyse_pages(files.pages, config.jobs)
    findings = [f for p in pages.values() for f in p.findings if f.severity == "error"]
    read = asset_reader(files)
    keys = {f.base: entry_keys(pages[f.rel], read) for f in files.pages if pages[f.rel].sections or pages[f.rel].redirect}
    return files.pages, keys, findings


def languages_in(translations: Path) -> list[str]:
    """The languages that have translation files (`<page>.<lang>.json`) in `translations`."""
    from ..builder.validate import LANG_TAG

    langs: set[str] = set()
    if Path(translations).is_dir():
        for path in Path(translations).rglob("*.json"):
            parts = path.name[: -len(".json")].split(".")
            if parts[-1] in ("fuzzy", "stale", "review"):
                parts = parts[:-1]
            if len(parts) >= 2 and parts[0] != "glossary" and LANG_TAG.fullmatch(parts[-1]):
                langs.add(parts[-1])
    return sorted(langs)


def cmd_check(args: argparse.Namespace, config: BuildConfig, langs: list[str]) -> int:
    files, keys, source_findings = _keys_by_page(config)
    findings: list[Finding] = list(source_findings)
    checked = 0
    for lang in langs:
        known = set()
        for page in files:
            path, by_case = resolve_translation_path(config.translations, page, lang)
            if by_case is not None:
                findings.append(by_case)
            known.add(path.resolve())
            if path.exists():
                checked += 1
                english = set(keys.get(page.base, []))
                if getattr(args, "fix", False):
                    fixed = fix_file(path, lang, english, Path(config.translations))
                    if fixed:
                        print(f"{path}: {fixed} values repaired", file=sys.stderr)
                findings.extend(check_file(path, lang, english))
        # A translation file no source page produces is probably misnamed or left behind.
        for path in sorted(Path(config.translations).rglob(f"*.{lang}.json")):
            if path.resolve() not in known and not is_sidecar(path):
                findings.append(Finding(
                    "warning", "orphan-file",
                    f"no source page matches this file; rename it to <path under {config.source}>.{lang}.json or delete it",
                    path=str(path),
                ))
    print_findings(findings, args.format, args.quiet, stream=sys.stdout)
    errors = sum(1 for f in findings if f.severity == "error")
    print(
        f"checked {checked} translation files ({', '.join(langs) or 'no languages'}): "
        f"{errors} errors, {len(findings) - errors} warnings",
        file=sys.stderr,
    )
    return 1 if errors else 0


def cmd_stats(args: argparse.Namespace, config: BuildConfig, langs: list[str]) -> int:
    files, keys, _ = _keys_by_page(config)
    rows = []
    for lang in langs:
        catalogs = {
            page.base: Catalog.load(translation_path(config.translations, page, lang), lang)
            for page in files
            if page.base in keys
        }
        rows.extend(coverage(keys, catalogs))  # every page has a catalog, so every row has `lang`
    sys.stdout.write(render_json(rows) if args.json else render_text(rows))
    return 0


def cmd_extract(args: argparse.Namespace, config: BuildConfig, langs: list[str]) -> int:
    files, keys, source_findings = _keys_by_page(config)
    print_findings(source_findings, args.format, args.quiet)
    if args.confirm:
        for lang in langs:
            confirmed = sum(len(confirm(config.translations, base, lang)) for base in keys)
            print(f"confirmed {confirmed} fuzzy suggestions for {lang}", file=sys.stderr)
        return 0
    try:  # a new project's first extract makes the folder (safe_files writes only inside it)
        Path(config.translations).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create --translations {config.translations}: {e.strerror or e}; "
                        "pass --translations DIR in a folder you can write to", status=1) from None
    failed = False
    for lang in langs:
        result = extract(keys, config.translations, lang)
        print_findings(result.findings, args.format, args.quiet)
        added = sum(len(p.added) for p in result.pages)
        fuzzy = sum(len(p.fuzzy) for p in result.pages)
        stale = sum(len(p.stale) for p in result.pages)
        for path in result.changed_files:
            print(f"  wrote {path}", file=sys.stderr)
        print(
            f"{lang}: {added} new keys, {fuzzy} fuzzy suggestions, {stale} stale entries moved aside, "
            f"{len(result.changed_files)} file{'' if len(result.changed_files) == 1 else 's'} written",
            file=sys.stderr,
        )
        failed = failed or result.has_errors
    return 1 if failed else 0
