"""Create and update the translation files of a language from the English the source produces.

For each page, `extract` makes `translations/<page>.<lang>.json` hold exactly the page's current
English keys:

- a new English block gets the value "" ("not translated yet"). The empty string, like gettext's
  empty msgstr, is where the translator writes; `Catalog.verdict` calls it untranslated, so the page
  shows the English block, never an empty one;
- when a block's English changed, the old translation is looked up by similarity (difflib ratio of
  the text with tags and placeholders normalised, cutoff `FUZZY_CUTOFF`) and offered in the fuzzy
  sidecar `<page>.<lang>.fuzzy.json` as `{new key: {"suggestion": old value, "from": old key}}`.
  A suggestion is never rendered; a person confirms it by copying it (corrected) into the empty
  value in the main file, or with `confirm()`; the next extract then drops it from the sidecar;
- entries whose English is gone are moved to the stale sidecar `<page>.<lang>.stale.json` as
  `{old key: [value, …]}`; if that English comes back, the value is restored.

Nothing a translator wrote is ever deleted: every non-empty value in any of the three files before
a run is in one of them after it.  A page whose files can't be read safely (bad JSON, duplicate
keys with different values, non-string values, bytes that aren't UTF-8) is left untouched and
reported.

Output is stable so a pull request's diff shows only real changes: keys sorted, UTF-8 without
`\\u` escapes, indent 2, `": "` separators, trailing newline; the older style (ASCII escapes,
indent 1) is read without complaint and rewritten in this style by the first run that changes
the file.
"""
from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .checks import FileContext, run_file_checks
from .files import MAX_FILE_BYTES, oversized, parse_translation_file
from ..findings import Finding
from ..read.markup import PLACEHOLDER_RE
from ..read.safe_files import UnsafeFile, read_regular, remove_file, write_atomic
from .catalog import catalog_path, fuzzy_path, load_fuzzy, stale_path
from .verdict import judge

FUZZY_CUTOFF = 0.6
INDENT = 2


@dataclass
class PageChange:
    page: str
    path: str
    added: list[str] = field(default_factory=list)  # new English keys (value "")
    fuzzy: list[str] = field(default_factory=list)  # new suggestions offered
    stale: list[str] = field(default_factory=list)  # keys moved to the stale sidecar
    revived: list[str] = field(default_factory=list)  # keys restored from the stale sidecar
    written: list[str] = field(default_factory=list)  # files written or removed
    skipped: bool = False  # files unreadable: nothing was touched


@dataclass
class ExtractResult:
    pages: list[PageChange] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def changed_files(self) -> list[str]:
        return [p for page in self.pages for p in page.written]

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)


@dataclass
class _Files:
    """The three files of one page and language, as plain data."""

    main: dict[str, str]
    fuzzy: dict[str, tuple[str, str]]  # key -> (suggestion, from)
    stale: dict[str, list[str]]
    # key -> the other fields a person wrote into a fuzzy entry (a note…): kept as they are
    fuzzy_extra: dict[str, dict] = field(default_factory=dict)


def extract(keys_by_file: dict[str, list[str]], translations_dir: Path, lang: str) -> ExtractResult:
    """Bring the `lang` files of every page in `keys_by_file` up to date with its English keys.

    `keys_by_file`: page path (under source, no extension, e.g. `annotated_attention/mha`) ->
    the English keys the page produces now.  Pages not listed are not touched.
    """
    result = ExtractResult()
    for page in sorted(keys_by_file):
        main = catalog_path(translations_dir, page, lang)
        change = PageChange(page, str(main))
        files, findings = _read(main, translations_dir)
        result.findings.extend(findings)
        if files is None:
            change.skipped = True
        else:
            keys = list(dict.fromkeys(keys_by_file[page]))
            updated = _settled(files, keys, change)
            if keys or os.path.lexists(main):
                try:
                    change.written = _write(main, updated, translations_dir, files)
                except OSError as e:  # a full disk, a link planted meanwhile: nothing is lost
                    result.findings.append(_write_failed(main, e))
                    change.skipped = True
        result.pages.append(change)
    return result


def _write_failed(main: Path, error: OSError) -> Finding:
    why = error.reason if isinstance(error, UnsafeFile) else (error.strerror or str(error))
    return Finding(
        "error", "extract-write-failed",
        f"extract could not write this page's translation files ({why}); every file is either "
        "as it was or completely written, and no value was lost: fix the cause and run it again",
        str(main),
    )


