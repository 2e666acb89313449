"""The memo layer: every stage call of the build goes through `Memo.call(stage, *inputs)`, which
knows the call by a digest of what the stage is and of what it is given, and holds every tier a
result can be found in.

* **The digest.** A stage is a module-level function; its identity is its qualified name and the
  builder's fingerprint (the bytes of every module of the package and the versions of the
  libraries that shape the output: a stage's result depends on the code it calls, not only on its
  own source). Each input is a plain value (hashed by `cache.value_digest`), or an `Input`: a
  file's bytes (`Memo.source`), a file the stage opens itself (`Memo.files`), or the result of
  another call (`Memo.result`), each known by its digest and loaded only when the stage has to
  run. No other module builds a cache digest (tests/test_architecture.py checks that).
* **The tiers**, looked in in turn: this build's memory; a long-lived process's memory (`serve`);
  the store on disk (`cache.py`: an entry on its own or in a pack file). What a stage computes
  goes back into the tiers its `keep` names. Heads (`heads.py`), the small facts other pages need
  of a result, are kept with its digest (`head`, `set_head`).
* **The counters** (`BuildStats`): what was computed and what reused.

A stage reads only what it is given: `call` hands it the values of its declared inputs and
nothing else (in audit mode a closure, which would carry values of its own, is refused), and in audit mode
(`audit()`, which the tests use, or LABML_SITE_AUDIT_STAGES=1) every file a stage opens or lists
is recorded, and a file that is not one of its `Memo.files` inputs fails the call
(`UndeclaredInput`): such a page would go stale without anyone noticing.
"""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field, is_dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from . import cache as store
from .cache import MISS, BuildCache, BuildStats, ObjectStore

__all__ = ["MISS", "Input", "Memo", "UndeclaredInput", "audit", "run"]


@dataclass(frozen=True)
class Input:
    """An input known by its digest, whose value is loaded only when the stage runs."""

    digest: str
    load: Callable[[], Any] = field(compare=False)
    files: tuple[str, ...] = ()  # files the stage may open for it (checked in audit mode)

    def value(self) -> Any:
        return self.load()


class UndeclaredInput(AssertionError):
    """A stage read a file it was not given as an input (a bug in the builder: its results would
    go stale when that file changes)."""


# ---------------------------------------------------------------------------------------------
# Running a stage (here, or in a worker process), with its reads recorded in audit mode

_AUDIT = {"on": os.environ.get("LABML_SITE_AUDIT_STAGES") == "1", "hooked": False}
_READS: list[list[str]] = []  # the files opened by each stage call running now (innermost last)
_IGNORED: tuple[str, ...] = ()  # the interpreter's and the libraries' own files


def _hook(event: str, args: tuple) -> None:
    if _READS and event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _READS[-1].append(os.path.abspath(os.fsdecode(args[0])))


def _ignored(path: str) -> bool:
    return path.endswith((".py", ".pyc", ".so")) or path.startswith(_IGNORED) or path.startswith(("/proc/", "/dev/"))


@contextlib.contextmanager
def audit() -> Iterator[None]:
    """Check, while it lasts, that every stage opens only the files it declares."""
    previous = _AUDIT["on"]
    _AUDIT["on"] = True
    try:
        yield
    finally:
        _AUDIT["on"] = previous


def _start_audit() -> None:
    global _IGNORED
    if not _AUDIT["hooked"]:  # (an audit hook cannot be removed: one, which records only while asked)
        roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *(p for p in sys.path if "site-packages" in p)}
        # The system's time zone data, which a library may read when it is first imported
        # (Babel's, on the first call that needs its dates module): the system's, not an input.
        import zoneinfo

        roots.update(zoneinfo.TZPATH)
        _IGNORED = tuple(os.path.join(os.path.abspath(r), "") for r in roots if r) + ("/etc/localtime",)
        sys.addaudithook(_hook)
        _AUDIT["hooked"] = True


def run(stage: Callable[..., Any], *values: Any, files: Iterable[str] = ()) -> Any:
    """`stage(*values)`: the one place a stage runs. In audit mode, what it opened beyond `files`
    (and the interpreter's own files) fails the call."""
    if not _AUDIT["on"]:
        return stage(*values)
    _start_audit()
    _READS.append([])
    try:
        result = stage(*values)
    finally:
        opened = _READS.pop()
    allowed = {os.path.abspath(os.fspath(f)) for f in files}
    wrong = sorted({p for p in opened if p not in allowed and not _ignored(p)})
    if wrong:
        raise UndeclaredInput(f"{_identity(stage)} read {', '.join(wrong)}, which is not among its declared inputs")
    return result


