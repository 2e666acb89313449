"""The engine around the pipeline: what a build is asked to do (`config`), the build top to
bottom (`site`), scheduling and memoising the per-file stages (`prepare`), producing and writing
outputs (`outputs`), the content-hash store (`cache`), per-page summaries (`heads`), worker
processes (`workers`) and the preview server (`serve`)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .config import BuildConfig
    from .result import BuildResult
    from .uptodate import Snapshot


def build(config: "BuildConfig", check: "Callable[[BuildConfig], None] | None" = None) -> "BuildResult":
    """Build the site of `config`. A site already what this build would write is told from the
    inputs' metadata before the pipeline is even imported (`uptodate.py`); otherwise `check`
    (the CLI's `validate`) looks at the configuration's folders and the build reads everything
    (`site.build_with`). A site found up to date was built, and so checked, with this
    configuration from these very files."""
    from .uptodate import up_to_date

    settle()  # (what an earlier build of this process left to record is what this one reads)
    result, snapshot = up_to_date(config, _build_with)
    if result is not None:
        return result
    if check is not None:
        check(config)
    return _build_with(config, snapshot)


def _build_with(config: "BuildConfig", snapshot: "Snapshot | None") -> "BuildResult":
    from .site import build_with

    return build_with(config, snapshot)


def settle() -> None:
    """Record what the builds of this process that returned as soon as their site was in place
    (`serve`'s, `config.live_reload`) left to record (`site.settle`); nothing to do when no build
    imported the pipeline."""
    site = sys.modules.get(__name__ + ".site")
    if site is not None:
        site.settle()