def confirm(translations_dir: Path, page: str, lang: str, containing: str | None = None) -> list[str]:
    """Accept fuzzy suggestions as translations (only those whose key contains `containing`).

    Meant for a person who has reviewed the suggestions (`build.py extract --confirm`): each one
    is copied into the empty value in the main file and removed from the fuzzy sidecar.  The
    confirmed values then go through `check` like any other.  Returns the confirmed keys.
    """
    main = catalog_path(translations_dir, page, lang)
    files, _ = _read(main, translations_dir)
    if files is None:
        return []
    before = _Files(dict(files.main), dict(files.fuzzy), dict(files.stale), files.fuzzy_extra)
    confirmed = []
    for key, (suggestion, _from) in sorted(files.fuzzy.items()):
        if containing is not None and containing not in key:
            continue
        if files.main.get(key, "").strip():
            continue  # a translation was written meanwhile: it wins
        files.main[key] = suggestion
        if key not in files.fuzzy_extra:  # an entry with a person's own fields stays
            del files.fuzzy[key]
        confirmed.append(key)
    if confirmed:
        _write(main, files, translations_dir, before)
    return confirmed


class ConcurrentEdit(Exception):
    """The entry changed on disk since the editor read it: nothing was written."""

    def __init__(self, key: str, current: str):
        super().__init__(f"the translation of {key[:60]!r} changed on disk meanwhile")
        self.key = key
        self.current = current


class UnwritableFile(Exception):
    """The page's files have errors that a rewrite could lose or garble: nothing was written."""

    def __init__(self, findings: list[Finding]):
        super().__init__("; ".join(f.message for f in findings if f.severity == "error"))
        self.findings = findings


def write_translation(main: Path, key: str, value: str, root: Path, expected: str | None = None) -> list[str]:
    """Set one entry of a page's main file (the editor's save), keeping every other entry of the
    three files as it is on disk now, written exactly as `extract` writes them.

    `expected`: the value the editor started from; when the file now holds another one for `key`
    (someone else saved meanwhile), `ConcurrentEdit` is raised and nothing is written. A value
    confirmed this way drops the key's fuzzy suggestion, as `confirm` does. Returns the files
    written."""
    main = Path(main)
    files, findings = _read(main, root)
    if files is None:
        raise UnwritableFile(findings)
    current = files.main.get(key, "")
    if expected is not None and current != expected:
        raise ConcurrentEdit(key, current)
    before = _Files(dict(files.main), dict(files.fuzzy), dict(files.stale), files.fuzzy_extra)
    files.main[key] = value
    if _has_value(value) and key in files.fuzzy and key not in files.fuzzy_extra:
        del files.fuzzy[key]
    return _write(main, files, root, before)


# --------------------------------------------------------------------------------------------


def _has_value(value: str) -> bool:
    return bool(value.strip())


def _settled(files: _Files, keys: list[str], change: PageChange) -> _Files:
    """`_update` until it changes nothing more, so that running extract twice changes nothing
    (one pass can leave work for the next: a suggestion whose key went away is moved to the stale
    file under its old English, which a key of the page may be, and then comes back from there)."""
    updated = _update(files, keys, change)
    for _ in range(4):
        more = PageChange(change.page, change.path)
        again = _update(updated, keys, more)
        if again == updated:
            break
        for name in ("added", "fuzzy", "stale", "revived"):
            getattr(change, name).extend(k for k in getattr(more, name) if k not in getattr(change, name))
        updated = again
    return updated


def _update(files: _Files, keys: list[str], change: PageChange) -> _Files:
    current = set(keys)
    stale = {k: list(v) for k, v in files.stale.items()}
    # A stale value already back in the main file under its own key (a run killed between writing
    # the main file and the stale one, or a person who copied it back): it is stored, drop the copy.
    for key in keys:
        value = files.main.get(key, "")
        if _has_value(value) and value in stale.get(key, ()):
            stale[key] = [v for v in stale[key] if v != value]
            if not stale[key]:
                del stale[key]

    def stash(key: str, value: str) -> None:
        if _has_value(value) and value not in stale.get(key, []):
            stale.setdefault(key, []).append(value)

    def stored(value: str) -> bool:
        return value in main.values() or any(value in values for values in stale.values())

    main: dict[str, str] = {}
    for key in keys:
        value = files.main.get(key, "")
        if not _has_value(value) and stale.get(key):
            value = stale[key].pop()  # the English came back: so does its latest translation
            if not stale[key]:
                del stale[key]
            change.revived.append(key)
        elif key not in files.main:
            change.added.append(key)
        main[key] = value
    for key, value in files.main.items():
        if key not in current:
            stash(key, value)
            if _has_value(value):
                change.stale.append(key)

    fuzzy: dict[str, tuple[str, str]] = {}
    for key, (suggestion, source) in files.fuzzy.items():
        if key in current and not _has_value(main[key]):
            fuzzy[key] = (suggestion, source)
        elif not stored(suggestion):
            stash(source or key, suggestion)  # e.g. a suggestion someone edited in place

    pool = {k: v[-1] for k, v in stale.items() if v}
    for key in keys:
        if _has_value(main[key]) or key in fuzzy:
            continue
        match = _closest(key, pool)
        if match is not None:
            fuzzy[key] = (pool[match], match)
            change.fuzzy.append(key)
    # A fuzzy entry with fields of its own (a reviewer's note…) is what a person wrote: it is
    # never dropped, even once its suggestion is no longer needed; they delete it when done.
    for key in files.fuzzy_extra:
        if key not in fuzzy:
            fuzzy[key] = files.fuzzy[key]
    return _Files(main, fuzzy, stale, dict(files.fuzzy_extra))


