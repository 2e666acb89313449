"""Writing the site: changed files in place when most of the site is unchanged, else a new site
in a temporary folder swapped in. Either way a reader never meets a half-written file."""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..errors import UserError
from .cache import stage_beside

# Every site this builder writes holds this file. The builder replaces or deletes a folder's
# contents only when it finds it there (or the folder is empty): `--out docs` or `--out .` by
# mistake is refused instead of deleting what the user keeps there. A marker alone is not enough,
# because a pull request can commit one into any folder: a folder in which git tracks a file is
# never the builder's (`tracked_files`).
MARKER = ".labml-site"
MARKER_TEXT = b"A site written by labml-site. Its builder replaces everything in this folder on each build.\n"


def is_ours(folder: Path) -> bool:
    try:
        with open(os.path.join(folder, MARKER), "rb") as f:
            return f.read(len(MARKER_TEXT) + 1) == MARKER_TEXT
    except OSError:
        return False


def claim(out: Path) -> Path:
    """Refuse to build into `out` unless it is missing, empty, or a site this builder wrote; then
    remove what killed builds left beside it (their temporary folders, which carry the marker).
    Returns the resolved folder."""
    if out.is_symlink():
        raise UserError(f"--out {out} is a symbolic link; pass the folder it points to, or another --out DIR")
    out = out.resolve()
    if out.is_dir():
        with os.scandir(out) as entries:
            empty = not any(True for _ in entries)
        if not empty and not is_ours(out):
            raise UserError(
                f"--out {out} is not empty and was not written by labml-site (it has no {MARKER} file); "
                "the build replaces everything in --out, so pass an empty or new folder"
            )
        tracked = tracked_files(out) if not empty else []
        if tracked:
            raise UserError(
                f"--out {out} holds files git tracks (e.g. {tracked[0]}); the build replaces everything in --out, "
                "so it never builds into a tracked folder: pass a folder git does not track (list it in "
                ".gitignore) and copy the site from there if you commit it"
            )
    remove_leftovers(out)
    return out