def files_digest(paths: tuple[str, ...], digests: store.FileDigests) -> str:
    """The digest of a files input: the files' names and bytes."""
    return "f" + store.digest(*paths, digests.digest_of(paths))


def unchanged(paths: tuple[str, ...], digest: str) -> bool:
    """Whether the files still hold what `digest` was made from (read again, in any process)."""
    return files_digest(paths, store.FileDigests()) == digest


_IDENTITIES: dict[Callable, str] = {}


def _identity(stage: Callable[..., Any]) -> str:
    found = _IDENTITIES.get(stage)
    if found is None:
        name = f"{getattr(stage, '__module__', '?')}.{getattr(stage, '__qualname__', '?')}"
        if not callable(stage) or (_AUDIT["on"] and ("<" in name or getattr(stage, "__closure__", None))):
            # A lambda or a closure carries values its inputs do not show. (Checked in audit
            # mode, where the tests run real builds: a test may stand a closure in for a stage.)
            raise TypeError(f"{name}: a stage must be a module-level function or class")
        found = name
        if not _AUDIT["on"]:
            _IDENTITIES[stage] = found
    return found


def _part(value: Any) -> str | bytes:
    """One input's share of a digest, tagged by kind so that different inputs never hash alike."""
    if type(value) is str:  # (the commonest first: every call has several)
        return "s" + value
    if isinstance(value, Input):
        return "d" + value.digest
    if isinstance(value, str):
        return "s" + value
    if isinstance(value, bytes):
        return b"b" + value
    if value is None or type(value) in (bool, int):  # (a flag on every call: not worth the JSON encoder)
        return "n" + repr(value)
    return "v" + store.value_digest(value)


def _value(value: Any) -> Any:
    return value.value() if isinstance(value, Input) else value


# ---------------------------------------------------------------------------------------------
# One build's memo


# (stage, fingerprint) → its digest function, the two hashed once (every call's digest starts so)
_HASHERS: dict[tuple[str, str], Callable[..., str]] = {}
_LONG_LIVED: dict[Path, dict[str, Any]] = {}  # cache folder → results kept in memory only, for `serve`
_DESCRIBED: dict[Path, dict[Any, str]] = {}  # cache folder → the last build's outputs → render digests
_LAST_VALUES: dict[Path, dict[str, tuple[Any, str]]] = {}  # cache folder → name → (the last build's value, its digest)


