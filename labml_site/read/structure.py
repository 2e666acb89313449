"""The site as plain data: which source files become which pages, folders and assets.

Nothing here reads file contents or renders anything; it maps paths. Keeping this separate from
building and theming (as mkdocs' `structure` package does) means URL rules change in one place.

Files are what they claim: discovery looks at each entry with `lstat` and never follows a link.
A symbolic link (to a file or a folder, inside the tree or out of it), a FIFO, a device, a socket
or a source larger than `MAX_SOURCE_BYTES` is left out and reported (`SiteFiles.findings`), so
nothing outside `--source` can be published and nothing can block the build. `discover(…, langs=…)`
also reports output paths that would collide (`output_collisions`) and leaves out what would
overwrite another output.

Names are untrusted too (a pull request can add `javascript:alert(1).py`): every URL made from a
name goes through `url_path`, so a browser reads it as the path it names. A name no URL or file
name can carry faithfully (control characters, bidirectional overrides, bytes that are not UTF-8)
is refused (`source-name`).
"""
from __future__ import annotations

import os
import posixpath
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable
from urllib.parse import quote

from ..findings import Finding
from .listing import SKIPPED_DIRS, TreeListing
from .safe_files import kind_of

PAGE_SUFFIXES = (".py", ".md")
SKIPPED_SUFFIXES = {".pyc", ".pyo", ".ipynb", ".pt", ".pth", ".ckpt"}
INDEX_NAMES = ("__init__.py", "readme.md")  # in order of preference
# A page's source is read whole (and published for "View source"): far above any real page.
MAX_SOURCE_BYTES = 4 * 1024 * 1024
# What the builder itself writes at the root of each language ("<lang>/" for the others, the
# site's root for the base language), and at the site's root only. A source must not take them.
RESERVED_PER_LANGUAGE = frozenset({"search.html", "404.html", "translation-status.html", "search-index.js", "llms.txt"})
RESERVED_AT_ROOT = frozenset({"sitemap.xml"})
ORIGINALS_FOLDER = "_originals"  # each page's English prose, for the translations' bilingual toggle
RESERVED_FOLDERS = frozenset({"static", ORIGINALS_FOLDER})  # the theme's files, the builder's own


@dataclass(frozen=True)
class SourceFile:
    """One page's source, e.g. `annotated_attention/mha.py` → `annotated_attention/mha.html`."""

    rel: str  # POSIX path under the source folder
    path: Path
    url: str  # output path under a language's root
    is_index: bool = False

    # Worked out once per file (cached_property writes past the frozen __setattr__): each is
    # asked for every page in every language of every build, `serve`'s rebuilds included.
    @cached_property
    def folder(self) -> str:
        return posixpath.dirname(self.rel)

    @cached_property
    def base(self) -> str:
        """The path without extension: what translation files are named after."""
        return posixpath.splitext(self.rel)[0]

    @cached_property
    def suffix(self) -> str:
        return posixpath.splitext(self.rel)[1]


@dataclass(frozen=True)
class Asset:
    rel: str
    path: Path


@dataclass
class Folder:
    rel: str  # "" for the root
    index: SourceFile | None = None
    pages: list[SourceFile] = field(default_factory=list)
    subfolders: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return posixpath.join(self.rel, "index.html") if self.rel else "index.html"


@dataclass
class SiteFiles:
    pages: list[SourceFile]
    assets: dict[str, Asset]
    folders: dict[str, Folder]
    # Files left out, and why: links, FIFOs, devices, oversize sources, colliding outputs.
    findings: list[Finding] = field(default_factory=list)


def _page_url(rel: str, is_index: bool) -> str:
    folder = posixpath.dirname(rel)
    if is_index:
        return posixpath.join(folder, "index.html") if folder else "index.html"
    return posixpath.splitext(rel)[0] + ".html"


def _visible(rel: PurePosixPath) -> bool:
    return not any(part.startswith(".") or part in SKIPPED_DIRS for part in rel.parts)


