"""`review --base REF`: what changed in the translation files between a git ref and the work tree.

For each translation file that differs (tracked and changed, added, or deleted since REF), each
entry whose value changed: the English block rendered (placeholders filled from the current
source, math as MathML), the old and the new translation rendered the way the build would render
them (or shown as text, with why, when a check refuses them), the findings of the checks on the
new value (the glossary's included), and the file's own findings. `write_report` makes one HTML
file with its style inline, readable offline and attachable to a pull request;
`findings` gives the same findings for `--format github` annotations.

Old versions are read with `git show REF:PATH` (argument lists, never a shell), bounded like
every translation file.
"""
from __future__ import annotations

import html
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..builder.config import BuildConfig
from ..builder.site import analyse_pages
from ..findings import Finding
from ..read.prose import fill
from ..read.safe_files import write_atomic
from ..read.structure import discover, lang_prefix, url_under
from ..render.localize import plain_text, valid_lists
from ..translate.catalog import Catalog, Entry, check_file, is_sidecar
from ..translate.checks import MAX_FILE_BYTES, ParsedFile, parse_translation_bytes, parse_translation_file

GIT_TIMEOUT = 60
_HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^"]*)(")')


def live_links(fragment: str, site_url: str, page: str) -> str:
    """Relative links of a block made absolute against the published page (`site_url` + `page`),
    so that they work from the report; links with a scheme or a leading `/` or `#` stay."""
    if not site_url:
        return fragment
    from urllib.parse import urljoin

    base = url_under(site_url, page)

    def repl(m: re.Match) -> str:
        target = html.unescape(m.group(2))
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("/", "#")):
            return m.group(0)
        return m.group(1) + html.escape(urljoin(base, target), quote=True) + m.group(3)

    return _HREF.sub(repl, fragment)


class GitError(Exception):
    pass


@dataclass
class Rendered:
    html: str  # safe to show: the build's rendering, or the escaped text
    status: str  # translated, missing, invalid
    findings: list[Finding] = field(default_factory=list)


@dataclass
class ChangedEntry:
    key: str
    english: str  # rendered
    old: Rendered
    new: Rendered
    kind: str  # translated (was empty or absent), changed, removed (now empty or absent)
    line: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.new.findings if f.severity == "error"]


@dataclass
class ChangedFile:
    path: str  # as git names it, relative to the repository
    local: str  # the path to show and annotate (relative to the current folder)
    lang: str
    page: str  # page base, e.g. annotated_attention/mha ("" when no source page matches)
    entries: list[ChangedEntry] = field(default_factory=list)
    file_findings: list[Finding] = field(default_factory=list)


def _git(args: list[str], cwd: Path, binary: bool = False):
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed; review compares with a git ref") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        raise GitError(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return done.stdout if binary else done.stdout.decode("utf-8", "surrogateescape")


def _parse_name(rel: str) -> tuple[str, str] | None:
    """`annotated_attention/mha.zh.json` → (`annotated_attention/mha`, `zh`)."""
    if not rel.endswith(".json") or is_sidecar(Path(rel)) or os.path.basename(rel).startswith("glossary."):
        return None
    base, _, lang = rel[: -len(".json")].rpartition(".")
    return (base, lang) if base and lang else None


def changed_files(translations: Path, base: str) -> tuple[Path, list[tuple[str, Path]]]:
    """The repository's root and (git path, local path) of each main translation file that differs."""
    translations = Path(translations).resolve()
    top = Path(_git(["rev-parse", "--show-toplevel"], translations).strip())
    if base.startswith("-"):
        raise GitError(f"--base {base} is not a git ref")
    try:
        _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{base}^{{commit}}"], top)
    except GitError:
        raise GitError(f"--base {base} is not a commit of this repository; pass a branch, tag or commit, "
                       "e.g. --base origin/main") from None
    folder = translations.relative_to(top).as_posix()
    names = _git(["diff", "--name-only", "-z", "--no-renames", base, "--", folder], top).split("\0")
    names += _git(["ls-files", "--others", "--exclude-standard", "-z", "--", folder], top).split("\0")
    found = []
    for name in sorted(set(n for n in names if n)):
        if _parse_name(Path(name).relative_to(folder).as_posix() if folder != "." else name):
            found.append((name, top / name))
    return top, found