@dataclass
class Memo:
    """One build's view of every tier, and its counters."""

    cache: BuildCache  # the storage tier: entries, packs, heads, the render manifest, file digests
    stats: BuildStats = field(default_factory=BuildStats)
    memory: dict[str, Any] = field(default_factory=dict)  # digest → result, for this build
    kept: dict[str, Any] | None = None  # digest → memory-only result, kept between `serve` builds
    touched: set[str] = field(default_factory=set)
    # `serve`: (the last build's outputs → their render digests, this build's so far)
    described: tuple[dict[Any, str], dict[Any, str]] | None = None

    @classmethod
    def open(cls, out: Path, enabled: bool = True, keep_in_memory: bool = False) -> "Memo":
        cache = BuildCache.open(Path(out).resolve(), enabled=enabled, keep_in_memory=keep_in_memory)
        long_lived = keep_in_memory and cache.enabled
        kept = _LONG_LIVED.setdefault(cache.root, {}) if long_lived else None
        described = (_DESCRIBED.get(cache.root, {}), {}) if long_lived else None
        return cls(cache, kept=kept, described=described)

    # -- digests ---------------------------------------------------------------------------------

    @property
    def fingerprint(self) -> str:
        """The builder itself (version, own files, libraries): part of every digest."""
        return self.cache.fingerprint

    def digest(self, stage: Callable[..., Any], *inputs: Any) -> str:
        """The digest of `stage(*inputs)`: the stage's identity and its inputs' digests."""
        identity, fingerprint = _identity(stage), self.fingerprint
        hasher = _HASHERS.get((identity, fingerprint))
        if hasher is None:
            hasher = _HASHERS[(identity, fingerprint)] = store.digest_after(identity, fingerprint)
        return hasher(*map(_part, inputs))

    def result(self, stage: Callable[..., Any], *inputs: Any, **options: Any) -> Input:
        """The result of `stage(*inputs)` as an input of another call, computed when it is needed."""
        return Input(self.digest(stage, *inputs), lambda: self.call(stage, *inputs, **options))

    def value(self, value: Any, last: str | None = None) -> Input:
        """A value given by its digest (a large one hashed once for many calls). `last`: a name
        under which a long-lived process (`serve`) keeps the value of the build before, whose
        digest serves again when the value is equal (comparing costs less than hashing, as for
        `output_digest`). Only for a value whose users look its dicts up, never walk them in
        order: `==` ignores a dict's order, which the digest does not."""
        if last is None or self.kept is None:
            return Input(store.value_digest(value), lambda: value)
        remembered = _LAST_VALUES.setdefault(self.cache.root, {})
        known = remembered.get(last)
        if known is None or known[0] != value:
            known = remembered[last] = (value, store.value_digest(value))
        return Input(known[1], lambda: value)

    def source(self, path: Path, read: Callable[[], bytes], digest: str | None = None) -> Input:
        """A file's bytes (read by `read`, which must check that they are still those of
        `digest`): the stage is given the bytes, and opens nothing."""
        return Input("f" + (digest or self.file_digest(path)), read)

    def files(self, paths: Iterable[Path], value: Any) -> Input:
        """Files the stage opens itself (their names are in `value`): their names and bytes are
        the input."""
        paths = tuple(os.fspath(p) for p in paths)
        return Input(files_digest(paths, self.cache.files), lambda: value, paths)

    def file_digest(self, path: Path) -> str:
        """The digest of a file's bytes (remembered with its size, times and inode)."""
        return self.cache.files.digest(path)

    def files_digest(self, paths: Iterable[Path]) -> str:
        return self.cache.files.digest_of(paths)

    @staticmethod
    def still(value: Input) -> bool:
        """Whether a files input still has the bytes it was known by (a file edited while the
        stage read it gives a result that must not be kept)."""
        return not value.files or unchanged(value.files, value.digest)

    def output_digest(self, kind: Any) -> str:
        """The render digest of an output (a frozen dataclass of everything it is made of). A
        long-lived process (`serve`) knows the last build's outputs by value: most of a rebuild's
        outputs equal those of the build before, and comparing them costs less than hashing."""
        if not is_dataclass(kind):
            raise TypeError("an output is described by a dataclass of its inputs")
        if self.described is not None:
            try:
                found = self.described[0].get(kind)
            except TypeError:  # (a field that cannot be hashed: a list or a dict)
                return self._output_digest(kind)
            if found is None:
                found = self._output_digest(kind)
            self.described[1][kind] = found
            return found
        return self._output_digest(kind)

    def _output_digest(self, kind: Any) -> str:
        identity, fingerprint = _identity(type(kind)), self.fingerprint
        hasher = _HASHERS.get(("output", identity, fingerprint))
        if hasher is None:
            hasher = _HASHERS[("output", identity, fingerprint)] = store.digest_after("output", identity, fingerprint)
        return hasher(store.value_text(kind))

    def build_digest(self, *parts: Any) -> str:
        """One digest of every input of the build (for the nothing-changed record)."""
        return store.digest("build", self.fingerprint, *map(_part, parts))

    # -- calls -----------------------------------------------------------------------------------

    def call(
        self,
        stage: Callable[..., Any],
        *inputs: Any,
        keep: str = "disk",
        valid: Callable[[Any], bool] | type | None = None,
        counter: str = "",
        head: Callable[[Any], Any] | None = None,
        stored: Callable[[Any], Any] | None = None,
        remember: Callable[[Any], bool] | None = None,
    ) -> Any:
        """`stage(*inputs)`, found in a tier or computed (and kept in the tiers `keep` names:
        "disk", "memory" for this build and `serve`'s, "heads" for a small result kept with the
        heads). `valid`: what a found result must be (else it is computed again); `counter`: the
        stat to count a computation in; `head`: the head to record of a computed result;
        `stored`: the form the store keeps; `remember`: whether a computed result may be kept."""
        digest = self.digest(stage, *inputs)
        check = (lambda v: isinstance(v, valid)) if isinstance(valid, type) else valid
        found = self.find(digest, keep)
        if found is not MISS and (check is None or check(found)):
            return found
        files = [f for i in inputs if isinstance(i, Input) for f in i.files]
        value = run(stage, *map(_value, inputs), files=files)
        if counter:
            setattr(self.stats, counter, getattr(self.stats, counter) + 1)
        if (remember is None or remember(value)) and all(self.still(i) for i in inputs if isinstance(i, Input)):
            self.keep(digest, value, keep, stored)
            if head is not None:
                self.set_head(digest, head(value))
        else:
            self.memory[digest] = value  # (for this build only)
        return value

    def find(self, digest: str, keep: str = "disk") -> Any:
        """A result in the tiers `keep` names, or MISS."""
        found = self.memory.get(digest, MISS)
        if found is not MISS:
            return found
        if keep == "heads":
            return self.head(digest)
        if keep == "memory":
            found = self.kept.get(digest, MISS) if self.kept is not None else MISS
            if found is not MISS:
                self.touched.add(digest)
        else:
            found = self.cache.get(digest)
        if found is not MISS:
            self.memory[digest] = found
        return found

    def keep(self, digest: str, value: Any, keep: str = "disk", stored: Callable[[Any], Any] | None = None) -> None:
        """Put a result in this build's memory and the tier `keep` names."""
        self.memory[digest] = value
        if keep == "heads":
            self.set_head(digest, value)
        elif keep == "memory":
            if self.kept is not None:
                self.kept[digest] = value
                self.touched.add(digest)
        else:
            self.cache.put(digest, stored(value) if stored else value)

    @contextlib.contextmanager
    def forgetting(self) -> Iterator[None]:
        """What is found or computed meanwhile stays in this build's memory only until the end:
        a render worker goes through whole groups of outputs (a page's, a folder's), none of
        which needs another group's results, and would otherwise hold every page it loaded."""
        known = set(self.memory)
        try:
            yield
        finally:
            for digest in [d for d in self.memory if d not in known]:
                del self.memory[digest]

    def took(self, digest: str, value: Any, in_store: bool = True) -> None:
        """A result a worker process computed (and, `in_store`, stored): kept in memory when
        it came back, and kept in the store (a long-lived process has it in memory)."""
        if value is not None:
            self.memory[digest] = value
        if in_store:
            self.cache.remember(digest, value)

    # -- heads -----------------------------------------------------------------------------------

    def head(self, digest: str) -> Any:
        """The head recorded with `digest` (MISS when none): what other pages need of a result."""
        return self.cache.head(digest)

    def set_head(self, digest: str, head: Any) -> None:
        self.cache.set_head(digest, head)

    def record(self, name: str) -> Any:
        """A fact kept by name from one build to the next (a file's last good analysis), or MISS."""
        return self.cache.head("record:" + name)

    def set_record(self, name: str, value: Any) -> None:
        self.cache.set_head("record:" + name, value)

    # -- the store, as worker processes share it --------------------------------------------------

    @property
    def object_store(self) -> ObjectStore | None:
        """The store worker processes write their entries into (None when caching is off)."""
        return self.cache.store if self.cache.enabled else None

    def packed(self, pack: str, digests: tuple[str, ...]) -> None:
        """Note that a worker stored these results in the pack `pack`."""
        self.cache.packed(pack, digests)

    def pack_of(self, digest: str) -> str:
        return self.cache.pack_of(digest)

    def has(self, digest: str) -> bool:
        return digest in self.memory or self.cache.has(digest)

    # -- the end of a build ----------------------------------------------------------------------

    def save_heads(self, prune: bool = True) -> None:
        self.cache.save_heads(prune=prune)

    def finish(self, out: Path, reused: set[str]) -> None:
        """After the site is in place: remember what it holds, drop what nobody used."""
        self.cache.finish(out, reused)
        if self.kept is not None:
            for digest in [d for d in self.kept if d not in self.touched]:
                del self.kept[digest]
        if self.described is not None:
            _DESCRIBED[self.cache.root] = self.described[1]  # (only this build's: bounded by the site)
