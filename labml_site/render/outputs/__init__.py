"""The site's outputs as a registry of kinds.

Each kind is a frozen dataclass of everything one output is made of (strings, numbers, tuples,
and the digests of what is loaded only to render it: a page's text, its linked code, the
language's constants); the memo layer's digest of it is the output's render digest, so an
unchanged output is recognised without making its template context. A kind has two functions:

* `describe(site, lang)` (a class method): the outputs of this kind, as `(path, output, group)`,
  from what every page's head says (no page is loaded);
* `render(site)`: the output's bytes or text, from its fields and what `site` loads for it.

`site` is the builder's view of the site (`Site`, below). Neither function reads a file:
rendering does no I/O, the builder does it at the edges (tests/test_architecture.py checks).

A new kind of output is one module here plus its line in `_KINDS`.
"""
from __future__ import annotations

from typing import Iterator

from .base import Language, Output, Site
from .files import Figure, Notebook, Sitemap
from .pages import FolderPage, MovedPage, NotFound, Page, RedirectPage, SearchPage, SourcePage, StatusPage
from .programs import LlmsTxt, PageMarkdown
from .scripts import MarkdownScript, NotebookFigures, Originals, SearchIndex, figures_path, markdown_path, originals_path
from .sections import PageSections

# Per language (`describe(site, lang)`), then once for the site (`describe(site, None)`).
_KINDS: tuple[tuple[type[Output], bool], ...] = (
    (RedirectPage, True),
    (SourcePage, True),
    (Page, True),
    (PageMarkdown, True),
    (PageSections, True),
    (Figure, True),
    (MarkdownScript, True),
    (NotebookFigures, True),
    (MovedPage, True),
    (FolderPage, True),
    (StatusPage, True),
    (NotFound, True),
    (SearchIndex, True),
    (LlmsTxt, True),
    (SearchPage, True),
    (Originals, False),
    (Notebook, False),
    (Sitemap, False),
)


def kinds(per_language: bool) -> Iterator[type[Output]]:
    """The registered kinds made per language, or once for the site."""
    return (kind for kind, each in _KINDS if each == per_language)


__all__ = [
    "Figure", "FolderPage", "Language", "LlmsTxt", "MarkdownScript", "NotFound", "Notebook", "Originals",
    "MovedPage", "NotebookFigures", "Output", "Page", "PageMarkdown", "PageSections", "RedirectPage", "SearchIndex", "SearchPage", "Site",
    "Sitemap", "SourcePage", "StatusPage", "figures_path", "kinds", "markdown_path", "originals_path",
]
