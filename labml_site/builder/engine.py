"""The engine: memoises the pipeline's stage calls by the digest of their inputs, keeps the small
summaries (heads) other pages need, and produces the site's outputs, in worker processes when
there are many.

The pipeline (`pipeline.py`) is pure functions over plain data; `prepare.py` and `site.py` ask
this module for what was computed before and hand it what they compute. Nothing here knows what
a page, a translation or Markdown is: a call is known by its key, `Engine.key(stage, inputs…)`,
and an output by its path and key.

One build's engine holds:

* the content-hash store (`cache.BuildCache`: entries, heads, the previous site's manifest);
* what the build computed and reused (`cache.BuildStats`, which tests assert on);
* the outputs: out path → bytes, a file to copy, or a `Deferred` render, and which of them are
  the previous site's files kept as they are.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..findings import Finding
from ..read.safe_files import read_regular
from . import cache as store
from .cache import MISS, BuildCache, BuildStats, ObjectStore
from .outputs import utf8, write_outputs
from .workers import can_fork, fork_map

__all__ = ["MISS", "Deferred", "Engine"]


@dataclass
class Deferred:
    """An output to produce once every output is known, so that many can be produced at once in
    worker processes (`Engine.produce`)."""

    produce: Callable[[], str | bytes]
    group: str  # one process produces a group's outputs (a page's languages share its data)


PARALLEL_MIN_OUTPUTS = 200  # fewer renders than this are quicker in the main process
_COUNTERS = ("analysed", "localized", "linked")  # what producing an output may have to compute


@dataclass
class _LastBuild:
    inputs: str  # the digest of every input of that build
    findings: list[Finding]  # its report
    files: dict[str, tuple[int, int, int]]  # every file it wrote: out rel → (size, mtime_ns, inode)


@dataclass
class Engine:
    cache: BuildCache
    out: Path  # the site folder (resolved)
    stats: BuildStats = field(default_factory=BuildStats)
    outputs: dict[str, Any] = field(default_factory=dict)  # out path → bytes, a file to copy, or Deferred
    reused: set[str] = field(default_factory=set)  # outputs that are the previous site's files
    defer: bool = False  # renders wait for `produce` (so they can run in workers)

    @classmethod
    def open(cls, out: Path, enabled: bool = True, keep_in_memory: bool = False) -> "Engine":
        out = Path(out).resolve()
        return cls(BuildCache.open(out, enabled=enabled, keep_in_memory=keep_in_memory), out)

    # -- keys ----------------------------------------------------------------------------------

    @staticmethod
    def key(stage: str, *inputs: Any) -> str:
        """The key of a stage call: its name and its inputs (strings and bytes as they are, digests
        of other values), so equal inputs give equal keys in every process and build."""
        return store.digest(stage, *(i if isinstance(i, (str, bytes)) else store.value_digest(i) for i in inputs))

    @property
    def fingerprint(self) -> str:
        """The builder itself (version, own files, libraries): part of every key that needs it."""
        return self.cache.fingerprint

    @property
    def compiled_templates(self) -> Path | None:
        """Where the theme keeps compiled templates between builds (None when caching is off)."""
        return self.cache.root / "templates" if self.cache.enabled else None

    def file_digest(self, path: Path) -> str:
        """The digest of a file's bytes (remembered with its size, times and inode)."""
        return self.cache.files.digest(path)

    def files_digest(self, paths: list[Path]) -> str:
        """One digest for several files, a missing one counting as a distinct value."""
        return self.cache.files.digest_of(paths)

    # -- summaries and values ------------------------------------------------------------------

    def summary(self, key: str) -> Any:
        """The head recorded under `key` (MISS when none): what other pages need of a call's result."""
        return self.cache.head(key)

    def record_summary(self, key: str, head: Any) -> None:
        self.cache.set_head(key, head)

    def summarised(self, key: str, compute: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
        """A small result kept with the heads (no entry of its own), computed when missing."""
        found = self.summary(key)
        if not valid(found):
            found = compute()
            self.record_summary(key, found)
        return found

    def load(self, key: str) -> Any:
        """The entry stored under `key` (on its own or in a pack), or MISS."""
        return self.cache.get(key)

    def save(self, key: str, value: Any) -> None:
        self.cache.put(key, value)

    def took(self, key: str, value: Any) -> None:
        """Note an entry a worker process computed and stored (so it is kept, and a long-lived
        process has it in memory)."""
        self.cache.remember(key, value)

    def packed(self, pack: str, keys: tuple[str, ...]) -> None:
        """Note that a worker stored these keys' entries in the pack `pack`."""
        self.cache.packed(pack, keys)

    def has(self, key: str) -> bool:
        return self.cache.has(key)

    @property
    def object_store(self) -> ObjectStore | None:
        """The store worker processes write their entries into (None when caching is off)."""
        return self.cache.store if self.cache.enabled else None

    def pack_of(self, key: str) -> str:
        return self.cache.pack_of(key)

    def memo(self, kind: str) -> dict[str, Any]:
        """Derived objects a long-lived process (`serve`) keeps between builds, by key."""
        return self.cache.memo(kind)

    # -- outputs -------------------------------------------------------------------------------

    def output(self, out_rel: str, key: str | None, produce: Callable[[], str | bytes], copy: bool = False, group: str = "") -> None:
        """Put `out_rel` in the site: the previous site's file when it was produced from the same
        `key` (a digest of every input of the output) by the same builder and is untouched since,
        else `produce()` (deferred while the engine defers)."""
        self.outputs[out_rel] = self._output(out_rel, key, produce, copy, group)

    def _output(self, out_rel: str, key: str | None, produce: Callable[[], str | bytes], copy: bool, group: str) -> Any:
        cache = self.cache
        made, reused = ("copied", "copy_reused") if copy else ("rendered", "render_reused")
        if cache.enabled and key is not None:
            key = store.digest(key, cache.fingerprint)
            cache.manifest.record(out_rel, key)
            previous = cache.manifest.reusable(self.out, out_rel, key)
            if previous is not None:
                setattr(self.stats, reused, getattr(self.stats, reused) + 1)
                self.reused.add(out_rel)
                return previous
        setattr(self.stats, made, getattr(self.stats, made) + 1)
        if self.defer:
            return Deferred(produce, group or out_rel)
        return utf8(produce())

    def copies_not_links(self) -> None:
        """Files published as they are (sources for "View source", figures, the theme's static
        files) become copies in the site, not hard links to the originals: an editor that saves in
        place would otherwise change the published site before, or without, a rebuild (and a failed
        build must leave the previous site as it was). An unchanged one is the previous site's copy."""
        for rel, content in list(self.outputs.items()):
            if isinstance(content, Path) and rel not in self.reused:
                key = store.digest("copy", self.file_digest(content))
                self.output(rel, key, lambda path=content: read_regular(path, store.INPUT_LIMIT), copy=True)

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
            self.cache.store.start_batch()  # what the task caches (its pages' links) goes in one file
            write_outputs({rel: utf8(self.outputs[rel].produce()) for rel in rels}, into)
            pack = self.cache.store.end_batch()
            after = dataclasses.asdict(self.stats)
            return {name: after[name] - before[name] for name in _COUNTERS}, pack

        for counts, (pack, packed) in fork_map(produce_into, tasks, workers, meanwhile):
            self.cache.packed(pack, packed)
            for name, n in counts.items():
                setattr(self.stats, name, getattr(self.stats, name) + n)
        self.stats.workers = max(self.stats.workers, workers)
        return set(deferred)

    # -- nothing changed -------------------------------------------------------------------------
    # When every input of the build is what the last successful build used and the site that
    # build wrote is untouched, there is nothing to render, write or swap.

    def _last_build_path(self) -> Path:
        return self.cache.root / "last-build.pkl"

    def unchanged_since_last_build(self, inputs: str) -> "_LastBuild | None":
        """The last build's record when its inputs were `inputs` and its files are all still there,
        untouched, and alone in the site."""
        if not self.cache.enabled:
            return None
        last = self.cache.load_record(self._last_build_path())
        if not isinstance(last, _LastBuild) or last.inputs != inputs:
            return None
        count = 0
        for folder, _dirs, names in os.walk(self.out):
            for name in names:
                path = os.path.join(folder, name)
                known = last.files.get(os.path.relpath(path, self.out).replace(os.sep, "/"))
                try:
                    st = os.stat(path)
                except OSError:
                    return None
                if known is None or known != (st.st_size, st.st_mtime_ns, st.st_ino):
                    return None
                count += 1
        return last if count == len(last.files) else None

    def record_build(self, inputs: str, findings: list[Finding]) -> None:
        """After a successful swap: what this build read and wrote, for `unchanged_since_last_build`."""
        if not self.cache.enabled:
            return
        files: dict[str, tuple[int, int, int]] = {}
        manifest = self.cache.manifest.entries
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
        self.cache.save_record(self._last_build_path(), _LastBuild(inputs, list(findings), files))

    # -- the end of a build ----------------------------------------------------------------------

    def save_summaries(self, prune: bool = True) -> None:
        self.cache.save_heads(prune=prune)

    def finish(self) -> None:
        """After the site is in place: remember what it holds, drop entries nobody used."""
        self.cache.finish(self.out, self.reused)


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
