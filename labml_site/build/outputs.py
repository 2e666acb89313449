"""The build's outputs: reusing unchanged files of the previous site, producing the others (in
forked workers when there are many), noticing that nothing changed at all, and writing: changed
files in place when most of the site is unchanged, else a new site in a temporary folder swapped in.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from . import cache as build_cache
from .workers import can_fork, fork_map
from ..findings import Finding, Report
from ..render.i18n import load_ui

if TYPE_CHECKING:
    from .site import _Site
    from .prepare import Prepared


@dataclass
class Deferred:
    """An output to produce once every output is known, so that many can be produced at once in
    worker processes (`produce_outputs`)."""

    produce: Callable[[], str | bytes]
    group: str  # one process produces a group's outputs (a page's languages share its data)


def cached_output(
    site: "_Site", out_rel: str, key: str | None, produce: Callable[[], str | bytes], copy: bool = False, group: str = ""
) -> str | bytes | Path | Deferred:
    """`produce()` (deferred while the site defers renders), or the previous site's file for
    `out_rel` when it was produced from the same `key` (a digest of every input of the output)
    by the same builder, and is untouched since."""
    cache = site.cache
    made, reused = ("copied", "copy_reused") if copy else ("rendered", "render_reused")
    if cache.enabled and key is not None:
        key = build_cache.digest(key, cache.fingerprint)
        cache.manifest.record(out_rel, key)
        previous = cache.manifest.reusable(site.out, out_rel, key)
        if previous is not None:
            setattr(site.stats, reused, getattr(site.stats, reused) + 1)
            site.reused.add(out_rel)
            return previous
    setattr(site.stats, made, getattr(site.stats, made) + 1)
    if site.defer:
        return Deferred(produce, group or out_rel)
    return _utf8(produce())


PARALLEL_MIN_OUTPUTS = 200  # fewer renders than this are quicker in the main process


def produce_outputs(site: "_Site", into: Path | None = None, jobs: int = 0, meanwhile: Callable[[], object] | None = None) -> set[str]:
    """Produce every deferred output. With `into` (the new site's folder) and enough of them,
    forked workers produce and write them there, each taking whole groups; returns the outputs
    written so. Otherwise they are produced here and held in `site.outputs`. `meanwhile` runs
    once, while the workers work if there are any."""
    deferred = [rel for rel, content in site.outputs.items() if isinstance(content, Deferred)]
    workers = min(jobs or os.cpu_count() or 1, 8)
    if into is None or workers <= 1 or len(deferred) < PARALLEL_MIN_OUTPUTS or not can_fork():
        for rel in deferred:
            site.outputs[rel] = _utf8(site.outputs[rel].produce())
        if meanwhile is not None:
            meanwhile()
        return set()
    groups: dict[str, list[str]] = {}
    for rel in deferred:
        groups.setdefault(site.outputs[rel].group, []).append(rel)
    # Pages whose analyses and texts share a cache pack go to the same task, one after the other,
    # so that a worker reads each pack once (a page's group is its source's rel).
    keys = site.prepared.keys
    order = sorted(groups, key=lambda group: site.cache.pack_of(keys[group]) if group in keys else "")
    tasks = _balanced([groups[group] for group in order], workers * 6)
    site.theme.compile_all()  # once, shared by the workers

    def produce_into(rels: list[str]) -> tuple[dict[str, int], tuple[str, tuple[str, ...]]]:
        before = dataclasses.asdict(site.stats)
        site.cache.store.start_batch()  # what the task caches (its pages' links) goes in one file
        write_outputs({rel: _utf8(site.outputs[rel].produce()) for rel in rels}, into)
        pack = site.cache.store.end_batch()
        after = dataclasses.asdict(site.stats)
        return {name: after[name] - before[name] for name in _COUNTERS}, pack

    for counts, (pack, packed) in fork_map(produce_into, tasks, workers, meanwhile):
        site.cache.packed(pack, packed)
        for name, n in counts.items():
            setattr(site.stats, name, getattr(site.stats, name) + n)
    site.stats.workers = max(site.stats.workers, workers)
    return set(deferred)


_COUNTERS = ("analysed", "localized", "linked")  # what producing an output may have to compute


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


def _utf8(content: str | bytes) -> bytes:
    """Held as UTF-8 until written: a page with one non-Latin-1 character is otherwise held as 2
    or 4 bytes per character, and a four-language site holds a thousand pages at once."""
    return content.encode("utf-8") if isinstance(content, str) else content


def copies_not_links(site: "_Site") -> None:
    """Files published as they are (sources for "View source", figures, the theme's static
    files) become copies in the site, not hard links to the originals: an editor that saves in
    place would otherwise change the published site before, or without, a rebuild (and a failed
    build must leave the previous site as it was). An unchanged one is the previous site's copy."""
    for rel, content in list(site.outputs.items()):
        if isinstance(content, Path) and rel not in site.reused:
            key = build_cache.digest("copy", site.cache.files.digest(content))
            site.outputs[rel] = cached_output(site, rel, key, content.read_bytes, copy=True)



# Nothing changed: when every input of the build is what the last successful build used and the
# site that build wrote is untouched, there is nothing to render, write or swap.


@dataclass
class _LastBuild:
    inputs: str  # inputs_digest of that build
    findings: list[Finding]  # its report
    files: dict[str, tuple[int, int, int]]  # every file it wrote: out rel → (size, mtime_ns, inode)


def inputs_digest(site: _Site, prepared: Prepared) -> str:
    """Every input of the build: the builder, the theme, the configuration, the UI catalogs, and
    each source, translation (through the keys prepare_pages made from their bytes) and asset."""
    config = site.config
    parts: list[str | bytes] = [site.cache.fingerprint if site.cache else "", site.theme_key, build_cache.value_digest(config)]
    parts += [build_cache.value_digest(load_ui(lang)) for lang in config.langs]
    for file in site.files.pages:
        parts.append(prepared.keys[file.rel])
        parts.extend(prepared.text_keys.get(file.rel, {}).get(lang, "-") for lang in config.langs)
    for rel, asset in sorted(site.files.assets.items()):
        parts += [rel, site.cache.files.digest(asset.path)]
    return build_cache.digest(*parts)


def _last_build_path(site: _Site) -> Path:
    return site.cache.root / "last-build.pkl"


def unchanged_since_last_build(site: _Site, inputs: str) -> _LastBuild | None:
    """The last build's record when its inputs were `inputs` and its files are all still there,
    untouched, and alone in the site."""
    if site.cache is None or not site.cache.enabled:
        return None
    last = site.cache.load_record(_last_build_path(site))
    if not isinstance(last, _LastBuild) or last.inputs != inputs:
        return None
    count = 0
    for folder, _dirs, names in os.walk(site.out):
        for name in names:
            path = os.path.join(folder, name)
            known = last.files.get(os.path.relpath(path, site.out).replace(os.sep, "/"))
            try:
                st = os.stat(path)
            except OSError:
                return None
            if known is None or known != (st.st_size, st.st_mtime_ns, st.st_ino):
                return None
            count += 1
    return last if count == len(last.files) else None


def record_build(site: _Site, inputs: str, report: Report) -> None:
    """After a successful swap: what this build read and wrote, for `unchanged_since_last_build`."""
    if site.cache is None or not site.cache.enabled:
        return
    files: dict[str, tuple[int, int, int]] = {}
    manifest = site.cache.manifest.entries
    for rel in site.outputs:
        if rel in manifest:  # just recorded by `RenderManifest.save`
            known = manifest[rel]
            files[rel] = (known.size, known.mtime_ns, known.inode)
            continue
        try:
            st = os.stat(os.path.join(site.out, rel))
        except OSError:
            return  # something else changed the site already: record nothing
        files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    site.cache.save_record(_last_build_path(site), _LastBuild(inputs, list(report.findings), files))


# Writing


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
        data = content.read_bytes() if isinstance(content, Path) else _utf8(content)
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
