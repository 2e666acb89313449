"""A bounded build cache, as pip's and ccache's are: a total cap, least-recently-used eviction.

Every output folder has a cache folder of its own under `cache.cache_home()` (`cache_dir_for`).
A build holds a shared lock on its folder's `lock` file from before it opens the cache until it
ends (`in_use`), and notes there which output folder it serves (`out`), when it last ran (the lock
file's time) and, when it ends, the folder's size (`size`). After a successful build, `enforce`
removes the folders whose output folder no longer exists, then, while the total is over the cap,
the least recently used. A folder is removed only while its remover holds its lock exclusively,
so never while a build uses it: a build in progress holds the lock, and one that starts later
finds the folder gone (it checks after taking the lock) and makes a new one. Removal renames the
folder out of the way first, so nothing ever sees a half-deleted folder under its own name.

The cap is 1 GB; `LABML_SITE_CACHE_MAX` (`500M`, `2G`, `0` for no cap) or `labml-site cache --max
SIZE` (kept in `limits.json` in the cache home; the variable wins) sets another.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .cache import FINGERPRINTS, cache_dir_for, cache_folder_problem, cache_home

DEFAULT_MAX_BYTES = 1_000_000_000
MAX_ENV = "LABML_SITE_CACHE_MAX"
LIMITS_FILE = "limits.json"
_LOCK, _OUT, _SIZE = "lock", "out", "size"
_TRASH = ".removing-"
_UNITS = {"": 1, "b": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*?)b?\s*$", re.I)


def parse_size(text: str) -> int:
    """`"500M"`, `"2G"`, `"1.5GB"`, `"750000"` → bytes; ValueError with what is accepted."""
    m = _SIZE_RE.match(text or "")
    unit = m.group(2).lower() if m else ""
    if m and unit + "b" in _UNITS and unit not in _UNITS:
        unit += "b"
    if not m or unit not in _UNITS:
        raise ValueError(f"cannot read {text!r} as a size: write a number of bytes or one with K, M, G or T (500M, 2G)")
    return int(float(m.group(1)) * _UNITS[unit])


def format_size(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def max_bytes(home: Path | None = None) -> int:
    """The cap: `$LABML_SITE_CACHE_MAX`, else `limits.json`, else 1 GB (0: no cap)."""
    explicit = os.environ.get(MAX_ENV)
    if explicit:
        try:
            return parse_size(explicit)
        except ValueError:
            pass  # a mistyped variable must not stop builds: the file's or the default cap
    try:
        data = json.loads(((home or cache_home()) / LIMITS_FILE).read_text(encoding="utf-8"))
        return max(0, int(data["max_bytes"]))
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_MAX_BYTES


def set_max_bytes(n: int, home: Path | None = None) -> None:
    home = home or cache_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / LIMITS_FILE).write_text(json.dumps({"max_bytes": int(n)}) + "\n", encoding="utf-8")


def folder_size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def _open_lock(folder: Path) -> int | None:
    try:
        return os.open(folder / _LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def note_use(out: Path) -> None:
    """Note that the site at `out` was just used (a build that found it up to date and wrote
    nothing), so eviction keeps its cache as recently used. Best effort."""
    folder = cache_dir_for(out)
    fd = _open_lock(folder) if not cache_folder_problem(folder) else None
    if fd is not None:
        with contextlib.suppress(OSError):
            os.utime(fd)
        os.close(fd)


@contextlib.contextmanager
def in_use(out: Path, enabled: bool = True) -> Iterator[None]:
    """Hold the cache folder of `out` for a build: locked (shared) against eviction, its last use
    and its output folder noted; on success, its size noted and the cap enforced (`enforce`).
    Best effort: a cache that cannot be locked is used unlocked (builds must not fail for it)."""
    if not enabled:
        yield
        return
    folder = cache_dir_for(out)
    fd = None
    for _ in range(5 if not cache_folder_problem(folder.parent) else 0):  # an evictor may remove the folder between our mkdir and our lock
        with contextlib.suppress(OSError):
            folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            folder.mkdir(exist_ok=True, mode=0o700)
        fd = _open_lock(folder) if not cache_folder_problem(folder) else None
        if fd is None:
            break
        fcntl.flock(fd, fcntl.LOCK_SH)
        if _same_file(fd, folder / _LOCK):
            break
        os.close(fd)
        fd = None
    try:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.utime(fd)  # the last use, which eviction orders by
                _write_small(folder / _OUT, os.fsdecode(Path(out).resolve()))
        yield
        if fd is not None:
            with contextlib.suppress(OSError):
                _write_small(folder / _SIZE, str(folder_size(folder)))
            enforce(keep=folder)
    finally:
        if fd is not None:
            os.close(fd)  # (releases the lock)


def _write_small(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@dataclass
class Folder:
    path: Path
    out: str  # the output folder it serves ("" when unknown)
    size: int  # bytes, as last noted (or measured)
    last_used: float  # seconds since the epoch
    in_use: bool = False

    @property
    def orphaned(self) -> bool:
        """Its output folder no longer exists."""
        return bool(self.out) and not os.path.isdir(self.out)


def folders(home: Path | None = None, measure: bool = False, locks: bool = False) -> list[Folder]:
    """Every cache folder under the cache home, least recently used first. `measure`: sizes
    measured now (else as each build noted them; measured where none was noted); `locks`: find
    out which a build holds."""
    home = home or cache_home()
    try:
        entries = sorted(os.scandir(home), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        out = _read_small(path / _OUT)
        size = None if measure else _read_int(path / _SIZE)
        try:
            last = os.stat(path / _LOCK).st_mtime
        except OSError:
            last = entry.stat(follow_symlinks=False).st_mtime
        found.append(Folder(path, out, folder_size(path) if size is None else size, last, locks and _locked(path)))
    return sorted(found, key=lambda f: f.last_used)


def _read_small(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return ""


def _read_int(path: Path) -> int | None:
    try:
        return int(_read_small(path))
    except ValueError:
        return None


def _locked(folder: Path) -> bool:
    fd = _open_lock(folder)
    if fd is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        return e.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)
    return False


def remove(folder: Path) -> bool:
    """Remove one cache folder unless a build holds it. True if removed."""
    fd = _open_lock(folder)
    if fd is None:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a build is using it
        if not _same_file(fd, folder / _LOCK):
            return False
        trash = folder.with_name(f"{_TRASH}{folder.name}-{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.rename(folder, trash)
        except OSError:
            return False
        shutil.rmtree(trash, ignore_errors=True)
        return True
    finally:
        os.close(fd)


@dataclass
class Evicted:
    orphaned: list[Path]
    over_cap: list[Path]
    freed: int


def enforce(keep: Path | None = None, home: Path | None = None, cap: int | None = None) -> Evicted:
    """Remove the folders of outputs that no longer exist, then the least recently used until
    the total is under the cap; never `keep`, never a folder a build holds."""
    home = home or cache_home()
    cap = max_bytes(home) if cap is None else cap
    result = Evicted([], [], 0)
    _sweep_trash(home)
    present = folders(home)
    left = []
    for f in present:
        if f.path != keep and f.orphaned and remove(f.path):
            result.orphaned.append(f.path)
            result.freed += f.size
        else:
            left.append(f)
    total = sum(f.size for f in left)
    if cap and total > cap:
        for f in left:  # least recently used first
            if total <= cap:
                break
            if f.path == keep:
                continue
            if remove(f.path):
                result.over_cap.append(f.path)
                result.freed += f.size
                total -= f.size
    return result


def _sweep_trash(home: Path) -> None:
    """Finish removals a killed process left (folders renamed out of the way, not yet deleted)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(home):
            if entry.name.startswith(_TRASH) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)