_TAG = re.compile(r"<[^>]*>")


def similarity_text(key: str) -> str:
    """What is compared when looking for the old translation of a changed block."""
    text = PLACEHOLDER_RE.sub("\u2022", key)  # placeholders compare equal whatever their number
    text = _TAG.sub(" ", text)
    return " ".join(text.split()).casefold()


def _closest(key: str, pool: dict[str, str]) -> str | None:
    """The pool key most similar to `key` (ratio >= FUZZY_CUTOFF), ties broken by key order."""
    target = similarity_text(key)
    matcher = difflib.SequenceMatcher(autojunk=False)  # autojunk skews long paragraphs
    matcher.set_seq2(target)
    best: tuple[float, str] | None = None
    for candidate in sorted(pool):
        matcher.set_seq1(similarity_text(candidate))
        if matcher.real_quick_ratio() < FUZZY_CUTOFF or matcher.quick_ratio() < FUZZY_CUTOFF:
            continue
        score = matcher.ratio()
        if score >= FUZZY_CUTOFF and (best is None or score > best[0]):
            best = (score, candidate)
    return best[1] if best else None


# --------------------------------------------------------------------------------------------
# Reading and writing
# --------------------------------------------------------------------------------------------


def _blocking(findings: list[Finding]) -> bool:
    # A BOM is harmless to rewrite (we drop it); any other error means we could lose or garble
    # something by rewriting, so the page is left alone until a person fixes it.
    return any(f.severity == "error" and f.code != "bom" for f in findings)


def _read(main: Path, root: Path | None = None) -> tuple[_Files | None, list[Finding]]:
    parsed = parse_translation_file(main, root)
    findings = run_file_checks(FileContext(parsed))
    fuzzy_entries, fuzzy_findings = load_fuzzy(main, root)
    findings += fuzzy_findings
    fuzzy_extra = _fuzzy_extra(main, root)
    stale, stale_findings = _read_stale(stale_path(main), root)
    findings += stale_findings
    if _blocking(findings):
        findings.append(
            Finding(
                "error", "extract-skipped",
                "extract left this page's translation files untouched; fix the errors above "
                "and run it again", str(main),
            )
        )
        return None, findings
    files = _Files(
        main={p.key: p.value for p in parsed.pairs},
        fuzzy={k: (e.value, e.previous or "") for k, e in fuzzy_entries.items()},
        stale=stale,
        fuzzy_extra={k: v for k, v in fuzzy_extra.items() if k in fuzzy_entries},
    )
    return files, findings


def _fuzzy_extra(main: Path, root: Path | None) -> dict[str, dict]:
    """The fields of each fuzzy entry other than "suggestion" and "from" (kept on rewrite)."""
    parsed = parse_translation_file(fuzzy_path(main), root)
    if not parsed.usable:
        return {}
    extra = {}
    for pair in parsed.pairs:
        if isinstance(pair.value, dict):
            fields = {k: v for k, v in pair.value.items() if k not in ("suggestion", "from")}
            if fields:
                extra[pair.key] = fields
    return extra


def _read_stale(path: Path, root: Path | None = None) -> tuple[dict[str, list[str]], list[Finding]]:
    parsed = parse_translation_file(path, root)
    findings = run_file_checks(FileContext(parsed, kind="stale"))
    stale: dict[str, list[str]] = {}
    if not parsed.usable:
        return stale, findings
    for pair in parsed.pairs:
        if oversized(pair):
            continue  # reported (an error: the page is left alone)
        values = [pair.value] if isinstance(pair.value, str) else pair.value
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            merged = stale.setdefault(pair.key, [])
            merged.extend(v for v in values if v not in merged)
        else:
            findings.append(
                Finding(
                    "error", "stale-malformed",
                    "a stale entry must be a list of strings; fix it by hand",
                    parsed.path, pair.line, pair.col, pair.key,
                )
            )
    return stale, findings


