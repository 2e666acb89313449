"""Is the site on disk already what this build would write? Told from file metadata (and the bytes
of files changed moments ago), before the pipeline is imported, so that a rebuild with nothing
changed costs little more than starting the interpreter.

After each successful build the nothing-changed record (`LastBuild`, in the cache folder) holds
the digest of every input that build read (by content), every file it wrote with its size, time
and inode, its findings, and a `Snapshot`: the metadata of every file the build could have read
(the sources, the translations, the theme, extra UI catalogs, the builder's own package and the
libraries that shape the output), taken as the build started. The next build first takes the
same snapshot. When it equals the recorded one and the site is untouched, the site is what this
build would write: nothing else is imported, read, written or swapped. This is git's index and Shake's
`ChangeModtimeAndDigest`: metadata first, contents only when the metadata differs (then the
build's own check by digest, `Production.unchanged_since_last_build`, which reads everything and
records a fresh snapshot when the contents turn out the same).

Metadata can hide a change in two ways, and both are closed:
* a file written twice within one tick of the file system's clock keeps its size and times: a
  file changed less than `RACY_NS` before the snapshot is vouched for by the digest of its bytes
  instead, compared at the next build, as git treats "racily clean" entries;
* a tool that restores a file's old modification time (`cp -p`, `rsync -t`, `touch -d`) cannot
  restore its change time, which the snapshot compares too.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..findings import Finding, Report
from ..read.listing import SKIPPED_DIRS, TreeListing
from ..read.safe_files import UnsafeFile, read_regular
from ..translate import glossary_files
from .cache import MISS, OUTPUT_MODULES, RACY_NS, BuildStats, FileDigests, cache_dir_for, cache_folder_problem, cache_home, load_record
from .cache_size import note_use
from .outputs import remove_leftovers
from .result import BuildResult, Loaded

if TYPE_CHECKING:
    from .config import BuildConfig

LAST_BUILD = "last-build.pkl"  # in the site's cache folder
_PACKAGE = Path(__file__).resolve().parent.parent  # the builder's own modules, theme and locales


@dataclass(frozen=True)
class Snapshot:
    entries: tuple  # (root, rel, mode[, size, mtime_ns, ctime_ns, inode]) for every entry seen
    # path → digest of the bytes of each file changed within RACY_NS of the snapshot: its metadata
    # cannot vouch for it, so its bytes are compared (git's "racily clean" entries)
    contents: dict[str, str] = field(default_factory=dict)
    trusted: bool = True  # False when something its metadata cannot vouch for could not be read
    roots: tuple[tuple[str, str], ...] = field(default=(), compare=False)  # (name, folder) walked

    def vouches_for(self, now: "Snapshot") -> bool:
        """Whether the inputs described by `now` are the very inputs this snapshot describes."""
        return self.trusted and self.entries == now.entries and all(
            now.contents.get(path) == digest or (path not in now.contents and _content(path) == digest)
            for path, digest in self.contents.items())

    def listing(self, root_name: str) -> TreeListing | None:
        """What the walk of one root saw (None: it was not walked)."""
        if root_name not in dict(self.roots):
            return None
        modes, sizes, complete = {}, {}, True
        for entry in self.entries:
            if entry[0] == root_name:
                if isinstance(entry[2], int):
                    modes[entry[1]] = entry[2]
                    if len(entry) == 7:
                        sizes[entry[1]] = entry[3]
                else:
                    complete = False  # ("unlisted" or "unreadable")
        return TreeListing(modes, complete, sizes)

    def file_stats(self) -> dict[str, tuple[int, int, int, int]]:
        """path → (size, mtime_ns, ctime_ns, inode) of every regular file walked, the path spelled
        as a build spells it (its root joined with the rel): a build's file digests ask this
        instead of the disk (`FileDigests.trust`), so that its inputs are the ones this snapshot,
        which the build records, describes."""
        roots = dict(self.roots)
        found = {}
        for entry in self.entries:
            root = roots.get(entry[0])
            if root is not None and len(entry) == 7 and stat.S_ISREG(entry[2]):
                found[os.path.join(root, entry[1])] = entry[3:]
        return found


@dataclass
class LastBuild:
    inputs: str  # the digest of every input of that build
    findings: list[Finding]  # its report
    files: dict[str, tuple[int, int, int]]  # every file it wrote: out rel → (size, mtime_ns, inode)
    snapshot: Snapshot | None = None  # the metadata of its inputs as it started
    pages: list[str] = field(default_factory=list)  # the rels of its pages, in the result's order
    kept: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


_RACY_CONTENT_MAX = 8 * 1024 * 1024  # a recent file larger than this makes the snapshot untrusted


def take_snapshot(config: "BuildConfig") -> Snapshot:
    """The metadata of everything a build of `config` could read, and the bytes' digest of what
    changed moments ago. Folders are listed, not timed: a folder's time changes with every
    editor's swap file, its listing only with what it holds."""
    recent = time.time_ns() - RACY_NS
    entries: list[tuple] = [("config", _config_part(config)), ("python", sys.version, sys.executable)]
    files: list[tuple[str, int, int, int]] = []  # (path, size, mtime_ns, ctime_ns) of every file
    roots = {"source": config.source, "translations": config.translations, "templates": config.templates,
             "locales": config.locales, "builder": _PACKAGE}
    for name, root in roots.items():
        if root is not None:
            _walk(name, str(root), entries, files)
    trusted = True
    # The glossaries above the translations folder, which apply to the files in it.
    for lang in config.langs:
        if lang != config.base_lang:
            for path in glossary_files.above(str(config.translations), lang):
                trusted = _watched(entries, recent, "glossary", path) and trusted
    for module in OUTPUT_MODULES:  # where each library lives, and the folder that lists installs
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None and spec.origin else ""
        for what, path in (("library", origin), ("library folder", os.path.dirname(os.path.dirname(origin)))):
            if path:
                trusted = _watched(entries, recent, what, module, path) and trusted
    contents: dict[str, str] = {}
    for path, size, mtime, ctime in files:
        if max(mtime, ctime) >= recent:
            found = _content(path) if size <= _RACY_CONTENT_MAX else None
            if found is None:
                trusted = False
            else:
                contents[path] = found
    return Snapshot(tuple(entries), contents, trusted, tuple((n, str(r)) for n, r in roots.items() if r is not None))


