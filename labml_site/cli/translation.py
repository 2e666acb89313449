"""`check | stats | extract | review | pr-check`: the translators' and reviewers' commands.

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
from .output import print_findings, print_summary
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


def _untranslated_by_file(findings: list[Finding]) -> list[Finding]:
    """The "not translated yet" notes, one line per file instead of one per entry (`--verbose`
    lists them): a new language has hundreds, and they are no problem, only work to do."""
    notes: dict[str, int] = {}
    kept = []
    for f in findings:
        if f.code == "empty-value" and f.key:
            notes[f.path] = notes.get(f.path, 0) + 1
        else:
            kept.append(f)
    for path, n in notes.items():
        kept.append(Finding("warning", "untranslated", f"{n} {'entry' if n == 1 else 'entries'} not translated yet "
                            "(the English is shown); `--verbose` lists them", path=path))
    return sorted(kept, key=lambda f: (f.path, f.line, f.col))


def _only_changed(findings: list[Finding], changed: dict[Path, set[str]]) -> list[Finding]:
    """The findings about what changed since `--base`: the changed files' own, and the changed
    entries' (a file's other entries are the base's, which passed)."""
    out = []
    for f in findings:
        keys = changed.get(Path(f.path).resolve()) if f.path else None
        if f.path and keys is None:
            continue  # a file that did not change
        if f.key and keys is not None and f.key not in keys:
            continue
        out.append(f)
    return out


def _named_files(config: BuildConfig, files: list[Path], langs: list[str], pages) -> tuple[dict, list[str], list[Finding]]:
    """The translation files named on the command line (by pre-commit: the staged ones) → their
    pages and languages; a name that is no translation file of a source page is a finding."""
    from ..builder.validate import LANG_TAG

    root = Path(config.translations).resolve()
    by_base = {p.base: p for p in pages}
    wanted: dict[tuple[str, str], Path] = {}
    problems = []
    for given in files:
        path = Path(given)
        if is_sidecar(path) or path.name.startswith("glossary."):
            continue  # sidecars and glossaries are checked with their main file, or are not translations
        try:
            rel = path.resolve().relative_to(root).as_posix()
        except ValueError:
            problems.append(Finding("error", "not-a-translation", f"not under --translations {config.translations}; "
                                    "pass --translations DIR", path=str(path)))
            continue
        base, _, lang = rel[: -len(".json")].rpartition(".") if rel.endswith(".json") else ("", "", "")
        if not base or not LANG_TAG.fullmatch(lang):
            problems.append(Finding("error", "not-a-translation", "not a <page>.<lang>.json translation file", path=str(path)))
        elif base not in by_base:
            problems.append(Finding("warning", "orphan-file", f"no source page matches this file; rename it to <path under "
                                    f"{config.source}>.{lang}.json or delete it", path=str(path)))
        else:
            wanted[(base, lang)] = path
    return wanted, sorted({lang for _, lang in wanted} | set(langs if not files else [])), problems


def check_findings(args: argparse.Namespace, config: BuildConfig, langs: list[str]) -> tuple[list[Finding], int]:
    """Every finding `check` reports (before `--base` narrows them), and how many files it read."""
    files, keys, source_findings = _keys_by_page(config)
    findings: list[Finding] = list(source_findings)
    named = None
    if getattr(args, "files", None):
        named, langs, problems = _named_files(config, args.files, langs, files)
        findings += problems
    checked = 0
    for lang in langs:
        known = set()
        for page in files:
            if named is not None and (page.base, lang) not in named:
                continue
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
        if named is not None:
            continue
        # A translation file no source page produces is probably misnamed or left behind.
        for path in sorted(Path(config.translations).rglob(f"*.{lang}.json")):
            if path.resolve() not in known and not is_sidecar(path):
                findings.append(Finding(
                    "warning", "orphan-file",
                    f"no source page matches this file; rename it to <path under {config.source}>.{lang}.json or delete it",
                    path=str(path),
                ))
    return findings, checked


