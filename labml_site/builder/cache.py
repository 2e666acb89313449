"""A content-hash cache of build work, so a rebuild only redoes what its inputs changed.

It lives in the user's cache folder, `$XDG_CACHE_HOME/labml-site/<out name>-<digest of the out
path>/` (`~/.cache/labml-site/…`; `LABML_SITE_CACHE_DIR` sets another folder), never in the work
tree: entries are pickles and compiled templates, which run code when loaded, so they must come
from nowhere a commit or a pull request can write. It is always safe to delete: a missing,
unreadable or corrupted entry is a miss, and a miss means "compute it again".

Three kinds of things are cached:

* **Objects** (`ObjectStore`): a source file's analysis (`PageData`), its code after linking, and
  its text in each language, each under a key that hashes *every* input it was computed from: the
  file's bytes, the translation file's bytes (and its fuzzy sidecar), the UI marker text, and the
  builder's fingerprint (version, the builder's own source files, the versions of the libraries
  that shape the output). Nothing is ever looked up by name or date, so a stale entry cannot be
  found: a changed input is a different key. A file's analysis and texts share one pack file.
* **Heads** (`DictFile`, heads.py): the small facts about each object that other pages need,
  under the object's key, all in one record; plus file digests and which pack holds which key.
* **Rendered outputs** (`RenderManifest`): for each file written by the previous build, the digest
  of what it was made from (its inputs, the language's constants, the template and the theme).
  When that digest is unchanged and the previous site's file is the very file that build wrote
  (same inode, size and mtime), the file is kept instead of being rendered and written again.

Entries are pickles with a checksum in front. Pickles run code when loaded: the cache folder is
the user's own (created private to them), written only by the builder.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import pickle
import stat
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Iterable

from .. import __version__
from ..read.safe_files import UnsafeFile, read_regular

CACHE_FORMAT = "1"  # bump when the layout of entries changes
_MAGIC = b"LSC2"
# Libraries whose version changes what a page looks like (highlighting, math, templates, sanitizing,
# repairing a translation's HTML). distribution → its top-level module (uptodate.py finds where it
# is installed without importing it)
_OUTPUT_LIBRARIES = {"pygments": "pygments", "math-core": "math_core", "jinja2": "jinja2", "nh3": "nh3",
                     "markdown": "markdown", "babel": "babel", "nbformat": "nbformat", "pyyaml": "yaml",
                     "html5lib": "html5lib"}
OUTPUT_MODULES = tuple(_OUTPUT_LIBRARIES.values())


class _Miss:
    def __repr__(self) -> str:
        return "MISS"


MISS: Any = _Miss()


def cache_home() -> Path:
    """Where every site's cache lives: outside any work tree, owned by the user (`BuildCache.open`
    checks that it is: `cache_folder_problem`)."""
    explicit = os.environ.get("LABML_SITE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base).resolve() / "labml-site"


def cache_dir_for(out: Path) -> Path:
    """The cache folder of the site at `out`: one per output folder, named so a person can tell
    which (`site-3f2a…` for `/home/me/project/site`)."""
    out = Path(out).resolve()
    return cache_home() / f"{out.name or 'root'}-{digest(os.fsencode(out))[:16]}"


def cache_folder_problem(folder: Path) -> str | None:
    """Why the cache at `folder` must not be used (None when it may), checked as ssh checks
    ~/.ssh before it trusts what is there: entries are pickles, which run code when loaded, so
    the folder must be a folder (not a link) owned by this user and writable by no one else, and
    every folder above it owned by this user or root and writable by no one else unless it is
    sticky (/tmp), so that no one else can put a file there or swap a folder for their own."""
    if not hasattr(os, "geteuid"):
        return None  # (Windows: the user's own profile folder; no such modes to check)
    uid = os.geteuid()
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None  # (created, private, when first written)
    except OSError as e:
        return f"{folder} cannot be examined ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder (a link or a file)"
    if st.st_uid != uid:
        return f"{folder} is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{folder} can be written by {'others' if st.st_mode & 0o002 else 'its group'} (mode {stat.S_IMODE(st.st_mode):o})"
    for parent in Path(folder).parents:
        try:
            pst = os.stat(parent)
        except OSError as e:
            return f"{parent} cannot be examined ({e.strerror or e})"
        if pst.st_uid not in (uid, 0):
            return f"{parent}, a folder above it, is owned by another user (uid {pst.st_uid})"
        if pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX:
            return f"{parent}, a folder above it, can be written by others (mode {stat.S_IMODE(pst.st_mode):o})"
    return None


def digest(*parts: str | bytes) -> str:
    """A short, collision-safe hex digest of several parts (each length-prefixed, so
    ("ab", "c") and ("a", "bc") differ)."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def digest_after(*prefix: str | bytes) -> Callable[..., str]:
    """`digest(*prefix, *parts)` as a function of `parts`, the prefix hashed once (a stage's
    identity and the builder's fingerprint start every digest of its calls)."""
    start = hashlib.blake2b(digest_size=20)
    for part in prefix:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        start.update(len(data).to_bytes(8, "little"))
        start.update(data)

    def rest(*parts: str | bytes) -> str:
        h = start.copy()
        for part in parts:
            data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        return h.hexdigest()

    return rest


