"""`review --base REF`: what changed in the translation files between a git ref and the work tree.

For each translation file that differs (tracked and changed, added, or deleted since REF), each
entry whose value changed: the English block rendered (placeholders filled from the current
source, math as MathML), the old and the new translation rendered the way the build would render
them (or shown as text, with why, when a check refuses them), the findings of the checks on the
new value (the glossary's included), the file's own findings, and the review sidecar's decision
on the new value. The report itself, the annotations and the decisions are `translate/review.py`'s.

Old versions are read with `git show REF:PATH` (argument lists, never a shell), bounded like
every translation file.
"""
from __future__ import annotations

import html
import os
import re
import stat
import subprocess
from dataclasses import replace
from pathlib import Path, PurePosixPath

from .config import BuildConfig
from .entries import asset_reader, entry_keys
from .site import analyse_pages
from .workers import broken_pool
from ..findings import Finding
from ..read.prose import fill
from ..read.safe_files import check_no_links, kind_of, read_regular
from ..read.structure import bad_name, discover, lang_prefix, shown_path, url_under
from ..render.localize import plain_text, valid_lists
from ..translate.catalog import Catalog, check_file, is_sidecar
from ..translate.files import MAX_FILE_BYTES, ParsedFile, parse_translation_bytes, parse_translation_file
from ..translate import review_state
from ..translate.review import ChangedEntry, ChangedFile, MarkChange, Rendered, printable as _printable
from ..translate.review_state import BadReviewFile, Review, parse_reviews

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


def _changed_names(translations: Path, base: str) -> tuple[Path, str, list[str]]:
    """The repository's root, the translations folder in it, and every file under that folder
    that differs from `base` (tracked and changed, added, deleted, or new and untracked)."""
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
    return top, folder, sorted(set(n for n in names if n))


def _rel(name: str, folder: str) -> str:
    """A git path relative to the translations folder, read from the names (never through links)."""
    return PurePosixPath(name).relative_to(folder).as_posix() if folder != "." else name


def changed_files(translations: Path, base: str) -> tuple[Path, list[tuple[str, Path]]]:
    """The repository's root and (git path, local path) of each main translation file that differs."""
    top, folder, names = _changed_names(translations, base)
    return top, [(name, top / name) for name in names if _parse_name(_rel(name, folder))]


def _base_bytes(top: Path, base: str, name: str) -> bytes | None | str:
    """The file as `base` has it: its bytes, None when it did not exist there, or why it is not
    read (larger than a translation file may be, or not a file: a link, a submodule)."""
    try:
        kind = _git(["cat-file", "-t", f"{base}:{name}"], top).strip()
        mode = _git(["ls-tree", "-z", base, "--", name], top).split(" ", 1)[0]
    except GitError:
        return None  # added since
    if kind != "blob" or mode not in ("100644", "100755"):
        return f"is not a regular file in {base} (a link or a submodule)"
    size = int(_git(["cat-file", "-s", f"{base}:{name}"], top).strip() or 0)
    if size > MAX_FILE_BYTES:
        return f"is larger than {MAX_FILE_BYTES} bytes in {base}"
    return _git(["cat-file", "blob", f"{base}:{name}"], top, binary=True)


def _old(top: Path, base: str, name: str) -> ParsedFile:
    data = _base_bytes(top, base, name)
    if data is None:
        return ParsedFile(path=name, exists=False)
    if isinstance(data, str):
        parsed = ParsedFile(path=name)
        parsed.refused = ("not-a-regular-file" if "regular" in data else "file-too-large", data)
        return parsed
    return parse_translation_bytes(data, name)


def _values(parsed: ParsedFile) -> dict[str, tuple[str, int]]:
    if not parsed.usable:
        return {}
    return {p.key: (p.value, p.line) for p in parsed.pairs if isinstance(p.value, str)}


def _render(catalog: Catalog, key: str, value: str, placeholders: tuple[str, ...] | None, line: int,
            page_keys: set[str] | None = None) -> Rendered:
    """`value` as the build shows it in the file of `catalog`, with the verdict every tool gives
    it (`Catalog.verdict`)."""
    found = catalog.with_value(key, value, line).verdict(key, page_keys)
    if found.state == "untranslated":
        return Rendered('<p class="none">(not translated)</p>', found.state)
    if found.shown and found.html is not None:
        if placeholders is None:  # a title, summary or figure label, or a key the source no longer has
            shown = html.escape(plain_text(found.html)) if not key.lstrip().startswith("<") else found.html
        else:
            shown = valid_lists(fill(found.html, placeholders))
        return Rendered(shown, found.state, list(found.findings))
    return Rendered(f'<pre class="raw">{html.escape(value)}</pre>', found.state, list(found.findings))


