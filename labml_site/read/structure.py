"""The site as plain data: which source files become which pages, folders and assets.

Nothing here reads file contents or renders anything; it maps paths. Keeping this separate from
building and theming (as mkdocs' `structure` package does) means URL rules change in one place.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

PAGE_SUFFIXES = (".py", ".md")
# Folders an author never means to publish.
SKIPPED_DIRS = {"__pycache__", "node_modules", ".git", ".ipynb_checkpoints", "checkpoints"}
SKIPPED_SUFFIXES = {".pyc", ".pyo", ".ipynb", ".pt", ".pth", ".ckpt"}
INDEX_NAMES = ("__init__.py", "readme.md")  # in order of preference


@dataclass(frozen=True)
class SourceFile:
    """One page's source, e.g. `annotated_attention/mha.py` → `annotated_attention/mha.html`."""

    rel: str  # POSIX path under the source folder
    path: Path
    url: str  # output path under a language's root
    is_index: bool = False

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.rel)

    @property
    def base(self) -> str:
        """The path without extension: what translation files are named after."""
        return posixpath.splitext(self.rel)[0]

    @property
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


def _page_url(rel: str, is_index: bool) -> str:
    folder = posixpath.dirname(rel)
    if is_index:
        return posixpath.join(folder, "index.html") if folder else "index.html"
    return posixpath.splitext(rel)[0] + ".html"


def _visible(rel: PurePosixPath) -> bool:
    return not any(part.startswith(".") or part in SKIPPED_DIRS for part in rel.parts)


def discover(source_dir: Path) -> SiteFiles:
    """Every page, asset and folder under `source_dir`, in a stable (sorted) order."""
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise FileNotFoundError(f"source folder {source_dir} does not exist: pass --source DIR")
    files = sorted(p for p in source_dir.rglob("*") if p.is_file())
    by_folder: dict[str, list[tuple[PurePosixPath, Path]]] = {}
    assets: dict[str, Asset] = {}
    for path in files:
        rel = PurePosixPath(path.relative_to(source_dir).as_posix())
        if not _visible(rel) or rel.suffix in SKIPPED_SUFFIXES:
            continue
        if rel.suffix in PAGE_SUFFIXES:
            by_folder.setdefault(str(rel.parent) if str(rel.parent) != "." else "", []).append((rel, path))
        else:
            assets[str(rel)] = Asset(str(rel), path)

    pages: list[SourceFile] = []
    folders: dict[str, Folder] = {}
    for folder_rel, entries in sorted(by_folder.items()):
        names = {rel.name.lower(): (rel, path) for rel, path in entries}
        index_name = next((n for n in INDEX_NAMES if n in names), None)
        folder = _ensure_folder(folders, folder_rel)
        for rel, path in entries:
            is_index = index_name is not None and rel.name.lower() == index_name
            page = SourceFile(str(rel), path, _page_url(str(rel), is_index), is_index)
            pages.append(page)
            if is_index:
                folder.index = page
            else:
                folder.pages.append(page)
    for folder in folders.values():
        folder.subfolders.sort()
    return SiteFiles(pages, assets, folders)


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


def relative_url(from_url: str, to_url: str) -> str:
    """A link from one output file to another, relative so the site works from file:// too.

    Every page asks for a dozen of these, so the clean URLs the builder makes (no empty, "." or
    ".." segments) are handled as plain list work; anything else goes through posixpath.
    """
    start = from_url.rpartition("/")[0]
    start_parts = start.split("/") if start else []
    to_parts = to_url.split("/")
    if _UNCLEAN_SEGMENTS.intersection(start_parts) or _UNCLEAN_SEGMENTS.intersection(to_parts):
        return posixpath.relpath(to_url, posixpath.dirname(from_url) or ".")
    i, n = 0, min(len(start_parts), len(to_parts))
    while i < n and start_parts[i] == to_parts[i]:
        i += 1
    parts = [".."] * (len(start_parts) - i) + to_parts[i:]
    return "/".join(parts) if parts else "."


def lang_prefix(lang: str, base_lang: str) -> str:
    """English (the base language) lives at the root; others under `<lang>/`."""
    return "" if lang == base_lang else f"{lang}/"


def breadcrumbs(url: str) -> list[str]:
    """Folder index URLs from the root down to (excluding) the page itself."""
    parts = posixpath.dirname(url).split("/") if posixpath.dirname(url) else []
    if posixpath.basename(url) == "index.html" and parts:
        parts = parts[:-1]
    trail = ["index.html"]
    for i in range(len(parts)):
        trail.append("/".join(parts[: i + 1]) + "/index.html")
    return trail if url != "index.html" else []
