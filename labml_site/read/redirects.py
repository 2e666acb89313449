"""Old URLs an author keeps answering: `redirects.yaml` at the source folder's root, read at the
edge, and whether the output folder tells names apart by case.

    # redirects.yaml: old path (under each language's root) → the page it moved to
    RWKV/index.html: rwkv/__init__.py        # a page, by its source path
    old/attention.html: transformers/mha.html#section-3   # or by its URL, with a fragment
    gone/: https://example.org/elsewhere.html            # a folder's old listing, another site

As mkdocs-redirects' `redirect_maps`, but the keys are the URL paths the old site published (its
readers' bookmarks), and each redirect is written in every language of the build. What a target
means (which page, which URL) is decided by `render/redirect.py`, which sees the site's pages.
"""
from __future__ import annotations

import os
import posixpath
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..findings import Finding
from .safe_files import UnsafeFile, read_regular
from .sections import load_bounded_yaml, pyyaml
from .structure import bad_name

REDIRECTS_FILE = "redirects.yaml"
MAX_REDIRECTS_BYTES = 256 * 1024  # tens of thousands of redirects; the YAML loader bounds the values too


@dataclass(frozen=True)
class RedirectRule:
    """One entry of `redirects.yaml`: the old output path and the target as written."""

    old: str  # e.g. "RWKV/index.html" (a folder's "old/" is read as "old/index.html")
    target: str  # a source path, a page URL (optionally with #fragment) or an http(s) URL
    line: int  # in redirects.yaml, for findings


def old_output(path: str) -> tuple[str, str | None]:
    """(the output path a redirect is written at, why it cannot be) for a key as written."""
    path = path.strip().lstrip("/")
    if path.endswith("/") or not path:
        path += "index.html"
    if not path.endswith(".html"):
        return path, "an old path is a published page's URL path: it ends in .html (or / for a folder's page)"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return path, "an old path has no empty, '.' or '..' segments"
    for part in parts:
        problem = bad_name(part) or ("it holds a backslash" if "\\" in part else None)
        if problem:
            return path, f"an old path's segment {part!r}: {problem}"
    return path, None


def load_redirects(source_dir: Path) -> tuple[list[RedirectRule], list[Finding]]:
    """The entries of `source_dir/redirects.yaml` (none when there is no such file), and one
    finding per entry or file that is refused."""
    path = Path(source_dir) / REDIRECTS_FILE
    if not os.path.lexists(path):
        return [], []
    shown = str(path)
    try:
        text = read_regular(path, MAX_REDIRECTS_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        return [], [Finding("error", "redirects", "is not UTF-8 text; save it as UTF-8", shown)]
    except UnsafeFile as e:  # a link, a FIFO, too large
        return [], [Finding("error", "redirects", f"{e.reason}; it is not read", shown)]
    except OSError as e:
        return [], [Finding("error", "redirects", f"could not be read ({e.strerror or e})", shown)]
    try:
        data, lines = load_bounded_yaml(text) if text.strip() else ({}, {})
    except pyyaml().YAMLError as e:  # (evaluated only when something was raised)
        mark = getattr(e, "problem_mark", None)
        return [], [Finding("error", "redirects", f"is not valid YAML ({getattr(e, 'problem', e)}); "
                            "write one 'old/path.html: new/page.py' per line", shown, (mark.line + 1) if mark else 0)]
    if data is None:
        return [], []
    if not isinstance(data, dict):
        return [], [Finding("error", "redirects", "must be a mapping of old paths to pages, "
                            "one 'old/path.html: new/page.py' per line", shown, 1)]
    rules: list[RedirectRule] = []
    findings: list[Finding] = []
    for key, value in data.items():
        line = lines.get(str(key), 0) + 1
        if not isinstance(value, str) or not value.strip():
            findings.append(Finding("error", "redirects", f"{key!s}: the target must be a page's source path, "
                                    "its URL or an http(s) URL", shown, line))
            continue
        old, problem = old_output(str(key))
        if problem:
            findings.append(Finding("error", "redirects", f"{key!s}: {problem}", shown, line))
            continue
        rules.append(RedirectRule(old, value.strip(), line))
    return rules, findings


def case_sensitive(folder: Path) -> bool:
    """Whether files in `folder` (or the nearest folder above it that exists) whose names differ
    only in case are different files: not on macOS' and Windows' usual file systems, where
    `RWKV/index.html` is `rwkv/index.html`."""
    folder = Path(folder).absolute()
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        fd, name = tempfile.mkstemp(prefix=".case-probe-", suffix="-x", dir=folder)
    except OSError:
        return True  # cannot tell: write them (a collision there is reported by the writer)
    os.close(fd)
    try:
        other = posixpath.join(posixpath.dirname(name), posixpath.basename(name).swapcase())
        return not os.path.exists(other)
    finally:
        os.unlink(name)