def _old(top: Path, base: str, name: str) -> ParsedFile:
    try:
        data = _git(["show", f"{base}:{name}"], top, binary=True)
    except GitError:
        return ParsedFile(path=name, exists=False)  # added since
    if len(data) > MAX_FILE_BYTES:
        parsed = ParsedFile(path=name)
        parsed.refused = ("file-too-large", f"is larger than {MAX_FILE_BYTES} bytes")
        return parsed
    return parse_translation_bytes(data, name)


def _values(parsed: ParsedFile) -> dict[str, tuple[str, int]]:
    if not parsed.usable:
        return {}
    return {p.key: (p.value, p.line) for p in parsed.pairs if isinstance(p.value, str)}


def _render(key: str, value: str, placeholders: tuple[str, ...] | None, path: str, lang: str, line: int) -> Rendered:
    if not value.strip():
        return Rendered('<p class="none">(not translated)</p>', "missing")
    found = Catalog(path, lang, {key: Entry(value, line)}).lookup(key)
    if found.status == "translated" and found.html is not None:
        if placeholders is None:  # a title or summary, or a key the source no longer has
            shown = html.escape(plain_text(found.html)) if not key.lstrip().startswith("<") else found.html
        else:
            shown = valid_lists(fill(found.html, placeholders))
        return Rendered(shown, "translated", list(found.findings))
    return Rendered(f'<pre class="raw">{html.escape(value)}</pre>', found.status, list(found.findings))


def changed_entries(config: BuildConfig, base: str, site_url: str = "") -> list[ChangedFile]:
    """`site_url`: the published site (as `build --site-url`): relative links then point there."""
    translations = Path(config.translations)
    top, files = changed_files(translations, base)
    sources = discover(config.source)
    by_base = {f.base: f for f in sources.pages}
    wanted = {}
    for name, local in files:
        parsed_name = _parse_name(local.resolve().relative_to(translations.resolve()).as_posix())
        if parsed_name and parsed_name[0] in by_base:
            wanted[parsed_name[0]] = by_base[parsed_name[0]]
    pages = analyse_pages(list(wanted.values()), config.jobs) if wanted else {}
    changes = []
    for name, local in files:
        page_base, lang = _parse_name(local.resolve().relative_to(translations.resolve()).as_posix())  # type: ignore[misc]
        shown = os.path.relpath(local)
        source = by_base.get(page_base)
        data = pages.get(source.rel) if source is not None else None
        blocks: dict[str, tuple[str, ...]] = {}
        if data is not None:
            blocks = {b.key: b.placeholders for s in data.sections for b in s.blocks}
        old = _values(_old(top, base, name))
        new_parsed = parse_translation_file(local, translations)
        new = _values(new_parsed)
        change = ChangedFile(name, shown, lang, page_base if source else "")
        keys = set(data.keys) if data is not None else None
        findings_path = Path(shown)  # relative, as annotations and readers want it
        change.file_findings = [f for f in check_file(findings_path, lang, keys, translations) if not f.key or f.code == "stale-key"]
        for key in sorted(set(old) | set(new), key=lambda k: (new.get(k, old.get(k, ("", 0)))[1], k)):
            before, after = old.get(key, ("", 0))[0], new.get(key, ("", 0))[0]
            if before == after:
                continue
            line = new.get(key, old.get(key, ("", 0)))[1]
            placeholders = blocks.get(key)
            english = valid_lists(fill(key, placeholders)) if placeholders is not None else (
                html.escape(key) if key in (keys or ()) else f'<pre class="raw">{html.escape(key)}</pre>'
                '<p class="note">(this English is not on the page any more: a stale key)</p>'
            )
            kind = "translated" if not before.strip() else "removed" if key not in new or not after.strip() else "changed"
            entry = ChangedEntry(
                key, english,
                _render(key, before, placeholders, shown, lang, line),
                _render(key, after, placeholders, shown, lang, line) if key in new else Rendered('<p class="none">(removed)</p>', "missing"),
                kind, line,
            )
            if site_url and source is not None:
                here = lang_prefix(lang, config.base_lang) + source.url
                entry.english = live_links(entry.english, site_url, lang_prefix(config.base_lang, config.base_lang) + source.url)
                entry.old.html = live_links(entry.old.html, site_url, here)
                entry.new.html = live_links(entry.new.html, site_url, here)
            change.entries.append(entry)
        if change.entries or change.file_findings:
            changes.append(change)
    return changes


def findings(changes: list[ChangedFile]) -> list[Finding]:
    """The findings of the changed entries and files, for text or GitHub annotations."""
    out: list[Finding] = []
    for change in changes:
        out.extend(change.file_findings)
        for entry in change.entries:
            out.extend(entry.new.findings)
    return out