def _content(path: str) -> str | None:
    try:
        return FileDigests.of_bytes(read_regular(path, _RACY_CONTENT_MAX))
    except (OSError, UnsafeFile):
        return None


def _config_part(config: "BuildConfig") -> tuple:
    parts = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        parts.append((f.name, (str(value), str(Path(value).resolve())) if isinstance(value, Path) else value))
    return tuple(parts)


def _watched(entries: list[tuple], recent: int, *entry: str) -> bool:
    """Add `entry`, whose last item is a path, with that path's metadata; whether its times are
    old enough to vouch for it (its bytes are not compared: a folder's say nothing)."""
    times = _times(entry[-1])
    entries.append((*entry, *times))
    return max(times[2], times[3]) < recent


def _times(path: str) -> tuple[int, int, int, int, int]:
    try:
        st = os.lstat(path)
    except OSError:
        return (-1, -1, -1, -1, -1)
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _walk(root_name: str, root: str, entries: list[tuple], files: list[tuple[str, int, int, int]]) -> None:
    """Every visible entry under `root` (as `read.structure` walks: hidden names and SKIPPED_DIRS
    left out), links not followed."""
    stack = [""]
    found: list[tuple] = []
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as listing:
                children = list(listing)
        except OSError as e:
            found.append((root_name, rel, "unlisted", e.errno))
            continue
        for entry in children:
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                found.append((root_name, child, "unreadable", e.errno))
                continue
            if stat.S_ISDIR(st.st_mode):
                found.append((root_name, child, st.st_mode))
                stack.append(child)
            else:
                if stat.S_ISREG(st.st_mode):
                    files.append((entry.path, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
                found.append((root_name, child, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    entries.extend(sorted(found))


def site_untouched(out: Path, files: dict[str, tuple[int, int, int]]) -> bool:
    """Whether `out` holds exactly the files a build wrote (`files`), each the very file it wrote
    (same size, modification time and inode), and nothing else."""
    count = 0
    for folder, _dirs, names in os.walk(out):
        for name in names:
            path = os.path.join(folder, name)
            known = files.get(os.path.relpath(path, out).replace(os.sep, "/"))
            try:
                st = os.stat(path)
            except OSError:
                return False
            if known is None or known != (st.st_size, st.st_mtime_ns, st.st_ino):
                return False
            count += 1
    return count == len(files)


def up_to_date(config: "BuildConfig", build_with: Callable[["BuildConfig", Snapshot | None], BuildResult]) -> tuple[BuildResult | None, Snapshot]:
    """(the result of building `config`, when the site on disk is already what it would write, else
    None; the snapshot taken, which the build then records). The result's pages are read, when a
    caller reads one, from `build_with` (a build that reads contents)."""
    started = time.perf_counter()
    snapshot = take_snapshot(config)
    out = Path(config.out)
    if not config.cache or out.is_symlink() or not out.is_dir():
        return None, snapshot
    out = out.resolve()
    root = cache_dir_for(out)
    if cache_folder_problem(cache_home()) or cache_folder_problem(root):  # (never a pickle someone else wrote)
        return None, snapshot
    last = load_record(root / LAST_BUILD)
    if (last is MISS or not isinstance(last, LastBuild) or last.snapshot is None
            or not last.snapshot.vouches_for(snapshot) or not site_untouched(out, last.files)):
        return None, snapshot
    note_use(out)
    remove_leftovers(out)  # (what killed builds left beside the site goes, as after any build)
    return _result(config, out, last, started, build_with), snapshot


def _result(config: "BuildConfig", out: Path, last: LastBuild, started: float, build_with: Callable) -> BuildResult:
    """The result the build would give, its pages read (on demand) from a build that reads contents."""
    full: dict[str, Any] = {}

    def built() -> BuildResult:
        if "result" not in full:
            full["result"] = build_with(config, None)
        return full["result"]

    localized = {lang: Loaded(last.pages, lambda rel, lang=lang: built().localized[lang][rel]) for lang in config.langs}
    stats = BuildStats(site_unchanged=True, metadata_only=True, workers=0)
    return BuildResult(out, Report(list(last.findings)), Loaded(last.pages, lambda rel: built().pages[rel]), localized, 0,
                       time.perf_counter() - started, stats, last.kept, last.skipped)