def clear(home: Path | None = None) -> tuple[int, int]:
    """Remove every cache folder no build holds: (removed, left because in use). The remembered
    builder fingerprints go too (the next build reads the package again)."""
    home = home or cache_home()
    _sweep_trash(home)
    with contextlib.suppress(OSError):
        (home / FINGERPRINTS).unlink()
    removed = busy = 0
    for f in folders(home):
        if remove(f.path):
            removed += 1
        else:
            busy += 1
    return removed, busy


def describe(home: Path | None = None) -> list[str]:
    """What `labml-site cache` prints: the home, the total against the cap, each folder."""
    home = home or cache_home()
    found = folders(home, measure=True, locks=True)
    cap = max_bytes(home)
    total = sum(f.size for f in found)
    lines = [f"cache: {home}", f"total {format_size(total)} in {len(found)} folder{'s' if len(found) != 1 else ''}; "
             f"cap {format_size(cap) if cap else 'none'} (${MAX_ENV} or `labml-site cache --max SIZE`)"]
    for f in reversed(found):  # most recently used first
        notes = [n for n, on in (("in use", f.in_use), ("output gone", f.orphaned)) if on]
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(f.last_used))
        lines.append(f"  {format_size(f.size):>9}  {when}  {f.path.name}  → {f.out or '(output unknown)'}"
                     + (f"  [{', '.join(notes)}]" if notes else ""))
    return lines