def dumps(data: dict) -> str:
    """The one serialisation of every translation file: stable, readable, diff-friendly."""
    return json.dumps(data, ensure_ascii=False, indent=INDENT, sort_keys=True) + "\n"


def _encode(text: str) -> bytes:
    # A lone surrogate (from a `\ud800` escape in the file we read) can't be UTF-8; writing it
    # back as the same JSON escape keeps it exactly.
    return text.encode("utf-8", errors="backslashreplace")


def _fuzzy_data(files: _Files) -> dict:
    return {
        k: {**files.fuzzy_extra.get(k, {}), "from": source, "suggestion": suggestion}
        for k, (suggestion, source) in files.fuzzy.items()
    }


def _merged_stale(new: dict[str, list[str]], old: dict[str, list[str]]) -> dict[str, list[str]]:
    """`new` plus every value of `old` it lacks (in `old`'s order): the stale file as it is written
    first, so that no value leaving it for the main file is ever stored nowhere."""
    merged = {k: list(v) for k, v in new.items()}
    for key, values in old.items():
        kept = merged.setdefault(key, [])
        kept.extend(v for v in values if v not in kept)
    return {k: v for k, v in merged.items() if v}


def _write(main: Path, files: _Files, root: Path | None = None, before: _Files | None = None) -> list[str]:
    """Write the three files, each atomically (`safe_files.write_atomic`: a temporary file and a
    rename, never through a link), in an order that never leaves a value nowhere, whenever the
    run stops:

    1. the stale file, holding its new entries *and* its old ones (a value that moves from it to
       the main file, revived, is still in it);
    2. the main file (the values it loses went into the stale file in 1; those it gains from
       the fuzzy file, by `confirm`, are still there);
    3. the fuzzy file (each suggestion it drops is in the main or the stale file by now);
    4. the stale file as it should be (what left it is in the main file since 2).

    A run stopped anywhere leaves every value in at least one file; the next run reads them and
    ends exactly where an uninterrupted run would have (`_update` drops a stale copy of a value
    the main file holds under the same key)."""
    root = Path(root) if root is not None else main.parent
    fuzzy, stale = fuzzy_path(main), stale_path(main)
    old_stale = before.stale if before is not None else {}
    steps: list[tuple[Path, dict | None]] = []
    first_stale = _merged_stale(files.stale, old_stale)
    if first_stale != files.stale:
        steps.append((stale, first_stale))
    steps += [(main, files.main), (fuzzy, _fuzzy_data(files) or None), (stale, files.stale or None)]
    written: list[str] = []
    for path, data in steps:
        if data is None:  # an empty sidecar: nothing in it to lose
            if remove_file(path, root) and str(path) not in written:
                written.append(str(path))
            continue
        content = _encode(dumps(data))
        try:
            if read_regular(path, MAX_FILE_BYTES) == content:
                continue
        except FileNotFoundError:
            pass
        except UnsafeFile:
            pass  # write_atomic refuses a link; anything else is replaced by a plain file
        write_atomic(path, content, root)
        if str(path) not in written:
            written.append(str(path))
    return written


def all_values(main: Path) -> list[str]:
    """Every non-empty value stored for a page (main, fuzzy, stale): used to prove nothing is lost."""
    files, _ = _read(main, main.parent)
    if files is None:
        return []
    values = [v for v in files.main.values() if isinstance(v, str)]
    values += [s for s, _ in files.fuzzy.values()]
    values += [v for vs in files.stale.values() for v in vs]
    return [v for v in values if _has_value(v)]


def fix_file(path, lang: str, english_keys: set[str] | None = None, root=None) -> int:
    """Write the repairs of `path`'s values back (atomically, every other key, value and the
    file's formatting as `extract` writes it); returns how many values changed. A file that
    cannot be read as a JSON object of strings is left alone."""
    path = Path(path)
    parsed = parse_translation_file(path, root)
    if not parsed.usable:
        return 0
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    if not isinstance(data, dict):
        return 0
    changed = 0
    for pair in parsed.pairs:
        if not isinstance(pair.value, str) or (english_keys is not None and pair.key not in english_keys):
            continue
        result = judge(pair.key, pair.value, str(path), pair.line, lang)  # the verdict every tool gives
        if result.state == "repaired" and result.repaired is not None and data.get(pair.key) == pair.value:
            data[pair.key] = result.repaired
            changed += 1
    if changed:
        write_atomic(path, _encode(dumps(data)), root if root is not None else path.parent)
    return changed
