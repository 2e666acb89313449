"""Command line: parses arguments and calls the library. No build logic lives here.

The program's name is derived once, from how it was started (`labml-site`, `python build.py`,
`python -m labml_site`), and used for argparse's `prog` and in every hint that says what to run.
A user's mistake is printed as one line, `error: <what is wrong>; <what to do>`, with exit status
2; a build whose pages have errors exits with 1; an operating-system failure (disk full, a
read-only or unwritable output) is one line with the path and the reason, exit status 1.
"""
from __future__ import annotations

import argparse
import errno
import sys
import threading
from pathlib import Path
from typing import Callable, Sequence

from .. import __version__
from ..errors import UserError
from .output import print_findings  # noqa: F401 - also the library's way to print findings

DEFAULT_TRANSLATIONS = Path("translations")


def program_name(argv0: str | None = None) -> str:
    """How the user started this program, as they would type it again."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    path = Path(argv0)
    if path.name == "__main__.py" and path.parent.name == "labml_site":
        return "python -m labml_site"
    if path.name == "build.py":
        return f"python {argv0}"
    return "labml-site"


class _Parser(argparse.ArgumentParser):
    """argparse's mistakes in the same one-line form as the others."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {message}; see `{self.prog} --help`\n")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes") from None
    if jobs < 0:
        raise argparse.ArgumentTypeError("must be 0 (automatic) or more")
    return jobs


def _inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", type=Path, default=Path("source"), metavar="DIR",
                   help="folder of commented Python / Markdown to build (default: source)")
    p.add_argument("--translations", type=Path, default=None, metavar="DIR",
                   help="folder of <page>.<lang>.json translation files, <page> being the path under --source "
                        "without extension (default: translations)")
    p.add_argument("--base-lang", default="en", metavar="LANG",
                   help="the language the sources are written in (default: en)")
    p.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="worker processes (default: 0, one per core when there is enough work)")


def _findings_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="how to print findings: text (file:line: message), json, or github "
                        "(GitHub Actions annotations) (default: text)")
    p.add_argument("--quiet", "-q", action="store_true", help="print errors only, no warnings")


def _site_options(p: argparse.ArgumentParser) -> None:
    from ..builder.config import DEFAULT_TEMPLATES

    p.add_argument("--out", type=Path, default=Path("site"), metavar="DIR",
                   help="output folder, replaced by the new site: a new or empty folder, or one this builder "
                        "wrote (default: site)")
    p.add_argument("--langs", default=None, metavar="LANGS",
                   help="the site's languages, comma-separated, e.g. en,zh,ru; the base language is added first "
                        "if missing (default: the base language and every language that has translation files "
                        "in --translations)")
    p.add_argument("--templates", type=Path, default=DEFAULT_TEMPLATES, metavar="DIR",
                   help="theme folder with page.html, base.html, … and static/ (default: the theme inside the package)")
    p.add_argument("--locales", type=Path, default=None, metavar="DIR",
                   help="folder of UI catalogs, <lang>/LC_MESSAGES/messages.po, that add interface languages or "
                        "override the bundled strings (default: the bundled catalogs only)")
    p.add_argument("--site-title", default="", metavar="TEXT",
                   help="site name shown in titles (default: the home page's title)")
    p.add_argument("--site-url", default="", metavar="URL",
                   help="public URL of the site, e.g. https://example.org/docs/, for absolute hreflang links, "
                        "OpenGraph URLs and sitemap.xml (default: none, no sitemap)")
    p.add_argument("--edit-url", default="", metavar="URL",
                   help="URL prefix for the 'help translate' links to translation files, e.g. "
                        "https://github.com/o/r/edit/main/translations/ (default: no links)")
    p.add_argument("--source-url", default="", metavar="URL",
                   help="URL prefix of the sources, e.g. https://github.com/o/r/blob/main/src/, for a "
                        "'view on GitHub' link on each page and section (default: no links)")
    p.add_argument("--markdown", action="store_true",
                   help="also write each page as Markdown (PAGE.html.md: prose and code, math as TeX) and "
                        "an llms.txt index per language, for programs that read sites (default: off)")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="rebuild everything, ignoring and not updating the build cache "
                        "(in ~/.cache/labml-site/, or $XDG_CACHE_HOME/labml-site/ or $LABML_SITE_CACHE_DIR)")


