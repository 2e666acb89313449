"""Where a translation file's glossary can be: `glossary.<lang>.json` (read instead of the
Markdown beside it) or `glossary.<lang>.md`, in the translation file's folder or one of the
`LEVELS - 1` folders above it, the nearest first. Kept apart from `glossary.py` so that the
build's snapshot (builder/uptodate.py), taken before anything heavy is imported, can watch the
places above the translations folder, which no walk of that folder sees."""
from __future__ import annotations

import os
from typing import Iterator

LEVELS = 6  # folders looked in, the translation file's own first


def names(lang: str) -> tuple[str, str]:
    """A folder's glossary for `lang`, in the order they are looked for."""
    return f"glossary.{lang}.json", f"glossary.{lang}.md"


def folders_up(folder: str, levels: int = LEVELS) -> Iterator[str]:
    """`folder` and the folders above it, at most `levels` of them."""
    for _ in range(levels):
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def above(root: str, lang: str) -> Iterator[str]:
    """Every place above the folder `root` where a glossary for a translation file under `root`
    could be."""
    top = os.path.abspath(root)
    for folder in list(folders_up(top))[1:]:
        for name in names(lang):
            yield os.path.join(folder, name)
