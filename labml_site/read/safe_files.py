"""Files are what they claim: read only regular files, bounded; write atomically, never through a link.

Everything under `--source` and `--translations` may come from a pull request, so a "file" there
may be a symbolic link (to `/etc/passwd`, to `/dev/zero`, out of the tree), a FIFO (opening it for
reading blocks until someone writes), a device or a socket, or simply huge. The helpers here are
the one place that decides what is acceptable:

- `read_regular(path, limit)`: the bytes of a regular file of at most `limit` bytes. The file is
  looked at with `lstat` before it is opened (a device is never opened), then opened with
  `O_NOFOLLOW | O_NONBLOCK` (a link swapped in meanwhile fails, a FIFO swapped in does not block)
  and checked again with `fstat` on the open descriptor; at most `limit + 1` bytes are read, so a
  file that grows while it is read is refused too. Anything else raises `UnsafeFile`, whose
  `reason` says why in words for a finding. A missing file raises `FileNotFoundError` as usual.
- `write_atomic(path, data, root)`: write to a temporary file in the same folder, flush it to
  disk, then `os.replace` it over `path`, so a reader (or a crash, or a full disk) sees the old
  file or the new one, never a truncated one. Refused (`UnsafeFile`) when `path` or any folder
  between `root` and `path` is a symbolic link or not a folder, or when `path` is not inside
  `root`: nothing is ever written outside `root` by following a link.
- `remove_file(path, root)`: unlink `path` with the same refusal of linked folders.
- `check_no_links(path, root)`: the refusal alone, for callers that write by other means.
- `file_problem(path, limit)`: why `path` would be refused (`None` when it would be read), from
  `lstat` alone: for listing a tree without opening anything.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = [
    "UnsafeFile",
    "read_regular",
    "write_atomic",
    "remove_file",
    "check_no_links",
    "file_problem",
    "kind_of",
    "TEMP_SUFFIX",
]

# What `write_atomic`'s temporary files end with (they also start with "."), so a run killed
# before its rename leaves something recognisable, and hidden from every listing of the tree.
TEMP_SUFFIX = ".labml-tmp"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class UnsafeFile(OSError):
    """A path that is not a plain, small enough file inside its tree; `reason` says why."""

    def __init__(self, path: str | os.PathLike, reason: str, code: str = "unsafe-file"):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason
        self.code = code


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _too_large(path, size: int, limit: int) -> UnsafeFile:
    return UnsafeFile(path, f"is larger than the limit of {limit} bytes ({size} bytes or more)", "file-too-large")


def file_problem(path: str | os.PathLike, limit: int | None = None) -> UnsafeFile | None:
    """Why `path` is not acceptable (from `lstat`, nothing is opened), or None."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return UnsafeFile(path, f"is {kind_of(st.st_mode)}, not a regular file", "not-a-regular-file")
    if limit is not None and st.st_size > limit:
        return _too_large(path, st.st_size, limit)
    return None


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file `path` (not a link, FIFO, device or socket), at most `limit`."""
    problem = file_problem(path, limit)
    if problem is not None:
        raise problem
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW on a link (EMLINK on FreeBSD)
            raise UnsafeFile(path, "is a symbolic link, not a regular file", "not-a-regular-file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped between lstat and open
            raise UnsafeFile(path, f"is {kind_of(st.st_mode)}, not a regular file", "not-a-regular-file")
        if st.st_size > limit:
            raise _too_large(path, st.st_size, limit)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise _too_large(path, size, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_no_links(path: str | os.PathLike, root: str | os.PathLike) -> None:
    """Raise `UnsafeFile` unless `path` is inside `root` and neither `path` nor any existing
    folder between `root` and it is a symbolic link (or, for the folders, something else than a
    folder). `root` itself may be a link (the user chose it); nothing below it may."""
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise UnsafeFile(path, f"is outside {root}", "outside-tree") from None
    if not rel.parts or ".." in rel.parts:
        raise UnsafeFile(path, f"is not a file inside {root}", "outside-tree")
    current = root
    for i, part in enumerate(rel.parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return  # nothing below a missing folder exists yet
        last = i == len(rel.parts) - 1
        if stat.S_ISLNK(st.st_mode):
            what = "is a symbolic link" if last else f"is inside {current}, which is a symbolic link"
            raise UnsafeFile(path, f"{what}; refusing to write through it", "symlink-write")
        if not last and not stat.S_ISDIR(st.st_mode):
            raise UnsafeFile(path, f"{current} is not a folder", "not-a-regular-file")
        if last and not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(path, f"is {kind_of(st.st_mode)}, not a regular file", "not-a-regular-file")


def _make_parents(path: Path, root: Path) -> None:
    """Create the missing folders between `root` and `path` one by one (never through a link)."""
    os.makedirs(root, exist_ok=True)  # the folder the user named (it may itself be a link)
    missing = []
    parent = path.parent
    while parent != root and not os.path.lexists(parent):
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            pass
        check_no_links(folder / "x", root)  # made by us, or by someone else meanwhile: no link


def write_atomic(path: str | os.PathLike, data: bytes, root: str | os.PathLike, mode: int | None = None) -> None:
    """Replace `path` (inside `root`) by `data` atomically, never writing through a link.

    The temporary file is made with `O_EXCL` in `path`'s folder, so it never follows a link
    either, and is removed if anything fails. `mode`: the new file's permissions (default: those
    of the file it replaces, else 0644)."""
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    check_no_links(path, root)
    _make_parents(path, root)
    check_no_links(path, root)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
        except FileNotFoundError:
            mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_file(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Remove `path` (inside `root`, no linked folder on the way); False if it did not exist."""
    path = Path(os.path.abspath(path))
    # The folders on the way must be real; `path` itself may be a link (unlinking a link touches
    # nothing it points to).
    check_no_links(path.parent / ".labml-probe", root)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True