def _work_langs(p: argparse.ArgumentParser, verb: str) -> None:
    p.add_argument("--langs", default=None, metavar="LANGS",
                   help=f"languages to {verb}, comma-separated, e.g. zh,ru; the base language is skipped if listed "
                        "(default: every language that has files in --translations)")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = _Parser(
        prog=prog,
        description="Build an annotated, translated tutorial site from commented Python.",
        epilog=f"Without a command, builds: `{prog} --source DIR --out DIR` is `{prog} build --source DIR --out DIR`. "
               f"`{prog} COMMAND --help` describes a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"labml-site {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("build", help="build the site (the default command)", description="Build the site into --out.")
    _inputs(p)
    _site_options(p)
    _findings_options(p)

    p = sub.add_parser("serve", help="build, serve on 127.0.0.1 and rebuild on change",
                       description="Build, serve the site on 127.0.0.1 and rebuild (and reload the page) on every save.")
    _inputs(p)
    _site_options(p)
    _findings_options(p)
    p.add_argument("--port", type=_port, default=8000, help="port to serve on, on 127.0.0.1 only (default: 8000)")

    p = sub.add_parser("check", help="validate translation files; exit 1 on errors",
                       description="Validate translation files; exit status 1 when any has an error "
                                   "(docs/cli-contract.md: exit codes and formats).")
    _inputs(p)
    _work_langs(p, "check")
    _findings_options(p)
    p.add_argument("files", nargs="*", type=Path, metavar="FILE",
                   help="check only these translation files (as pre-commit passes the staged ones; default: all)")
    p.add_argument("--fix", action="store_true",
                   help="write the repairs of benign defects (stray tags, text outside blocks, "
                        "encoded placeholders) back into the translation files")
    p.add_argument("--base", default=None, metavar="REF",
                   help="report only on what changed since this git ref: the changed entries and files")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="list every untranslated entry (default: one line per file)")

    p = sub.add_parser("pr-check", help="what the pull-request check runs: check --base and the review report",
                       description="Check what changed since --base (exit 1 on errors) and write the review report: "
                                   "the same steps as .github/workflows/translations.yml.")
    _inputs(p)
    _work_langs(p, "check")
    _findings_options(p)
    p.add_argument("--base", required=True, metavar="REF", help="the git ref to compare with, e.g. origin/main")
    p.add_argument("--out", type=Path, default=Path("translation-review.html"), metavar="FILE",
                   help="the report to write (default: translation-review.html)")
    p.add_argument("--site-url", default="", metavar="URL", help="the published site, for the report's links")

    p = sub.add_parser("stats", help="translation coverage per language and page",
                       description="Blocks, translated, fuzzy, missing, invalid and stale entries per language and page.")
    _inputs(p)
    _work_langs(p, "count")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser("extract", help="create or update a language's translation files",
                       description="Create or update translation files: add new blocks as \"\", offer fuzzy "
                                   "suggestions, move stale entries aside.")
    _inputs(p)
    p.add_argument("--lang", "--langs", dest="langs", required=True, metavar="LANGS",
                   help="the language(s) to create or update, e.g. ja (or ja,ko)")
    p.add_argument("--confirm", action="store_true",
                   help="accept the reviewed fuzzy suggestions of those languages as translations")
    _findings_options(p)
    p = sub.add_parser("translate", help="edit a language's translations in the page, on 127.0.0.1",
                       description="Build the site in one language and serve it on 127.0.0.1 with the translation "
                                   "editor: click a block (or Alt+N for the next untranslated one), translate, save.")
    _inputs(p)
    p.add_argument("--lang", required=True, metavar="LANG", help="the language to translate, e.g. zh")
    p.add_argument("--port", type=_port, default=8001, help="port to serve on, on 127.0.0.1 only (default: 8001)")
    p.add_argument("--out", type=Path, default=Path(".site-translate"), metavar="DIR",
                   help="where the editor's copy of the site is built (default: .site-translate)")
    p.add_argument("--reviewer", default=None, metavar="NAME",
                   help="your name for 'Mark reviewed' (default: git's user.name)")
    p.add_argument("--memory", type=Path, action="append", default=[], metavar="DIR",
                   help="a folder of other translation files (<page>.<lang>.json, e.g. another project's "
                        "translate_cache) whose entries the translation memory also suggests; repeatable")
    p.add_argument("--templates", type=Path, default=None, metavar="DIR", help="theme folder (default: the bundled theme)")
    p.add_argument("--locales", type=Path, default=None, metavar="DIR", help="extra UI catalogs (as for build)")

    p = sub.add_parser("review", help="a report of the translation changes since a git ref, as pages",
                       description="Compare the translation files with their versions at a git ref: per changed block, "
                                   "the English and the old and new translations rendered, with the checks' findings.")
    _inputs(p)
    p.add_argument("--base", default=None, metavar="REF", help="the git ref to compare with, e.g. origin/main")
    p.add_argument("--out", type=Path, default=Path("translation-review.html"), metavar="FILE",
                   help="the report to write, one offline HTML file (default: translation-review.html)")
    p.add_argument("--apply", type=Path, default=None, metavar="FILE",
                   help="record the decisions saved from a report (review-decisions.json) in the review files")
    p.add_argument("--reviewer", default=None, metavar="NAME",
                   help="who decided, for --apply (default: git's user.name)")
    p.add_argument("--site-url", default="", metavar="URL",
                   help="the published site, e.g. https://example.org/docs/: the report's relative links point "
                        "there (default: links stay relative)")
    p.add_argument("--format", choices=("html", "text", "github"), default="html",
                   help="html: write the report; text: print the findings of the changed entries; github "
                        "(annotations for CI): their errors and changed review marks, and one summary (default: html)")

    p = sub.add_parser("cache", help="show the build cache's size and folders; --clear empties it",
                       description="The build cache: its folders (one per output folder), their sizes and last use. "
                                   "The total is kept under a cap (default 1 GB) by removing the least recently used "
                                   "folders and those of output folders that no longer exist.")
    p.add_argument("--clear", action="store_true", help="remove every cache folder no running build holds")
    p.add_argument("--max", metavar="SIZE", help="set the cap (500M, 2G; 0: none), kept in the cache folder; "
                                                 "$LABML_SITE_CACHE_MAX overrides it")
    parser.set_defaults(commands=sub.choices)
    return parser


# ---------------------------------------------------------------------------------------------
# Arguments → configuration, checked


def site_config(args: argparse.Namespace):
    """The BuildConfig of `build`/`serve`, checked (raises UserError)."""
    from ..builder.validate import validate

    config, note = unchecked_site_config(args)
    validate(config)
    if note and not args.quiet:
        print(note, file=sys.stderr)
    return config


def unchecked_site_config(args: argparse.Namespace):
    """(the BuildConfig of `build`/`serve`, its languages' tags checked; a note for the user)."""
    from ..builder.config import BuildConfig
    from ..builder.validate import check_lang, languages_in, parse_langs

    base = check_lang(args.base_lang, "--base-lang")
    translations = args.translations if args.translations is not None else DEFAULT_TRANSLATIONS
    note = ""
    if args.langs is not None:
        langs = parse_langs(args.langs)
    elif args.translations is None and not translations.exists():
        langs = (base,)  # nothing to translate from: a one-language site, not empty copies
        note = (f"note: no {translations}/ folder, so building {base} only; pass --translations DIR "
                "and --langs to add languages")
    else:  # the languages the translations are in, whatever tree this is
        found = [lang for lang in languages_in(translations) if lang != base] if translations.is_dir() else []
        langs = (base, *found)
        if not found and translations.is_dir():
            note = (f"note: {translations}/ holds no <page>.<lang>.json files, so building {base} only; "
                    f"`{args.program} extract --lang LANG` starts a language")
    if base not in langs:
        langs = (base, *langs)
    config = BuildConfig(
        source=args.source,
        translations=translations,
        out=args.out,
        langs=langs,
        base_lang=base,
        templates=args.templates,
        locales=args.locales,
        site_title=args.site_title,
        site_url=args.site_url,
        edit_url=args.edit_url,
        source_url=getattr(args, "source_url", ""),
        markdown=getattr(args, "markdown", False),
        jobs=args.jobs,
        cache=args.cache,
    )
    return config, note


def translation_config(args: argparse.Namespace):
    """The BuildConfig and the languages to work on of `check`/`stats`/`extract` (raises UserError)."""
    from ..builder.config import BuildConfig
    from ..builder.validate import check_folder, check_lang, check_translations, languages_in, parse_langs

    base = check_lang(args.base_lang, "--base-lang")
    translations = args.translations if args.translations is not None else DEFAULT_TRANSLATIONS
    check_folder(args.source, "--source", "commented Python / Markdown to build")
    check_translations(args.source, translations, required=args.command != "extract")
    if args.langs is None:
        langs = [lang for lang in languages_in(translations) if lang != base]
    else:
        option = "--lang" if args.command == "extract" else "--langs"
        given = parse_langs(args.langs, option)
        langs = [lang for lang in given if lang != base]
        if not langs:
            raise UserError(
                f"{option} {args.langs} names only the base language {base}; name the languages to work on, "
                f"e.g. `{args.program} {args.command} {option} {'ja' if option == '--lang' else 'zh,ru'}` "
                "(the base is --base-lang)"
            )
    config = BuildConfig(source=args.source, translations=translations, out=Path("site"),
                         langs=(base, *langs), base_lang=base, jobs=args.jobs)
    return config, langs


# ---------------------------------------------------------------------------------------------
# Printing


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def os_error_message(e: OSError, config) -> str:
    """One line for a failure of the operating system: the path, the reason, what to do."""
    path = e.filename or ""
    reason = e.strerror or str(e)
    if e.errno is None:  # raised with a message of its own, e.g. a source that vanished mid-build
        return str(e)
    if path:
        inputs = [Path(p).resolve() for p in (config.source, config.translations, config.templates, config.locales) if p]
        resolved = Path(path).resolve()
        if any(resolved == p or p in resolved.parents for p in inputs) and e.errno not in (errno.ENOSPC, errno.EROFS):
            return f"cannot read {path}: {reason}; make it readable, or leave it out of the source folder"
    else:  # a failed write() names no file: it was one of the site's or the cache's
        path = f"into {config.out} (or the build cache)"
    hint = {
        errno.ENOSPC: "free some disk space, or pass --out DIR on another disk",
        errno.EDQUOT: "free some space within your quota, or pass --out DIR elsewhere",
        errno.EFBIG: "a file-size limit (or a full disk) stopped the write; free space or pass --out DIR elsewhere",
        errno.EROFS: "the file system is read-only; pass --out DIR on a writable one",
        errno.EACCES: "you may not write there; pass --out DIR in a folder you can write to",
        errno.EPERM: "you may not write there; pass --out DIR in a folder you can write to",
        errno.ENOTDIR: "a file is in the way of a folder; remove it or pass another --out DIR",
        errno.EEXIST: "something is in the way; remove it or pass another --out DIR",
    }.get(e.errno or 0, f"check that --out {config.out} and its parent are writable folders with free space")
    return f"cannot write {path}: {reason}; {hint}"


# ---------------------------------------------------------------------------------------------
# Commands


def cmd_build(args: argparse.Namespace) -> int:
    from ..builder import build
    from ..builder.validate import validate

    config, note = unchecked_site_config(args)
    try:
        result = build(config, check=validate)  # (checked only when the site is not already up to date)
    except OSError as e:
        raise UserError(os_error_message(e, config), status=1) from None
    if note and not args.quiet:
        print(note, file=sys.stderr)
    print_findings(result.report.findings, args.format, args.quiet)
    errors = len(result.report.errors)
    warnings = len(result.report.findings) - errors
    broken = []  # the sources that do not parse, as the findings above say
    if result.kept:
        broken.append(f"{_count(len(result.kept), 'page')} kept from the last good build")
    if result.skipped:
        broken.append(f"{_count(len(result.skipped), 'page')} skipped")
    if broken:
        broken[-1] += " (sources that do not parse)"
    print(
        f"built {_count(result.built, 'page')} × {_count(len(result.localized), 'language')} into {result.out} "
        f"({result.files_written} files, {result.seconds:.2f} s); {''.join(b + ', ' for b in broken)}{errors} errors, "
        f"{warnings} warnings",
        file=sys.stderr,
    )
    return 1 if errors else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from ..builder.serve import make_server, watch_and_rebuild
    from ..builder import build, settle

    config = site_config(args)
    config.live_reload = True  # keeps the build cache in memory between rebuilds
    try:  # the port first: a busy port is found before a build, not after
        server, state = make_server(config.out, args.port)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UserError(f"port {args.port} is in use (another server, perhaps an earlier `{args.program} serve`); "
                            f"stop it or pass --port N") from None
        if e.errno in (errno.EACCES, errno.EPERM):
            raise UserError(f"port {args.port} needs privileges; pass --port N with N above 1023") from None
        raise UserError(f"cannot serve on 127.0.0.1:{args.port}: {e.strerror or e}; pass another --port N") from None

    try:
        result = build(config)
        settle()  # (the first build's records now: stopped before any save, the next `build` reads them)
    except OSError as e:
        server.server_close()
        raise UserError(os_error_message(e, config), status=1) from None
    except BaseException:
        server.server_close()
        raise
    print_findings(result.report.findings, args.format, quiet=True)
    state.report([f.format() for f in result.report.errors])

    def rebuild() -> None:
        try:
            result = build(config)
        except Exception as e:  # keep serving the last good site; say what broke
            text = os_error_message(e, config) if isinstance(e, OSError) else str(e)
            print(f"build failed, still serving the previous site: {text}", file=sys.stderr)
            state.report([f"the build failed: {text}"])
            return
        print_findings(result.report.findings, args.format, quiet=True)
        state.report([f.format() for f in result.report.errors])
        s = result.stats
        print(f"rebuilt in {result.seconds:.2f} s ({_count(s.analysed, 'file')} analysed, {_count(s.rendered, 'page')} rendered)", file=sys.stderr)

    print(f"serving {config.out} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl+C to stop)", file=sys.stderr)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    watched = [config.source, config.translations, config.templates]
    if config.locales is not None:
        watched.append(config.locales)
    try:
        watch_and_rebuild(watched, rebuild, state)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


def _workbench_config(args: argparse.Namespace, langs: tuple[str, ...]):
    from ..builder.config import BuildConfig
    from ..builder.validate import check_folder, check_lang, check_translations, validate
    from ..builder.config import DEFAULT_TEMPLATES

    base = check_lang(args.base_lang, "--base-lang")
    translations = args.translations if args.translations is not None else DEFAULT_TRANSLATIONS
    check_folder(args.source, "--source", "commented Python / Markdown to build")
    check_translations(args.source, translations, required=True)
    config = BuildConfig(source=args.source, translations=translations, out=getattr(args, "site_out", Path(".site-translate")),
                         langs=(base, *[lang for lang in langs if lang != base]), base_lang=base,
                         templates=getattr(args, "templates", None) or DEFAULT_TEMPLATES,
                         locales=getattr(args, "locales", None), jobs=args.jobs)
    validate(config)
    return config


def cmd_translate(args: argparse.Namespace) -> int:
    from ..builder.validate import check_folder, check_lang
    from ..workbench.editor import git_user_name, start, watch

    lang = check_lang(args.lang, "--lang")
    if lang == args.base_lang:
        raise UserError(f"--lang {lang} is the base language; name the language to translate, e.g. "
                        f"`{args.program} translate --lang zh`")
    args.site_out = args.out
    config = _workbench_config(args, (lang,))
    reviewer = args.reviewer if args.reviewer is not None else git_user_name()
    try:
        for folder in args.memory:
            check_folder(folder, "--memory", "translation files to suggest from")
        session, server, url = start(config, lang, args.port, reviewer, tuple(args.memory))
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UserError(f"port {args.port} is in use; stop the other server or pass --port N") from None
        raise UserError(os_error_message(e, config), status=1) from None
    print(f"translating {lang}: open {url} (Ctrl+C to stop)", file=sys.stderr)
    print("  keys: Alt+N next untranslated · Tab next words · Alt+0-8 placeholder, Alt+9 picker · Alt+M memory · Ctrl+Enter save and next · "
          "Alt+A accept suggestion · Esc close", file=sys.stderr)
    try:
        watch(session)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from .translation import cmd_review as review

    return review(args, _workbench_config(args, ()))


def _translation_command(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from . import translation

        config, langs = translation_config(args)
        try:
            return getattr(translation, f"cmd_{name}")(args, config, langs)
        except OSError as e:
            raise UserError(os_error_message(e, config), status=1) from None

    return run


def cmd_cache(args: argparse.Namespace) -> int:
    from ..builder import cache_size

    if args.max is not None:
        try:
            cache_size.set_max_bytes(cache_size.parse_size(args.max))
        except ValueError as e:
            raise UserError(f"--max: {e}") from None
        except OSError as e:
            raise UserError(f"cannot save the cap: {e.strerror or e}", status=1) from None
    if args.clear:
        removed, busy = cache_size.clear()
        print(f"removed {removed} cache folder{'s' if removed != 1 else ''}"
              + (f"; {busy} in use by a running build, left" if busy else ""))
    elif args.max is not None:
        cache_size.enforce()
    print("\n".join(cache_size.describe()))
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "build": cmd_build,
    "serve": cmd_serve,
    "check": _translation_command("check"),
    "stats": _translation_command("stats"),
    "extract": _translation_command("extract"),
    "translate": cmd_translate,
    "review": cmd_review,
    "pr-check": _translation_command("pr_check"),
    "cache": cmd_cache,
}


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    prog = prog or program_name()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["build", *argv]  # `labml-site --source DIR …` means build
    args, unknown = _parser(prog).parse_known_args(argv)
    if unknown:  # said by the command's parser, so the hint is that command's --help
        args.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    args.program = prog
    try:
        return HANDLERS[args.command or "build"](args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