def _pages(config: BuildConfig, wanted: dict) -> tuple[dict, list[Finding]]:
    """The source pages of the changed files, analysed (a file that fails is its finding)."""
    if not wanted:
        return {}, []
    try:
        return analyse_pages(list(wanted.values()), config.jobs), []
    except broken_pool():
        return {}, [Finding("error", "review-failed", "a worker process analysing the source pages died (killed, "
                            "perhaps for using too much memory); the English is shown unrendered", path=str(config.source))]


def changed_entries(config: BuildConfig, base: str, site_url: str = "") -> list[ChangedFile]:
    """Every file under the translations that differs from `base`, as the report shows it: the
    changed entries of translation files, the changed marks of review files, and any other file
    as a finding. A file that cannot be read (a link, a FIFO, a bomb, on either side) is its
    finding; it never stops the report. `site_url`: the published site (as `build --site-url`):
    relative links then point there."""
    translations = Path(config.translations)
    top, folder, names = _changed_names(translations, base)
    sources = discover(config.source)
    by_base = {f.base: f for f in sources.pages}
    wanted = {}
    for name in names:
        parsed_name = _parse_name(_rel(name, folder))
        if parsed_name and parsed_name[0] in by_base:
            wanted[parsed_name[0]] = by_base[parsed_name[0]]
    pages, problems = _pages(config, wanted)
    read = asset_reader(sources)
    changes = []
    if problems:
        changes.append(ChangedFile(str(config.source), shown_path(config.source), "", "", file_findings=problems, kind="other"))
    for name in names:
        local = top / name
        rel = _rel(name, folder)
        shown = shown_path(os.path.relpath(local))
        try:
            if rel.endswith(".review.json"):
                change = _mark_changes(top, base, name, local, shown, translations)
            elif _parse_name(rel):
                change = _translation_changes(config, top, base, name, local, shown, rel, by_base, pages, site_url, read)
            else:
                change = _other_change(local, shown, rel, translations)
        except Exception as e:  # noqa: BLE001 - one file's failure is that file's finding, never the report's end
            change = ChangedFile(name, shown, "", "", kind="other", file_findings=[Finding(
                "error", "review-failed", f"this file could not be compared ({type(e).__name__}: {str(e)[:200]}); "
                "read it in the diff", path=shown)])
        if change is not None and (change.entries or change.file_findings or change.marks):
            changes.append(change)
    return changes


def _translation_changes(config, top, base, name, local, shown, rel, by_base, pages, site_url, read) -> ChangedFile:
    translations = Path(config.translations)
    page_base, lang = _parse_name(rel)  # type: ignore[misc]
    source = by_base.get(page_base)
    data = pages.get(source.rel) if source is not None else None
    blocks: dict[str, tuple[str, ...]] = {}
    if data is not None:
        blocks = {b.key: b.placeholders for s in data.sections for b in s.blocks}
    change = ChangedFile(name, shown, lang, page_base if source else "", rel=rel)
    why = bad_name(os.path.basename(name))
    if why:
        change.file_findings.append(Finding("error", "translation-name", f"{why}: no page can have this "
                                            "translation file; rename or remove it", path=shown))
    old_parsed = _old(top, base, name)
    old = _values(old_parsed)
    new = _values(parse_translation_file(local, translations))
    keys = set(entry_keys(data, read)) if data is not None else None  # its figures' entries too
    # the file's own findings and its stale entries (a changed entry's findings, a stale one's
    # too, come with its verdict below)
    changed = {k for k in set(old) | set(new) if old.get(k, ("",))[0] != new.get(k, ("",))[0]}
    change.file_findings += [replace(f, path=shown) for f in check_file(local, lang, keys, translations)
                             if not f.key or (f.code == "stale-key" and f.key not in changed)]
    before_catalog, after_catalog = Catalog.from_parsed(old_parsed, lang), Catalog.load(local, lang, translations)
    before_catalog.path = after_catalog.path = shown
    if old_parsed.refused:  # the base's file is not read: say so (its entries count as absent)
        change.file_findings.append(Finding("warning", old_parsed.refused[0], f"in {base}, this file {old_parsed.refused[1]}; "
                                            "its old entries are not shown", path=shown))
    decisions = review_state.load_quietly(local)
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
            _render(before_catalog, key, before, placeholders, line),
            _render(after_catalog, key, after, placeholders, line, keys) if key in new else Rendered('<p class="none">(removed)</p>', "untranslated"),
            kind, line, before, after,
        )
        if site_url and source is not None:
            here = lang_prefix(lang, config.base_lang) + source.url
            entry.english = live_links(entry.english, site_url, lang_prefix(config.base_lang, config.base_lang) + source.url)
            entry.old.html = live_links(entry.old.html, site_url, here)
            entry.new.html = live_links(entry.new.html, site_url, here)
        mark = decisions.get(key)
        entry.decision = mark if mark is not None and mark.current(after) else None
        change.entries.append(entry)
    return change


