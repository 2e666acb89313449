"""Command line: parses arguments and calls the library. No build logic lives here."""
from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Sequence

from ..findings import Finding
from ..render.theme import DEFAULT_TEMPLATES



def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", type=Path, default=Path("source"), help="folder of commented Python / Markdown (default: source)")
    parser.add_argument("--translations", type=Path, default=Path("translations"), help="folder of <path>.<lang>.json files (default: translations)")
    parser.add_argument("--out", type=Path, default=Path("site"), help="output folder (default: site)")
    parser.add_argument("--langs", default="en,zh,ru", help="comma-separated languages, the first is the base (default: en,zh,ru)")
    parser.add_argument("--templates", type=Path, default=DEFAULT_TEMPLATES, help="theme folder (default: the bundled templates/)")
    parser.add_argument("--site-title", default="", help="site name shown in titles (default: the home page's title)")
    parser.add_argument("--site-url", default="", help="public URL of the site, for absolute hreflang links and the sitemap")
    parser.add_argument("--edit-url", default="", help="URL prefix for 'help translate' links to translation files")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per core for large trees)")
    parser.add_argument("--no-cache", dest="cache", action="store_false", help="rebuild everything, ignoring and not updating the build cache")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text", help="how to print findings")
    parser.add_argument("--quiet", "-q", action="store_true", help="print errors only")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="build.py", description="Build an annotated, translated tutorial site.")
    sub = parser.add_subparsers(dest="command")
    for name, help_text in (
        ("build", "build the site (the default command)"),
        ("serve", "build, serve on 127.0.0.1 and rebuild on change"),
        ("check", "validate translation files; exit 1 on errors"),
        ("stats", "translation coverage per language and page"),
        ("extract", "create or update a language's translation files"),
    ):
        p = sub.add_parser(name, help=help_text)
        _common(p)
        if name == "serve":
            p.add_argument("--port", type=int, default=8000)
        if name == "stats":
            p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        if name == "extract":
            p.add_argument("--lang", required=True, help="the language to create or update, e.g. ja")
            p.add_argument("--confirm", action="store_true", help="accept the reviewed fuzzy suggestions of --lang as translations")
    return parser


def _config(args: argparse.Namespace):
    from ..build.site import BuildConfig

    langs = tuple(l.strip() for l in args.langs.split(",") if l.strip())
    if not langs:
        raise SystemExit("--langs needs at least one language, e.g. --langs en,zh,ru")
    return BuildConfig(
        source=args.source,
        translations=args.translations,
        out=args.out,
        langs=langs,
        base_lang=langs[0],
        templates=args.templates,
        site_title=args.site_title,
        site_url=args.site_url,
        edit_url=args.edit_url,
        jobs=args.jobs,
        cache=args.cache,
    )


def print_findings(findings: Sequence[Finding], fmt: str = "text", quiet: bool = False, stream=None) -> None:
    stream = stream or sys.stderr
    shown = [f for f in findings if f.severity == "error" or not quiet]
    if fmt == "json":
        json.dump([f.__dict__ for f in shown], stream, ensure_ascii=False, indent=1)
        stream.write("\n")
        return
    for f in shown:
        if fmt == "github":
            # GitHub Actions workflow commands annotate the file in a pull request's diff.
            message = f.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            stream.write(f"::{f.severity} file={f.path},line={f.line or 1},col={f.col or 1},title={f.code}::{message}\n")
        else:
            stream.write(f.format() + "\n")


def cmd_build(args: argparse.Namespace) -> int:
    from ..build.site import build

    result = build(_config(args))
    print_findings(result.report.findings, args.format, args.quiet)
    errors = len(result.report.errors)
    warnings = len(result.report.findings) - errors
    print(
        f"built {len(result.pages)} pages × {len(result.localized)} languages into {result.out} "
        f"({result.files_written} files, {result.seconds:.2f} s); {errors} errors, {warnings} warnings",
        file=sys.stderr,
    )
    return 1 if errors else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from ..build.site import build
    from ..build.serve import make_server, watch_and_rebuild

    config = _config(args)
    config.live_reload = True  # keeps the build cache in memory between rebuilds

    def rebuild() -> None:
        try:
            result = build(config)
        except Exception as e:  # keep serving the last good site; say what broke
            print(f"build failed, still serving the previous site: {e}", file=sys.stderr)
            return
        print_findings(result.report.findings, args.format, quiet=True)
        s = result.stats
        print(f"rebuilt in {result.seconds:.2f} s ({_count(s.analysed, 'file')} analysed, {_count(s.rendered, 'page')} rendered)", file=sys.stderr)

    rebuild()
    server, state = make_server(config.out, args.port)
    print(f"serving {config.out} at http://127.0.0.1:{args.port}/ (Ctrl+C to stop)", file=sys.stderr)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        watch_and_rebuild([config.source, config.translations, config.templates], rebuild, state)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["build", *argv]  # `python build.py --source DIR …` means build
    args = _parser().parse_args(argv)
    handlers = {"build": cmd_build, "serve": cmd_serve}
    for name in ("check", "stats", "extract"):
        handlers[name] = _translation_command(name)
    return handlers[args.command or "build"](args)


def _translation_command(name: str):
    def run(args: argparse.Namespace) -> int:
        from ..cli import translation as translation_cli

        return getattr(translation_cli, f"cmd_{name}")(args, _config(args))

    return run


if __name__ == "__main__":
    raise SystemExit(main())
