"""A folder's files as one walk saw them, so that a build asks the disk once, not once per page and
language, whether a file is there (a translation tree is asked about every page in every
language, and most of the answers used to cost a `stat`, the missing ones a listing per folder).

The walk is the build's snapshot (`builder/uptodate.py`), which lists everything visible: names
that start with a dot and `SKIPPED_DIRS` are not in it, so a question about such a path is
answered None, "ask the disk", as is any question about a tree the walk could not list whole.
"""
from __future__ import annotations

import stat
from dataclasses import dataclass, field

# Folders an author never means to publish (nor a build to read: no walk looks inside).
SKIPPED_DIRS = {"__pycache__", "node_modules", ".git", ".ipynb_checkpoints", "checkpoints"}
_SKIPPED_FOLDED = frozenset(name.casefold() for name in SKIPPED_DIRS)


@dataclass
class TreeListing:
    """rel (POSIX, under the root) → mode of every visible entry; `complete` is False when some
    folder could not be listed or an entry examined."""

    modes: dict[str, int]
    complete: bool = True
    sizes: dict[str, int] = field(default_factory=dict)  # rel → size of every regular file
    _folded: dict[str, list[str]] | None = field(default=None, repr=False)

    def _answerable(self, rel: str) -> bool:
        # (folded: a case-insensitive match may be a hidden or skipped name the walk left out)
        return self.complete and not any(p.startswith(".") or p.casefold() in _SKIPPED_FOLDED for p in rel.split("/"))

    def exists(self, rel: str) -> bool | None:
        """Whether `rel` is there as a file or folder (None: ask the disk; a link always is,
        since what it points at decides)."""
        mode = self.modes.get(rel)
        if mode is not None:
            return None if stat.S_ISLNK(mode) else True
        return False if self._answerable(rel) else None

    def is_file(self, rel: str) -> bool | None:
        """Whether `rel` is a regular file (None: ask the disk)."""
        there = self.exists(rel)
        if not there:
            return there  # (False, or None: ask the disk)
        return stat.S_ISREG(self.modes[rel])

    def files_by_case(self, rel: str) -> list[str] | None:
        """The regular files whose path equals `rel` but for case, in no particular order (None:
        ask the disk)."""
        if not self._answerable(rel):
            return None
        if self._folded is None:
            self._folded = {}
            for name, mode in self.modes.items():
                if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                    self._folded.setdefault(name.casefold(), []).append(name)
        found = self._folded.get(rel.casefold(), [])
        if any(stat.S_ISLNK(self.modes[name]) for name in found):
            return None  # (whether a link is a file depends on its target)
        return found