def _refused(path: Path, why: str, code: str = "source-refused") -> Finding:
    return Finding("error", code, f"{why}; it is not read or published", shown_path(path))


# Bidirectional overrides and isolates make a name read differently from what it is.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def bad_name(name: str) -> str | None:
    """Why a file or folder name cannot be published (None when it can): a control character
    (a newline in a name ends a log line and a Markdown link), a bidirectional control (the name
    reads otherwise than it is), or bytes that are not UTF-8 (Python holds them as surrogates,
    which no page can be written with). Every other name is published, its URLs percent-encoded."""
    if name.isprintable():  # (the common case: one C-level pass)
        return None
    for c in name:
        category = unicodedata.category(c)
        if category == "Cs":
            return "its name is not UTF-8"
        if category == "Cc":
            return f"its name holds the control character U+{ord(c):04X}"
        if c in _BIDI_CONTROLS:
            return f"its name holds the bidirectional control U+{ord(c):04X}"
    return None


def shown_path(path: Path | str) -> str:
    """A path as a report shows it: bytes that are not UTF-8 and control characters escaped, so
    that printing it can neither fail nor break the line."""
    text = os.fsencode(str(path)).decode("utf-8", "backslashreplace")
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _listed(listing: TreeListing) -> list[str] | None:
    """`_walk`'s files as paths under the folder, in its order, from a listing of the folder that
    holds nothing `_walk` would report (None otherwise, and the disk is walked: what it reports,
    and in its order, is the disk's)."""
    if not listing.complete:
        return None
    files: list[str] = []
    for rel, mode in listing.modes.items():
        if bad_name(rel.rpartition("/")[2]):  # (a folder's name is checked as its own entry)
            return None
        if stat.S_ISDIR(mode):
            continue
        suffix = posixpath.splitext(rel)[1]
        if suffix in SKIPPED_SUFFIXES:
            continue
        if not stat.S_ISREG(mode) or (suffix in PAGE_SUFFIXES and listing.sizes.get(rel, 0) > MAX_SOURCE_BYTES):
            return None
        files.append(rel)
    return sorted(files, key=_path_order)


def _path_order(rel: str) -> list[str]:
    """The order of `sorted` on the paths (a `PurePath` compares its parts): `a/b` before `a-b`."""
    return rel.split("/")