def remove_leftovers(out: Path) -> None:
    """Remove what killed builds of the site at `out` left beside it: their temporary folders,
    which carry the marker (or are empty), never one git tracks."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(out.parent):
            if entry.name.startswith((f".{out.name}-new-", f".{out.name}-old-")) and entry.is_dir(follow_symlinks=False):
                if (is_ours(entry.path) or not any(True for _ in os.scandir(entry.path))) and not tracked_files(Path(entry.path)):
                    shutil.rmtree(entry.path, ignore_errors=True)


def tracked_files(folder: Path) -> list[str]:
    """A few of the files git tracks under `folder` (none when it lies in no work tree, or git is
    not installed or does not answer in time)."""
    if not os.environ.get("GIT_DIR") and not any(os.path.lexists(os.path.join(p, ".git")) for p in (folder, *folder.parents)):
        return []  # in no work tree: no git to ask (a few stat calls instead of a process)
    import subprocess  # (here: most builds ask no git, and subprocess costs 3 ms to import)

    try:
        done = subprocess.run(
            ["git", "-C", os.fspath(folder), "ls-files", "-z", "--full-name", "--", "."],
            capture_output=True, timeout=30, check=False, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [name.decode("utf-8", "backslashreplace") for name in done.stdout.split(b"\0")[:6] if name]


def new_site_folder(out: Path) -> Path:
    """An empty folder beside `out` to assemble a new site in, marked as ours from the start (so a
    killed build's leftover is recognised and removed), with a published folder's mode."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    os.chmod(tmp, _DIR_MODE)
    with _published_modes():
        _create(os.path.join(tmp, MARKER), MARKER_TEXT)
    return tmp


def utf8(content: str | bytes) -> bytes:
    """Held as UTF-8 until written: a page with one non-Latin-1 character is otherwise held as 2
    or 4 bytes per character, and a four-language site holds a thousand pages at once."""
    return content.encode("utf-8") if isinstance(content, str) else content


def write_outputs(outputs: dict[str, str | bytes | Path], root: Path, skip: set[str] = frozenset()) -> int:
    """Write `outputs` into the folder `root` (except those in `skip`, already there)."""
    with _published_modes():
        return _write_outputs(outputs, root, skip)


def _write_outputs(outputs: dict[str, str | bytes | Path], root: Path, skip: set[str]) -> int:
    root_path = os.fspath(root)
    for rel, content in outputs.items():
        if rel in skip:
            continue
        target = os.path.join(root_path, rel)
        if isinstance(content, Path):
            if _link(content, target):
                continue
            content = content.read_bytes()  # (no hard links there: a copy)
        data = utf8(content)
        try:
            _create(target, data)
        except FileExistsError:  # (written already, e.g. the marker): replaced, never written through
            os.replace(_stage(target, data), target)
    return len(outputs)


# A new site's file is created by the open that writes it, with its final mode (under
# `_published_modes`), and never is an existing file or a link written through: open, write and
# close, three system calls a file (a cold build writes about 2,000; the kernel's work creating
# them is most of what is left of the writing).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _create(path: str, data: bytes) -> None:
    """A new file at `path` holding `data`; its folder (and those above) made when missing."""
    try:
        fd = os.open(path, _CREATE, _FILE_MODE)
    except FileNotFoundError:  # the first file of its folder: no stat or mkdir for the others
        os.makedirs(os.path.dirname(path), _DIR_MODE, exist_ok=True)
        fd = os.open(path, _CREATE, _FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _link(source: Path, target: str) -> bool:
    """Hard-link `target` to `source` (cheap, and the source is never written through); False
    where that cannot be done (another device, a file system without links, `target` there)."""
    for _ in range(2):
        try:
            os.link(source, target)
            return True
        except FileNotFoundError:  # its folder is missing (or the source is: the copy says so)
            os.makedirs(os.path.dirname(target), _DIR_MODE, exist_ok=True)
        except OSError:
            return False
    return False


def swap_in(new: Path, out: Path) -> None:
    """Put the site at `new` in place of `out`. Where the system can exchange two folders in one
    step (Linux), it does: `out` is the old site or the new one at every moment, even if the
    process is killed. Elsewhere, two renames (a killed build then leaves the old site beside
    `out`, as `.<name>-old-<pid>`, and the next build removes it)."""
    if out.exists() and _exchange(new, out):
        shutil.rmtree(new, ignore_errors=True)  # (which now holds the old site)
        return
    old = out.with_name(f".{out.name}-old-{os.getpid()}")
    if out.exists():
        out.rename(old)
    new.rename(out)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (renameat2 with RENAME_EXCHANGE); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # (here: an in-place rebuild swaps nothing, and ctypes costs 2 ms to import)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


# A published site is for everyone to read, whatever the builder's umask: files 0644, folders
# 0755 (mkstemp and mkdtemp would otherwise make them private to the owner).
_FILE_MODE = 0o644
_DIR_MODE = 0o755


@contextlib.contextmanager
def _published_modes():
    umask = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(umask)


def update_in_place(outputs: dict[str, str | bytes | Path], reused: set[str], out: Path) -> int:
    """Bring the site at `out` to `outputs` by replacing only the files that changed and
    removing those no longer produced. Every changed file is first written in full beside its
    target; only when all are written (a full disk fails here, leaving the site as it was) are
    they renamed into place, one rename each, so a reader never meets a half-written file. A
    kill during those renames (milliseconds for an edit's few files) can leave some pages new
    and some old, all whole, which the next build completes. Returns the number of files written."""
    staged: list[tuple[str, str]] = []  # (temporary file, target)
    folders: set[str] = set()  # (made or found already)
    try:
        with _published_modes():
            for rel, content in outputs.items():
                if rel in reused:
                    continue  # that very file is already there
                target = os.path.join(out, rel)
                folder = os.path.dirname(target)
                if folder not in folders:
                    os.makedirs(folder, _DIR_MODE, exist_ok=True)
                    folders.add(folder)
                data = content.read_bytes() if isinstance(content, Path) else utf8(content)
                staged.append((_stage(target, data), target))
        for tmp, target in staged:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _target in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    _remove_others(out, outputs)
    return len(staged)


def _stage(target: str, data: bytes) -> str:
    """`data` in a new file beside `target` (never through a link), with a published file's mode."""
    return stage_beside(Path(target), data, _FILE_MODE)


def _remove_others(out: Path, outputs: dict) -> None:
    """Delete what the site holds besides `outputs` (pages of deleted sources, stray files), and
    folders left empty."""

    def clean(folder: str, prefix: str) -> bool:  # True when `folder` is left empty
        empty = True
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    if clean(entry.path, rel + "/"):
                        with contextlib.suppress(OSError):
                            os.rmdir(entry.path)
                            continue
                    empty = False
                elif rel in outputs:
                    empty = False
                else:
                    os.unlink(entry.path)
        return empty

    clean(os.fspath(out), "")