def cmd_check(args: argparse.Namespace, config: BuildConfig, langs: list[str]) -> int:
    findings, checked = check_findings(args, config, langs)
    since = ""
    if getattr(args, "base", None):
        from ..builder.review import GitError, changed_keys

        try:
            findings = _only_changed(findings, changed_keys(config.translations, args.base))
        except GitError as e:
            raise UserError(str(e)) from None
        since = f", in what changed since {args.base}"
    errors = sum(1 for f in findings if f.severity == "error")
    if args.format == "github":
        shown = [f for f in findings if f.severity == "error"]
    elif args.format == "json" or getattr(args, "verbose", False):
        shown = findings
    else:
        shown = _untranslated_by_file(findings)
    print_findings(shown, args.format, args.quiet, stream=sys.stdout)
    print_summary(
        f"checked {checked} translation files ({', '.join(langs) or 'no languages'}){since}: "
        f"{errors} errors, {len(findings) - errors} warnings",
        args.format,
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


def cmd_review(args: argparse.Namespace, config: BuildConfig) -> int:
    from ..builder.review import GitError, changed_entries
    from ..translate.review import annotations, findings, summary, write_report

    if args.apply is not None:
        return _apply(args, config)
    if not args.base:
        raise UserError("review needs --base REF (the git ref to compare with, e.g. origin/main), "
                        "or --apply FILE (decisions saved from a report)")
    try:
        changes = changed_entries(config, args.base, args.site_url)
    except GitError as e:
        raise UserError(str(e)) from None
    counts = summary(changes)
    if args.format in ("text", "github"):
        print_findings(annotations(changes) if args.format == "github" else findings(changes), args.format, stream=sys.stdout)
        print_summary(counts.line(args.base), args.format)
        return 1 if counts.errors else 0
    try:
        write_report(changes, args.out, args.base)
    except OSError as e:
        raise UserError(f"cannot write {args.out}: {e.strerror or e}", status=1) from None
    print(f"wrote {args.out}: {counts.line(args.base)}", file=sys.stderr)
    return 1 if counts.errors else 0  # (a file it could not read too)


def _apply(args: argparse.Namespace, config: BuildConfig) -> int:
    from ..read.safe_files import read_regular
    from ..translate.files import MAX_FILE_BYTES
    from ..translate.review import apply_decisions
    from ..workbench.editor import git_user_name

    by = args.reviewer if args.reviewer is not None else git_user_name()
    if not by:
        raise UserError("who decided? pass --reviewer NAME (or set git's user.name)")
    try:
        data = read_regular(args.apply, MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UserError(f"--apply {args.apply}: no such file; save it from the review report first") from None
    except OSError as e:
        raise UserError(f"cannot read --apply {args.apply}: {getattr(e, 'reason', None) or e.strerror or e}") from None
    done = apply_decisions(Path(config.translations), data, by, str(args.apply))
    print_findings(done.findings, "text")
    errors = sum(1 for f in done.findings if f.severity == "error")
    print(f"recorded {done.approved} approved and {done.rejected} rejected entries as {by!r} in the review files; "
          f"{len(done.findings)} decisions not applied", file=sys.stderr)
    return 1 if errors else 0


def cmd_pr_check(args: argparse.Namespace, config: BuildConfig, langs: list[str]) -> int:
    """What the pull-request workflow runs (.github/workflows/translations.yml), and a
    contributor before pushing: `check --base` on what changed, then the `review` report."""
    from ..builder.review import GitError, changed_entries
    from ..translate.review import findings, write_report

    args.verbose, args.fix, args.files = False, False, []
    status = cmd_check(args, config, langs)
    try:
        changes = changed_entries(config, args.base, args.site_url)
    except GitError as e:
        raise UserError(str(e)) from None
    if args.format == "github":  # a claim that someone reviewed a translation: the maintainer confirms it
        print_findings([f for f in findings(changes) if f.code == "review-mark"], "github", stream=sys.stdout)
    try:
        write_report(changes, args.out, args.base)
    except OSError as e:
        raise UserError(f"cannot write {args.out}: {e.strerror or e}", status=1) from None
    print(f"wrote {args.out}: {sum(len(c.entries) for c in changes)} changed entries in {len(changes)} files "
          f"since {args.base}", file=sys.stderr)
    return status
