"""Writing the site: changed files in place when most of the site is unchanged, else a new site
in a temporary folder swapped in. Either way a reader never meets a half-written file."""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from . import cache as build_cache


def utf8(content: str | bytes) -> bytes:
    """Held as UTF-8 until written: a page with one non-Latin-1 character is otherwise held as 2
    or 4 bytes per character, and a four-language site holds a thousand pages at once."""
    return content.encode("utf-8") if isinstance(content, str) else content


def write_outputs(outputs: dict[str, str | bytes | Path], root: Path, skip: set[str] = frozenset()) -> int:
    """Write `outputs` into the folder `root` (except those in `skip`, already there)."""
    made: set[Path] = set()
    for rel, content in outputs.items():
        if rel in skip:
            continue
        target = root / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        if isinstance(content, Path):
            try:
                os.link(content, target)  # cheap, and the source is never written through
            except OSError:
                shutil.copy2(content, target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return len(outputs)


def swap_in(new: Path, out: Path) -> None:
    """Replace `out` by `new` with two renames, so readers never see a half-written site."""
    old = out.with_name(f".{out.name}-old-{os.getpid()}")
    if out.exists():
        out.rename(old)
    new.rename(out)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def _file_mode() -> int:
    """The mode `open` gives a new file here (mkstemp's files are private to the owner)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _file_mode()


def update_in_place(outputs: dict[str, str | bytes | Path], reused: set[str], out: Path) -> int:
    """Bring the site at `out` to `outputs` by replacing only the files that changed and
    removing those no longer produced. Everything was rendered before this is called, and each
    file is replaced by a rename, so a reader (or a failure) never meets a half-written file;
    what a failure can leave is some pages new and some old, all whole, which the next build
    completes. Returns the number of files written."""
    written = 0
    for rel, content in outputs.items():
        if rel in reused:
            continue  # that very file is already there
        data = content.read_bytes() if isinstance(content, Path) else utf8(content)
        build_cache.write_atomically(Path(out, rel), data, _FILE_MODE)
        written += 1
    _remove_others(out, outputs)
    return written


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