def read_bytes(path: Path) -> bytes | None:
    """A file's bytes, or None when it does not exist (a missing translation is an input too)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


RACY_NS = 2_000_000_000  # files changed less than this long ago are not trusted by their metadata
INPUT_LIMIT = 64 * 1024 * 1024  # no input file is hashed past this (each reader has its own, smaller limit)


class FileDigests:
    """path → digest of the file's bytes, remembered (in `memory`, the cache's heads) with the
    file's size, times and inode so an unchanged file is not read again on the next build (the
    check make, ninja and git rely on; the change time is included, and no tool sets it back)."""

    MISSING = "missing"

    def __init__(self, memory: "BuildCache | None" = None) -> None:
        self.memory = memory
        self.known: dict[str, tuple[int, int, int, int]] = {}

    def trust(self, known: dict[str, tuple[int, int, int, int]]) -> None:
        """Take these regular files' (size, mtime_ns, ctime_ns, inode) as they are, without asking
        the disk: the build's snapshot (`Snapshot.file_stats`), which is what the build records
        it read, so a file changed since is seen by the next build. Paths not in it are asked."""
        self.known = known

    def digest(self, path: Path | str) -> str:
        name = os.fspath(path)
        signature = self.known.get(name)
        if signature is None:
            try:
                st = os.lstat(name)
            except (FileNotFoundError, NotADirectoryError):
                return self.MISSING
            if not stat.S_ISREG(st.st_mode):
                # Never opened (a FIFO would block, /dev/zero never end): a value of its own, and the
                # stage that reads the file reports what it is.
                return f"refused:{stat.S_IFMT(st.st_mode)}"
            signature = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        key = "file:" + name
        known = self.memory.head(key) if self.memory is not None else MISS
        if known is MISS or known[0] != signature:
            try:
                data = read_regular(name, INPUT_LIMIT)
            except FileNotFoundError:
                return self.MISSING
            except UnsafeFile as e:  # swapped for something else, or too large
                return f"refused:{e.code}:{signature[0]}"
            known = (signature, digest(data))
            # File times are coarse (a clock tick): a file written moments ago could be written
            # again within the same tick, size unchanged, and look untouched. Such a file is
            # read again next time (git's rule for "racy" entries).
            if self.memory is not None and time.time_ns() - max(signature[1], signature[2]) > RACY_NS:
                self.memory.set_head(key, known)
        return known[1]

    def keep(self, paths: Iterable[str]) -> None:
        """Keep remembering these files' digests, though this build did not ask for them (it
        took what they gave from a record: `early_cutoff.py`)."""
        if self.memory is not None:
            for path in paths:
                self.memory.head("file:" + path)

    @staticmethod
    def of_bytes(data: bytes) -> str:
        """The digest `digest` gives a file holding `data`."""
        return digest(data)

    def digest_of(self, paths: Iterable[Path]) -> str:
        """One digest for several files, a missing one counting as a distinct value."""
        return digest(*(self.digest(path) for path in paths))


class DictFile:
    """A dict kept from one build to the next (the heads, the render manifest): `<name>.pkl`, the
    whole dict, plus `<name>.log`, the changes of later builds appended as checksummed frames. A
    one-file edit changes a few entries of a record of megabytes: appending them costs what they
    weigh, and the log is folded into the record when it grows past a quarter of it. A torn frame
    (a crash while appending) ends the log there."""

    def __init__(self, root: Path, name: str = "heads") -> None:
        self.base = Path(root) / f"{name}.pkl"
        self.log = Path(root) / f"{name}.log"

    def load(self) -> dict[str, Any]:
        entries = _decode(read_bytes(self.base) or b"")
        if not isinstance(entries, dict):
            return {}
        log = read_bytes(self.log) or b""
        position = 0
        while position + _HEAD <= len(log):
            size = int.from_bytes(log[position + 4 : position + 12], "little")
            change = _decode(log[position : position + _HEAD + size])
            if not (isinstance(change, tuple) and len(change) == 2):
                break
            changed, removed = change
            entries.update(changed)
            for key in removed:
                entries.pop(key, None)
            position += _HEAD + size
        return entries

    def save(self, entries: dict[str, Any], changed: Iterable[str], removed: Iterable[str]) -> None:
        """`entries` as it now is, of which `changed` are new or different and `removed` gone: the
        changes appended, or the whole dict written when the log would outgrow a quarter of the
        record or the record holds many entries that are gone (after the builder changed, every
        head of the build before: loading them all again at each build would cost twice)."""
        removed = list(removed)
        try:
            base_size = self.base.stat().st_size
            log_size = self.log.stat().st_size if self.log.exists() else 0
        except OSError:
            base_size = log_size = 0
        try:
            if base_size and len(removed) * 4 < len(entries):  # (else the whole record is written)
                changes = ({k: entries[k] for k in changed if k in entries}, removed)
                frame = _encode(pickle.dumps(changes, protocol=pickle.HIGHEST_PROTOCOL))
                if (log_size + len(frame)) * 4 < base_size:
                    with open(self.log, "ab") as f:
                        f.write(frame)
                    return
            write_atomically(self.base, _encode(pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)))
            self.log.unlink(missing_ok=True)  # (a crash before this replays changes the record has)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass


class RepairsRecord(Mapping):
    """The repairs of translation values that earlier builds made (`repairs.pkl`, a `DictFile`:
    `repair.repair_digest` → the repaired value), for `repair.remembering_repairs`. Read when
    first asked (most builds repair nothing), and only when the builder that wrote it is this one
    (its fingerprint is the record's entry ""): a repair is a function of the key, the value and
    the builder's code and libraries."""

    def __init__(self, root: Path, fingerprint: str, enabled: bool = True) -> None:
        self.file = DictFile(root, "repairs")
        self.fingerprint = fingerprint
        self.enabled = enabled
        self._entries: dict[str, Any] | None = None
        self._stale: list[str] = []  # the keys of a record another builder wrote

    def _loaded(self) -> dict[str, Any]:
        if self._entries is None:
            entries = self.file.load() if self.enabled else {}
            if entries and entries.get("") != self.fingerprint:
                self._stale, entries = list(entries), {}
            self._entries = entries
        return self._entries

    def __getitem__(self, digest: str) -> str:
        found = self._loaded()[digest] if digest else None
        if not isinstance(found, str):
            raise KeyError(digest)
        return found

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._loaded() if k)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def save(self, made: Mapping[str, str]) -> None:
        """Add the repairs this build made (nothing to write when it made none)."""
        if not self.enabled or not made:
            return
        entries = self._loaded()
        new = {k: v for k, v in made.items() if entries.get(k) != v}
        if not new and entries.get("") == self.fingerprint:
            return
        entries.update(new)
        entries[""] = self.fingerprint
        self.file.save(entries, [*new, ""], self._stale)
        self._stale = []


