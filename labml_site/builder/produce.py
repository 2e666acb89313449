"""Producing the site's outputs: each output is known by its path and its render digest (the
memo layer's digest of the frozen dataclass that describes it, `render/outputs/`); the previous
site's file is kept when it was produced from the same digest and is untouched since, and the
rest are produced at the end, in forked worker processes when there are many.

One build's production holds:

* the memo layer (`memo.py`: every tier of the cache and the counters);
* the outputs: out path → bytes, a file to copy, or a `Deferred` render, and which of them are
  the previous site's files kept as they are;
* the nothing-changed record: what the last successful build read and wrote.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..findings import Finding
from ..read.safe_files import read_regular
from .cache import INPUT_LIMIT, BuildStats
from .memo import Memo
from .outputs import utf8, write_outputs
from .result import BuildResult
from .uptodate import LAST_BUILD, LastBuild, Snapshot, site_untouched
from .workers import can_fork, fork_map

__all__ = ["Deferred", "Production"]


@dataclass
class Deferred:
    """An output to produce once every output is known, so that many can be produced at once in
    worker processes (`Production.produce`)."""

    produce: Callable[[], str | bytes]
    group: str  # one process produces a group's outputs (a page's languages share its data)


PARALLEL_MIN_OUTPUTS = 200  # fewer renders than this are quicker in the main process
_COUNTERS = ("analysed", "localized", "linked")  # what producing an output may have to compute


class _Kept:
    def __repr__(self) -> str:
        return "KEPT"


KEPT = _Kept()  # an output in `reused`, the previous site's file as it is (`Production.previous`)


@dataclass(frozen=True)
class Copy:
    """A file published as it is, known by its bytes."""

    file: str  # the digest of its bytes


@dataclass
class Production:
    memo: Memo
    out: Path  # the site folder (resolved)
    outputs: dict[str, Any] = field(default_factory=dict)  # out path → bytes, a file to copy, Deferred or KEPT
    reused: set[str] = field(default_factory=set)  # outputs that are the previous site's files
    defer: bool = False  # renders wait for `produce` (so they can run in workers)

    @classmethod
    def open(cls, out: Path, enabled: bool = True, keep_in_memory: bool = False) -> "Production":
        out = Path(out).resolve()
        return cls(Memo.open(out, enabled=enabled, keep_in_memory=keep_in_memory), out)

    @functools.cached_property
    def out_prefix(self) -> str:
        """The site folder's path with a separator after it, to which an output's path is added."""
        return os.path.join(self.out, "")

    @property
    def stats(self) -> BuildStats:
        return self.memo.stats

    @property
    def compiled_templates(self) -> Path | None:
        """Where the theme keeps compiled templates between builds (None when caching is off)."""
        return self.memo.cache.root / "templates" if self.memo.cache.enabled else None

    # -- outputs -------------------------------------------------------------------------------

    def output(self, out_rel: str, digest: str | None, produce: Callable[[], str | bytes], copy: bool = False, group: str = "") -> None:
        """Put `out_rel` in the site: the previous site's file when it was produced from the same
        render `digest` (`Memo.output_digest`) and is untouched since, else `produce()`
        (deferred while production defers)."""
        self.outputs[out_rel] = self._output(out_rel, digest, produce, copy, group)

    def _output(self, out_rel: str, digest: str | None, produce: Callable[[], str | bytes], copy: bool, group: str) -> Any:
        cache = self.memo.cache
        made, reused = ("copied", "copy_reused") if copy else ("rendered", "render_reused")
        if cache.enabled and digest is not None:
            cache.manifest.record(out_rel, digest)
            if cache.manifest.reusable(self.out_prefix, out_rel, digest):
                setattr(self.stats, reused, getattr(self.stats, reused) + 1)
                self.reused.add(out_rel)
                return KEPT
        setattr(self.stats, made, getattr(self.stats, made) + 1)
        if self.defer:
            return Deferred(produce, group or out_rel)
        return utf8(produce())

    def previous(self) -> None:
        """The outputs that are the previous site's files, as files to put in a new site."""
        for rel in self.reused:
            self.outputs[rel] = self.out / rel

    def copies_not_links(self) -> None:
        """Files published as they are (sources for "View source", figures, the theme's static
        files) become copies in the site, not hard links to the originals: an editor that saves in
        place would otherwise change the published site before, or without, a rebuild (and a failed
        build must leave the previous site as it was). An unchanged one is the previous site's copy."""
        for rel, content in list(self.outputs.items()):
            if isinstance(content, Path) and rel not in self.reused:
                digest = self.memo.output_digest(Copy(self.memo.file_digest(content)))
                self.output(rel, digest, lambda path=content: read_regular(path, INPUT_LIMIT), copy=True)

    def produce(self, into: Path | None = None, jobs: int = 0, order: Callable[[str], str] = str, prepare_worker: Callable[[], None] | None = None, meanwhile: Callable[[], object] | None = None) -> set[str]:
        """Produce every deferred output. With `into` (the new site's folder) and enough of them,
        forked workers produce and write them there, each taking whole groups (sorted by
        `order`); returns the outputs written so. Otherwise they are produced here and held in
        `outputs`. `prepare_worker` runs once before forking; `meanwhile` once, while the workers
        work if there are any."""
        deferred = [rel for rel, content in self.outputs.items() if isinstance(content, Deferred)]
        workers = min(jobs or os.cpu_count() or 1, 8)
        if into is None or workers <= 1 or len(deferred) < PARALLEL_MIN_OUTPUTS or not can_fork():
            for rel in deferred:
                self.outputs[rel] = utf8(self.outputs[rel].produce())
            if meanwhile is not None:
                meanwhile()
            return set()
        groups: dict[str, list[str]] = {}
        for rel in deferred:
            groups.setdefault(self.outputs[rel].group, []).append(rel)
        tasks = _balanced([groups[group] for group in sorted(groups, key=order)], workers * 6)
        if prepare_worker is not None:
            prepare_worker()

        def produce_into(rels: list[str]) -> tuple[dict[str, int], tuple[str, tuple[str, ...]]]:
            before = dataclasses.asdict(self.stats)
            self.memo.cache.store.start_batch()  # what the task caches (its pages' links) goes in one file
            made: dict[str, bytes] = {}
            for _, group in itertools.groupby(rels, key=lambda rel: self.outputs[rel].group):
                with self.memo.forgetting():  # (a group needs nothing the one before loaded)
                    made.update((rel, utf8(self.outputs[rel].produce())) for rel in group)
            write_outputs(made, into)
            pack = self.memo.cache.store.end_batch()
            after = dataclasses.asdict(self.stats)
            return {name: after[name] - before[name] for name in _COUNTERS}, pack

        for counts, (pack, packed) in fork_map(produce_into, tasks, workers, meanwhile):
            self.memo.packed(pack, packed)
            for name, n in counts.items():
                setattr(self.stats, name, getattr(self.stats, name) + n)
        self.stats.workers = max(self.stats.workers, workers)
        return set(deferred)

    # -- nothing changed -------------------------------------------------------------------------
    # When every input of the build is what the last successful build used and the site that
    # build wrote is untouched, there is nothing to render, write or swap.

    def _last_build_path(self) -> Path:
        return self.memo.cache.root / LAST_BUILD

    def unchanged_since_last_build(self, inputs: str, snapshot: Snapshot) -> LastBuild | None:
        """The last build's record when its inputs were `inputs` and its files are all still there,
        untouched, and alone in the site. The record then takes `snapshot`, the metadata of the
        inputs now, so that the next build can tell the same from metadata alone (uptodate.py)."""
        if not self.memo.cache.enabled:
            return None
        last = self.memo.cache.load_record(self._last_build_path())
        if not isinstance(last, LastBuild) or last.inputs != inputs or not site_untouched(self.out, last.files):
            return None
        if last.snapshot != snapshot:
            self.memo.cache.save_record(self._last_build_path(), dataclasses.replace(last, snapshot=snapshot))
        return last

    def record_build(self, inputs: str, findings: list[Finding], snapshot: Snapshot, result: BuildResult) -> None:
        """After a successful swap: what this build read and wrote, for `unchanged_since_last_build`
        and `uptodate.up_to_date`."""
        if not self.memo.cache.enabled:
            return
        files: dict[str, tuple[int, int, int]] = {}
        manifest = self.memo.cache.manifest.entries
        for rel in self.outputs:
            if rel in manifest:  # just recorded by `RenderManifest.save`
                known = manifest[rel]
                files[rel] = (known.size, known.mtime_ns, known.inode)
                continue
            try:
                st = os.stat(os.path.join(self.out, rel))
            except OSError:
                return  # something else changed the site already: record nothing
            files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
        record = LastBuild(inputs, list(findings), files, snapshot, list(result.pages), result.kept, result.skipped)
        self.memo.cache.save_record(self._last_build_path(), record)

    # -- the end of a build ----------------------------------------------------------------------

    def finish(self) -> None:
        """After the site is in place: remember what it holds, drop entries nobody used."""
        self.memo.finish(self.out, self.reused)


def _balanced(groups: list[list[str]], n: int) -> list[list[str]]:
    """About `n` tasks of similar size, each made of whole groups, largest first."""
    size = max(1, sum(map(len, groups)) // n)
    tasks: list[list[str]] = []
    current: list[str] = []
    for group in groups:
        current.extend(group)
        if len(current) >= size:
            tasks.append(current)
            current = []
    if current:
        tasks.append(current)
    return sorted(tasks, key=len, reverse=True)
