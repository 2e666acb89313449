"""A file's preparation taken from the last build when none of the files it read has changed.

Preparing a file (`prepare.py`) reads its source and, per language, its translation file, the
fuzzy sidecar and the glossary; from their bytes it makes the digests of the file's analysis and
texts. On a rebuild after one edit, doing that for every other file costs more than the edit
itself: each translation path is resolved and each digest hashed again, to find what the last
build found. So what preparing a file found is kept as a record, with the metadata of every file
it read and a digest of everything else it depends on (the configuration, the builder, the
libraries, the UI catalogs and the names in both trees); the next build takes the record as it is
when all of those are what they were. This is Shake's early cut-off by modification time, at the
grain of a file, as `uptodate.py` is at the grain of the whole build.

What the metadata cannot vouch for is never taken: a file changed within the racy window (its
bytes would have to be compared), a file outside the walked trees (its absence is not in the
snapshot), a snapshot that does not trust itself.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

from ..read.structure import SourceFile
from .memo import Memo
from .uptodate import Snapshot

_RECORD = "prepared:"  # + the file's rel: its `FileRecord` (a memo record, kept with the heads)
_TREES = ("source", "translations")  # the roots whose files' metadata the records hold


@dataclass(frozen=True)
class FileRecord:
    world: str  # digest of what every file's preparation depends on (`EarlyCutoff.world`)
    file: SourceFile
    read: tuple[tuple[str, tuple | None], ...]  # each file read: (path, its metadata; None: absent)
    state: Any  # what the preparation found (prepare.py restores it)


class EarlyCutoff:
    """One build's view of the records: which files' preparations can be taken as they are."""

    def __init__(self, snapshot: Snapshot | None, memo: Memo) -> None:
        self.memo = memo
        self.enabled = snapshot is not None and snapshot.trusted and memo.cache.enabled
        if not self.enabled:
            return
        roots = dict(snapshot.roots)
        self.stats = snapshot.file_stats()
        self.racy = frozenset(snapshot.contents)
        # A file under a walked tree that is not among its files is absent (or not a regular file),
        # as the tree's listing, part of `world`, says.
        self.trees = tuple(os.path.join(roots[name], "") for name in _TREES if name in roots)
        self.world = memo.value((
            memo.fingerprint,
            snapshot.roots,
            [entry[:3] if entry[0] in _TREES else entry for entry in snapshot.entries],
            sorted((path, digest) for path, digest in snapshot.contents.items() if not path.startswith(self.trees)),
        )).digest

    def found(self, file: SourceFile) -> Any:
        """What preparing `file` found in the last build that recorded it, when every file that
        preparation read is unchanged (None: prepare it)."""
        if not self.enabled:
            return None
        record = self.memo.record(_RECORD + file.rel)
        if not isinstance(record, FileRecord) or record.world != self.world or record.file != file:
            return None
        stats, racy = self.stats, self.racy
        for path, known in record.read:
            if path in racy or stats.get(path) != known:
                return None
        return record.state

    def keep(self, file: SourceFile, paths: Iterable[str], state: Any) -> None:
        """Record what preparing `file` found, having read `paths` (unless their metadata cannot
        vouch for them)."""
        if not self.enabled:
            return
        read = []
        for path in paths:
            if path in self.racy or not path.startswith(self.trees):
                return
            read.append((path, self.stats.get(path)))
        self.memo.set_record(_RECORD + file.rel, FileRecord(self.world, file, tuple(read), state))