def _walk(source_dir: Path, findings: list[Finding]) -> list[Path]:
    """Every regular file under `source_dir` whose path is visible, looked at with `lstat` only:
    links (to files or folders) are never followed, and anything but a regular file or a folder
    is reported and left out."""
    files: list[Path] = []
    stack = [source_dir]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as e:
            findings.append(_refused(folder, f"the folder could not be listed ({e.strerror or e})"))
            continue
        for entry in entries:
            path = Path(entry.path)
            rel = PurePosixPath(path.relative_to(source_dir).as_posix())
            if not _visible(rel):
                continue
            why_not = bad_name(entry.name)
            if why_not:
                findings.append(_refused(path, f"{why_not}; rename it", "source-name"))
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                findings.append(_refused(path, f"could not be examined ({e.strerror or e})"))
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(path)
            elif stat.S_ISREG(st.st_mode):
                if rel.suffix in SKIPPED_SUFFIXES:
                    continue
                if rel.suffix in PAGE_SUFFIXES and st.st_size > MAX_SOURCE_BYTES:
                    findings.append(_refused(
                        path, f"the source is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MB",
                        "source-too-large",
                    ))
                    continue
                files.append(path)
            elif rel.suffix not in SKIPPED_SUFFIXES:
                what = kind_of(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    try:
                        target = os.readlink(path)
                    except OSError:
                        target = "?"
                    why = f"this is a symbolic link (to {target}); links are never followed, copy the file instead"
                else:
                    why = f"this is {what}, not a regular file"
                findings.append(_refused(path, why))
    return sorted(files)


def discover(source_dir: Path, langs: Iterable[str] = (), base_lang: str | None = None, listing: TreeListing | None = None) -> SiteFiles:
    """Every page, asset and folder under `source_dir`, in a stable (sorted) order.

    Links, FIFOs, devices, sockets and oversize sources are left out and reported in `findings`.
    With `langs` (every language of the build, the base one included; `base_lang`: default the
    first), output paths that would collide are reported too and the file that would overwrite
    another output is left out (`output_collisions`). `listing`: the folder as the build's walk
    saw it (the disk is walked only when that leaves something to report)."""
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise FileNotFoundError(f"source folder {source_dir} does not exist: pass --source DIR")
    findings: list[Finding] = []
    listed = _listed(listing) if listing is not None else None
    if listed is not None:
        files = [(rel, source_dir / rel) for rel in listed]
    else:
        files = [(path.relative_to(source_dir).as_posix(), path) for path in _walk(source_dir, findings)]
    by_folder: dict[str, list[tuple[str, Path]]] = {}
    assets: dict[str, Asset] = {}
    for rel, path in files:
        if posixpath.splitext(rel)[1] in PAGE_SUFFIXES:
            by_folder.setdefault(posixpath.dirname(rel), []).append((rel, path))
        else:
            assets[rel] = Asset(rel, path)

    pages: list[SourceFile] = []
    folders: dict[str, Folder] = {}
    for folder_rel, entries in sorted(by_folder.items()):
        names = {posixpath.basename(rel).lower() for rel, _path in entries}
        index_name = next((n for n in INDEX_NAMES if n in names), None)
        folder = _ensure_folder(folders, folder_rel)
        for rel, path in entries:
            is_index = index_name is not None and posixpath.basename(rel).lower() == index_name
            page = SourceFile(rel, path, _page_url(rel, is_index), is_index)
            pages.append(page)
            if is_index:
                folder.index = page
            else:
                folder.pages.append(page)
    for folder in folders.values():
        folder.subfolders.sort()
    site = SiteFiles(pages, assets, folders, findings)
    langs = tuple(langs)
    if langs:
        collisions, dropped = output_collisions(site, langs, base_lang or langs[0])
        findings.extend(collisions)
        if dropped:
            site = without(site, dropped)
    return site


def page_outputs(page: SourceFile) -> list[str]:
    """What a page publishes under a language's root: the page, its source, its Markdown
    (`page.html.md`) and, for Python, its notebook and its "View source" page (`page.py.html`)."""
    outputs = [page.url, page.rel, page.url + ".md"]
    if page.suffix == ".py":
        outputs += [page.base + ".ipynb", page.rel + ".html"]
    return outputs


def output_collisions(files: SiteFiles, langs: Iterable[str], base_lang: str) -> tuple[list[Finding], set[str]]:
    """Output paths two things would write: (findings, the rels of the files to leave out).

    - a file at the root named like what the builder writes there (`search.html`, `404.html`,
      `translation-status.html`, `search-index.js`, `sitemap.xml`): the builder's output wins;
    - a top-level folder or file named like a language of the build (`zh/`: the Chinese site) or
      `static` (the theme's files): left out;
    - two sources with the same output (`a.py` beside `a.md`, an asset `a.html` beside `a.py`):
      the first in the order pages (`.py` before `.md`), then assets is kept;
    - outputs that differ only in case collide on case-insensitive file systems: a warning.
    """
    findings: list[Finding] = []
    dropped: set[str] = set()
    other_langs = {lang for lang in langs if lang != base_lang}
    order = {suffix: i for i, suffix in enumerate(PAGE_SUFFIXES)}
    pages = sorted(files.pages, key=lambda p: (posixpath.splitext(p.rel)[0], order.get(p.suffix, 9), p.rel))
    claims: list[tuple[str, str, Path]] = [(out, p.rel, p.path) for p in pages for out in page_outputs(p)]
    claims += [(rel, rel, a.path) for rel, a in sorted(files.assets.items())]

    def refuse(rel: str, path: Path, why: str) -> None:
        if rel not in dropped:
            dropped.add(rel)
            findings.append(Finding("error", "output-collision", f"{why}; this file is not published", str(path)))

    for out, rel, path in claims:
        top = out.split("/", 1)[0]
        if "/" in out and top in other_langs:
            refuse(rel, path, f"the folder {top}/ is where the {top} site is written; rename the folder")
        elif "/" in out and top in RESERVED_FOLDERS:
            what = "the theme's files are" if top == "static" else "the pages' English originals are"
            refuse(rel, path, f"the folder {top}/ is where {what} written; rename the folder")
        elif "/" not in out and (out in RESERVED_PER_LANGUAGE or out in RESERVED_AT_ROOT):
            refuse(rel, path, f"{out} at the root is written by the builder; rename the file")
        elif "/" not in out and out in other_langs:
            refuse(rel, path, f"{out} at the root is the folder of the {out} site; rename the file")
    owner: dict[str, str] = {}
    for out, rel, path in claims:
        if rel in dropped:
            continue
        first = owner.setdefault(out, rel)
        if first != rel:
            refuse(rel, path, f"it would be published as {out}, which {first} already is; rename one of them")
    folded: dict[str, tuple[str, str]] = {}
    warned: set[str] = set()
    for out, rel, path in claims:
        if rel in dropped:
            continue
        seen_out, seen_rel = folded.setdefault(out.casefold(), (out, rel))
        if seen_out != out and rel not in warned:
            warned.add(rel)
            findings.append(Finding(
                "warning", "output-case-collision",
                f"{out} differs only in case from {seen_out} (of {seen_rel}): they collide on "
                "case-insensitive file systems (macOS, Windows); rename one of them", str(path),
            ))
    return findings, dropped


def without(files: SiteFiles, dropped: set[str]) -> SiteFiles:
    """`files` without the pages and assets whose rel is in `dropped` (folders rebuilt)."""
    pages = [p for p in files.pages if p.rel not in dropped]
    assets = {rel: a for rel, a in files.assets.items() if rel not in dropped}
    folders: dict[str, Folder] = {}
    for page in pages:
        folder = _ensure_folder(folders, page.folder)
        if page.is_index:
            folder.index = page
        else:
            folder.pages.append(page)
    for folder in folders.values():
        folder.subfolders.sort()
    return SiteFiles(pages, assets, folders, list(files.findings))


def _ensure_folder(folders: dict[str, Folder], rel: str) -> Folder:
    """Create the folder and every ancestor up to the root, linking each to its parent."""
    if rel in folders:
        return folders[rel]
    folder = folders[rel] = Folder(rel)
    if rel:
        parent = _ensure_folder(folders, posixpath.dirname(rel))
        if rel not in parent.subfolders:
            parent.subfolders.append(rel)
    return folder


_UNCLEAN_SEGMENTS = frozenset(("", ".", ".."))
# What a URL path carries as it is: RFC 3986's unreserved characters and "/". Nothing here can
# start a scheme (":"), a query ("?"), a fragment ("#"), an escape ("%"), or another host ("\\"
# reads as "/" in http and file URLs; "//" never comes out of a path the builder made).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._~/-]*")


def url_path(path: str) -> str:
    """An output path (or a source path) as a URL path: every character outside the unreserved
    set percent-encoded as UTF-8, so `javascript:alert(1).html` is linked as
    `javascript%3Aalert%281%29.html` (a path: a server and file:// decode it back to the file's
    name) and `a#b.html` as `a%23b.html`. The one place URLs are made from names: every link,
    index, listing and sitemap entry to a page, folder or file goes through here."""
    if _PLAIN_PATH.fullmatch(path):
        return path
    return quote(path, safe="/")


def relative_url(from_url: str, to_url: str) -> str:
    """A link from one output file to another, relative so the site works from file:// too, as a
    URL path (`url_path`): a browser reads it as the path it names, whatever the names are.

    Every page asks for a dozen of these, so the clean URLs the builder makes (no empty, "." or
    ".." segments) are handled as plain list work; anything else goes through posixpath.
    """
    start = from_url.rpartition("/")[0]
    start_parts = start.split("/") if start else []
    to_parts = to_url.split("/")
    if _UNCLEAN_SEGMENTS.intersection(start_parts) or _UNCLEAN_SEGMENTS.intersection(to_parts):
        return url_path(posixpath.relpath(to_url, posixpath.dirname(from_url) or "."))
    i, n = 0, min(len(start_parts), len(to_parts))
    while i < n and start_parts[i] == to_parts[i]:
        i += 1
    parts = [".."] * (len(start_parts) - i) + to_parts[i:]
    return url_path("/".join(parts)) if parts else "."


def url_under(base: str, path: str) -> str:
    """`path` (an output or source path) as a URL under an absolute `base` URL (`--site-url`,
    `--source-url`, `--edit-url`), its names percent-encoded (`url_path`)."""
    return base.rstrip("/") + "/" + url_path(path.lstrip("/"))


def lang_prefix(lang: str, base_lang: str) -> str:
    """English (the base language) lives at the root; others under `<lang>/`."""
    return "" if lang == base_lang else f"{lang}/"


def breadcrumbs(url: str) -> list[str]:
    """Folder index URLs from the root down to (excluding) the page itself."""
    return list(breadcrumb_trail(url))


@lru_cache(maxsize=4096)  # (asked for every output in every language; pages of a folder share it)
def breadcrumb_trail(url: str) -> tuple[str, ...]:
    """`breadcrumbs` as a tuple, remembered."""
    parts = posixpath.dirname(url).split("/") if posixpath.dirname(url) else []
    if posixpath.basename(url) == "index.html" and parts:
        parts = parts[:-1]
    trail = ["index.html"]
    for i in range(len(parts)):
        trail.append("/".join(parts[: i + 1]) + "/index.html")
    return tuple(trail) if url != "index.html" else ()


def _order_number(value: str) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def reading_order(
    folder: Folder,
    folders: dict[str, Folder],
    listed: Iterable[str] = (),
    order: dict[str, str] | None = None,
    shown: Iterable[str] | None = None,
) -> list[SourceFile | Folder]:
    """What a folder holds (its pages and subfolders), in reading order.

    1. The folder page's own list: the order in which its prose links to them (`listed`: site
       paths as `SourceFile.url`, `SourceFile.rel` or a subfolder's `…/index.html` or `…/`);
    2. then those with an `order:` in their front matter (`order`: rel → value; a subfolder's is
       its index page's), by that number;
    3. then the rest by file name (a subfolder by its name).

    `shown` (rels or folder rels), when given, keeps only those (published pages)."""
    order = order or {}
    items: list[SourceFile | Folder] = list(folder.pages) + [folders[sub] for sub in folder.subfolders if sub in folders]
    if shown is not None:
        keep = set(shown)
        items = [item for item in items if item.rel in keep]
    position: dict[str, int] = {}
    for i, target in enumerate(listed):
        position.setdefault(target, i)

    def key(item: SourceFile | Folder) -> tuple:
        if isinstance(item, Folder):
            names = (item.url, item.rel, item.rel + "/")
            own = order.get(item.index.rel, "") if item.index else ""
            name = posixpath.basename(item.rel)
        else:
            names = (item.url, item.rel)
            own = order.get(item.rel, "")
            name = posixpath.basename(item.rel)
        found = [position[n] for n in names if n in position]
        if found:
            return (0, min(found), "")
        number = _order_number(own)
        if number is not None:
            return (1, number, name)
        return (2, 0, name.lower(), name)

    return sorted(items, key=key)