def _reviews_now(local: Path, translations: Path) -> dict[str, Review]:
    """The working tree's review file (BadReviewFile when it is a link, a FIFO, a bomb…)."""
    try:
        check_no_links(local, translations)
        data = read_regular(local, MAX_FILE_BYTES)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise BadReviewFile(f"{getattr(e, 'reason', None) or e.strerror or e}") from None
    return parse_reviews(data, str(local))


def _mark_changes(top: Path, base: str, name: str, local: Path, shown: str, translations: Path) -> ChangedFile:
    """The review marks `name` gains, changes or loses since `base`, each a warning: the report
    shows who claims to have reviewed what, and a reviewer must confirm it."""
    main = local.with_name(local.name[: -len(".review.json")] + ".json")
    lang = main.name[: -len(".json")].rpartition(".")[2]
    change = ChangedFile(name, shown, lang, "", kind="review")
    old: dict[str, Review] = {}
    old_data = _base_bytes(top, base, name)
    if isinstance(old_data, str):
        change.file_findings.append(Finding("warning", "review-file", f"in {base}, this review file {old_data}", path=shown))
    elif old_data is not None:
        try:
            old = parse_reviews(old_data, name)
        except BadReviewFile as e:
            change.file_findings.append(Finding("warning", "review-file", f"in {base}: {e}", path=shown))
    try:
        new = _reviews_now(local, translations)
    except BadReviewFile as e:
        change.file_findings.append(Finding("error", "review-file", f"this review file is not read: {e}; "
                                            "a review file must be a plain JSON object", path=shown))
        new = {}
    values = {k: v for k, (v, _line) in _values(parse_translation_file(main, translations)).items()}
    lines = _key_lines(local) if new else {}
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        mark = MarkChange(key, before, after, bool(after and after.current(values.get(key, ""))), lines.get(key, 0))
        change.marks.append(mark)
        who = after or before
        claim = f"reviewed by {_printable(who.by)!r} on {_printable(who.date)!r}"
        what = {"added": "a review mark is added", "changed": "a review mark is changed", "removed": "a review mark is removed"}[mark.kind]
        detail = (" (for the translation the file holds now)" if mark.current else
                  " (for no translation the file holds: outdated)") if after else ""
        change.file_findings.append(Finding(
            "warning", "review-mark", f"{what}: {claim}{detail}; a mark says a person checked this translation, "
            "so confirm it with them before merging", path=shown, line=mark.line, key=_printable(key)))
    return change


def _key_lines(path: Path) -> dict[str, int]:
    """The line of each top-level key of a JSON file (for annotations), best effort."""
    try:
        parsed = parse_translation_file(path)
    except Exception:  # noqa: BLE001 - lines are a convenience
        return {}
    return {p.key: p.line for p in parsed.pairs} if parsed.usable else {}


def _other_change(local: Path, shown: str, rel: str, translations: Path) -> ChangedFile:
    """A changed file under the translations that is no translation file: a finding, so that the
    report never leaves out what a change holds (a link is an error: nothing there may be one)."""
    change = ChangedFile(str(local), shown, "", "", kind="other")
    try:
        st = os.lstat(local)
    except FileNotFoundError:
        change.file_findings.append(Finding("warning", "other-change", f"{rel} is deleted; it is no translation "
                                            "file the report shows, so read the diff", path=shown))
        return change
    if not stat.S_ISREG(st.st_mode):
        change.file_findings.append(Finding("error", "not-a-regular-file", f"{rel} is {kind_of(st.st_mode)}, not a "
                                            "regular file; nothing under the translations may be one: remove it", path=shown))
        return change
    what = "fuzzy suggestions" if rel.endswith(".fuzzy.json") else "stale entries" if rel.endswith(".stale.json") else \
        "the glossary" if os.path.basename(rel).startswith("glossary.") else "a file"
    change.file_findings.append(Finding("warning", "other-change", f"{what} changed ({rel}); the report does not "
                                        "show its content, so read the diff", path=shown))
    return change


def changed_keys(translations: Path, base: str) -> dict[Path, set[str]]:
    """Each translation file (resolved) that differs from `base` → the keys whose value differs
    (added, changed or removed), for `check --base` to report on those only."""
    translations = Path(translations)
    top, pairs = changed_files(translations, base)
    out: dict[Path, set[str]] = {}
    for name, local in pairs:
        old = _values(_old(top, base, name))
        try:
            new = _values(parse_translation_file(local, translations)) if local.exists() else {}
        except Exception:  # noqa: BLE001 - an unreadable file is still changed; check says why
            new = {}
        out[local.resolve()] = {k for k in set(old) | set(new) if old.get(k, ("",))[0] != new.get(k, ("",))[0]}
    return out