_STYLE = """
body{font:16px/1.55 system-ui,"Noto Sans CJK SC",sans-serif;margin:0;color:#1f2430;background:#f4f5f8}
header{background:#1f2430;color:#fff;padding:.8rem 1.2rem}header code{color:#cfe0ff}
main{max-width:90rem;margin:0 auto;padding:1rem}
h2{font-size:1.1rem;margin:1.6rem 0 .4rem}h2 code{font-weight:normal}
.entry{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:.8rem 0;padding:.6rem .9rem}
.entry header{background:none;color:#5c6478;padding:0;font-size:13px;display:flex;gap:.8rem}
.cols{display:grid;grid-template-columns:1fr 1fr 1fr;gap:.8rem}
.cols>div{min-width:0}.cols h3{font-size:12px;text-transform:uppercase;color:#5c6478;margin:.3rem 0}
.old{background:#fdf1f0;padding:.2rem .5rem;border-radius:4px}.new{background:#eef8f1;padding:.2rem .5rem;border-radius:4px}
pre.raw{white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px;background:#f7f7f9;padding:.3rem}
.status{font-size:12px;padding:0 .4rem;border-radius:3px;background:#eef0f4}
.status.invalid{background:#8e44ad;color:#fff}.status.missing{background:#d9534f;color:#fff}.status.translated{background:#3c9a5f;color:#fff}
ul.findings{margin:.4rem 0 0;padding-left:1.2rem}li.error{color:#b03a2e}li.warning{color:#8a5a00}
.none,.note{color:#5c6478;font-style:italic}
.summary td,.summary th{padding:.1rem .6rem;text-align:left}
@media(max-width:900px){.cols{grid-template-columns:1fr}}
"""


def _findings_html(items: list[Finding]) -> str:
    if not items:
        return ""
    rows = "".join(
        f'<li class="{html.escape(f.severity)}">{html.escape(f.severity)}: {html.escape(f.message)} '
        f"<code>{html.escape(f.code)}</code></li>"
        for f in items
    )
    return f'<ul class="findings">{rows}</ul>'


def report_html(changes: list[ChangedFile], base: str) -> str:
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
        f"<title>Translation review since {html.escape(base)}</title><style>{_STYLE}</style></head><body>",
        f"<header><strong>Translation review</strong> · changes since <code>{html.escape(base)}</code></header><main>",
    ]
    total = sum(len(c.entries) for c in changes)
    errors = sum(len(e.errors) for c in changes for e in c.entries)
    warnings = sum(1 for c in changes for e in c.entries for f in e.new.findings if f.severity == "warning")
    parts.append(f"<p>{total} changed blocks in {len(changes)} files · {errors} errors · {warnings} warnings</p>")
    if changes:
        parts.append('<table class="summary"><tr><th>file</th><th>blocks</th><th>errors</th></tr>')
        for i, c in enumerate(changes):
            parts.append(f'<tr><td><a href="#f{i}">{html.escape(c.local)}</a></td><td>{len(c.entries)}</td>'
                         f"<td>{sum(len(e.errors) for e in c.entries)}</td></tr>")
        parts.append("</table>")
    for i, c in enumerate(changes):
        parts.append(f'<h2 id="f{i}"><code>{html.escape(c.local)}</code> · {html.escape(c.lang)}</h2>')
        parts.append(_findings_html(c.file_findings))
        for e in c.entries:
            lang = html.escape(c.lang)
            parts.append(
                f'<section class="entry" data-kind="{e.kind}"><header><span>{e.kind}</span>'
                f"<span>{html.escape(c.local)}:{e.line}</span>"
                f'<span class="status {html.escape(e.new.status)}">{html.escape(e.new.status)}</span></header>'
                '<div class="cols">'
                f'<div><h3>English</h3><div lang="en">{e.english}</div></div>'
                f'<div><h3>Before</h3><div class="old" lang="{lang}">{e.old.html}</div></div>'
                f'<div><h3>After</h3><div class="new" lang="{lang}">{e.new.html}</div>{_findings_html(e.new.findings)}</div>'
                "</div></section>"
            )
    if not changes:
        parts.append("<p>No translation file changed.</p>")
    parts.append("</main></body></html>\n")
    return "".join(parts)


def write_report(changes: list[ChangedFile], out: Path, base: str) -> None:
    out = Path(out)
    write_atomic(out, report_html(changes, base).encode("utf-8"), out.parent)
