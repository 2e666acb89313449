"""What every kind of output shares: the language's constants, the builder's view of the site
that kinds describe and render from, and the base class."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Protocol

from ...read.structure import lang_prefix
from ..i18n import UI

if TYPE_CHECKING:
    from ...read.structure import Folder, SiteFiles, SourceFile
    from ...typeset.page import PageData
    from ..localize import LocalPage


@dataclass(frozen=True)
class Language:
    """Everything every output of one language depends on besides its own inputs (known to
    outputs by `digest`: the theme, the configuration, the UI catalog, the site's title)."""

    lang: str
    base_lang: str
    langs: tuple[str, ...]
    names: tuple[tuple[str, str], ...]  # each language's name in itself, for the switcher
    direction: str
    site_title: str
    site_url: str
    ui: UI
    digest: str

    @property
    def prefix(self) -> str:
        return lang_prefix(self.lang, self.base_lang)


class Site(Protocol):
    """The builder's view of the site (`builder/site.py`), which kinds describe and render from.
    Heads and digests are known without loading a page; the rest is loaded on demand."""

    config: Any  # BuildConfig
    files: SiteFiles
    heads: dict[str, Any]  # rel → PageHead
    redirects: tuple  # render.redirect.Redirect: old paths answered in every language

    def text(self, rel: str, lang: str) -> Any: ...  # TextHead
    def language(self, lang: str) -> Language: ...
    def published(self, file: SourceFile) -> bool: ...
    def order(self, folder: Folder) -> list: ...
    def reading_sequence(self) -> list: ...
    def neighbours(self, lang: str) -> dict[str, tuple]: ...
    def folder_title(self, lang: str, folder: Folder) -> tuple[str, str]: ...
    def analysis_digest(self, rel: str) -> str: ...
    def text_digest(self, rel: str, lang: str) -> str: ...
    def sections_digest(self, rel: str, lang: str) -> str: ...
    def kept(self, rel: str) -> bool: ...
    def has_source_page(self, file: SourceFile) -> bool: ...
    def figure_counts(self, file: SourceFile, lang: str) -> dict[str, int]: ...
    def counted(self, lang: str, rel: str, counts: dict[str, int]) -> None: ...
    def translation_exists(self, name: str) -> bool: ...
    def publishable_figure(self, asset: str) -> bool: ...
    def file_digest_of_asset(self, asset: str) -> str: ...
    def notebook_figures(self, rel: str, lang: str) -> str: ...  # digest of what its notebook embeds ("" if nothing)
    # loaded for a render
    def local(self, rel: str, lang: str) -> LocalPage: ...
    def unlinked_local(self, rel: str, lang: str) -> LocalPage: ...
    def markdown_prose(self, rel: str, lang: str) -> list[str]: ...  # `programs.prose_markdown` of `unlinked_local`
    def analysis(self, rel: str) -> PageData: ...
    def source(self, rel: str) -> bytes: ...
    def notebook(self, rel: str) -> str: ...
    def notebook_attachments(self, rel: str, lang: str) -> Any: ...  # notebooks.Figures
    def template(self, name: str, context: dict) -> str: ...
    def asset_text(self, asset: str) -> str: ...
    def figure_catalog(self, rel: str, lang: str) -> Any: ...  # Catalog | None


class Output:
    """A kind of output: a frozen dataclass of its inputs (subclasses), described and rendered."""

    per_language: ClassVar[bool] = True
    cached: ClassVar[bool] = True  # False: made every build (small), never looked up

    @classmethod
    def describe(cls, site: Site, lang: str | None) -> Iterator[tuple[str, "Output", str]]:
        """Every output of this kind (in `lang`; None: the site's language-free ones), as
        (path in the site, output, group: outputs of a group are produced by one process)."""
        raise NotImplementedError

    def render(self, site: Site) -> str | bytes:
        raise NotImplementedError