def stage_beside(path: Path, data: bytes, mode: int | None = None) -> str:
    """A new file beside `path` holding `data` (with `mode`; else private to the owner, as mkstemp
    makes it), for a rename over `path` later; nothing is left behind when writing it fails."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` by a file holding `data` (private to the owner) through a rename: a reader
    never meets a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = stage_beside(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@lru_cache(maxsize=1)
def builder_fingerprint() -> str:
    """What the builder itself is: its version, the bytes of its own modules and locales, the
    Python version and the versions of the libraries that shape the output. Any change to one of
    them invalidates every cached entry."""
    return remembered_fingerprint(Path(__file__).resolve().parent.parent, __version__, cache_home())  # the whole labml_site package


def remembered_fingerprint(package: Path, version: str, home: Path) -> str:
    """`fingerprint_of`, remembered in the cache home `home` by the metadata of what it reads
    (`_fingerprint_key`), as the build's file digests are: reading and hashing the package and
    asking for the libraries' versions costs more than a one-file rebuild's own work."""
    key = _fingerprint_key(package, version)
    memo = home / FINGERPRINTS
    usable = key is not None and cache_folder_problem(home) is None
    known = _read_fingerprints(memo) if usable else {}
    found = known.get(key) if key is not None else None
    if found is None:
        found = fingerprint_of(package, version)
        if usable:
            known[key] = found
            with contextlib.suppress(OSError):
                home.mkdir(parents=True, exist_ok=True, mode=0o700)
                write_atomically(memo, "".join(f"{k} {v}\n" for k, v in list(known.items())[-_FINGERPRINTS_KEPT:]).encode())
    return found


FINGERPRINTS = "fingerprints"  # in the cache home: a line per metadata key and its fingerprint (text: nothing to unpickle)
_FINGERPRINTS_KEPT = 16  # (a few installs side by side; the oldest are forgotten)


def _fingerprint_key(package: Path, version: str) -> str | None:
    """A digest of what `fingerprint_of` reads, by metadata: the package's module and catalog
    files (size, times, inode) and where each output library's module is and its file's metadata
    (an upgrade rewrites it). None when a file changed moments ago, as a file digest would not be
    trusted then either."""
    parts: list[str] = [CACHE_FORMAT, version, sys.version]
    recent = time.time_ns() - RACY_NS
    for rel, _path, st in _fingerprinted(package):
        if st is None or max(st.st_mtime_ns, st.st_ctime_ns) >= recent:
            return None
        parts.append(f"{rel} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}")
    for module in OUTPUT_MODULES:
        found = sys.modules.get(module)
        spec = getattr(found, "__spec__", None) if found is not None else importlib.util.find_spec(module)
        origin = getattr(spec, "origin", None) or ""
        try:
            st = os.stat(origin) if origin else None
        except OSError:
            st = None
        if st is not None and max(st.st_mtime_ns, st.st_ctime_ns) >= recent:
            return None
        parts.append(f"{module} {origin} " + (f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}" if st else "-"))
    return digest(*parts)


def _read_fingerprints(path: Path) -> dict[str, str]:
    try:
        text = read_regular(path, 64 * 1024).decode("utf-8")
    except (OSError, UnsafeFile, UnicodeDecodeError):
        return {}
    return dict(line.split(" ", 1) for line in text.splitlines() if line.count(" ") == 1)


def _fingerprinted(package: Path) -> list[tuple[str, str, os.stat_result | None]]:
    """The builder's files its fingerprint is made of, its modules and UI catalogs: each one's
    path under `package` (POSIX), its full path and its metadata (None when it cannot be read),
    in the order of their paths' parts. One walk that stats each file once: every build asks
    (`_fingerprint_key`), and `pathlib`'s walk and two stats a file cost 3 ms of a one-file
    rebuild. Linked folders are not followed, as `Path.rglob` does not follow them."""
    found: list[tuple[str, str, os.stat_result | None]] = []

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, prefix + entry.name + "/")
                elif os.path.splitext(entry.name)[1] in (".py", ".po") and entry.is_file():
                    try:
                        st: os.stat_result | None = entry.stat()
                    except OSError:
                        st = None
                    found.append((prefix + entry.name, entry.path, st))

    walk(os.fspath(package), "")
    return sorted(found, key=lambda file: file[0].split("/"))


def fingerprint_of(package: Path, version: str) -> str:
    from importlib import metadata

    parts: list[str | bytes] = [CACHE_FORMAT, version, sys.version]
    for rel, path, _st in _fingerprinted(package):
        parts.append(rel)
        with open(path, "rb") as f:
            parts.append(f.read())
    for name in _OUTPUT_LIBRARIES:
        try:
            parts.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} absent")
    return digest(*parts)


# ---------------------------------------------------------------------------------------------
# Deterministic hashing of values (an output's inputs, the configuration, the site's symbols)


def value_digest(value: Any) -> str:
    """A digest of a value made of str, numbers, lists, dicts, dataclasses and bound methods of
    dataclasses (such as the UI's gettext).

    Equal values give equal digests across processes. It serializes with the C JSON encoder
    (inputs are mostly strings, lists and dicts) and describes anything JSON cannot hold by its
    type and fields. Something it cannot describe (an object without fields) is described by its
    `repr`, which normally carries the object's id: that can only make an output render again,
    never reuse a stale one.
    """
    return hashlib.blake2b(value_text(value).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def value_text(value: Any) -> str:
    """What `value_digest` hashes: the value's deterministic serialization."""
    return _ENCODER.encode(value)


@lru_cache(maxsize=None)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _describe(value: Any) -> Any:
    """JSON for what json cannot encode itself; each form is tagged with its kind and type so
    different things never encode alike."""
    cls = type(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ["<dataclass>", f"{cls.__module__}.{cls.__qualname__}", *[getattr(value, n) for n in _field_names(cls)]]
    if hasattr(value, "__self__") and hasattr(value, "__func__"):  # a bound method, e.g. ui.gettext
        func = value.__func__
        return ["<method>", f"{func.__module__}.{func.__qualname__}", value_digest(value.__self__)]
    if isinstance(value, (set, frozenset)):
        return ["<set>", sorted((_ENCODER.encode(v) for v in value))]
    if isinstance(value, bytes):
        return ["<bytes>", hashlib.blake2b(value, digest_size=20).hexdigest()]
    if isinstance(value, tuple):  # only reached for tuple subclasses (named tuples)
        return ["<tuple>", f"{cls.__module__}.{cls.__qualname__}", list(value)]
    return ["<repr>", f"{cls.__module__}.{cls.__qualname__}", repr(value)]


class _Encoder(json.JSONEncoder):
    def default(self, o: Any) -> Any:
        return _describe(o)


# check_circular off: contexts are trees, and a cycle would recurse until RecursionError (a miss).
_ENCODER = _Encoder(ensure_ascii=False, check_circular=False, allow_nan=True, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# Object store


_PACKS_KEPT = 4  # packs a store keeps open: a page's entries are read one after the other, its
# folder's pages' from a few packs in turn
_PACK_READ_WHOLE = 1 << 20  # a pack up to this size is read in one go (a worker's group of pages)


def _pack_bytes(pickled: dict[str, bytes]) -> bytes:
    """A pack file: its index (framed as every cache file is: key → offset, length and CRC-32 of
    the entry's pickle among those that follow), then the entries' pickles one after another."""
    index, offset = {}, 0
    for key, blob in pickled.items():
        index[key] = (offset, len(blob), zlib.crc32(blob))
        offset += len(blob)
    return _encode(pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL)) + b"".join(pickled.values())


@dataclass
class _PackReader:
    """A pack file's index, and the whole file when it is small (`_PACK_READ_WHOLE`); a larger
    one's entries are read one by one. Each entry is checked against its own CRC: a torn or
    damaged entry is a miss alone."""

    path: Path
    index: dict[str, Any]
    start: int  # where the entries begin
    size: int  # of the file
    data: bytes | None

    @classmethod
    def open(cls, path: Path) -> "_PackReader | None":
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                whole = size <= _PACK_READ_WHOLE
                head = f.read(size if whole else _HEAD)
                if len(head) < _HEAD:
                    return None
                start = _HEAD + int.from_bytes(head[4:12], "little")
                if start > size:  # (a torn or damaged length: nothing is read past the file)
                    return None
                framed = head[:start] if whole else head + f.read(start - _HEAD)
        except OSError:
            return None
        index = _decode(framed)
        return cls(path, index, start, size, head if whole else None) if isinstance(index, dict) else None

    def get(self, key: str) -> Any:
        try:
            offset, length, crc = self.index[key]
            at = self.start + offset
            if offset < 0 or length < 0 or at + length > self.size:
                return MISS
            if self.data is not None:
                blob: bytes | memoryview = memoryview(self.data)[at : at + length]
            else:
                with open(self.path, "rb") as f:  # (another build may have pruned it since: a miss)
                    f.seek(at)
                    blob = f.read(length)
            if len(blob) != length or zlib.crc32(blob) != crc:
                return MISS
            return pickle.loads(blob)
        except Exception:  # noqa: BLE001 - no such key, a damaged index or entry: a miss, as `_decode`
            return MISS


class ObjectStore:
    """key → object, a checksummed pickle per key (or per pack of keys) under `root/objects/`.

    Safe for several processes writing different keys at once (each write is a rename of a
    private temporary file). Remembers which keys this build used, so `prune` can drop the rest.
    """

    def __init__(self, root: Path, memory: dict[str, Any] | None = None) -> None:
        self.root = Path(root)
        self.objects = self.root / "objects"
        self.used: set[str] = set()
        self.memory = memory  # an in-process layer for long-lived processes (`serve`)
        self.packs: dict[str, _PackReader | None] = {}  # the packs read last (`_PACKS_KEPT`; None: unreadable)
        self.batch: dict[str, Any] | None = None  # entries `put` holds back for one pack (`start_batch`)

    def __getstate__(self) -> dict:
        # Worker processes get the paths, not the parent's in-memory layer or key log.
        return {"root": self.root, "objects": self.objects, "used": set(), "memory": None, "packs": {}, "batch": None}

    def _path(self, key: str) -> Path:
        return self.objects / f"{key}.pkl"

    def get(self, key: str) -> Any:
        self.used.add(key)
        if self.memory is not None and key in self.memory:
            return self.memory[key]
        if self.batch is not None and key in self.batch:
            return self.batch[key]
        return self._remembered(key, self._load(key))

    def get_from_pack(self, pack: str, key: str) -> Any:
        """The entry `key` of the pack file `pack` (see `put_pack`), or MISS. Only that entry is
        read and unpickled: an edit's rebuild wants a few entries of packs of hundreds (a render
        worker's pack of the cold build held 732 entries, 7 MB: 17 ms to unpickle whole)."""
        self.used.add(pack)
        if self.memory is not None and key in self.memory:
            return self.memory[key]
        if pack in self.packs:
            reader = self.packs.pop(pack)
        else:
            reader = _PackReader.open(self._path(pack))
            if len(self.packs) >= _PACKS_KEPT:  # (the oldest goes)
                del self.packs[next(iter(self.packs))]
        self.packs[pack] = reader  # (last: the most recently used)
        return MISS if reader is None else self._remembered(key, reader.get(key))

    def has(self, key: str) -> bool:
        return (self.memory is not None and key in self.memory) or self._path(key).exists()

    def put(self, key: str, value: Any) -> None:
        self.used.add(key)
        if self.memory is not None:
            self.memory[key] = value
        if self.batch is not None:
            self.batch[key] = value
        else:
            self._store(key, value)

    def start_batch(self) -> None:
        """Hold back what `put` stores until `end_batch`, which writes it as one pack: a worker
        that stores an entry per page would otherwise create a file per page (on a file system
        that has just deleted the previous site, creating a file costs ~0.5 ms)."""
        self.batch = {}

    def end_batch(self) -> tuple[str, tuple[str, ...]]:
        """Write the held-back entries as one pack: its name and keys (for `BuildCache.packed`),
        or ("", ()) when there were none."""
        entries, self.batch = self.batch or {}, None
        return self.put_pack(entries)

    def put_pack(self, entries: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        """Several entries in one file: a file per entry costs more to create than to fill.
        Returns the pack's name (made from its keys) and its keys, for `BuildCache.packed`, or
        ("", ()) when there are no entries. `get_from_pack` reads one back."""
        pickled = {}
        for key, value in entries.items():
            try:  # each entry on its own, for `get_from_pack` to unpickle alone
                pickled[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError, AttributeError):
                pass  # not cacheable; it will be computed again next time
        if not pickled:
            return "", ()
        pack = digest("pack", *pickled)
        self.used.add(pack)
        if self.memory is not None:
            self.memory.update((key, entries[key]) for key in pickled)
        self._write(pack, _pack_bytes(pickled))
        return pack, tuple(pickled)

    def _remembered(self, key: str, value: Any) -> Any:
        if value is not MISS and self.memory is not None:
            self.memory[key] = value
        return value

    def _load(self, name: str) -> Any:
        data = read_bytes(self._path(name))
        return MISS if data is None else _decode(data)

    def _store(self, name: str, value: Any) -> None:
        try:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return  # not cacheable; it will be computed again next time
        self._write(name, _encode(payload))

    def _write(self, key: str, data: bytes) -> None:
        try:
            write_atomically(self._path(key), data)
        except OSError:
            pass  # a read-only or full disk makes the cache useless, not the build wrong

    def prune(self, keep: Iterable[str] = ()) -> int:
        """Delete entries this build did not use (they belong to older versions of files)."""
        keep_set = self.used | set(keep)
        removed = 0
        try:
            names = os.listdir(self.objects)
        except OSError:
            return 0
        for name in names:
            key = name[: -len(".pkl")] if name.endswith(".pkl") else None
            if key is not None and key in keep_set:
                continue
            try:
                os.unlink(self.objects / name)
                removed += 1
            except OSError:
                pass
        if self.memory is not None:
            for key in [k for k in self.memory if k not in keep_set]:
                del self.memory[key]
        return removed


_HEAD = len(_MAGIC) + 12  # magic, payload length (8 bytes), CRC-32 of the payload (4 bytes)


def load_record(path: Path) -> Any:
    """A record written by `BuildCache.save_record`, or MISS (a caller checks the folder first:
    `cache_folder_problem`)."""
    data = read_bytes(path)
    return _decode(data) if data is not None else MISS


def _encode(payload: bytes) -> bytes:
    # A checksum, not a signature: it catches torn writes and disk damage, cheaply (the whole
    # cache is read on every build).
    return _MAGIC + len(payload).to_bytes(8, "little") + zlib.crc32(payload).to_bytes(4, "little") + payload


def _decode(data: bytes) -> Any:
    """The object in a cache file, or MISS when the file is damaged in any way."""
    if len(data) < _HEAD or not data.startswith(_MAGIC):
        return MISS
    size = int.from_bytes(data[4:12], "little")
    payload = memoryview(data)[_HEAD:]
    if size != len(payload) or zlib.crc32(payload) != int.from_bytes(data[12:16], "little"):
        return MISS
    try:
        return pickle.loads(payload)
    except Exception:  # noqa: BLE001 - any unpickling failure (a class renamed since) is a miss
        return MISS


# ---------------------------------------------------------------------------------------------
# Rendered pages


@dataclass(frozen=True)
class Written:
    """A page the previous build rendered: its input digest and the file it wrote."""

    digest: str
    size: int
    mtime_ns: int
    inode: int


_RENDERED = "rendered"  # the manifest's DictFile
_MANIFESTS: dict[Path, dict[str, "Written"]] = {}  # cache folder → its manifest, for long-lived processes


@dataclass
class RenderManifest:
    """Which output file holds which rendered input, for the site at `out` (a `DictFile`: a
    rebuild after an edit appends the few entries it changed)."""

    root: Path  # the cache folder
    entries: dict[str, Written] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)  # out rel → digest rendered or reused now
    keep_in_memory: bool = False

    @classmethod
    def load(cls, root: Path, keep_in_memory: bool = False) -> "RenderManifest":
        entries = _MANIFESTS.get(root) if keep_in_memory else None
        if entries is None:
            entries = DictFile(root, _RENDERED).load()
        return cls(root, entries, keep_in_memory=keep_in_memory)

    def reusable(self, out: str, rel: str, key: str) -> bool:
        """Whether the previous site's file for `rel` holds exactly `key`'s rendering (`out`: the
        site folder's path ending in a separator, asked of every output of every build)."""
        known = self.entries.get(rel)
        if known is None or known.digest != key:
            return False
        try:
            st = os.lstat(out + rel)  # a link put in its place is not the file this build wrote
        except OSError:
            return False
        # (else edited, replaced or rebuilt without this cache since)
        return (st.st_size, st.st_mtime_ns, st.st_ino) == (known.size, known.mtime_ns, known.inode)

    def record(self, rel: str, key: str) -> None:
        self.pending[rel] = key

    def save(self, out: Path, kept: set[str] = frozenset()) -> None:
        """Remember what the site now at `out` holds (called after the swap). `kept`: outputs
        that are the very files `reusable` found, known without asking the disk again."""
        entries: dict[str, Written] = {}
        for rel, key in self.pending.items():
            known = self.entries.get(rel)
            if rel in kept and known is not None and known.digest == key:
                entries[rel] = known
                continue
            try:
                st = os.stat(out / rel)
            except OSError:
                continue
            entries[rel] = Written(key, st.st_size, st.st_mtime_ns, st.st_ino)
        old = self.entries
        changed = [rel for rel, written in entries.items() if old.get(rel) != written]
        removed = [rel for rel in old if rel not in entries]
        if changed or removed:
            DictFile(self.root, _RENDERED).save(entries, changed, removed)
        self.entries, self.pending = entries, {}
        if self.keep_in_memory:
            _MANIFESTS[self.root] = entries


# ---------------------------------------------------------------------------------------------
# One build's view of the cache


@dataclass
class BuildStats:
    """What a build computed and what it reused; tests assert on these, the CLI may print them."""

    analysed: int = 0  # source files parsed and rendered (cache misses)
    analysis_reused: int = 0
    localized: int = 0  # (page, language) pairs localized from their translation file
    localization_reused: int = 0
    linked: int = 0  # pages whose code links were computed
    link_reused: int = 0
    rendered: int = 0  # template renders
    render_reused: int = 0  # pages hard-linked from the previous site
    copied: int = 0  # files published as they are (sources, figures, static files), copied
    copy_reused: int = 0
    site_unchanged: bool = False  # every input as last time and the site untouched: nothing written
    metadata_only: bool = False  # ... told by the inputs' metadata alone, nothing read (uptodate.py)
    workers: int = 1  # processes used for analysis and localization


_MEMORY: dict[Path, dict[str, Any]] = {}  # cache folder → objects, for long-lived processes


_HEADS: dict[Path, dict[str, Any]] = {}  # cache folder → heads, for long-lived processes
_PACK = "pack:"  # heads[_PACK + key]: the pack file that holds key's entry


@dataclass
class BuildCache:
    """The cache as one build sees it: a store, a render manifest and the fingerprints."""

    root: Path
    store: ObjectStore
    manifest: RenderManifest
    fingerprint: str
    enabled: bool = True
    # Heads (heads.py): small facts about each cached object, all in one record, so a build can
    # know every page without loading it. key → head; like objects, keyed by content.
    heads: dict[str, Any] = field(default_factory=dict)
    heads_used: set[str] = field(default_factory=set)
    heads_changed: set[str] = field(default_factory=set)
    files: FileDigests = field(default_factory=FileDigests)
    refused: str = ""  # why the cache folder is not used (`cache_folder_problem`), if it is not

    def __post_init__(self) -> None:
        self.files = FileDigests(self)

    @classmethod
    def open(cls, out: Path, enabled: bool = True, keep_in_memory: bool = False) -> "BuildCache":
        root = cache_dir_for(out)
        refused = ""
        if enabled:
            home = cache_home()
            try:
                home.mkdir(parents=True, exist_ok=True, mode=0o700)
                root.mkdir(exist_ok=True, mode=0o700)
            except OSError:
                pass  # an unwritable cache makes builds slower, not wrong (every write is a miss)
            problem = cache_folder_problem(home) or cache_folder_problem(root)
            if problem:  # never load a pickle someone else could have put there
                enabled, refused = False, problem
        memory = _MEMORY.setdefault(root, {}) if keep_in_memory else None
        manifest = RenderManifest.load(root, keep_in_memory) if enabled else RenderManifest(root)
        heads: dict[str, Any] = {}
        if enabled:
            heads = _HEADS.get(root) if keep_in_memory and root in _HEADS else None
            if heads is None:
                heads = DictFile(root).load()
            if keep_in_memory:
                _HEADS[root] = heads
        return cls(root, ObjectStore(root, memory), manifest, builder_fingerprint(), enabled, heads=heads, refused=refused)

    def head(self, key: str) -> Any:
        """The head recorded with `key`, or MISS. Its object stays in use (`prune` keeps it)."""
        if not self.enabled or key not in self.heads:
            return MISS
        self.heads_used.add(key)
        self.store.used.add(key)
        pack = self.heads.get(_PACK + key)
        if pack is not None:  # its object lives in a pack: keep both
            self.heads_used.add(_PACK + key)
            self.store.used.add(pack)
        return self.heads[key]

    def set_head(self, key: str, head: Any) -> None:
        if self.enabled:
            self.heads_used.add(key)
            if self.heads.get(key, MISS) != head:
                self.heads[key] = head
                self.heads_changed.add(key)

    def get(self, key: str) -> Any:
        if not self.enabled:
            return MISS
        value = self.store.get(key)
        pack = self.heads.get(_PACK + key) if value is MISS else None
        return self.store.get_from_pack(pack, key) if pack else value

    def packed(self, pack: str, keys: Iterable[str]) -> None:
        """Note that a worker stored these keys' entries in the pack `pack`."""
        if self.enabled and pack:
            self.store.used.add(pack)
            for key in keys:
                self.set_head(_PACK + key, pack)

    def pack_of(self, key: str) -> str:
        """The pack file that holds `key`'s entry ("" when none is known)."""
        return self.heads.get(_PACK + key, "") if self.enabled else ""

    def has(self, key: str) -> bool:
        """Whether `key` has an entry, on its own or in a pack (as far as this build knows)."""
        return self.enabled and (self.store.has(key) or _PACK + key in self.heads)

    def put(self, key: str, value: Any) -> None:
        if self.enabled:
            self.store.put(key, value)

    def remember(self, key: str, value: Any) -> None:
        """Note a value a worker process computed and stored (so `prune` keeps it and a
        long-lived process has it in memory)."""
        if self.enabled:
            self.store.used.add(key)
            if self.store.memory is not None and value is not None:
                self.store.memory[key] = value

    def load_record(self, path: Path) -> Any:
        """A record written by `save_record`, or MISS."""
        return load_record(path) if self.enabled else MISS

    def save_record(self, path: Path, value: Any) -> None:
        """Write one small checksummed record (e.g. what the last build read and wrote)."""
        if not self.enabled:
            return
        try:
            write_atomically(path, _encode(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    def save_heads(self, prune: bool = True) -> None:
        """Keep the heads this build used, and only those (like `ObjectStore.prune`); with
        `prune` false (a build that failed part-way, which used only some), keep them all."""
        if not self.enabled:
            return
        stale = [key for key in self.heads if key not in self.heads_used] if prune else []
        for key in stale:
            del self.heads[key]
        if stale or self.heads_changed:
            DictFile(self.root).save(self.heads, self.heads_changed, stale)
            self.heads_changed = set()

    def finish(self, out: Path, kept: set[str] = frozenset()) -> None:
        """After a successful swap: remember the rendered pages, drop entries nobody used."""
        if not self.enabled:
            return
        self.manifest.save(out, kept)
        self.save_heads()
        self.store.prune()


__all__ = [
    "MISS",
    "BuildCache",
    "BuildStats",
    "ObjectStore",
    "RenderManifest",
    "builder_fingerprint",
    "cache_dir_for",
    "digest",
    "read_bytes",
    "stage_beside",
    "write_atomically",
    "value_digest",
]
