"""What a build gives back (`BuildResult`), and the mappings that load its pages only when read.

Kept apart from `site.py` so that a build which finds the site already up to date
(`uptodate.py`) can answer without importing the pipeline."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping

from ..findings import Report
from .cache import BuildStats

if TYPE_CHECKING:
    from ..render.localize import LocalPage
    from ..typeset.page import PageData


@dataclass
class BuildResult:
    out: Path
    report: Report
    pages: Mapping[str, PageData]  # rel → page, code linked (loaded when read)
    localized: dict[str, Mapping[str, LocalPage]]  # lang → rel → page (loaded when read)
    files_written: int = 0
    seconds: float = 0.0
    stats: BuildStats = field(default_factory=BuildStats)  # what was computed vs reused
    kept: tuple[str, ...] = ()  # sources that failed to parse, whose last good page the site keeps
    skipped: tuple[str, ...] = ()  # sources that failed to parse and have no page (none ever parsed)
    # lang → rel → verdict state → entries: each page's total as the status page counts it (the
    # editor shows the same); empty when the site was unchanged and nothing was rendered.
    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    # asset → an SVG figure's labels as this build knows them (by the file's bytes); None when the
    # site was found up to date by metadata (then they are read: `entries.labels_reader`)
    figure_labels: Callable[[str], list[str]] | None = None

    @property
    def built(self) -> int:
        """The pages made from the sources as they are now."""
        return len(self.pages) - len(self.kept) - len(self.skipped)

    @property
    def ok(self) -> bool:
        return not self.report.has_errors


class Loaded(Mapping):
    """rel → a page, loaded from the cache when it is read: a build that reuses most of the
    site never loads most of its pages, and callers that want one page get just that one."""

    def __init__(self, rels: Iterable[str], load: Callable[[str], object]) -> None:
        self._rels = list(rels)
        self._known = set(self._rels)
        self._load = load

    def __getitem__(self, rel: str):
        if rel not in self._known:
            raise KeyError(rel)
        return self._load(rel)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rels)

    def __len__(self) -> int:
        return len(self._rels)
